"""Check-in with receipts: the pack before consent, approve runs once, decline never runs, JSON and fresh agents."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import DecisionRequiredError
from agentfootprint.honesty.checkin import CheckInPack, check_in_approved, check_in_declined, check_in_pack_of
from tests.honesty.conftest import Calls, refund_agent

# -- scenarios ----------------------------------------------------------------------------------------------------


async def test_the_pause_carries_the_evidence_pack(calls: Calls) -> None:
    agent = refund_agent(calls)
    result = await agent.run("Please refund order A-1001")
    assert result.paused and calls.refunds == [] and calls.lookups == [{"order_id": "A-1001"}]
    pack = agent.pending_check_in()
    assert pack is not None and pack.tool_name == "refund_order" and pack.tool_call_id == "t2"
    assert pack.will_do.startswith("Run tool 'refund_order' with order_id=\"A-1001\", amount=480")
    assert {(r.kind, r.id) for r in pack.read} == {("message", "user-0"), ("tool", "lookup_order")}
    assert pack.drivers and pack.drivers[0].id in ("user-0", "lookup_order")
    assert pack.trail[0].what.startswith("asked:") and "lookup_order" in pack.trail[1].what
    assert pack.asked_at is not None and pack.asked_at.startswith("tool-calls#")
    assert pack.decided_at is not None and pack.decided_at.startswith("call-llm#")
    assert result.checkpoint is not None and check_in_pack_of(result.checkpoint) == pack


async def test_approve_runs_the_tool_exactly_once(calls: Calls) -> None:
    agent = refund_agent(calls)
    paused = await agent.run("Please refund order A-1001")
    assert paused.checkpoint is not None
    done = await agent.resume(paused.checkpoint, check_in_approved(paused))
    assert done.status == "completed" and done.answer == "Refunded $480 for order A-1001."
    assert calls.refunds == [{"order_id": "A-1001", "amount": 480}] and len(calls.lookups) == 1
    assert agent.pending_check_in() is None
    snap = agent.last_snapshot()
    assert snap is not None
    records = [r for r in snap.state["tool_results"] if r["name"] == "refund_order"]
    assert [r["check_in"] for r in records] == ["approved"]  # the decision is on the record


async def test_decline_never_runs_the_tool_and_the_model_is_told(calls: Calls) -> None:
    agent = refund_agent(calls)
    paused = await agent.run("Please refund order A-1001")
    assert paused.checkpoint is not None
    done = await agent.resume(paused.checkpoint, check_in_declined(paused))
    assert calls.refunds == [] and done.answer is not None and "declined" in done.answer
    told = calls.requests[-1].messages[-1]
    assert told.role == "tool" and told.content.startswith("Declined")
    snap = agent.last_snapshot()
    assert snap is not None
    assert [r["check_in"] for r in snap.state["tool_results"] if r["name"] == "refund_order"] == ["declined"]


async def test_bare_answers_are_not_decisions(calls: Calls) -> None:
    """R004-57: a consent gate answered with something that is not a decision is refused; the tool never runs."""
    for answer in (True, False, "yes", "approve", None, {"approved": True}):
        agent = refund_agent(calls)
        paused = await agent.run("refund A-1001")
        assert paused.checkpoint is not None
        with pytest.raises(DecisionRequiredError) as err:
            await agent.resume(paused.checkpoint, answer)
        assert err.value.code == "ERR_DECISION_REQUIRED" and "yes" not in str(err.value).lower().split("received")[1]
        assert calls.refunds == []


async def test_the_pack_survives_json_and_resume_works_on_a_fresh_agent(calls: Calls) -> None:
    first = refund_agent(calls)
    paused = await first.run("Please refund order A-1001")
    wire = json.dumps(paused.checkpoint)
    checkpoint = json.loads(wire)
    pack = check_in_pack_of(checkpoint)
    assert pack is not None and CheckInPack.model_validate_json(pack.model_dump_json()) == pack
    fresh = refund_agent(calls)
    done = await fresh.resume(checkpoint, check_in_approved(pack))
    assert done.status == "completed" and len(calls.refunds) == 1


async def test_a_predicate_decides_which_calls_check_in(calls: Calls) -> None:
    agent = refund_agent(calls, check_in=lambda args: args.get("amount", 0) > 1000)
    result = await agent.run("refund A-1001")
    assert result.status == "completed" and len(calls.refunds) == 1 and agent.pending_check_in() is None


async def test_permission_runs_before_check_in(calls: Calls) -> None:
    def deny_refunds(name: str, args: dict[str, Any], ctx: Any) -> str:
        return "deny" if name == "refund_order" else "allow"

    agent = refund_agent(calls, permission=deny_refunds)
    result = await agent.run("refund A-1001")
    assert result.status == "completed" and calls.refunds == [] and agent.pending_check_in() is None


async def test_an_ask_human_pause_has_no_pack(calls: Calls) -> None:
    from agentfootprint import Agent
    from agentfootprint.providers import mock
    from agentfootprint.tools import ask_human

    script: list[Any] = [{"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "Which order?"}}]}, "ok"]
    agent = Agent.create(provider=mock(replies=script), model="m").tool(ask_human).build()
    result = await agent.run("refund")
    assert result.paused and agent.pending_check_in() is None
    assert result.checkpoint is not None and check_in_pack_of(result.checkpoint) is None


# -- properties ---------------------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(order=st.from_regex(r"[A-Z]-[0-9]{3,6}", fullmatch=True), amount=st.integers(min_value=1, max_value=10**6))
def test_drivers_are_ranked_and_drawn_from_what_was_read(order: str, amount: int) -> None:
    import asyncio

    from agentfootprint import Agent
    from agentfootprint.providers import LLMRequest, mock
    from tests.honesty.conftest import has_tool_result, lookup_tool, refund_tool

    calls = Calls()

    def respond(req: LLMRequest) -> Any:
        if not has_tool_result(req, "t1"):
            return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"order_id": order}}]}
        return {"tool_calls": [{"id": "t2", "name": "refund_order", "args": {"order_id": order, "amount": amount}}]}

    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .tool(lookup_tool(calls, f"Order {order}: total {amount}"))
        .tool(refund_tool(calls))
        .build()
    )
    asyncio.run(agent.run(f"refund {order}"))
    pack = agent.pending_check_in()
    assert pack is not None and calls.refunds == []
    scores = [d.score for d in pack.drivers]
    assert scores == sorted(scores, reverse=True) and [d.rank for d in pack.drivers] == list(range(1, len(scores) + 1))
    read_ids = {(r.kind, r.id) for r in pack.read}
    assert all((d.kind, d.id) in read_ids for d in pack.drivers) and 0 < len(pack.drivers) <= 5
    assert str(amount) in pack.will_do and order in pack.will_do


# -- security -----------------------------------------------------------------------------------------------------


async def test_the_pack_never_carries_a_redacted_value(calls: Calls) -> None:
    agent = refund_agent(calls, redact_patterns=(r"A-1001",))
    result = await agent.run("Please refund order A-1001")
    pack = agent.pending_check_in()
    assert pack is not None and "A-1001" not in pack.model_dump_json()
    assert "[REDACTED]" in pack.will_do
    assert result.checkpoint is not None
    assert "A-1001" not in json.dumps(result.checkpoint["flow"]["pause_data"]["evidence"])
    done = await agent.resume(result.checkpoint, check_in_approved(result))  # the real arguments reach the tool
    assert done.status == "completed" and calls.refunds == [{"order_id": "A-1001", "amount": 480}]


def test_a_tampered_pack_reads_as_none() -> None:
    bad = {"flow": {"pause_data": {"kind": "check_in", "evidence": {"format": "agentfootprint.check_in", "x": 1}}}}
    assert check_in_pack_of(bad) is None
    assert check_in_pack_of({"flow": {"pause_data": "nope"}}) is None


async def test_decline_note_reaches_the_model_and_decisions_are_events() -> None:
    from agentfootprint import Agent, define_tool
    from agentfootprint.honesty.checkin import check_in_approved, check_in_declined
    from agentfootprint.providers import mock

    ran: list[dict[str, Any]] = []
    refund = define_tool(
        name="refund",
        description="Issue a refund",
        input_schema={"type": "object"},
        execute=lambda a, c: ran.append(a) or "refunded",
        check_in=True,
    )

    def respond(req: Any) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "r1", "name": "refund", "args": {"amount": 5}}]}
        return "done"

    def build() -> tuple[Agent, Any]:
        provider = mock(respond=respond)
        return Agent.create(provider=provider, model="m").tool(refund).build(), provider

    agent, _ = build()
    paused = await agent.run("refund me")
    decisions: list[Any] = []
    fresh, fresh_provider = build()
    fresh.on("checkin.decision", lambda e: decisions.append(e.payload))
    done = await fresh.resume(paused.checkpoint or {}, check_in_declined(paused, by="ann", note="over the limit"))
    assert done.status == "completed" and ran == []
    assert "over the limit" in fresh_provider.requests[-1].messages[-1].content
    assert decisions == [
        {
            "tool_call_id": "r1",
            "tool": "refund",
            "decision": "declined",
            "by": "ann",
            "note": "over the limit",
            "request_id": paused.request_id,
        }
    ]
    agent2, _ = build()
    paused2 = await agent2.run("refund me")
    await agent2.resume(paused2.checkpoint or {}, check_in_approved(paused2, by="bob"))
    assert ran == [{"amount": 5}]
