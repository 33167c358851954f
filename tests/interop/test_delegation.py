"""A pydantic-ai agent delegating to a sub-agent through a tool: the sub-agent is its own member, entered from the
lead's call that asked for the tool (a ``via`` hop), its model calls are its own steps, and the lead's tool result
reads its answer; the lead's own sources are never routed through the sub-agent."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from agentfootprint.explain import Recording, backtrack
from agentfootprint.interop import import_trace, localize_sync
from agentfootprint.providers import LLMRequest, mock
from tests.interop.test_import import Tracer, answers, asks, chat, text

PLANTED = "The museum is closed on Mondays and Tuesdays."
WRONG = "No: closed on Tuesdays."
RIGHT = "Yes, open every day."


@cache
def delegated_run() -> tuple[ReadableSpan, ...]:
    """A lead agent whose ``delegate`` tool runs a researcher agent (``FunctionModel``s, pydantic-ai's own spans)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def traced() -> list[Any]:
        return [Instrumentation(InstrumentationSettings(include_content=True, tracer_provider=provider))]

    def returned(messages: list[ModelMessage]) -> list[str]:
        parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
        return [str(p.content) for p in parts if isinstance(p, ToolReturnPart)]

    def researcher_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        got = returned(messages)
        if not got:
            return ModelResponse(parts=[ToolCallPart("calendar", {"day": "Tuesday"}, tool_call_id="sub_1")])
        return ModelResponse(parts=[TextPart(f"Calendar says: {got[0]}")])

    researcher = Agent(
        FunctionModel(researcher_model),
        name="researcher",
        instructions="You research museum facts.\n\nQuote the tools.",
        capabilities=traced(),
    )

    @researcher.tool_plain
    def calendar(day: str) -> str:
        """Opening days."""
        return PLANTED

    def lead_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        got = returned(messages)
        if not got:
            return ModelResponse(parts=[ToolCallPart("delegate", {"query": "open on Tuesday?"}, tool_call_id="lead_1")])
        return ModelResponse(parts=[TextPart(WRONG if "closed" in got[0] else RIGHT)])

    lead = Agent(FunctionModel(lead_model), name="lead", instructions="You are the front desk.", capabilities=traced())

    @lead.tool
    async def delegate(ctx: RunContext[None], query: str) -> str:
        """Ask the researcher."""
        return (await researcher.run(query, usage=ctx.usage)).output

    assert lead.run_sync("Is the museum open on Tuesday?").output == WRONG
    return exporter.get_finished_spans()


def calls_of(rec: Recording, agent: str) -> list[str]:
    log = rec.snapshot.commit_log
    return [c.runtime_stage_id for c in log if c.stage_id == "call-llm" and c.namespace == agent]


def test_the_sub_agent_is_its_own_member_entered_from_the_lead_call_that_delegated() -> None:
    rec = import_trace(list(delegated_run()))
    log = rec.snapshot.commit_log
    shape = [(c.kind, c.stage_id, c.namespace, c.stage_name) for c in log if c.stage_id in ("agent", "delegate")]
    assert shape == [
        ("subflow-enter", "agent", "lead", "lead"),
        ("stage", "delegate", "lead", "delegate call lead_1"),
        ("subflow-enter", "agent", "researcher", "researcher"),
        ("subflow-exit", "agent", "lead", "researcher"),
        ("subflow-exit", "agent", "", "lead"),
    ]
    lead_calls, sub_calls = calls_of(rec, "lead"), calls_of(rec, "researcher")
    assert (len(lead_calls), len(sub_calls)) == (2, 2)
    by_rid = {c.runtime_stage_id: c for c in log}
    handoff = next(c for c in log if c.stage_id == "delegate")
    enter = next(c for c in log if c.kind == "subflow-enter" and c.namespace == "researcher")
    assert handoff.reads == {"last_response": by_rid[lead_calls[0]].idx}
    assert enter.reads == {"input": handoff.idx}
    result = next(c for c in log if c.stage_id == "tool-calls" and c.namespace == "lead")
    exit_ = next(c for c in log if c.kind == "subflow-exit" and c.stage_name == "researcher")
    assert result.reads == {"last_response": by_rid[lead_calls[0]].idx, "delegated:lead_1": exit_.idx}
    assert rec.snapshot.state == rec.snapshot.replay()
    assert rec.snapshot.state["answer"] == WRONG


def test_the_lead_step_reads_the_delegate_result_and_nothing_through_its_own_user_message() -> None:
    rec = import_trace(list(delegated_run()))
    bt = backtrack(rec)
    assert bt.trigger == calls_of(rec, "lead")[-1]
    assert [(s.kind, s.id) for s in bt.sources] == [
        ("instruction", "lead/system-1"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "delegate"),
    ]
    assert not any(h.kind == "via" for s in bt.sources for h in s.hops)
    result = next(s for s in bt.sources if s.kind == "tool")
    assert result.text == f"Calendar says: {PLANTED}"
    assert result.hops[-1].runtime_stage_id == calls_of(rec, "lead")[0]


def test_the_sub_agents_step_has_its_own_sources_and_the_lead_call_behind_a_via_hop() -> None:
    rec = import_trace(list(delegated_run()))
    at = calls_of(rec, "researcher")[-1]
    sources = backtrack(rec, at=at).sources
    own = [(s.kind, s.id) for s in sources if not any(h.kind == "via" for h in s.hops)]
    assert own == [
        ("instruction", "researcher/system-1"),
        ("instruction", "researcher/system-2"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "calendar"),
    ]
    upstream = [s for s in sources if any(h.kind == "via" for h in s.hops)]
    assert [(s.kind, s.id) for s in upstream] == [
        ("instruction", "lead/system-1"),
        ("message", "user-0"),
        ("tool", "delegate"),
    ]
    via = next(h for h in upstream[0].hops if h.kind == "via")
    assert via.runtime_stage_id is not None and via.runtime_stage_id.startswith("researcher#enter")
    assert via.detail == "input made by delegate call lead_1 from lead's answer"
    own_input = next(s for s in sources if s.id == "user-0" and s not in upstream)
    assert own_input.text == "open on Tuesday?"


def misled(request: LLMRequest) -> str:
    """Each agent's model as the trace shows it, misled while the planted text is in its request."""
    seen = "\n".join(m.content for m in request.messages)
    if any(m.content == "open on Tuesday?" for m in request.messages):  # the researcher's input
        return f"Calendar says: {PLANTED}" if PLANTED in seen else "Calendar says: open every day."
    return WRONG if "closed" in seen else RIGHT


def test_the_planted_result_is_confirmed_at_the_sub_agents_step_and_the_delegate_result_at_the_leads() -> None:
    rec = import_trace(list(delegated_run()))
    sub = localize_sync(rec, at=calls_of(rec, "researcher")[-1], provider=mock(respond=misled), progress=False)
    assert [c.ids for c in sub.confirmed_sets] == [("calendar",)]
    top = localize_sync(rec, at=calls_of(rec, "lead")[-1], provider=mock(respond=misled), progress=False)
    assert [c.ids for c in top.confirmed_sets] == [("delegate",)]


def test_a_delegation_no_later_call_read_is_still_mounted() -> None:
    t = Tracer()
    u = text("user", "Is order 7 refundable?")
    lead = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead"}
    sub = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "checker"}
    ask = asks(("d1", "check", {"order": 7}))
    run_tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "check", "gen_ai.tool.call.id": "d1"}
    with t.span("invoke_agent lead", lead):
        chat(t, [u], ask)
        with t.span("execute_tool check", run_tool), t.span("invoke_agent checker", sub):
            last = chat(t, [text("user", "order 7")], text("assistant", "final sale"), **{
                "gen_ai.system_instructions": json.dumps("Check orders.")
            })  # fmt: skip
    rec = import_trace(list(t.spans))
    log = rec.snapshot.commit_log
    enter = next(c for c in log if c.kind == "subflow-enter" and c.namespace == "checker")
    assert log[enter.reads["input"] or 0].stage_id == "delegate"
    assert calls_of(rec, "checker") == [last]
    assert rec.snapshot.state["answer"] == "-> check"  # the run's answer is still the lead's last reply
    assert [(s.kind, s.id) for s in backtrack(rec, at=last).sources][:2] == [
        ("instruction", "checker/system-1"),
        ("message", "user-0"),
    ]


def test_an_agent_run_by_a_tool_of_the_same_agent_stays_in_its_segment() -> None:
    t = Tracer()
    u = text("user", "Go.")
    lead = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "lead"}
    run_tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "again", "gen_ai.tool.call.id": "a1"}
    ask = asks(("a1", "again", {}))
    with t.span("invoke_agent lead", lead):
        chat(t, [u], ask)
        with t.span("execute_tool again", run_tool), t.span("invoke_agent lead", lead):
            chat(t, [text("user", "inner")], text("assistant", "inner done"))
        chat(t, [u, ask, answers(("a1", "inner done"))], text("assistant", "done"))
    rec = import_trace(list(t.spans))
    assert not any(c.stage_id == "delegate" for c in rec.snapshot.commit_log)
    assert rec.snapshot.state["answer"] == "done"


def test_agents_under_a_tool_span_no_agent_owns_stay_top_level() -> None:
    t = Tracer()
    run_tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "batch", "gen_ai.tool.call.id": "b1"}
    first = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}
    second = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds"}
    with t.span("execute_tool batch", run_tool):
        with t.span("invoke_agent triage", first):
            chat(t, [text("user", "Refund?")], text("assistant", "To refunds."))
        with t.span("invoke_agent refunds", second):
            chat(t, [text("user", "To refunds.")], text("assistant", "No: final sale."))
    rec = import_trace(list(t.spans))
    assert not any(c.stage_id == "delegate" for c in rec.snapshot.commit_log)
    assert (len(calls_of(rec, "triage")), len(calls_of(rec, "refunds"))) == (1, 1)
    assert rec.snapshot.state["answer"] == "No: final sale."
