"""Issue 32: a run is a value. Each RunResult holds its own record; one agent instance serves concurrent runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, RunResult, define_fact, define_tool
from agentfootprint.agent import InvalidRunOptionError, NoRunRecordError, RunRecord
from agentfootprint.audit import export_audit, verify_audit
from agentfootprint.events import AgentEvent
from agentfootprint.explain import backtrack, localize_context_bug
from agentfootprint.explain.recording import load_recording, recording_of, save_recording
from agentfootprint.explain.report import question_of, report_html
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock


def _ticket(args: dict[str, Any], ctx: Any) -> str:
    return f"ticket for {args['q']}"


ticket = define_tool(
    name="ticket",
    description="Look up the ticket of a question",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    execute=_ticket,
)


async def _respond(req: LLMRequest) -> LLMResponse | str:
    """Call the tool with the question, yield to other runs, then answer with what the tool said."""
    await asyncio.sleep(0)
    last = req.messages[-1]
    if last.role == "tool":
        await asyncio.sleep(0)
        return f"answer: {last.content}"
    return LLMResponse(content="", tool_calls=[ToolCall(id="c1", name="ticket", args={"q": str(last.content)})])


def _agent(**create: Any) -> Agent:
    return (
        Agent.create(provider=mock(respond=_respond), model="m", **create)
        .system("You answer tickets.")
        .tool(ticket)
        .fact(define_fact(id="policy", data="Tickets are answered in order."))
        .keep_events()
        .build()
    )


def _tool_results(result: RunResult) -> list[str]:
    snap = result.last_snapshot()
    assert snap is not None
    return [str(r["content"]) for r in snap.state.get("tool_results", [])]


# ----------------------------------------------------------------------------------------------- the record


async def test_a_result_holds_its_own_record() -> None:
    agent = _agent()
    first = await agent.run("alpha")
    record = first.record
    assert isinstance(record, RunRecord)
    assert record.run_id == first.run_id and record.runner is agent
    assert record.snapshot is not None and record.snapshot.run_id == first.run_id
    assert record.flow is not None and record.flow.run_id == first.run_id
    assert record.last_run_input() == {
        "message": "alpha",
        "history": [],
        "identity": None,
        "session_id": None,
        "seed": None,
    }
    assert {e.meta.run_id for e in record.events} == {first.run_id}
    assert next(e.short_type for e in record.events) == "agent.turn_start"
    conversation = record.checkpoint()
    assert conversation is not None and conversation["history"][-1] == {"role": "assistant", "content": first.answer}
    assert next(n.stage_id for n in record.narrative()) == agent.last_narrative()[0].stage_id
    # a later run changes the agent's latest view, never the earlier result
    second = await agent.run("beta")
    assert agent.last_snapshot() is second.last_snapshot()
    assert first.last_snapshot() is record.snapshot
    assert record.last_run_input()["message"] == "alpha"  # type: ignore[index]
    assert {e.meta.run_id for e in first.last_events()} == {first.run_id}
    assert question_of(backtrack(first)) == "alpha"
    assert question_of(backtrack(second)) == "beta"


async def test_the_record_is_not_part_of_the_results_value() -> None:
    result = await _agent().run("alpha")
    rebuilt = RunResult.model_validate_json(result.model_dump_json())
    assert rebuilt == result  # equal by what the result says
    assert rebuilt.record is None
    with pytest.raises(NoRunRecordError) as info:
        backtrack(rebuilt)
    assert info.value.code == "ERR_NO_RUN_RECORD"
    assert "alpha" not in str(info.value)


async def test_explain_audit_and_reports_read_the_result_not_the_agents_latest(tmp_path: Path) -> None:
    agent = _agent()
    first = await agent.run("alpha")
    await agent.run("beta")  # the agent's latest run is now another one
    assert question_of(backtrack(first)) == "alpha"
    assert recording_of(first).snapshot.run_id == first.run_id
    saved = save_recording(first, tmp_path / "first.json")
    assert load_recording(saved).snapshot.run_id == first.run_id
    records = export_audit(first)
    assert records[0]["payload"]["run_id"] == first.run_id
    assert verify_audit(records).valid
    assert sum(1 for r in records if r["type"] == "agentfootprint.agent.turn_start") == 1
    page = report_html(first)
    assert "alpha" in page and first.run_id in page
    assert "alpha" in report_html(load_recording(saved))
    report = await localize_context_bug(agent, run=first, samples=0)
    assert report.trigger == backtrack(first).trigger
    own = await localize_context_bug(first, samples=0)
    assert own.trigger == report.trigger


async def test_localize_reruns_the_given_runs_input() -> None:
    agent = _agent()
    first = await agent.run("alpha")
    await agent.run("beta")
    seen: list[str] = []
    report = await localize_context_bug(
        agent,
        run=first,
        samples=1,
        max_samples=None,
        search="single",
        outcome_changed=lambda original, rerun: seen.append(rerun) or False,  # type: ignore[func-returns-value]
    )
    assert "answer: ticket for alpha" in seen  # the baseline reruns the given run's question
    assert not any("beta" in answer for answer in seen)  # never the agent's latest
    assert report.answer == first.answer


# ------------------------------------------------------------------------------------------------ concurrency


async def test_fifty_concurrent_runs_on_one_instance_stay_apart() -> None:
    """Fifty run() calls on one agent at once: each result backtracks to its own question and tool result, and
    holds its own events only; a per-run listener hears only its own run."""
    agent = _agent()
    heard: dict[str, list[AgentEvent]] = {}

    async def one(k: int) -> RunResult:
        mine: list[AgentEvent] = []
        result = await agent.run(f"question {k}", on_event=mine.append)
        heard[result.run_id] = mine
        return result

    results = await asyncio.gather(*(one(k) for k in range(50)))
    assert len({r.run_id for r in results}) == 50
    for k, result in enumerate(results):
        assert result.answer == f"answer: ticket for question {k}"
        assert question_of(backtrack(result)) == f"question {k}"
        assert _tool_results(result) == [f"ticket for question {k}"]
        events = result.last_events()
        assert events and {e.meta.run_id for e in events} == {result.run_id}
        assert [e.meta.seq for e in heard[result.run_id]] == [e.meta.seq for e in events]
        turn_start = [e for e in events if e.short_type == "agent.turn_start"]
        assert [e.payload["message"] for e in turn_start] == [f"question {k}"]
    assert not agent.in_flight


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(str.strip), min_size=1, max_size=8))
def test_any_set_of_concurrent_questions_keeps_each_record_its_own(questions: list[str]) -> None:
    agent = _agent()

    async def all_at_once() -> list[RunResult]:
        return await asyncio.gather(*(agent.run(q) for q in questions))

    results = asyncio.run(all_at_once())
    for q, result in zip(questions, results, strict=True):
        record = result.record
        assert record is not None
        assert record.last_run_input()["message"] == q  # type: ignore[index]
        assert question_of(backtrack(result)) == q
        assert json.loads(json.dumps(record.checkpoint()))["history"][0]["content"] == q


async def test_the_latest_view_is_the_run_that_finished_last() -> None:
    release = asyncio.Event()

    async def respond(req: LLMRequest) -> str:
        if req.messages[-1].content == "slow":
            await release.wait()
        return f"re: {req.messages[-1].content}"

    agent = Agent.create(provider=mock(respond=respond), model="m").build()
    slow = asyncio.create_task(agent.run("slow"))
    await asyncio.sleep(0)
    fast = await agent.run("fast")
    assert agent.last_record() is fast.record
    release.set()
    slow_result = await slow
    assert agent.last_record() is slow_result.record
    assert agent.checkpoint() == slow_result.recorded().checkpoint()
    follow = await agent.follow_up("more")  # continues the latest conversation: the slow one
    assert [m["content"] for m in follow.recorded().checkpoint()["history"]][:2] == ["slow", "re: slow"]  # type: ignore[index]


# ---------------------------------------------------------------------------------------------------- hostile


@pytest.mark.parametrize("bad", [42, "print", object()])
async def test_on_event_that_is_not_callable_is_refused(bad: Any) -> None:
    agent = _agent()
    with pytest.raises(InvalidRunOptionError) as info:
        await agent.run("alpha", on_event=bad)
    assert info.value.code == "ERR_INVALID_RUN_OPTION" and info.value.option == "on_event"
    assert agent.last_record() is None


async def test_a_raising_per_run_listener_never_breaks_the_run_or_its_record() -> None:
    agent = _agent()

    def boom(event: AgentEvent) -> None:
        raise RuntimeError("listener bug")

    result = await agent.run("alpha", on_event=boom)
    assert result.answer == "answer: ticket for alpha"
    assert result.last_events()  # kept before the listener was called
    assert agent.events.listener_errors


async def test_a_clone_with_more_tools_keeps_its_own_runs_events() -> None:
    agent = _agent()
    heard: list[AgentEvent] = []
    agent.on("agent.turn_start", heard.append)
    extra = define_tool(name="extra", description="x", input_schema={"type": "object"}, execute=lambda a, c: "x")
    clone = agent.with_tools(extra)
    result = await clone.run("alpha")
    assert {e.meta.run_id for e in result.last_events()} == {result.run_id}
    assert agent.last_record() is None and agent.last_events() == []
    assert [e.meta.run_id for e in heard] == [result.run_id]  # the user's own listeners do carry over
