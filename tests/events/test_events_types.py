"""The event type registry."""

from __future__ import annotations

import pytest

from agentfootprint.events import KNOWN_EVENT_TYPES
from agentfootprint.events import types as t
from agentfootprint.events.types import KNOWN_DOMAINS, domain_of, full_event_type, is_known_event_type

REQUIRED = [
    "agent.turn_start",
    "agent.turn_end",
    "agent.iteration_start",
    "agent.iteration_end",
    "agent.route_decided",
    "stream.llm_start",
    "stream.llm_end",
    "stream.token",
    "stream.tool_start",
    "stream.tool_end",
    "context.evaluated",
    "context.injected",
    "pause.requested",
    "pause.resumed",
    "error.tool",
    "error.provider",
    "error.run",
    "cost.usage",
    "cost.budget_warning",
]


@pytest.mark.parametrize("short", REQUIRED)
def test_required_types_are_known_in_both_forms(short: str) -> None:
    assert f"agentfootprint.{short}" in KNOWN_EVENT_TYPES
    assert is_known_event_type(short)
    assert is_known_event_type(f"agentfootprint.{short}")


def test_constants_match_names() -> None:
    assert t.STREAM_LLM_START == "agentfootprint.stream.llm_start"
    assert t.AGENT_TURN_END == "agentfootprint.agent.turn_end"
    assert t.PAUSE_REQUESTED == "agentfootprint.pause.requested"
    assert t.COST_BUDGET_WARNING == "agentfootprint.cost.budget_warning"
    values = [getattr(t, n) for n in t.__all__]
    exported = {v for v in values if isinstance(v, str) and v.count(".") == 2}
    assert exported == set(KNOWN_EVENT_TYPES)


def test_every_type_has_the_full_shape() -> None:
    for name in KNOWN_EVENT_TYPES:
        prefix, domain, event = name.split(".")
        assert prefix == "agentfootprint" and domain in KNOWN_DOMAINS and event


@pytest.mark.parametrize("bad", ["", "stream", "stream.nope", "agentfootprint.stream", "x.y.z", 3, None])
def test_unknown_types(bad: object) -> None:
    assert not is_known_event_type(bad)


def test_helpers() -> None:
    assert full_event_type("stream.token") == "agentfootprint.stream.token"
    assert full_event_type("agentfootprint.stream.token") == "agentfootprint.stream.token"
    assert domain_of("agentfootprint.cost.usage") == "cost"
    assert domain_of("nope") == ""
