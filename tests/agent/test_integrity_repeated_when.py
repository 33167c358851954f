"""Tools' ``repeated_when="arguments"``: a tool whose result varies still counts a same-arguments call as a repeat."""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import InvalidToolDefinitionError


def _clock(repeated_when: Any = "result") -> Any:
    ticks = count(1)
    return define_tool(
        name="now",
        description="The time.",
        input_schema={"type": "object", "properties": {"tz": {"type": "string"}}},
        execute=lambda a: f"tick {next(ticks)}",
        repeated_when=repeated_when,
    )


def _run(tool: Any, args: list[dict[str, Any]]) -> tuple[list[str], list[Any]]:
    seen: list[LLMRequest] = []

    def respond(request: LLMRequest) -> Any:
        seen.append(request)
        i = len(seen) - 1
        return {"tool_calls": [{"id": f"c{i}", "name": "now", "args": args[i]}]} if i < len(args) else "done"

    agent = Agent.create(provider=mock(respond=respond)).tool(tool).build()
    events: list[Any] = []
    agent.on("tools.repeated_call", lambda e: events.append(e.payload))
    agent.run_sync("what time is it?")
    results = [m.content for m in seen[-1].messages if m.role == "tool"]
    return results, events


def test_same_arguments_are_a_repeat_when_the_tool_says_so() -> None:
    results, events = _run(_clock("arguments"), [{"tz": "UTC"}, {"tz": "UTC"}])
    assert results[0] == "tick 1"
    assert results[1].startswith("tick 2\n\n[repeated call: 'now' has now been called 2 times this turn")
    assert [(e["name"], e["occurrences"]) for e in events] == [("now", 2)]


def test_by_default_a_varying_result_is_not_a_repeat() -> None:
    results, events = _run(_clock(), [{"tz": "UTC"}, {"tz": "UTC"}])
    assert results == ["tick 1", "tick 2"] and events == []


def test_other_arguments_are_never_a_repeat() -> None:
    results, events = _run(_clock("arguments"), [{"tz": "UTC"}, {"tz": "CET"}])
    assert results == ["tick 1", "tick 2"] and events == []


@pytest.mark.parametrize("bad", ["args", "", None, 1])
def test_an_unknown_repeated_when_is_refused(bad: Any) -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        _clock(bad)
    assert info.value.code.startswith("ERR_") and "args'" not in str(info.value).replace("'arguments'", "")


@settings(max_examples=20, deadline=None)
@given(st.lists(st.sampled_from(["UTC", "CET"]), min_size=1, max_size=5))
def test_the_nudge_lands_once_on_the_second_same_arguments_call(zones: list[str]) -> None:
    results, events = _run(_clock("arguments"), [{"tz": z} for z in zones])
    nudged = [i for i, r in enumerate(results) if "[repeated call:" in r]
    expected = [i for i, z in enumerate(zones) if zones[: i + 1].count(z) == 2]
    assert nudged == expected and len(events) == len(expected)
