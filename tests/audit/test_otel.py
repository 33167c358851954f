"""OTel spans from an Agent (GenAI semantic conventions), checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agentfootprint import Agent
from agentfootprint.audit import OtelUnavailableError, instrument, otel_available
from agentfootprint.audit import otel as attrs
from agentfootprint.providers import mock
from tests.audit._agents import SECRET, Recorder, after_resume, asking_agent, lookup_agent, lookup_then_ask

CONTENT_KEYS = {
    attrs.GEN_AI_TOOL_CALL_ARGUMENTS,
    attrs.GEN_AI_TOOL_CALL_RESULT,
    attrs.GEN_AI_INPUT_MESSAGES,
    attrs.GEN_AI_OUTPUT_MESSAGES,
    attrs.GEN_AI_SYSTEM_INSTRUCTIONS,
}


@pytest.fixture
def provider(tp: TracerProvider) -> TracerProvider:
    """The tracer provider feeding ``exporter`` (tests/audit/conftest.py)."""
    return tp


def _by_name(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        out.setdefault(span.name, []).append(span)
    return out


def _a(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _everything(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> str:
    """Every string a span carries: name, attributes, status, events, links."""
    parts: list[str] = []
    for s in spans:
        parts.append(s.name)
        parts.append(json.dumps(_a(s), default=str))
        parts.append(str(s.status.description))
        parts.extend(json.dumps(dict(e.attributes or {}), default=str) + e.name for e in s.events)
        parts.extend(json.dumps(dict(link.attributes or {}), default=str) for link in s.links)
        parts.append(json.dumps(dict(s.resource.attributes), default=str))
    return "\n".join(parts)


async def _two_calls_one_tool(tp: TracerProvider, exporter: InMemorySpanExporter, **kw: Any) -> tuple[Agent, Any]:
    agent = lookup_agent(Recorder())
    instrument(agent, tp, **kw)
    result = await agent.run("Is the customer on file active?")
    return agent, result


# -- the span tree ----------------------------------------------------------------------------------------------
async def test_a_two_call_one_tool_run_gives_the_genai_span_tree(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    _, result = await _two_calls_one_tool(provider, exporter)
    spans = exporter.get_finished_spans()
    named = _by_name(spans)
    assert sorted((k, len(v)) for k, v in named.items()) == [
        ("chat m-1", 2),
        ("execute_tool lookup", 1),
        ("invoke_agent agent", 1),
    ]
    (root,) = named["invoke_agent agent"]
    chats, (tool,) = named["chat m-1"], named["execute_tool lookup"]
    assert root.parent is None
    for child in (*chats, tool):
        assert child.parent is not None and child.parent.span_id == root.context.span_id
        assert child.context.trace_id == root.context.trace_id
        assert root.start_time <= child.start_time <= child.end_time <= root.end_time  # type: ignore[operator]
    assert chats[0].end_time <= tool.start_time and tool.end_time <= chats[1].start_time  # type: ignore[operator]
    assert root.kind == SpanKind.INTERNAL and tool.kind == SpanKind.INTERNAL
    assert all(c.kind == SpanKind.CLIENT for c in chats)
    assert all(s.status.status_code == StatusCode.UNSET for s in spans)
    assert result.status == "completed"


async def test_span_attributes_follow_the_genai_conventions(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    _, result = await _two_calls_one_tool(provider, exporter)
    named = _by_name(exporter.get_finished_spans())
    root = _a(named["invoke_agent agent"][0])
    assert root[attrs.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert root[attrs.GEN_AI_AGENT_NAME] == "agent"
    assert root[attrs.GEN_AI_PROVIDER_NAME] == "mock"
    assert root[attrs.AF_STATUS] == "completed"
    first, second = (_a(s) for s in named["chat m-1"])
    for chat in (first, second):
        assert chat[attrs.GEN_AI_OPERATION_NAME] == "chat"
        assert chat[attrs.GEN_AI_PROVIDER_NAME] == "mock"
        assert chat[attrs.GEN_AI_REQUEST_MODEL] == "m-1"
        assert chat[attrs.GEN_AI_RESPONSE_MODEL] == "m-1"
        assert chat[attrs.GEN_AI_USAGE_INPUT_TOKENS] > 0 and chat[attrs.GEN_AI_USAGE_OUTPUT_TOKENS] > 0
    assert first[attrs.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    assert second[attrs.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert (first[attrs.AF_ITERATION], second[attrs.AF_ITERATION]) == (1, 2)
    total = first[attrs.GEN_AI_USAGE_INPUT_TOKENS] + second[attrs.GEN_AI_USAGE_INPUT_TOKENS]
    assert root[attrs.GEN_AI_USAGE_INPUT_TOKENS] == total
    tool = _a(named["execute_tool lookup"][0])
    assert tool[attrs.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert tool[attrs.GEN_AI_TOOL_NAME] == "lookup"
    assert tool[attrs.GEN_AI_TOOL_CALL_ID] == "call-1"
    assert tool[attrs.GEN_AI_TOOL_TYPE] == "function"
    assert result.run_id


async def test_every_span_links_back_to_the_commit_log(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent, result = await _two_calls_one_tool(provider, exporter)
    snapshot = agent.last_snapshot()
    assert snapshot is not None
    stage_of = {c.runtime_stage_id: c.stage_id for c in snapshot.commit_log}
    named = _by_name(exporter.get_finished_spans())
    for span in exporter.get_finished_spans():
        assert _a(span)[attrs.AF_RUN_ID] == result.run_id
        assert _a(span)[attrs.AF_RUNTIME_STAGE_ID] in stage_of
    assert _a(named["invoke_agent agent"][0])[attrs.AF_RUNTIME_STAGE_ID] == snapshot.commit_log[0].runtime_stage_id
    assert {stage_of[_a(s)[attrs.AF_RUNTIME_STAGE_ID]] for s in named["chat m-1"]} == {"call-llm"}
    assert stage_of[_a(named["execute_tool lookup"][0])[attrs.AF_RUNTIME_STAGE_ID]] == "tool-calls"


async def test_content_is_not_captured_by_default(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    await _two_calls_one_tool(provider, exporter)
    for span in exporter.get_finished_spans():
        assert not CONTENT_KEYS & set(_a(span))
    assert "active" not in _everything(exporter.get_finished_spans())


async def test_content_capture_records_arguments_results_and_messages(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    await _two_calls_one_tool(provider, exporter, capture_content=True)
    named = _by_name(exporter.get_finished_spans())
    tool = _a(named["execute_tool lookup"][0])
    assert json.loads(tool[attrs.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"ssn": "[REDACTED]"}
    result = json.loads(tool[attrs.GEN_AI_TOOL_CALL_RESULT])  # the tool message content, as the model saw it
    assert result["status"] == "active" and result["ssn"] == "[REDACTED]"
    first, second = (json.loads(_a(s)[attrs.GEN_AI_OUTPUT_MESSAGES]) for s in named["chat m-1"])
    assert first[0]["parts"][0] == {
        "type": "tool_call",
        "id": "call-1",
        "name": "lookup",
        "arguments": {"ssn": "[REDACTED]"},
    }
    assert second[0]["parts"][0]["content"] == "Customer [REDACTED] is active."
    root = _a(named["invoke_agent agent"][0])
    assert json.loads(root[attrs.GEN_AI_INPUT_MESSAGES])[0]["parts"][0]["content"] == "Is the customer on file active?"


@pytest.mark.parametrize("value, on", [("true", True), ("SPAN_ONLY", True), ("false", False), ("", False)])
async def test_capture_follows_the_otel_environment_variable_unless_told(
    provider: TracerProvider, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch, value: str, on: bool
) -> None:
    monkeypatch.setenv(attrs.CAPTURE_CONTENT_ENV, value)
    assert attrs.capture_content_from_env() is on
    await _two_calls_one_tool(provider, exporter)
    tool = _a(_by_name(exporter.get_finished_spans())["execute_tool lookup"][0])
    assert (attrs.GEN_AI_TOOL_CALL_RESULT in tool) is on
    exporter.clear()
    await _two_calls_one_tool(provider, exporter, capture_content=False)
    tool = _a(_by_name(exporter.get_finished_spans())["execute_tool lookup"][0])
    assert attrs.GEN_AI_TOOL_CALL_RESULT not in tool


# -- redaction --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("capture", [False, True], ids=["no-content", "content"])
async def test_a_redacted_value_never_reaches_any_span(
    provider: TracerProvider, exporter: InMemorySpanExporter, capture: bool
) -> None:
    rec = Recorder()
    agent = lookup_agent(rec)
    instrument(agent, provider, capture_content=capture)
    # the secret arrives in the user's free text before the model reveals it under the redacted key
    await agent.run(f"My SSN is {SECRET}; am I active?")
    assert rec.tool_args == [{"ssn": SECRET}]  # the tool still got the real value
    spans = exporter.get_finished_spans()
    assert len(spans) == 4
    text = _everything(spans)
    assert SECRET not in text and SECRET[:12] not in text
    if capture:
        assert "[REDACTED]" in text


async def test_a_pattern_redaction_reaches_spans_too(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = (
        Agent.create(provider=mock(replies=["card 4111-1111-1111-1111 on file"]), model="m-1")
        .redact(patterns=[r"\d{4}-\d{4}-\d{4}-\d{4}"])
        .build()
    )
    instrument(agent, provider, capture_content=True)
    await agent.run("my card is 4111-1111-1111-1111")
    text = _everything(exporter.get_finished_spans())
    assert "4111-1111" not in text and "[REDACTED]" in text


# -- lifecycle --------------------------------------------------------------------------------------------------
async def test_zero_spans_when_not_instrumented(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = lookup_agent(Recorder())
    await agent.run("check")
    assert exporter.get_finished_spans() == ()


async def test_uninstrument_stops_emission(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    rec = Recorder()
    agent = lookup_agent(rec, replies=[*lookup_then_ask_plain(), *lookup_then_ask_plain()])
    uninstrument = instrument(agent, provider)
    await agent.run("first")
    assert len(exporter.get_finished_spans()) == 4
    uninstrument()
    uninstrument()  # idempotent
    exporter.clear()
    await agent.run("second")
    assert exporter.get_finished_spans() == ()
    assert len(rec.requests) == 4


def lookup_then_ask_plain() -> list[Any]:
    return [{"tool_calls": [{"id": "c", "name": "lookup", "args": {"ssn": "x-1"}}]}, "done"]


async def test_uninstrument_during_a_turn_ends_its_open_spans(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    holder: dict[str, Any] = {}

    def respond(request: Any) -> Any:
        holder["un"]()
        return "ok"

    agent = Agent.create(provider=mock(respond=respond), model="m-1").build()
    holder["un"] = instrument(agent, provider)
    await agent.run("hi")
    named = _by_name(exporter.get_finished_spans())
    assert set(named) == {"invoke_agent agent", "chat m-1"}
    assert _a(named["invoke_agent agent"][0])[attrs.AF_STATUS] == "uninstrumented"


async def test_two_instrumented_agents_do_not_mix(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    a = Agent.create(provider=mock(reply="a"), model="m-a", name="alpha").build()
    b = Agent.create(provider=mock(reply="b", name="acme"), model="m-b", name="beta").build()
    instrument(a, provider)
    instrument(b, provider)
    await a.run("x")
    await b.run("y")
    named = _by_name(exporter.get_finished_spans())
    assert set(named) == {"invoke_agent alpha", "chat m-a", "invoke_agent beta", "chat m-b"}
    assert _a(named["chat m-b"][0])[attrs.GEN_AI_PROVIDER_NAME] == "acme"
    assert named["chat m-a"][0].parent.span_id == named["invoke_agent alpha"][0].context.span_id  # type: ignore[union-attr]
    assert named["chat m-b"][0].parent.span_id == named["invoke_agent beta"][0].context.span_id  # type: ignore[union-attr]


async def test_the_turn_nests_under_the_callers_current_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = Agent.create(provider=mock(reply="ok"), model="m-1", temperature=0.2, max_tokens=64).build()
    instrument(agent, provider)
    with provider.get_tracer("app").start_as_current_span("handle-request") as outer:
        await agent.run("hi")
    named = _by_name(exporter.get_finished_spans())
    root = named["invoke_agent agent"][0]
    assert root.parent is not None and root.parent.span_id == outer.get_span_context().span_id
    chat = _a(named["chat m-1"][0])
    assert chat[attrs.GEN_AI_REQUEST_TEMPERATURE] == 0.2 and chat[attrs.GEN_AI_REQUEST_MAX_TOKENS] == 64


# -- failures and pauses ----------------------------------------------------------------------------------------
async def test_a_failing_tool_marks_its_span_as_an_error_and_the_run_goes_on(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = lookup_agent(Recorder(), fail=True)
    instrument(agent, provider)
    result = await agent.run("check")
    assert result.status == "completed"
    named = _by_name(exporter.get_finished_spans())
    tool = named["execute_tool lookup"][0]
    assert tool.status.status_code == StatusCode.ERROR
    assert _a(tool)[attrs.ERROR_TYPE]
    assert named["invoke_agent agent"][0].status.status_code == StatusCode.UNSET
    assert "backend down" not in _everything(exporter.get_finished_spans())


async def test_a_provider_failure_marks_the_chat_and_the_turn_as_errors(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = lookup_agent(Recorder(), replies=[{"tool_calls": [{"id": "c", "name": "lookup", "args": {"ssn": SECRET}}]}])
    instrument(agent, provider, capture_content=True)
    with pytest.raises(IndexError):  # the scripted provider runs out of replies
        await agent.run("check")
    spans = exporter.get_finished_spans()
    named = _by_name(spans)
    root = named["invoke_agent agent"][0]
    failed_chat = named["chat m-1"][1]
    assert failed_chat.status.status_code == StatusCode.ERROR and _a(failed_chat)[attrs.ERROR_TYPE]
    assert root.status.status_code == StatusCode.ERROR and _a(root)[attrs.AF_STATUS] == "failed"
    assert named["chat m-1"][0].status.status_code == StatusCode.UNSET
    assert SECRET not in _everything(spans)


async def test_a_paused_run_and_its_resume_are_two_turns_of_one_run(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = asking_agent(Recorder(), lookup_then_ask() + after_resume())
    instrument(agent, provider, capture_content=True)
    paused = await agent.run("Should we refund?")
    first = _by_name(exporter.get_finished_spans())
    root1 = first["invoke_agent agent"][0]
    assert _a(root1)[attrs.AF_STATUS] == "paused" and _a(root1)[attrs.AF_PAUSED] is True
    ask = first["execute_tool ask_human"][0]
    assert _a(ask)[attrs.AF_PAUSED] is True and ask.parent.span_id == root1.context.span_id  # type: ignore[union-attr]
    exporter.clear()

    done = await agent.resume(paused.checkpoint, "yes, refund")
    second = _by_name(exporter.get_finished_spans())
    root2 = second["invoke_agent agent"][0]
    assert _a(root1)[attrs.AF_RUN_ID] == paused.run_id  # R004-17: the resumed leg is a new run of the turn
    assert _a(root2)[attrs.AF_RUN_ID] == done.run_id != paused.run_id
    answered = second["execute_tool ask_human"][0]
    assert _a(answered)[attrs.AF_STATUS] == "resumed"
    assert _a(answered)[attrs.GEN_AI_TOOL_CALL_ID] == "ask-1"
    assert answered.parent.span_id == root2.context.span_id  # type: ignore[union-attr]
    assert _a(answered)[attrs.GEN_AI_TOOL_CALL_RESULT] == "yes, refund"
    assert len(second["chat m-1"]) == 1
    assert SECRET not in _everything(exporter.get_finished_spans())


# -- guards -----------------------------------------------------------------------------------------------------
def test_instrument_refuses_something_that_is_not_an_agent(provider: TracerProvider) -> None:
    with pytest.raises(TypeError):
        instrument(object(), provider)


def test_without_opentelemetry_instrument_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Agent.create(provider=mock(reply="ok"), model="m-1").build()
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    assert otel_available() is False
    with pytest.raises(OtelUnavailableError) as info:
        instrument(agent)
    assert "agentfootprint[otel]" in str(info.value)


def test_importing_the_audit_package_does_not_import_opentelemetry() -> None:
    import subprocess

    code = "import sys, agentfootprint.audit; print('opentelemetry' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
