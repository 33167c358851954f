"""Agent events → AG-UI events, in order, plus the AG-UI messages the server keeps for the thread."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from ag_ui.core import (
    BaseEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from agentfootprint.events import AgentEvent
from agentfootprint.events.catalogue import (
    PauseRequested,
    StreamLlmEnd,
    StreamLlmStart,
    StreamToken,
    StreamToolEnd,
    StreamToolStart,
)

__all__ = ["MODEL_STEP", "AgUiTranslator", "as_text", "new_id"]

MODEL_STEP = "call-llm"
"""The AG-UI step name around each model call."""


def new_id(prefix: str) -> str:
    """A fresh server-minted id (id charset, well under 128 characters)."""
    return f"{prefix}-{uuid.uuid4().hex}"


def as_text(value: Any) -> str:
    """A tool result or answer as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class AgUiTranslator:
    """An agent listener: maps its stream events to AG-UI events (handed to ``sink``) and records messages."""

    EVENTS: tuple[str, ...] = (
        StreamToken.event_type,
        StreamLlmStart.event_type,
        StreamLlmEnd.event_type,
        StreamToolStart.event_type,
        StreamToolEnd.event_type,
        PauseRequested.event_type,
    )
    """The event types it reads (listen to these alone: an event nobody listens to is never built)."""

    def __init__(
        self,
        sink: Callable[[BaseEvent], None],
        *,
        quiet_results: Iterable[str] = (),
        unstreamed_results: Iterable[str] = (),
    ) -> None:
        """``quiet_results``: calls the page answered (neither streamed nor kept); ``unstreamed_results``: kept only."""
        self._sink = sink
        self._quiet = frozenset(quiet_results)
        self._unstreamed = frozenset(unstreamed_results)
        self.messages: list[dict[str, Any]] = []
        self.pause: PauseRequested | None = None
        self._message_id: str | None = None
        self._text_open = False
        self._step_open = False
        self._text: list[str] = []
        self._assistant: dict[str, Any] | None = None
        self.input_tokens = 0
        self.output_tokens = 0

    def __call__(self, event: AgentEvent) -> None:
        """Handle one agent event (a listener for ``"*"``)."""
        payload = event.typed
        if isinstance(payload, StreamToken):
            self._token(payload.text)
        elif isinstance(payload, StreamLlmStart):
            self._llm_start()
        elif isinstance(payload, StreamLlmEnd):
            self._llm_end(payload)
        elif isinstance(payload, StreamToolStart):
            self._tool_start(payload)
        elif isinstance(payload, StreamToolEnd):
            self._tool_end(payload)
        elif isinstance(payload, PauseRequested):
            self.pause = payload

    def close(self) -> None:
        """Close an open text message and step (before a RUN_ERROR)."""
        if self._text_open and self._message_id is not None:
            self._sink(TextMessageEndEvent(message_id=self._message_id))
            self._text_open = False
        if self._step_open:
            self._sink(StepFinishedEvent(step_name=MODEL_STEP))
            self._step_open = False

    def _llm_start(self) -> None:
        self.close()
        self._message_id = new_id("msg")
        self._text = []
        self._assistant = None
        self._sink(StepStartedEvent(step_name=MODEL_STEP))
        self._step_open = True

    def _token(self, text: Any) -> None:
        if not isinstance(text, str) or not text:
            return
        if self._message_id is None:
            self._message_id = new_id("msg")
        if not self._text_open:
            self._sink(TextMessageStartEvent(message_id=self._message_id, role="assistant"))
            self._text_open = True
        self._sink(TextMessageContentEvent(message_id=self._message_id, delta=text))
        self._text.append(text)

    def _llm_end(self, payload: StreamLlmEnd) -> None:
        usage = payload.usage
        if isinstance(usage, dict):
            self.input_tokens += _count(usage.get("input_tokens"))
            self.output_tokens += _count(usage.get("output_tokens"))
        message_id = self._message_id or new_id("msg")
        content = payload.content
        streamed = "".join(self._text)
        if self._text_open and payload.reasoning:  # streamed text ends before the reasoning is shown
            self._sink(TextMessageEndEvent(message_id=message_id))
            self._text_open = False
        self._reasoning(payload.reasoning)
        if not streamed and isinstance(content, str) and content:
            self._sink(TextMessageStartEvent(message_id=message_id, role="assistant"))
            self._sink(TextMessageContentEvent(message_id=message_id, delta=content))
            self._text_open = True
            streamed = content
        self._message_id = message_id
        self.close()
        calls = payload.tool_calls
        if streamed or calls:
            record: dict[str, Any] = {"id": message_id, "role": "assistant", "content": streamed or None}
            self.messages.append(record)
            self._assistant = record

    def _reasoning(self, given: list[str] | None) -> None:
        """The reply's reasoning as one AG-UI reasoning message (shown to the page, never kept as the answer)."""
        texts = [text for text in given or () if isinstance(text, str) and text]
        if not texts:
            return
        reasoning_id = new_id("reasoning")
        self._sink(ReasoningStartEvent(message_id=reasoning_id))
        self._sink(ReasoningMessageStartEvent(message_id=reasoning_id, role="reasoning"))
        self._sink(ReasoningMessageContentEvent(message_id=reasoning_id, delta="\n\n".join(texts)))
        self._sink(ReasoningMessageEndEvent(message_id=reasoning_id))
        self._sink(ReasoningEndEvent(message_id=reasoning_id))

    def _tool_start(self, payload: StreamToolStart) -> None:
        call_id = str(payload.tool_call_id)
        name = str(payload.name)
        arguments = as_text(payload.args if payload.args is not None else {})
        parent = self._assistant["id"] if self._assistant is not None else None
        if self._assistant is not None:
            self._assistant.setdefault("toolCalls", []).append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            )
        self._sink(ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name, parent_message_id=parent))
        self._sink(ToolCallArgsEvent(tool_call_id=call_id, delta=arguments))
        self._sink(ToolCallEndEvent(tool_call_id=call_id))

    def _tool_end(self, payload: StreamToolEnd) -> None:
        call_id = str(payload.tool_call_id)
        if call_id in self._quiet:
            return
        content = as_text(payload.content)
        message_id = new_id("tool")
        self.messages.append({"id": message_id, "role": "tool", "toolCallId": call_id, "content": content})
        if call_id in self._unstreamed:  # a call started in an earlier run: a result here would reference nothing
            return
        self._sink(ToolCallResultEvent(message_id=message_id, tool_call_id=call_id, content=content, role="tool"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
