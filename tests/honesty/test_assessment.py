"""Assessment: every standing from a scripted run, the same standing folded offline, and nothing leaked."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import Agent
from agentfootprint.explain import load_recording, save_recording
from agentfootprint.flow import FlowSnapshot
from agentfootprint.honesty.assessment import Assessment, assess
from agentfootprint.providers import mock
from tests.honesty.conftest import Calls, lookup_agent, refund_agent

GROUNDED = "Order A-1001 costs $480 and belongs to Dana Reyes."


def _reasons(a: Assessment | None) -> list[str]:
    assert a is not None
    return [r.reason for r in a.reasons]


# -- scenarios: each standing -------------------------------------------------------------------------------------


async def test_known_when_every_value_is_on_the_record(calls: Calls) -> None:
    agent = lookup_agent(calls, GROUNDED)
    await agent.run("Tell me about A-1001")
    a = await agent.assessment()
    assert a is not None and a.standing == "known" and a.reasons == [] and "evidence" in a.checks
    assert "verified" not in a.note


async def test_consistent_when_checks_ran_and_none_fired(calls: Calls) -> None:
    agent = lookup_agent(calls, "The order looks fine.", posture=None)
    await agent.run("Tell me about A-1001")
    a = await agent.assessment()
    assert a is not None and a.standing == "consistent" and a.checks == ["tool-results", "limits"]
    assert "not verified" in a.note


async def test_not_sure_on_unsupported_values(calls: Calls) -> None:
    agent = lookup_agent(calls, "Order A-1001 costs $999.")
    await agent.run("Tell me about A-1001")
    a = await agent.assessment()
    assert a is not None and a.standing == "not-sure" and _reasons(a) == ["unsupported-values"]
    assert "$999" in a.reasons[0].detail


async def test_not_sure_on_a_tool_error_the_answer_ignored(calls: Calls) -> None:
    agent = lookup_agent(calls, "Your order is on its way.", posture=None, error=True)
    await agent.run("Where is A-1001?")
    a = await agent.assessment()
    assert _reasons(a) == ["tool-error-ignored"] and a is not None and a.reasons[0].tool == "lookup_order"


async def test_a_tool_error_the_answer_admits_is_not_a_reason(calls: Calls) -> None:
    agent = lookup_agent(calls, "I could not look that order up: the service failed.", posture=None, error=True)
    await agent.run("Where is A-1001?")
    a = await agent.assessment()
    assert a is not None and a.standing == "consistent"


async def test_not_sure_on_an_empty_lookup(calls: Calls) -> None:
    agent = lookup_agent(calls, "There is no such order.", posture=None, result="[]")
    await agent.run("Where is A-1001?")
    assert _reasons(await agent.assessment()) == ["empty-lookup"]


async def test_not_sure_when_stopped_early() -> None:
    loop = {"tool_calls": [{"id": "x", "name": "lookup_order", "args": {"order_id": "A"}}]}
    from agentfootprint import define_tool

    t = define_tool(
        name="lookup_order",
        description="Look up",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
        execute=lambda a: "Order A: open",
    )
    agent = Agent.create(provider=mock(respond=lambda r: loop), model="m", max_iterations=2).tool(t).build()
    await agent.run("loop")
    assert "stopped-early" in _reasons(await agent.assessment())


async def test_not_sure_when_the_output_contract_is_unmet(calls: Calls) -> None:
    class Verdict(BaseModel):
        ok: bool

    agent = Agent.create(provider=mock(reply="yes, fine"), model="m").output_schema(Verdict).build()
    await agent.run("ok?")
    a = await agent.assessment()
    assert _reasons(a) == ["output-contract-unmet"] and a is not None and "(root)" in a.reasons[0].detail
    good = Agent.create(provider=mock(reply='{"ok": true}'), model="m").output_schema(Verdict).build()
    await good.run("ok?")
    b = await good.assessment()
    assert b is not None and b.standing == "consistent" and "output-contract" in b.checks


async def test_ask_while_paused_on_a_person(calls: Calls) -> None:
    agent = refund_agent(calls)
    result = await agent.run("refund A-1001")
    assert result.paused
    a = await agent.assessment()
    assert a is not None and a.standing == "ask"


async def test_not_assessed_when_nothing_could_be_checked() -> None:
    agent = Agent.create(provider=mock(reply="Hello there."), model="m").build()
    assert await agent.assessment() is None  # before any run
    await agent.run("hi")
    a = await agent.assessment()
    assert a is not None and a.standing == "not-assessed" and a.checks == ["limits"]


# -- offline: the same recording folds to the same standing ---------------------------------------------------------


async def test_the_saved_recording_folds_to_the_same_standing(calls: Calls, tmp_path: Path) -> None:
    for final, kw in ((GROUNDED, {}), ("Order A-1001 costs $999.", {}), ("ok", {"error": True, "posture": None})):
        agent = lookup_agent(calls, final, **kw)  # type: ignore[arg-type]
        await agent.run("Tell me about A-1001")
        live = await agent.assessment()
        path = save_recording(agent, tmp_path / "run.json")
        offline = assess(load_recording(path))
        assert live is not None and offline == live
        raw = json.loads(path.read_text())
        assert assess(raw) == live and assess(FlowSnapshot.model_validate(raw["snapshot"])) == live


async def test_a_paused_recording_folds_to_ask(calls: Calls, tmp_path: Path) -> None:
    agent = refund_agent(calls)
    await agent.run("refund A-1001")
    path = save_recording(agent, tmp_path / "paused.json")
    assert assess(load_recording(path)).standing == "ask"


# -- properties ---------------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(amount=st.integers(min_value=1, max_value=10**6), quote=st.booleans())
def test_assess_is_a_pure_function_of_the_record(amount: int, quote: bool) -> None:
    import asyncio

    calls = Calls()
    said = 480 if quote else amount + 481
    agent = lookup_agent(calls, f"Order A-1001 costs ${said}.")
    asyncio.run(agent.run("cost?"))
    snap = agent.last_snapshot()
    assert snap is not None
    first = assess(snap)
    again = assess(FlowSnapshot.model_validate_json(snap.model_dump_json()))
    assert first == again and first.standing == ("known" if quote else "not-sure")


# -- security -----------------------------------------------------------------------------------------------------


async def test_a_redacted_recording_assesses_without_the_secret(calls: Calls) -> None:
    agent = (
        Agent.create(provider=mock(reply="Card 4111-2222-3333-4444 was charged $5."), model="m")
        .redact(patterns=[r"\d{4}-\d{4}-\d{4}-\d{4}"])
        .names_and_numbers_from_evidence()
        .build()
    )
    await agent.run("charge?")
    a = await agent.assessment()
    assert a is not None and a.standing == "not-sure"
    assert "4111" not in a.model_dump_json() and "[REDACTED]" in a.reasons[0].detail


def test_assess_refuses_what_is_not_a_record() -> None:
    import pytest

    with pytest.raises(TypeError):
        assess(42)
