"""OpenTelemetry spans for an Agent, following the GenAI semantic conventions (``otel`` extra).

Spans are built from the agent's events, which are redacted before any listener sees them: ``invoke_agent {name}``
per turn, with ``chat {model}`` per model call and ``execute_tool {name}`` per tool call as children. Every span
carries ``agentfootprint.run_id`` and ``agentfootprint.runtime_stage_id`` so it links back to the commit log.
Content (messages, tool arguments and results) is recorded only when capture is on; it is then re-redacted at the
end of the turn with everything the run learned, and the turn's spans are ended together at their recorded times.
``invoke_agent`` is parented on the caller's current span; no span is made current (a cancelled turn cannot leak
context), so spans from other instrumentations inside a tool become siblings, not children.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agentfootprint.events import AgentEvent
from agentfootprint.events.catalogue import (
    AgentTurnEnd,
    AgentTurnStart,
    ErrorProvider,
    ErrorRun,
    PauseRequested,
    PauseResumed,
    StreamLlmEnd,
    StreamLlmStart,
    StreamToolEnd,
    StreamToolStart,
)

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = [
    "AF_ITERATION",
    "AF_PAUSED",
    "AF_RUNTIME_STAGE_ID",
    "AF_RUN_ID",
    "AF_STATUS",
    "CAPTURE_CONTENT_ENV",
    "ERROR_TYPE",
    "GEN_AI_AGENT_ID",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_OUTPUT_MESSAGES",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MAX_TOKENS",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_REQUEST_TEMPERATURE",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_SYSTEM_INSTRUCTIONS",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "OPERATION_CHAT",
    "OPERATION_EXECUTE_TOOL",
    "OPERATION_INVOKE_AGENT",
    "OtelUnavailableError",
    "capture_content_from_env",
    "instrument",
    "otel_available",
]

# -- attribute names (the one place they are spelled) -----------------------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_TEMPERATURE = "gen_ai.request.temperature"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
AF_RUN_ID = "agentfootprint.run_id"
AF_RUNTIME_STAGE_ID = "agentfootprint.runtime_stage_id"
AF_ITERATION = "agentfootprint.iteration"
AF_STATUS = "agentfootprint.status"
AF_PAUSED = "agentfootprint.paused"

OPERATION_INVOKE_AGENT = "invoke_agent"


class Observable(Protocol):
    """What ``instrument`` watches: a runner whose events can be listened to (an agent, a composition)."""

    def on(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]: ...


OPERATION_CHAT = "chat"
OPERATION_EXECUTE_TOOL = "execute_tool"
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})

_TURN_START = AgentTurnStart.event_type
_TURN_END = AgentTurnEnd.event_type
_LLM_START = StreamLlmStart.event_type
_LLM_END = StreamLlmEnd.event_type
_TOOL_START = StreamToolStart.event_type
_TOOL_END = StreamToolEnd.event_type
_ERROR_PROVIDER = ErrorProvider.event_type
_ERROR_RUN = ErrorRun.event_type
_PAUSE_REQUESTED = PauseRequested.event_type
_PAUSE_RESUMED = PauseResumed.event_type
_SUBSCRIBED = (
    _TURN_START,
    _TURN_END,
    _LLM_START,
    _LLM_END,
    _TOOL_START,
    _TOOL_END,
    _ERROR_PROVIDER,
    _ERROR_RUN,
    _PAUSE_REQUESTED,
    _PAUSE_RESUMED,
)
_MAX_NAME = 200
_USAGE_ATTRS = (
    ("input_tokens", GEN_AI_USAGE_INPUT_TOKENS),
    ("output_tokens", GEN_AI_USAGE_OUTPUT_TOKENS),
    ("cached_input_tokens", GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS),
    ("cache_write_tokens", GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS),
)


_BY_CLASS = {
    "AnthropicProvider": "anthropic",
    "AzureOpenAIProvider": "azure.ai.openai",
    "BedrockProvider": "aws.bedrock",
    "OllamaProvider": "ollama",
}
_BY_HOST = {
    "api.openai.com": "openai",
    "api.groq.com": "groq",
    "api.deepseek.com": "deepseek",
    "api.mistral.ai": "mistral_ai",
    "api.x.ai": "x_ai",
    "api.perplexity.ai": "perplexity",
    "api.cohere.com": "cohere",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "gcp.gemini",
}


def _unwrapped(provider: Any) -> Any:
    """The provider that talks to the vendor, through retry and recording wrappers (a fallback's first)."""
    for _ in range(8):
        inner = getattr(provider, "inner", None)
        if inner is None:
            listed = getattr(provider, "providers", None)
            inner = listed[0] if isinstance(listed, list | tuple) and listed else None
        if inner is None:
            return provider
        provider = inner
    return provider


def provider_name(provider: Any) -> str:
    """``gen_ai.provider.name``: the semantic conventions' well-known value for the vendor (``openai``,
    ``anthropic``, ``gcp.gemini``, ``gcp.vertex_ai``, ``aws.bedrock``, ``azure.ai.openai``...), else the
    provider's own name."""
    inner = _unwrapped(provider)
    kind = type(inner).__name__
    if kind == "GeminiProvider":
        return "gcp.vertex_ai" if getattr(inner, "vertex", False) else "gcp.gemini"
    if kind in _BY_CLASS:
        return _BY_CLASS[kind]
    host = _server(inner).get(SERVER_ADDRESS)
    if isinstance(host, str) and host in _BY_HOST:
        return _BY_HOST[host]
    if isinstance(host, str) and host.endswith(".openai.azure.com"):
        return "azure.ai.openai"
    return _text(getattr(provider, "name", None) or kind)


def _server(provider: Any) -> dict[str, Any]:
    """``server.address`` / ``server.port`` of a provider that calls a URL (nothing for in-process ones)."""
    from urllib.parse import urlsplit

    base = getattr(_unwrapped(provider), "base_url", None)
    if not isinstance(base, str) or not base:
        return {}
    try:
        parts = urlsplit(base)
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        return {}
    if not parts.hostname:
        return {}
    out: dict[str, Any] = {SERVER_ADDRESS: parts.hostname}
    if port is not None:
        out[SERVER_PORT] = port
    return out


class OtelUnavailableError(ImportError):
    """OpenTelemetry is not installed: ``pip install 'agentfootprint[otel]'``."""

    code = "ERR_OTEL_UNAVAILABLE"


def otel_available() -> bool:
    """Whether ``opentelemetry-api`` can be imported."""
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def capture_content_from_env() -> bool:
    """Content capture as ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says (off unless set)."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURE_ON


def _ns(timestamp: Any) -> int | None:
    if isinstance(timestamp, bool) or not isinstance(timestamp, int | float) or timestamp <= 0:
        return None
    return int(timestamp * 1_000_000_000)


def _text(value: Any, limit: int = _MAX_NAME) -> str:
    return (value if isinstance(value, str) else str(value))[:limit]


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tool_call_part(call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call as a GenAI ``tool_call`` message part."""
    return {"type": "tool_call", "id": call.get("id"), "name": call.get("name"), "arguments": call.get("args")}


def _chat_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One sent message (our ``Message`` dump) in the GenAI input-messages shape: a role and its parts."""
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        response = {"type": "tool_call_response", "id": message.get("tool_call_id"), "response": content or ""}
        return {"role": "tool", "parts": [response]}
    parts: list[dict[str, Any]] = []
    if isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, Mapping):
            parts.append(_tool_call_part(call))
    return {"role": role if role in ("user", "assistant") else "user", "parts": parts}


@dataclass(eq=False)
class _Open:
    """A live span, its deferred content attributes and its recorded end."""

    span: Span
    content: dict[str, Any] = field(default_factory=dict)
    end_ns: int | None = None
    ended: bool = False


@dataclass(eq=False)
class _Turn:
    """The spans of one run (keyed by run id)."""

    root: _Open
    context: Context
    stage_id: str | None = None
    chat: _Open | None = None
    tools: dict[str, _Open] = field(default_factory=dict)
    resumed_at: dict[str, int | None] = field(default_factory=dict)
    done: list[_Open] = field(default_factory=list)


class _Instrumentation:
    """Turns one agent's events into spans; ``stop()`` unsubscribes and closes what is still open."""

    def __init__(self, agent: Observable, tracer: Tracer, capture: bool) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry import trace

        self._agent = agent
        self._tracer = tracer
        self._capture = capture
        self._trace = trace
        self._ctx = otel_context
        self._turns: dict[str, _Turn] = {}
        self._lock = threading.RLock()
        self._unsubscribe: list[Callable[[], None]] = []
        self._stopped = False
        config = getattr(agent, "config", None)
        provider = getattr(config, "provider", None)
        self._provider_name = provider_name(provider)
        self._server = _server(provider)
        self._model = _text(getattr(config, "model", "") or "")
        self._temperature = getattr(config, "temperature", None)
        self._max_tokens = _int(getattr(config, "max_tokens", None))
        self._agent_name = _text(getattr(agent, "name", None) or "agent")
        agent_id = getattr(agent, "id", None)
        self._agent_id = _text(agent_id) if isinstance(agent_id, str) and agent_id else None
        handlers: dict[str, Callable[[Any], None]] = {
            _TURN_START: self._turn_start,
            _TURN_END: self._turn_end,
            _LLM_START: self._llm_start,
            _LLM_END: self._llm_end,
            _TOOL_START: self._tool_start,
            _TOOL_END: self._tool_end,
            _ERROR_PROVIDER: self._provider_error,
            _ERROR_RUN: self._run_error,
            _PAUSE_REQUESTED: self._pause_requested,
            _PAUSE_RESUMED: self._pause_resumed,
        }
        try:
            for event_type in _SUBSCRIBED:
                self._unsubscribe.append(agent.on(event_type, self._guarded(handlers[event_type])))
        except BaseException:
            self.stop()
            raise

    # -- plumbing ----------------------------------------------------------------------------------------------
    def _guarded(self, handler: Callable[[Any], None]) -> Callable[[Any], None]:
        def listener(event: Any) -> None:
            with self._lock:
                if not self._stopped:
                    handler(event)

        listener.__qualname__ = f"otel.{handler.__name__.lstrip('_')}"
        return listener

    @staticmethod
    def _meta(event: Any) -> tuple[str | None, str | None, int | None, int | None]:
        meta = event.meta
        return meta.run_id, meta.runtime_stage_id, _ns(meta.timestamp), _int(meta.iteration)

    def _error(self, span: Span, error_type: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute(ERROR_TYPE, error_type)
        span.set_status(Status(StatusCode.ERROR, error_type))

    def _child(self, turn: _Turn, name: str, kind: Any, start_ns: int | None, attributes: dict[str, Any]) -> _Open:
        parent = self._trace.set_span_in_context(turn.root.span, turn.context)
        span = self._tracer.start_span(name, context=parent, kind=kind, attributes=attributes, start_time=start_ns)
        return _Open(span=span)

    def _base(self, run_id: str | None, stage_id: str | None, operation: str) -> dict[str, Any]:
        attrs: dict[str, Any] = {GEN_AI_OPERATION_NAME: operation, AF_RUN_ID: run_id or ""}
        attrs[AF_RUNTIME_STAGE_ID] = stage_id or ""
        return attrs

    def _finish(self, turn: _Turn, opened: _Open, end_ns: int | None) -> None:
        """A child is over: end it now, or (capturing content) when the turn ends."""
        opened.end_ns = end_ns
        if self._capture:
            turn.done.append(opened)
        else:
            opened.span.end(end_time=end_ns)
            opened.ended = True

    def _seal(self, opened: _Open, content: dict[str, Any] | None) -> None:
        if opened.ended:
            return
        if content:
            for key, value in content.items():
                opened.span.set_attribute(key, _json(value))
        opened.span.end(end_time=opened.end_ns)
        opened.ended = True

    def _rescrub(self, content: dict[str, Any]) -> dict[str, Any]:
        """Re-redact deferred content with everything the run has learned (the agent's event redactor)."""
        events = getattr(self._agent, "events", None)
        redact = getattr(events, "redact", None)
        if not content or not callable(redact):
            return content
        cleaned = redact(dict(content))
        if not isinstance(cleaned, dict):
            raise TypeError("the agent's redactor returned a non-dict")
        return cleaned

    def _close_turn(self, run_id: str, turn: _Turn, end_ns: int | None, error_type: str | None) -> None:
        self._turns.pop(run_id, None)
        open_children = [c for c in (turn.chat, *turn.tools.values()) if c is not None]
        turn.chat, turn.tools = None, {}
        for child in open_children:
            if error_type is not None:
                self._error(child.span, error_type)
            self._finish(turn, child, end_ns)
        root = turn.root
        stage_id = self._first_stage(run_id) or turn.stage_id  # the run's root stage, else its first seen stage
        if stage_id is not None:
            root.span.set_attribute(AF_RUNTIME_STAGE_ID, stage_id)
        if error_type is not None:
            self._error(root.span, error_type)
        root.end_ns = end_ns
        pending = [*turn.done, root]
        for opened in pending:
            try:
                content = self._rescrub(opened.content) if self._capture else None
            except Exception:
                content = None  # fail closed: content we cannot re-redact is dropped
            self._seal(opened, content)

    def _first_stage(self, run_id: str) -> str | None:
        getter = getattr(self._agent, "last_snapshot", None)
        snapshot = getter() if callable(getter) else None
        if snapshot is None or getattr(snapshot, "run_id", None) != run_id or not snapshot.commit_log:
            return None
        stage: str = snapshot.commit_log[0].runtime_stage_id
        return stage

    def _turn_of(self, run_id: str | None, stage_id: str | None) -> _Turn | None:
        turn = self._turns.get(run_id or "")
        if turn is not None and turn.stage_id is None and stage_id:
            turn.stage_id = stage_id
        return turn

    # -- handlers ----------------------------------------------------------------------------------------------
    def _turn_start(self, event: Any) -> None:
        from opentelemetry.trace import SpanKind

        run_id, stage_id, ts, _ = self._meta(event)
        payload = AgentTurnStart.view(event.payload)
        name = _text(payload.agent or self._agent_name)
        attrs = self._base(run_id, stage_id, OPERATION_INVOKE_AGENT)
        attrs.update({GEN_AI_AGENT_NAME: name, GEN_AI_PROVIDER_NAME: self._provider_name})
        if self._agent_id is not None:
            attrs[GEN_AI_AGENT_ID] = self._agent_id
        if self._model:
            attrs[GEN_AI_REQUEST_MODEL] = self._model
        session = payload.session_id
        if isinstance(session, str) and session:
            attrs[GEN_AI_CONVERSATION_ID] = _text(session)
        parent = self._ctx.get_current()
        span = self._tracer.start_span(
            f"{OPERATION_INVOKE_AGENT} {name}", context=parent, kind=SpanKind.INTERNAL, attributes=attrs, start_time=ts
        )
        root = _Open(span=span)
        message = payload.message
        if self._capture and isinstance(message, str):
            root.content[GEN_AI_INPUT_MESSAGES] = [{"role": "user", "parts": [{"type": "text", "content": message}]}]
        stale = self._turns.pop(run_id or "", None)
        if stale is not None:
            self._close_turn(run_id or "", stale, ts, "superseded")
        self._turns[run_id or ""] = _Turn(root=root, context=parent)

    def _turn_end(self, event: Any) -> None:
        run_id, _, ts, _ = self._meta(event)
        turn = self._turns.get(run_id or "")
        if turn is None:
            return
        payload = AgentTurnEnd.view(event.payload)
        status = payload.status
        span = turn.root.span
        if isinstance(status, str):
            span.set_attribute(AF_STATUS, status)
            if status == "paused":
                span.set_attribute(AF_PAUSED, True)
        usage = payload.usage
        if isinstance(usage, Mapping):
            self._usage(span, usage)
        answer = payload.answer
        if self._capture and isinstance(answer, str):
            turn.root.content[GEN_AI_OUTPUT_MESSAGES] = [
                {"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}
            ]
        self._close_turn(run_id or "", turn, ts, None)

    def _run_error(self, event: Any) -> None:
        run_id, _, ts, _ = self._meta(event)
        turn = self._turns.get(run_id or "")
        if turn is None:
            return
        error_type = _text(ErrorRun.view(event.payload).error_type or "error")
        turn.root.span.set_attribute(AF_STATUS, "failed")
        self._close_turn(run_id or "", turn, ts, error_type)

    def _llm_start(self, event: Any) -> None:
        from opentelemetry.trace import SpanKind

        run_id, stage_id, ts, iteration = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        if turn is None:
            return
        if turn.chat is not None:  # an unmatched start: close it before the next call
            self._finish(turn, turn.chat, ts)
        payload = StreamLlmStart.view(event.payload)
        model = _text(payload.model or self._model)
        attrs = self._base(run_id, stage_id, OPERATION_CHAT)
        attrs[GEN_AI_PROVIDER_NAME] = self._provider_name
        attrs.update(self._server)
        if model:
            attrs[GEN_AI_REQUEST_MODEL] = model
        if isinstance(self._temperature, int | float) and not isinstance(self._temperature, bool):
            attrs[GEN_AI_REQUEST_TEMPERATURE] = float(self._temperature)
        if self._max_tokens is not None:
            attrs[GEN_AI_REQUEST_MAX_TOKENS] = self._max_tokens
        if iteration is not None:
            attrs[AF_ITERATION] = iteration
        name = f"{OPERATION_CHAT} {model}" if model else OPERATION_CHAT
        chat = self._child(turn, name, SpanKind.CLIENT, ts, attrs)
        if self._capture:  # what was sent, when the agent records it (record_system_prompt)
            system = payload.system_prompt_text
            if isinstance(system, str) and system:
                chat.content[GEN_AI_SYSTEM_INSTRUCTIONS] = [{"type": "text", "content": system}]
            if isinstance(payload.messages, list):
                chat.content[GEN_AI_INPUT_MESSAGES] = [
                    _chat_message(m) for m in payload.messages if isinstance(m, Mapping)
                ]
        turn.chat = chat

    def _usage(self, span: Span, usage: Mapping[str, Any]) -> None:
        for key, attr in _USAGE_ATTRS:
            value = _int(usage.get(key))
            if value is not None:
                span.set_attribute(attr, value)

    def _llm_end(self, event: Any) -> None:
        run_id, stage_id, ts, _ = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        if turn is None or turn.chat is None:
            return
        chat, turn.chat = turn.chat, None
        payload = StreamLlmEnd.view(event.payload)
        span = chat.span
        model = payload.model or payload.response_model  # only what was reported, never the request's model
        if isinstance(model, str) and model:
            span.set_attribute(GEN_AI_RESPONSE_MODEL, _text(model))
        if isinstance(payload.response_id, str) and payload.response_id:
            span.set_attribute(GEN_AI_RESPONSE_ID, _text(payload.response_id))
        usage = payload.usage
        if isinstance(usage, Mapping):
            self._usage(span, usage)
        finish = payload.finish_reason
        if isinstance(finish, str) and finish:
            span.set_attribute(GEN_AI_RESPONSE_FINISH_REASONS, [_text(finish)])
        if self._capture:
            parts: list[dict[str, Any]] = []
            content = payload.content
            if isinstance(content, str) and content:
                parts.append({"type": "text", "content": content})
            for call in payload.tool_calls if isinstance(payload.tool_calls, list) else []:
                if isinstance(call, Mapping):
                    parts.append(_tool_call_part(call))
            message: dict[str, Any] = {"role": "assistant", "parts": parts}
            if isinstance(finish, str) and finish:
                message["finish_reason"] = finish
            chat.content[GEN_AI_OUTPUT_MESSAGES] = [message]
        self._finish(turn, chat, ts)

    def _provider_error(self, event: Any) -> None:
        run_id, stage_id, ts, _ = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        if turn is None or turn.chat is None:
            return
        chat, turn.chat = turn.chat, None
        self._error(chat.span, _text(ErrorProvider.view(event.payload).error_type or "provider_error"))
        self._finish(turn, chat, ts)

    def _tool_span(self, turn: _Turn, run_id: str | None, stage_id: str | None, event: Any, ts: int | None) -> _Open:
        from opentelemetry.trace import SpanKind

        payload = StreamToolStart.view(event.payload)  # a tool_end carries the same name and call id
        name = _text(payload.name or "tool")
        call_id = _text(payload.tool_call_id or "")
        attrs = self._base(run_id, stage_id, OPERATION_EXECUTE_TOOL)
        attrs.update({GEN_AI_TOOL_NAME: name, GEN_AI_TOOL_TYPE: "function"})
        if call_id:
            attrs[GEN_AI_TOOL_CALL_ID] = call_id
        iteration = _int(event.meta.iteration)
        if iteration is not None:
            attrs[AF_ITERATION] = iteration
        return self._child(turn, f"{OPERATION_EXECUTE_TOOL} {name}", SpanKind.INTERNAL, ts, attrs)

    def _tool_start(self, event: Any) -> None:
        run_id, stage_id, ts, _ = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        if turn is None:
            return
        tool = self._tool_span(turn, run_id, stage_id, event, ts)
        payload = StreamToolStart.view(event.payload)
        if self._capture and "args" in payload.model_fields_set:
            tool.content[GEN_AI_TOOL_CALL_ARGUMENTS] = payload.args
        key = _text(payload.tool_call_id or "")
        previous = turn.tools.pop(key, None)
        if previous is not None:
            self._finish(turn, previous, ts)
        turn.tools[key] = tool

    def _tool_end(self, event: Any) -> None:
        run_id, stage_id, ts, _ = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        if turn is None:
            return
        payload = StreamToolEnd.view(event.payload)
        key = _text(payload.tool_call_id or "")
        tool = turn.tools.pop(key, None)
        if tool is None:  # the answered call of a resumed run: its span starts when the run resumed
            start = turn.resumed_at.pop(key, None)
            tool = self._tool_span(turn, run_id, stage_id, event, start if start is not None else ts)
            tool.span.set_attribute(AF_STATUS, "resumed")
        if payload.is_error is True:
            self._error(tool.span, _text(payload.error_code or "tool_error"))
        if self._capture and "content" in payload.model_fields_set:
            tool.content[GEN_AI_TOOL_CALL_RESULT] = payload.content
        self._finish(turn, tool, ts)

    def _pause_requested(self, event: Any) -> None:
        run_id, stage_id, _, _ = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        call_id = PauseRequested.view(event.payload).tool_call_id
        tool = turn.tools.get(_text(call_id or "")) if turn is not None else None
        if tool is not None:
            tool.span.set_attribute(AF_PAUSED, True)

    def _pause_resumed(self, event: Any) -> None:
        run_id, stage_id, ts, _ = self._meta(event)
        turn = self._turn_of(run_id, stage_id)
        if turn is not None:
            turn.resumed_at[_text(PauseResumed.view(event.payload).tool_call_id or "")] = ts

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Unsubscribe (idempotent); spans of a turn still in flight are ended now."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            unsubscribe, self._unsubscribe = self._unsubscribe, []
            for fn in unsubscribe:
                fn()
            for run_id, turn in list(self._turns.items()):
                turn.root.span.set_attribute(AF_STATUS, "uninstrumented")
                self._close_turn(run_id, turn, None, None)


def instrument(
    agent: Observable,
    tracer_provider: TracerProvider | None = None,
    *,
    capture_content: bool | None = None,
) -> Callable[[], None]:
    """Emit GenAI spans for ``agent``'s turns; returns ``uninstrument()``.

    ``capture_content=None`` follows ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (off unless set).
    """
    if not callable(getattr(agent, "on", None)):
        raise TypeError(f"instrument() takes an Agent (something with .on(type, fn)), got {type(agent).__name__}")
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise OtelUnavailableError("OpenTelemetry is not installed: pip install 'agentfootprint[otel]'") from exc
    from agentfootprint._version import __version__

    tracer = trace.get_tracer("agentfootprint", __version__, tracer_provider)
    capture = capture_content_from_env() if capture_content is None else bool(capture_content)
    return _Instrumentation(agent, tracer, capture).stop
