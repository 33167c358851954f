"""OTel spans from scripted events, exactly: names, kinds, attributes, times, errors, pauses, capture and stop."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agentfootprint.audit import instrument
from agentfootprint.audit import otel as o
from agentfootprint.events.model import AgentEvent, EventMeta

SEC = 1_000_000_000
TURN_START = "agentfootprint.agent.turn_start"
TURN_END = "agentfootprint.agent.turn_end"
LLM_START = "agentfootprint.stream.llm_start"
LLM_END = "agentfootprint.stream.llm_end"
TOOL_START = "agentfootprint.stream.tool_start"
TOOL_END = "agentfootprint.stream.tool_end"
ERROR_PROVIDER = "agentfootprint.error.provider"
ERROR_RUN = "agentfootprint.error.run"
PAUSE_REQUESTED = "agentfootprint.pause.requested"
PAUSE_RESUMED = "agentfootprint.pause.resumed"
ALL_TYPES = [
    TURN_START,
    TURN_END,
    LLM_START,
    LLM_END,
    TOOL_START,
    TOOL_END,
    ERROR_PROVIDER,
    ERROR_RUN,
    PAUSE_REQUESTED,
    PAUSE_RESUMED,
]


class Acme:
    """A provider object without a ``name``: its class name is the provider name."""


class Observed:
    """Stands in for an Agent: ``on`` subscriptions, config, an event redactor and ``last_snapshot``."""

    def __init__(
        self,
        *,
        config: Any = None,
        name: str | None = None,
        redact: Callable[[dict[str, Any]], Any] | None = None,
        snapshot: Any = None,
    ) -> None:
        self.handlers: dict[str, list[Callable[[AgentEvent], Any]]] = {}
        self.unsubscribed: list[str] = []
        self.config = config
        if name is not None:
            self.name = name
        self.events = SimpleNamespace(redact=redact) if redact is not None else None
        self.snapshot = snapshot

    def on(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
        self.handlers.setdefault(type_or_glob, []).append(fn)

        def off() -> None:
            self.unsubscribed.append(type_or_glob)
            self.handlers[type_or_glob].remove(fn)

        return off

    def last_snapshot(self) -> Any:
        return self.snapshot

    def emit(
        self,
        etype: str,
        payload: dict[str, Any] | None = None,
        *,
        run: str | None = "r1",
        stage: str | None = None,
        ts: float = 0.0,
        it: int | None = None,
    ) -> None:
        meta = EventMeta(run_id=run, runtime_stage_id=stage, iteration=it, timestamp=ts)
        event = AgentEvent(type=etype, payload=payload or {}, meta=meta)
        for fn in list(self.handlers.get(etype, [])):
            fn(event)


def _config(**kw: Any) -> SimpleNamespace:
    base: dict[str, Any] = {"provider": SimpleNamespace(name="acme"), "model": "m-1", "temperature": None}
    return SimpleNamespace(**{**base, **kw})


def _spans(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    out: dict[str, ReadableSpan] = {}
    for span in exporter.get_finished_spans():
        assert span.name not in out, f"two spans named {span.name}"
        out[span.name] = span
    return out


def _a(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


# -- subscription and stop ----------------------------------------------------------------------------------------
def test_instrument_subscribes_every_handled_type_once_and_stop_unsubscribes(tp: TracerProvider) -> None:
    agent = Observed(config=_config())
    stop = instrument(agent, tp)
    assert sorted(agent.handlers) == sorted(ALL_TYPES)
    names = {t: [fn.__qualname__ for fn in fns] for t, fns in agent.handlers.items()}
    assert names[TURN_START] == ["otel.turn_start"]
    assert names[ERROR_PROVIDER] == ["otel.provider_error"]
    assert names[PAUSE_RESUMED] == ["otel.pause_resumed"]
    stop()
    assert sorted(agent.unsubscribed) == sorted(ALL_TYPES)
    stop()
    assert len(agent.unsubscribed) == len(ALL_TYPES)


def test_a_listener_kept_after_stop_does_nothing(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    stop = instrument(agent, tp)
    kept = agent.handlers[TURN_START][0]
    stop()
    kept(AgentEvent(type=TURN_START, payload={}, meta=EventMeta(run_id="r1", timestamp=1.0)))
    agent.emit(TURN_END, {}, ts=2.0)
    assert exporter.get_finished_spans() == ()


def test_a_failing_subscription_unsubscribes_what_it_had_and_raises(tp: TracerProvider) -> None:
    class Flaky(Observed):
        def on(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
            if type_or_glob == LLM_START:
                raise RuntimeError("bus closed")
            return super().on(type_or_glob, fn)

    agent = Flaky(config=_config())
    with pytest.raises(RuntimeError, match="bus closed"):
        instrument(agent, tp)
    assert agent.unsubscribed == [TURN_START, TURN_END]


def test_instrument_refuses_a_non_agent_by_type_name(tp: TracerProvider) -> None:
    with pytest.raises(TypeError) as info:
        instrument(SimpleNamespace(on="not callable"), tp)  # type: ignore[arg-type]
    assert str(info.value) == "instrument() takes an Agent (something with .on(type, fn)), got SimpleNamespace"


@pytest.mark.parametrize(
    "value, on",
    [("true", True), ("1", True), (" Yes ", True), ("on", True), ("span_and_event", True), ("no", False), ("0", False)],
)
def test_capture_env_values(monkeypatch: pytest.MonkeyPatch, value: str, on: bool) -> None:
    monkeypatch.setenv(o.CAPTURE_CONTENT_ENV, value)
    assert o.capture_content_from_env() is on


def test_capture_content_none_follows_the_environment(
    tp: TracerProvider, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(o.CAPTURE_CONTENT_ENV, "true")
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {"message": "hi"}, ts=1.0)
    agent.emit(TURN_END, {"status": "completed"}, ts=2.0)
    root = _spans(exporter)["invoke_agent agent"]
    assert json.loads(_a(root)[o.GEN_AI_INPUT_MESSAGES]) == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    ]


# -- the turn -------------------------------------------------------------------------------------------------------
def test_a_turn_span_has_exact_attributes_and_times(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {"session_id": "sess-9"}, stage="seed#0", ts=100.5)
    assert exporter.get_finished_spans() == ()
    agent.emit(
        TURN_END,
        {"status": "completed", "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}},
        ts=102.25,
    )
    root = _spans(exporter)["invoke_agent agent"]
    assert root.kind == SpanKind.INTERNAL
    assert root.parent is None
    assert (root.start_time, root.end_time) == (100_500_000_000, 102_250_000_000)
    assert _a(root) == {
        o.GEN_AI_OPERATION_NAME: "invoke_agent",
        o.AF_RUN_ID: "r1",
        o.AF_RUNTIME_STAGE_ID: "seed#0",
        o.GEN_AI_AGENT_NAME: "agent",
        o.GEN_AI_PROVIDER_NAME: "acme",
        o.GEN_AI_REQUEST_MODEL: "m-1",
        o.GEN_AI_CONVERSATION_ID: "sess-9",
        o.AF_STATUS: "completed",
        o.GEN_AI_USAGE_INPUT_TOKENS: 11,
        o.GEN_AI_USAGE_OUTPUT_TOKENS: 7,
    }
    assert root.status.status_code == StatusCode.UNSET


def test_turn_names_and_defaults(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=SimpleNamespace(provider=Acme(), model=""), name="helper")
    instrument(agent, tp)
    agent.emit(TURN_START, {"session_id": ""}, run=None, ts=1.0)
    agent.emit(TURN_END, {"status": 3, "usage": {"input_tokens": True, "output_tokens": "9"}}, run=None, ts=2.0)
    root = _spans(exporter)["invoke_agent helper"]
    assert _a(root) == {
        o.GEN_AI_OPERATION_NAME: "invoke_agent",
        o.AF_RUN_ID: "",
        o.AF_RUNTIME_STAGE_ID: "",
        o.GEN_AI_AGENT_NAME: "helper",
        o.GEN_AI_PROVIDER_NAME: "Acme",
    }


def test_the_payload_agent_name_wins_and_long_names_are_cut(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config(provider=None, model="m" * 250), name="x" * 250)
    inst = o._Instrumentation(agent, tp.get_tracer("t"), False)
    assert inst._agent_name == "x" * 200 and inst._model == "m" * 200 and inst._provider_name == "NoneType"
    agent.emit(TURN_START, {"agent": "member-a"}, ts=1.0)
    agent.emit(TURN_END, {}, ts=2.0)
    assert _a(_spans(exporter)["invoke_agent member-a"])[o.GEN_AI_AGENT_NAME] == "member-a"


def test_config_without_max_tokens_or_with_a_bool_one(tp: TracerProvider) -> None:
    assert o._Instrumentation(Observed(config=_config(max_tokens=True)), tp.get_tracer("t"), False)._max_tokens is None
    assert o._Instrumentation(Observed(config=_config(max_tokens=64)), tp.get_tracer("t"), False)._max_tokens == 64
    bare = o._Instrumentation(Observed(), tp.get_tracer("t"), False)
    assert (bare._provider_name, bare._model, bare._temperature, bare._agent_name) == ("NoneType", "", None, "agent")


def test_a_zero_or_missing_timestamp_falls_back_to_now(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=0.0)
    agent.emit(TURN_END, {}, ts=0.0)
    root = _spans(exporter)["invoke_agent agent"]
    assert root.start_time is not None and root.start_time > 1_000_000 * SEC
    assert root.end_time is not None and root.end_time >= root.start_time


def test_ns_conversion() -> None:
    assert o._ns(1.5) == 1_500_000_000
    assert o._ns(2) == 2 * SEC
    assert o._ns(0) is None and o._ns(-1.0) is None and o._ns(True) is None and o._ns("1") is None


def test_json_of_content() -> None:
    assert o._json("as is") == "as is"
    assert o._json({"b": "é", "a": 1}) == '{"a": 1, "b": "é"}'
    assert o._json([Acme()]).startswith('["<')


def test_a_paused_turn_end_marks_the_root_paused(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TURN_END, {"status": "paused"}, ts=2.0)
    assert _a(_spans(exporter)["invoke_agent agent"])[o.AF_PAUSED] is True
    agent.emit(TURN_START, {}, run="r2", ts=3.0)
    agent.emit(TURN_END, {"status": "completed"}, run="r2", ts=4.0)
    second = [s for s in exporter.get_finished_spans() if _a(s)[o.AF_RUN_ID] == "r2"]
    assert o.AF_PAUSED not in _a(second[0])


def test_events_of_an_unknown_run_are_ignored(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    for etype in (TURN_END, ERROR_RUN, LLM_START, LLM_END, TOOL_START, TOOL_END, ERROR_PROVIDER):
        agent.emit(etype, {"tool_call_id": "c"}, run="nobody", ts=1.0)
    agent.emit(PAUSE_REQUESTED, {"tool_call_id": "c"}, run="nobody")
    agent.emit(PAUSE_RESUMED, {"tool_call_id": "c"}, run="nobody")
    assert exporter.get_finished_spans() == ()


def test_a_second_start_of_the_same_run_supersedes_the_first(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, ts=1.5)
    agent.emit(TURN_START, {"agent": "again"}, ts=2.0)
    done = _spans(exporter)
    old, chat = done["invoke_agent agent"], done["chat m-1"]
    for span in (old, chat):
        assert span.status.status_code == StatusCode.ERROR
        assert span.status.description == "superseded"
        assert _a(span)[o.ERROR_TYPE] == "superseded"
        assert span.end_time == 2 * SEC
    agent.emit(TURN_END, {}, ts=3.0)
    new = _spans(exporter)["invoke_agent again"]
    assert new.status.status_code == StatusCode.UNSET and new.start_time == 2 * SEC


def test_a_run_error_fails_the_turn_and_its_open_children(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, ts=2.0)
    agent.emit(TOOL_START, {"name": "lookup", "tool_call_id": "c1"}, ts=3.0)
    agent.emit(ERROR_RUN, {"error_type": "RuntimeError"}, ts=4.0)
    done = _spans(exporter)
    assert set(done) == {"invoke_agent agent", "chat m-1", "execute_tool lookup"}
    for span in done.values():
        assert span.status.status_code == StatusCode.ERROR
        assert span.status.description == "RuntimeError"
        assert _a(span)[o.ERROR_TYPE] == "RuntimeError"
        assert span.end_time == 4 * SEC
    assert _a(done["invoke_agent agent"])[o.AF_STATUS] == "failed"
    agent.emit(TURN_END, {"status": "completed"}, ts=5.0)
    assert len(exporter.get_finished_spans()) == 3


def test_a_run_error_without_a_type_is_error(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(ERROR_RUN, {}, ts=2.0)
    root = _spans(exporter)["invoke_agent agent"]
    assert _a(root)[o.ERROR_TYPE] == "error" and root.status.description == "error"


# -- chat spans -------------------------------------------------------------------------------------------------------
def test_a_chat_span_has_exact_attributes_and_times(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config(temperature=1, max_tokens=64))
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, stage="call-llm#2", ts=2.0, it=3)
    agent.emit(
        LLM_END,
        {"response_model": "m-1-0425", "usage": {"input_tokens": 5, "output_tokens": 2}, "finish_reason": "stop"},
        stage="call-llm#2",
        ts=3.5,
    )
    agent.emit(TURN_END, {}, ts=4.0)
    done = _spans(exporter)
    chat, root = done["chat m-1"], done["invoke_agent agent"]
    assert chat.kind == SpanKind.CLIENT
    assert chat.parent is not None and chat.parent.span_id == root.context.span_id
    assert (chat.start_time, chat.end_time) == (2 * SEC, 3_500_000_000)
    assert _a(chat) == {
        o.GEN_AI_OPERATION_NAME: "chat",
        o.AF_RUN_ID: "r1",
        o.AF_RUNTIME_STAGE_ID: "call-llm#2",
        o.GEN_AI_PROVIDER_NAME: "acme",
        o.GEN_AI_REQUEST_MODEL: "m-1",
        o.GEN_AI_REQUEST_TEMPERATURE: 1.0,
        o.GEN_AI_REQUEST_MAX_TOKENS: 64,
        o.AF_ITERATION: 3,
        o.GEN_AI_RESPONSE_MODEL: "m-1-0425",
        o.GEN_AI_USAGE_INPUT_TOKENS: 5,
        o.GEN_AI_USAGE_OUTPUT_TOKENS: 2,
        o.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",),
    }
    assert isinstance(_a(chat)[o.GEN_AI_REQUEST_TEMPERATURE], float)
    assert _a(root)[o.AF_RUNTIME_STAGE_ID] == "call-llm#2"  # the first stage the turn saw


def test_a_chat_span_without_model_or_temperature(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config(model="", temperature=True))
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, ts=2.0)
    agent.emit(LLM_END, {"finish_reason": ""}, ts=3.0)
    agent.emit(TURN_END, {}, ts=4.0)
    chat = _spans(exporter)["chat"]
    assert _a(chat) == {
        o.GEN_AI_OPERATION_NAME: "chat",
        o.AF_RUN_ID: "r1",
        o.AF_RUNTIME_STAGE_ID: "",
        o.GEN_AI_PROVIDER_NAME: "acme",
    }


def test_the_payload_model_names_the_chat_and_its_response(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {"model": "m-2"}, ts=2.0)
    agent.emit(LLM_END, {"model": "m-2b", "response_model": "ignored"}, ts=3.0)
    agent.emit(LLM_START, {}, ts=4.0)
    agent.emit(LLM_END, {}, ts=5.0)
    agent.emit(TURN_END, {}, ts=6.0)
    done = _spans(exporter)
    assert _a(done["chat m-2"])[o.GEN_AI_REQUEST_MODEL] == "m-2"
    assert _a(done["chat m-2"])[o.GEN_AI_RESPONSE_MODEL] == "m-2b"
    assert o.GEN_AI_RESPONSE_MODEL not in _a(done["chat m-1"])  # nothing reported: the request's model is not repeated


def test_an_unmatched_chat_start_is_ended_when_the_next_one_starts(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {"model": "a"}, ts=2.0)
    agent.emit(LLM_START, {"model": "b"}, ts=3.0)
    first = _spans(exporter)["chat a"]
    assert first.end_time == 3 * SEC and first.status.status_code == StatusCode.UNSET
    agent.emit(LLM_END, {}, ts=4.0)
    assert _spans(exporter)["chat b"].end_time == 4 * SEC
    agent.emit(LLM_END, {}, ts=5.0)  # nothing open: ignored
    assert len(exporter.get_finished_spans()) == 2


def test_a_provider_error_fails_the_open_chat_only(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(ERROR_PROVIDER, {"error_type": "Timeout"}, ts=1.5)  # no chat open: ignored
    agent.emit(LLM_START, {}, ts=2.0)
    agent.emit(ERROR_PROVIDER, {"error_type": "Timeout"}, ts=3.0)
    chat = _spans(exporter)["chat m-1"]
    assert chat.end_time == 3 * SEC
    assert chat.status.status_code == StatusCode.ERROR and chat.status.description == "Timeout"
    assert _a(chat)[o.ERROR_TYPE] == "Timeout"
    agent.emit(LLM_START, {"model": "m-2"}, ts=4.0)
    agent.emit(ERROR_PROVIDER, {}, ts=5.0)
    assert _a(_spans(exporter)["chat m-2"])[o.ERROR_TYPE] == "provider_error"
    agent.emit(TURN_END, {}, ts=6.0)
    assert _spans(exporter)["invoke_agent agent"].status.status_code == StatusCode.UNSET


def test_captured_chat_output_holds_text_and_tool_calls(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp, capture_content=True)
    agent.emit(TURN_START, {"message": "question"}, ts=1.0)
    agent.emit(LLM_START, {}, ts=2.0)
    calls = [{"id": "c1", "name": "lookup", "args": {"q": "x"}, "extra": 1}, "not a call"]
    agent.emit(LLM_END, {"content": "thinking", "tool_calls": calls, "finish_reason": "tool_calls"}, ts=3.0)
    agent.emit(LLM_START, {}, ts=4.0)
    agent.emit(LLM_END, {"content": ""}, ts=5.0)
    assert exporter.get_finished_spans() == ()  # capturing: children end with the turn
    agent.emit(TURN_END, {"answer": "done"}, ts=6.0)
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    assert [s.name for s in spans] == ["invoke_agent agent", "chat m-1", "chat m-1"]
    root, first, second = spans
    assert [s.end_time for s in spans] == [6 * SEC, 3 * SEC, 5 * SEC]
    assert json.loads(_a(first)[o.GEN_AI_OUTPUT_MESSAGES]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "thinking"},
                {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "x"}},
            ],
            "finish_reason": "tool_calls",
        }
    ]
    assert json.loads(_a(second)[o.GEN_AI_OUTPUT_MESSAGES]) == [{"role": "assistant", "parts": []}]
    assert json.loads(_a(root)[o.GEN_AI_OUTPUT_MESSAGES]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "done"}], "finish_reason": "stop"}
    ]
    assert json.loads(_a(root)[o.GEN_AI_INPUT_MESSAGES]) == [
        {"role": "user", "parts": [{"type": "text", "content": "question"}]}
    ]


def test_non_text_messages_and_answers_are_not_captured(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp, capture_content=True)
    agent.emit(TURN_START, {"message": ["parts"]}, ts=1.0)
    agent.emit(TURN_END, {"answer": {"a": 1}}, ts=2.0)
    root = _spans(exporter)["invoke_agent agent"]
    assert o.GEN_AI_INPUT_MESSAGES not in _a(root) and o.GEN_AI_OUTPUT_MESSAGES not in _a(root)


# -- tool spans -------------------------------------------------------------------------------------------------------
def test_a_tool_span_has_exact_attributes_and_times(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_START, {"name": "lookup", "tool_call_id": "c1", "args": {"q": 1}}, stage="tools#4", ts=2.0, it=2)
    agent.emit(TOOL_END, {"tool_call_id": "c1", "content": "r"}, stage="tools#4", ts=2.5)
    tool = _spans(exporter)["execute_tool lookup"]
    assert tool.kind == SpanKind.INTERNAL
    assert (tool.start_time, tool.end_time) == (2 * SEC, 2_500_000_000)
    assert _a(tool) == {
        o.GEN_AI_OPERATION_NAME: "execute_tool",
        o.AF_RUN_ID: "r1",
        o.AF_RUNTIME_STAGE_ID: "tools#4",
        o.GEN_AI_TOOL_NAME: "lookup",
        o.GEN_AI_TOOL_TYPE: "function",
        o.GEN_AI_TOOL_CALL_ID: "c1",
        o.AF_ITERATION: 2,
    }
    assert tool.status.status_code == StatusCode.UNSET


def test_a_tool_without_name_or_call_id(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_START, {}, ts=2.0)
    agent.emit(TOOL_END, {}, ts=3.0)
    tool = _spans(exporter)["execute_tool tool"]
    assert tool.start_time == 2 * SEC and tool.end_time == 3 * SEC
    assert _a(tool) == {
        o.GEN_AI_OPERATION_NAME: "execute_tool",
        o.AF_RUN_ID: "r1",
        o.AF_RUNTIME_STAGE_ID: "",
        o.GEN_AI_TOOL_NAME: "tool",
        o.GEN_AI_TOOL_TYPE: "function",
    }


def test_a_failed_tool_names_its_error_code(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_START, {"name": "a", "tool_call_id": "c1"}, ts=2.0)
    agent.emit(TOOL_START, {"name": "b", "tool_call_id": "c2"}, ts=2.0)
    agent.emit(TOOL_START, {"name": "c", "tool_call_id": "c3"}, ts=2.0)
    agent.emit(TOOL_END, {"tool_call_id": "c1", "is_error": True, "error_code": "ERR_TOOL_RAISED"}, ts=3.0)
    agent.emit(TOOL_END, {"tool_call_id": "c2", "is_error": True}, ts=3.0)
    agent.emit(TOOL_END, {"tool_call_id": "c3", "is_error": "yes"}, ts=3.0)
    done = _spans(exporter)
    a, b, c = done["execute_tool a"], done["execute_tool b"], done["execute_tool c"]
    assert (_a(a)[o.ERROR_TYPE], a.status.description) == ("ERR_TOOL_RAISED", "ERR_TOOL_RAISED")
    assert (_a(b)[o.ERROR_TYPE], b.status.status_code) == ("tool_error", StatusCode.ERROR)
    assert o.ERROR_TYPE not in _a(c) and c.status.status_code == StatusCode.UNSET


def test_a_restarted_tool_call_ends_the_earlier_span(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_START, {"name": "first", "tool_call_id": "c1"}, ts=2.0)
    agent.emit(TOOL_START, {"name": "second", "tool_call_id": "c1"}, ts=3.0)
    assert _spans(exporter)["execute_tool first"].end_time == 3 * SEC
    agent.emit(TOOL_END, {"tool_call_id": "c1"}, ts=4.0)
    assert _spans(exporter)["execute_tool second"].end_time == 4 * SEC


def test_captured_tool_arguments_and_result(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp, capture_content=True)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_START, {"name": "a", "tool_call_id": "c1", "args": {"q": "é", "k": 2}}, ts=2.0)
    agent.emit(TOOL_END, {"tool_call_id": "c1", "content": "plain text"}, ts=3.0)
    agent.emit(TOOL_START, {"name": "b", "tool_call_id": "c2"}, ts=4.0)
    agent.emit(TOOL_END, {"tool_call_id": "c2"}, ts=5.0)
    agent.emit(TURN_END, {}, ts=6.0)
    done = _spans(exporter)
    assert _a(done["execute_tool a"])[o.GEN_AI_TOOL_CALL_ARGUMENTS] == '{"k": 2, "q": "é"}'
    assert _a(done["execute_tool a"])[o.GEN_AI_TOOL_CALL_RESULT] == "plain text"
    assert o.GEN_AI_TOOL_CALL_ARGUMENTS not in _a(done["execute_tool b"])
    assert o.GEN_AI_TOOL_CALL_RESULT not in _a(done["execute_tool b"])
    assert done["execute_tool a"].end_time == 3 * SEC and done["execute_tool b"].end_time == 5 * SEC


def test_a_pause_marks_the_asking_tool_and_the_resumed_call_starts_at_the_resume(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_START, {"name": "ask_human", "tool_call_id": "ask-1"}, ts=2.0)
    agent.emit(PAUSE_REQUESTED, {"tool_call_id": "other"})
    agent.emit(PAUSE_REQUESTED, {"tool_call_id": "ask-1"})
    agent.emit(TURN_END, {"status": "paused"}, ts=3.0)
    asked = _spans(exporter)["execute_tool ask_human"]
    assert _a(asked)[o.AF_PAUSED] is True and asked.end_time == 3 * SEC
    exporter.clear()
    agent.emit(TURN_START, {}, run="r2", ts=10.0)
    agent.emit(PAUSE_RESUMED, {"tool_call_id": "ask-1"}, run="r2", ts=10.5)
    agent.emit(TOOL_END, {"name": "ask_human", "tool_call_id": "ask-1", "content": "yes"}, run="r2", ts=12.0)
    agent.emit(TOOL_END, {"name": "late", "tool_call_id": "x"}, run="r2", ts=13.0)
    agent.emit(TURN_END, {}, run="r2", ts=14.0)
    done = _spans(exporter)
    answered, late = done["execute_tool ask_human"], done["execute_tool late"]
    assert (answered.start_time, answered.end_time) == (10_500_000_000, 12 * SEC)
    assert _a(answered)[o.AF_STATUS] == "resumed" and _a(answered)[o.AF_RUN_ID] == "r2"
    assert o.AF_PAUSED not in _a(answered)
    assert (late.start_time, late.end_time) == (13 * SEC, 13 * SEC)
    assert _a(late)[o.AF_STATUS] == "resumed"


def test_a_resume_mark_is_used_once(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(PAUSE_RESUMED, {"tool_call_id": "a"}, ts=2.0)
    agent.emit(TOOL_END, {"name": "one", "tool_call_id": "a"}, ts=3.0)
    agent.emit(TOOL_END, {"name": "two", "tool_call_id": "a"}, ts=4.0)
    done = _spans(exporter)
    assert done["execute_tool one"].start_time == 2 * SEC
    assert done["execute_tool two"].start_time == 4 * SEC


# -- stage links ------------------------------------------------------------------------------------------------------
def test_the_root_stage_comes_from_the_runs_first_commit(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    commit = SimpleNamespace(runtime_stage_id="seed#0")
    agent = Observed(config=_config(), snapshot=SimpleNamespace(run_id="r1", commit_log=[commit]))
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, stage="call-llm#1", ts=2.0)
    agent.emit(TURN_END, {}, ts=3.0)
    done = _spans(exporter)
    assert _a(done["invoke_agent agent"])[o.AF_RUNTIME_STAGE_ID] == "seed#0"
    assert _a(done["chat m-1"])[o.AF_RUNTIME_STAGE_ID] == "call-llm#1"


@pytest.mark.parametrize(
    "snapshot",
    [
        None,
        SimpleNamespace(run_id="other", commit_log=[SimpleNamespace(runtime_stage_id="seed#0")]),
        SimpleNamespace(run_id="r1", commit_log=[]),
    ],
    ids=["no-snapshot", "other-run", "no-commits"],
)
def test_without_the_runs_snapshot_the_root_stage_is_the_first_seen(
    tp: TracerProvider, exporter: InMemorySpanExporter, snapshot: Any
) -> None:
    agent = Observed(config=_config(), snapshot=snapshot)
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, stage="", ts=2.0)
    agent.emit(LLM_START, {}, stage="call-llm#1", ts=3.0)
    agent.emit(LLM_START, {}, stage="call-llm#5", ts=4.0)
    agent.emit(TURN_END, {}, ts=5.0)
    root = next(s for s in exporter.get_finished_spans() if s.name == "invoke_agent agent")
    assert _a(root)[o.AF_RUNTIME_STAGE_ID] == "call-llm#1"


# -- re-redaction of captured content -------------------------------------------------------------------------------
def test_captured_content_is_re_redacted_at_the_end_of_the_turn(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    seen: list[dict[str, Any]] = []

    def redact(content: dict[str, Any]) -> dict[str, Any]:
        seen.append(content)
        return {k: json.loads(json.dumps(v).replace("Ada", "[REDACTED]")) for k, v in content.items()}

    agent = Observed(config=_config(), redact=redact)
    instrument(agent, tp, capture_content=True)
    agent.emit(TURN_START, {"message": "I am Ada"}, ts=1.0)
    agent.emit(TOOL_START, {"name": "t", "tool_call_id": "c", "args": {"who": "Ada"}}, ts=2.0)
    agent.emit(TOOL_END, {"tool_call_id": "c", "content": "hello Ada"}, ts=3.0)
    agent.emit(TURN_END, {}, ts=4.0)
    done = _spans(exporter)
    assert _a(done["execute_tool t"])[o.GEN_AI_TOOL_CALL_ARGUMENTS] == '{"who": "[REDACTED]"}'
    assert _a(done["execute_tool t"])[o.GEN_AI_TOOL_CALL_RESULT] == "hello [REDACTED]"
    assert "Ada" not in _a(done["invoke_agent agent"])[o.GEN_AI_INPUT_MESSAGES]
    assert len(seen) == 2  # the tool's content and the root's; empty content is not passed


@pytest.mark.parametrize("broken", ["raises", "non-dict"])
def test_content_that_cannot_be_re_redacted_is_dropped(
    tp: TracerProvider, exporter: InMemorySpanExporter, broken: str
) -> None:
    def redact(content: dict[str, Any]) -> Any:
        if broken == "raises":
            raise ValueError("redactor down")
        return ["not", "a", "dict"]

    agent = Observed(config=_config(), redact=redact)
    instrument(agent, tp, capture_content=True)
    agent.emit(TURN_START, {"message": "I am Ada"}, ts=1.0)
    agent.emit(TOOL_START, {"name": "t", "tool_call_id": "c", "args": {"who": "Ada"}}, ts=2.0)
    agent.emit(TOOL_END, {"tool_call_id": "c", "content": "hello Ada"}, ts=3.0)
    agent.emit(TURN_END, {}, ts=4.0)
    done = _spans(exporter)
    assert set(done) == {"invoke_agent agent", "execute_tool t"}
    for span in done.values():
        assert not {o.GEN_AI_INPUT_MESSAGES, o.GEN_AI_TOOL_CALL_ARGUMENTS, o.GEN_AI_TOOL_CALL_RESULT} & set(_a(span))
    assert done["execute_tool t"].end_time == 3 * SEC and done["invoke_agent agent"].end_time == 4 * SEC


def test_rescrub_passes_content_through_without_a_redactor(tp: TracerProvider) -> None:
    inst = o._Instrumentation(Observed(config=_config()), tp.get_tracer("t"), True)
    content = {"k": "v"}
    assert inst._rescrub(content) is content
    with pytest.raises(TypeError, match="non-dict"):
        o._Instrumentation(Observed(redact=lambda c: None), tp.get_tracer("t"), True)._rescrub({"k": 1})
    assert o._Instrumentation(Observed(redact=lambda c: None), tp.get_tracer("t"), True)._rescrub({}) == {}


# -- stop ----------------------------------------------------------------------------------------------------------
def test_stop_ends_the_open_turns_and_their_children(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    stop = instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(LLM_START, {}, ts=2.0)
    agent.emit(TURN_START, {}, run="r2", ts=3.0)
    stop()
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == "invoke_agent agent"]
    assert len(spans) == 3 and len(roots) == 2
    for root in roots:
        assert _a(root)[o.AF_STATUS] == "uninstrumented"
        assert root.status.status_code == StatusCode.UNSET
        assert root.end_time is not None and root.end_time > 1_000_000 * SEC  # ended now, not at a recorded time
    agent.emit(TURN_START, {}, ts=5.0)
    assert len(exporter.get_finished_spans()) == 3


def test_spans_name_the_instrumentation_scope(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    from agentfootprint._version import __version__

    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TURN_END, {}, ts=2.0)
    scope = _spans(exporter)["invoke_agent agent"].instrumentation_scope
    assert scope is not None and (scope.name, scope.version) == ("agentfootprint", __version__)


def test_a_run_without_an_id_still_gets_its_children(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, run=None, ts=1.0)
    agent.emit(LLM_START, {}, run=None, ts=2.0)
    agent.emit(LLM_END, {}, run=None, ts=3.0)
    agent.emit(TURN_END, {}, run=None, ts=4.0)
    done = _spans(exporter)
    assert set(done) == {"invoke_agent agent", "chat m-1"}
    assert _a(done["chat m-1"])[o.AF_RUN_ID] == ""


@pytest.mark.parametrize("handler", [LLM_END, TOOL_START, TOOL_END, ERROR_PROVIDER, PAUSE_REQUESTED, PAUSE_RESUMED])
def test_the_first_stage_seen_by_any_handler_names_the_turn(
    tp: TracerProvider, exporter: InMemorySpanExporter, handler: str
) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, stage="start#0", ts=1.0)
    agent.emit(LLM_START, {}, ts=2.0)
    agent.emit(handler, {"tool_call_id": "c"}, stage="seen#3", ts=3.0)
    agent.emit(LLM_START, {}, stage="later#4", ts=4.0)
    agent.emit(TURN_END, {}, ts=5.0)
    root = next(s for s in exporter.get_finished_spans() if s.name == "invoke_agent agent")
    assert _a(root)[o.AF_RUNTIME_STAGE_ID] == "seen#3"


def test_a_resumed_tool_span_carries_its_stage(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Observed(config=_config())
    instrument(agent, tp)
    agent.emit(TURN_START, {}, ts=1.0)
    agent.emit(TOOL_END, {"name": "ask_human", "tool_call_id": "a"}, stage="tools#7", ts=2.0, it=4)
    tool = _spans(exporter)["execute_tool ask_human"]
    assert _a(tool)[o.AF_RUNTIME_STAGE_ID] == "tools#7" and _a(tool)[o.AF_ITERATION] == 4


def test_a_superseded_turn_is_closed_under_its_run(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    commit = SimpleNamespace(runtime_stage_id="seed#0")
    agent = Observed(config=_config(), snapshot=SimpleNamespace(run_id="r1", commit_log=[commit]))
    instrument(agent, tp)
    agent.emit(TURN_START, {}, stage="start#9", ts=1.0)
    agent.emit(TURN_START, {"agent": "again"}, stage="start#9", ts=2.0)
    old = _spans(exporter)["invoke_agent agent"]
    assert _a(old)[o.AF_RUNTIME_STAGE_ID] == "seed#0" and _a(old)[o.ERROR_TYPE] == "superseded"


def test_a_superseded_turn_without_a_run_id_is_closed_under_the_empty_id(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    commit = SimpleNamespace(runtime_stage_id="seed#0")
    agent = Observed(config=_config(), snapshot=SimpleNamespace(run_id="", commit_log=[commit]))
    instrument(agent, tp)
    agent.emit(TURN_START, {}, run=None, ts=1.0)
    agent.emit(TURN_START, {"agent": "again"}, run=None, ts=2.0)
    old = _spans(exporter)["invoke_agent agent"]
    assert _a(old)[o.AF_RUNTIME_STAGE_ID] == "seed#0" and _a(old)[o.ERROR_TYPE] == "superseded"
