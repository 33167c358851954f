"""Check-in configuration (R004-141): without any ``.check_in()`` call a consent pause carries 'standard' evidence
ranked by the lexical scorer; ``.check_in(evidence='minimal')`` keeps only what the tool will do; a scorer swaps the
drivers' ranking; bad options are refused by name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.honesty import Honesty
from agentfootprint.honesty.checkin import DRIVERS_NOTE, check_in_approved, check_in_pack_of
from agentfootprint.providers import mock
from tests.honesty.conftest import Calls, lookup_tool, refund_respond, refund_tool


def consent_agent(calls: Calls, configure: Any = None) -> Agent:
    builder = Agent.create(provider=mock(respond=refund_respond(calls)), model="mock-1")
    if configure is not None:
        builder = configure(builder)
    return builder.tool(lookup_tool(calls)).tool(refund_tool(calls)).build()


class LongestFirst:
    """A scorer that prefers longer sources (deterministic; not lexical)."""

    name = "longest"

    def score(self, source: str, answer: str) -> float:
        return float(len(source))


async def test_R004_141_without_a_check_in_call_the_pack_is_standard_and_lexically_ranked(calls: Calls) -> None:
    """R004-141: check-in defaults are 'standard' evidence + the lexical scorer; no .check_in() call is needed."""
    agent = consent_agent(calls)
    honesty = agent.extension(Honesty)
    assert honesty is not None and honesty.evidence == "standard" and honesty.scorer.name == "lexical"
    paused = await agent.run("Please refund order A-1001")
    pack = agent.pending_check_in()
    assert pack is not None and pack.evidence == "standard" and pack.scorer == "lexical" and pack.note == DRIVERS_NOTE
    assert {(r.kind, r.id) for r in pack.read} == {("message", "user-0"), ("tool", "lookup_order")}
    assert [d.rank for d in pack.drivers] == list(range(1, len(pack.drivers) + 1)) and pack.drivers
    assert pack.trail[0].what == "asked: Please refund order A-1001"
    assert paused.checkpoint is not None and check_in_pack_of(json.loads(json.dumps(paused.checkpoint))) == pack


async def test_R004_141_an_explicit_standard_check_in_equals_the_default(calls: Calls) -> None:
    default, explicit = consent_agent(calls), consent_agent(Calls(), lambda b: b.check_in(evidence="standard"))
    await default.run("Please refund order A-1001")
    await explicit.run("Please refund order A-1001")
    a, b = default.pending_check_in(), explicit.pending_check_in()
    assert a is not None and b is not None and a.request_id != b.request_id  # each consent request is its own
    assert a.model_dump(exclude={"request_id"}) == b.model_dump(exclude={"request_id"})


async def test_R004_141_minimal_evidence_keeps_only_what_the_tool_will_do_and_consent_still_works(
    calls: Calls,
) -> None:
    agent = consent_agent(calls, lambda b: b.check_in(evidence="minimal"))
    paused = await agent.run("Please refund order A-1001")
    pack = agent.pending_check_in()
    assert pack is not None and pack.evidence == "minimal"
    assert pack.will_do.startswith("Run tool 'refund_order' with order_id=\"A-1001\", amount=480")
    assert pack.read == [] and pack.drivers == [] and pack.trail == [] and pack.decided_at is None
    assert pack.asked_at is not None and pack.asked_at.startswith("tool-calls#")
    done = await agent.resume(paused.checkpoint or {}, check_in_approved(paused))
    assert done.answer == "Refunded $480 for order A-1001." and calls.refunds == [{"order_id": "A-1001", "amount": 480}]


async def test_R004_141_a_scorer_swaps_the_drivers_ranking(calls: Calls) -> None:
    agent = consent_agent(calls, lambda b: b.check_in(scorer=LongestFirst()))
    await agent.run("Please refund order A-1001")
    pack = agent.pending_check_in()
    assert pack is not None and pack.scorer == "longest" and "longest scorer" in pack.note
    lengths = {r.id: len(r.excerpt) for r in pack.read}
    assert [d.id for d in pack.drivers] == sorted(lengths, key=lambda i: -lengths[i])[: len(pack.drivers)]
    assert [d.score for d in pack.drivers] == sorted((d.score for d in pack.drivers), reverse=True)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"evidence": "full"}, "check_in evidence must be 'standard' or 'minimal'"),
        ({"evidence": None}, "check_in evidence must be 'standard' or 'minimal'"),
        ({"scorer": object()}, "check_in scorer must have a name and score(source, call) -> float"),
        ({"scorer": type("Nameless", (), {"name": "", "score": lambda s, a, b: 1.0})()}, "check_in scorer must"),
    ],
)
def test_bad_check_in_options_are_refused_by_name(options: dict[str, Any], message: str) -> None:
    with pytest.raises(AgentBuildError) as err:
        Agent.create(provider=mock(reply="x")).check_in(**options)
    assert str(err.value).startswith(message) and "full" not in str(err.value).replace("full'", "")
    assert err.value.code == "ERR_AGENT_BUILD"


def test_check_in_twice_is_refused() -> None:
    builder = Agent.create(provider=mock(reply="x")).check_in(evidence="minimal")
    with pytest.raises(AgentBuildError, match=r"^check_in\(\) was already called on this builder$"):
        builder.check_in()
