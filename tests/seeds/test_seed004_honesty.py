"""Seed 004 (the Agent runner), honesty surfaces, gates, context and memory: one probe per rule, quoting its id."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint import Agent, ask_human, define_fact, define_tool
from agentfootprint.context import define_memory, define_skill
from agentfootprint.events import types as ev
from agentfootprint.honesty.evidence import STATE_KEY, UnsupportedValuesError
from agentfootprint.honesty.self_explain import NO_RUN
from agentfootprint.providers import LLMRequest, mock
from tests.seeds._tools import refund_tool

ORDER = "Order A-1001: price $480, customer Dana Reyes."
INVENTED = "The refund for order A-1001 is $520."
QUOTED = "The refund for order A-1001 is $480."


def _lookup() -> Any:
    return define_tool(
        name="lookup_order",
        description="Look up an order.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
        execute=lambda a: ORDER,
    )


def _looks_up_then(*finals: str) -> Any:
    answers = iter(finals)

    def respond(request: LLMRequest) -> Any:
        if not any(m.role == "tool" for m in request.messages):
            return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"order_id": "A-1001"}}]}
        return next(answers, finals[-1])

    return respond


def _gated(posture: str | None, *finals: str) -> Agent:
    builder = Agent.create(provider=mock(respond=_looks_up_then(*finals)), model="m").tool(_lookup())
    return (builder.names_and_numbers_from_evidence(posture) if posture else builder).build()  # type: ignore[arg-type]


def test_R004_103_unsupported_values_is_none_when_grounded_and_set_when_flagged() -> None:
    """R004-103: unsupported_values() is None when every value was grounded (or no gate); set on a flagged turn."""
    grounded = _gated("assist", QUOTED)
    grounded.run_sync("How much?")
    assert grounded.unsupported_values() is None
    flagged = _gated("assist", INVENTED)
    assert flagged.run_sync("How much?").answer == INVENTED
    verdict = flagged.unsupported_values()
    assert verdict is not None and [v.value for v in verdict.values] == ["$520"] and verdict.posture == "assist"
    ungated = _gated(None, INVENTED)
    ungated.run_sync("How much?")
    assert ungated.unsupported_values() is None


def test_R004_104_rails_raises_and_the_verdict_is_readable_in_the_catch() -> None:
    """R004-104: 'rails': run() raises UnsupportedValuesError and unsupported_values() is readable in the catch."""
    agent = _gated("rails", INVENTED)
    with pytest.raises(UnsupportedValuesError):
        agent.run_sync("How much?")
    verdict = agent.unsupported_values()
    assert verdict is not None and verdict.refused


def test_R004_105_guard_asks_once_and_marks_values_that_survive() -> None:
    """R004-105: 'guard' asks the model ONCE to correct the values; revised=True when they survive that turn."""
    requests: list[LLMRequest] = []
    respond = _looks_up_then(INVENTED, INVENTED, INVENTED)
    agent = (
        Agent.create(provider=mock(respond=lambda r: requests.append(r) or respond(r)), model="m")
        .tool(_lookup())
        .names_and_numbers_from_evidence("guard")
        .build()
    )
    agent.run_sync("How much?")
    verdict = agent.unsupported_values()
    assert verdict is not None and verdict.revised and verdict.asked_to_correct
    assert len(requests) == 3  # lookup, answer, one correction turn
    corrected = _gated("guard", INVENTED, QUOTED)
    assert corrected.run_sync("How much?").answer == QUOTED and corrected.unsupported_values() is None


def test_R004_106_assessment_is_none_before_a_run_and_after_a_throw_then_a_standing() -> None:
    """R004-106: assessment() is None before the first run and after a run that threw; a standing after a run."""
    agent = _gated(None, QUOTED)
    assert asyncio.run(agent.assessment()) is None
    agent.run_sync("How much?")
    assessed = asyncio.run(agent.assessment())
    assert assessed is not None and assessed.standing in ("known", "consistent", "not-sure", "not-assessed")

    def down(request: LLMRequest) -> str:
        raise RuntimeError("provider down")

    broken = Agent.create(provider=mock(respond=down), model="m").build()
    with pytest.raises(RuntimeError):
        broken.run_sync("hi")
    assert asyncio.run(broken.assessment()) is None


def test_R004_107_assessment_is_ask_while_a_question_waits() -> None:
    """R004-107: assessment() is 'ask' when the run paused on a question still waiting for a person."""
    ask = {"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "Which order?"}}]}
    agent = Agent.create(provider=mock(replies=[ask]), model="m").tool(ask_human).build()
    assert agent.run_sync("refund").status == "paused"
    assessed = asyncio.run(agent.assessment())
    assert assessed is not None and assessed.standing == "ask"


def test_R004_108_assessment_is_none_while_a_run_is_in_flight() -> None:
    """R004-108: assessment() resolves to None while a run is in flight."""
    seen: list[Any] = []

    async def scenario() -> None:
        agent: Agent

        async def respond(request: LLMRequest) -> str:
            seen.append(await agent.assessment())
            return "done"

        agent = Agent.create(provider=mock(respond=respond), model="m").build()
        await agent.run("hi")
        await agent.run("again")

    asyncio.run(scenario())
    assert seen == [None, None]


def test_R004_113_the_evidence_gate_costs_nothing_when_not_asked_for() -> None:
    """R004-113: without the gate, no verdict key in state and no gate event."""
    agent = _gated(None, INVENTED)
    events: list[str] = []
    agent.on("*", lambda e: events.append(e.type))
    agent.run_sync("How much?")
    snap = agent.last_snapshot()
    assert snap is not None and STATE_KEY not in snap.state
    assert not any("evidence" in t or "unsupported" in t for t in events)


def test_R004_116_without_a_skill_graph_read_skill_offers_every_skill() -> None:
    """R004-116: without a skill graph, read_skill offers EVERY registered skill (no cursor, no gate)."""
    requests: list[LLMRequest] = []
    builder = Agent.create(provider=mock(respond=lambda r: requests.append(r) or "ok"), model="m")
    for sid in ("refunds", "shipping", "billing"):
        builder = builder.skill(define_skill(id=sid, description=f"How to handle {sid}.", body=f"{sid} rules"))
    builder.build().run_sync("hi")
    spec = next(t for t in requests[0].tools if t.name == "read_skill")
    text = str(spec.model_dump())
    assert all(sid in text for sid in ("refunds", "shipping", "billing"))


@pytest.mark.parametrize("answer", ["boom", "maybe", None, 3])
def test_R004_118_the_tool_gate_fails_closed(answer: Any) -> None:
    """R004-118: a permission checker that throws (or answers neither allow nor a gate) denies."""
    ran: list[Any] = []
    tool = refund_tool(ran)

    def checker(name: str, args: Any, ctx: Any) -> Any:
        if answer == "boom":
            raise RuntimeError("policy service down")
        return answer

    call = {"tool_calls": [{"id": "r", "name": "refund", "args": {}}]}
    agent = Agent.create(provider=mock(replies=[call, "done"]), model="m").tool(tool).permission(checker).build()
    result = agent.run_sync("refund it")
    assert ran == [] and result.answer == "done"
    assert result.record.snapshot.state["tool_results"][0]["is_error"] is True


def test_R004_121_several_memories_mount_side_by_side() -> None:
    """R004-121: several memories mount side by side (per-id keys): each recalls its own store."""
    prompts: list[str] = []
    agent = (
        Agent.create(provider=mock(respond=lambda r: prompts.append(r.system_prompt) or "noted"), model="m")
        .memory(define_memory(id="short", recall=1))
        .memory(define_memory(id="long", recall=5))
        .build()
    )
    ident = {"tenant": "t", "principal": "p", "conversation_id": "c"}
    agent.run_sync("my name is Ada", identity=ident)
    agent.run_sync("I live in Paris", identity=ident)
    agent.run_sync("hello", identity=ident)
    last = prompts[-1]
    assert last.count("Paris") == 2 and last.count("Ada") == 1  # short recalls one turn, long recalls both


def test_R004_133_per_slot_budgets_keep_defaults_and_report_pressure() -> None:
    """R004-133: context_budget per slot: absent keys keep the default; going over is reported (nothing is cut)."""
    requests: list[LLMRequest] = []
    events: list[Any] = []
    long_fact = "x" * 500
    agent = (
        Agent.create(provider=mock(respond=lambda r: requests.append(r) or "ok"), model="m")
        .fact(define_fact(id="big", data=long_fact))
        .context_budget(system_prompt=100)
        .build()
    )
    agent.on(ev.CONTEXT_BUDGET_PRESSURE, events.append)
    agent.run_sync("hi")
    assert long_fact in requests[0].system_prompt
    slots = {e.payload["slot"] for e in events}
    assert slots == {"system_prompt"}


def test_R004_138_the_checkpoint_keeps_the_delivered_answer() -> None:
    """R004-138: the checkpoint's final assistant turn is the DELIVERED answer (after edits), not the raw text."""
    agent = Agent.create(provider=mock(respond=_looks_up_then(QUOTED)), model="m").tool(_lookup())
    built = agent.answer_layer(standing_line="always").build()
    delivered = built.run_sync("How much?").answer
    assert delivered != QUOTED and delivered.startswith(QUOTED)
    assert built.checkpoint()["history"][-1]["content"] == delivered


def test_R004_142_trace_tools_answer_no_run_before_a_turn_completes() -> None:
    """R004-142: self-explain trace tools say no completed run is available before a turn completes."""
    results: list[str] = []

    def respond(request: LLMRequest) -> Any:
        tools = [t.name for t in request.tools if t.name.startswith("trace_")]
        if not any(m.role == "tool" for m in request.messages):
            return {"tool_calls": [{"id": "x", "name": tools[0], "args": {}}]}
        results.extend(m.content for m in request.messages if m.role == "tool")
        return "nothing yet"

    agent = Agent.create(provider=mock(respond=respond), model="m").self_explain().build()
    agent.run_sync("why?")
    assert results and results[0] == NO_RUN
