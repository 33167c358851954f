"""Deterministic scripted provider for tests, examples and ablation reruns."""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any, TypeAlias

from agentfootprint.providers._clone import deep_clone
from agentfootprint.providers._models import LLMRequest, LLMResponse, Message, StreamChunk, ToolCall, Usage
from agentfootprint.providers.base import BaseProvider
from agentfootprint.providers.errors import MockExhaustedError, MockReplyError, ProviderConfigError

Reply: TypeAlias = str | dict[str, Any] | LLMResponse
RespondFn: TypeAlias = Callable[[LLMRequest], Reply | Awaitable[Reply]]

_REPLY_KEYS = ("content", "tool_calls", "usage", "finish_reason")
_CALL_KEYS = ("id", "name", "args")
_WORD_CHUNK = re.compile(r"\s*\S+|\s+$")
_ARGS_TEXT = json.JSONEncoder(sort_keys=True, default=str)
"""Tool arguments as ``json.dumps(args, sort_keys=True, default=str)`` writes them (the encoder built once)."""
_ARGS_UNCHECKED = (
    c_make_encoder(None, str, encode_basestring_ascii, None, ": ", ", ", True, False, True)
    if c_make_encoder is not None
    else None
)
"""The C encoder ``_ARGS_TEXT`` builds per call, made once without a marker table (it keeps no state: shareable)."""


def _args_text(args: Any) -> str:
    """``_ARGS_TEXT.encode(args)``; only arguments that recursed too deep are encoded again with the cycle check,
    so a cycle is refused as ``json.dumps`` refuses it."""
    if _ARGS_UNCHECKED is None or type(args) is not dict:
        return _ARGS_TEXT.encode(args)
    try:
        return "".join(_ARGS_UNCHECKED(args, 0))
    except RecursionError:
        return _ARGS_TEXT.encode(args)


def _words(text: str) -> int:
    return len(text.split())


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _parse_tool_call(raw: object, where: str, index: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise MockReplyError(f"{where}: field 'tool_calls[{index}]' must be an object, got {_type_name(raw)}")
    for key in raw:
        if key not in _CALL_KEYS:
            raise MockReplyError(
                f"{where}: unknown field 'tool_calls[{index}].{key}' (expected {', '.join(_CALL_KEYS)})"
            )
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise MockReplyError(f"{where}: field 'tool_calls[{index}].name' must be a non-empty string")
    call_id = raw.get("id", f"call_{index}")
    if not isinstance(call_id, str):
        raise MockReplyError(f"{where}: field 'tool_calls[{index}].id' must be a string")
    args = raw.get("args", {})
    if not isinstance(args, dict) or not all(isinstance(k, str) for k in args):
        raise MockReplyError(f"{where}: field 'tool_calls[{index}].args' must be an object")
    return ToolCall(id=call_id, name=name, args=dict(args))


def _parse_usage(raw: object, where: str) -> Usage:
    if isinstance(raw, Usage):
        return raw.model_copy()
    if not isinstance(raw, dict):
        raise MockReplyError(f"{where}: field 'usage' must be an object")
    values: dict[str, int] = {}
    for key, value in raw.items():
        if key not in ("input_tokens", "output_tokens"):
            raise MockReplyError(f"{where}: unknown field 'usage.{key}' (expected input_tokens, output_tokens)")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise MockReplyError(f"{where}: field 'usage.{key}' must be a non-negative integer")
        values[key] = value
    return Usage(**values)


def _parse_dict(raw: dict[Any, Any], where: str) -> LLMResponse:
    for key in raw:
        if key not in _REPLY_KEYS:
            raise MockReplyError(f"{where}: unknown field '{key}' (expected {', '.join(_REPLY_KEYS)})")
    if "content" not in raw and "tool_calls" not in raw:
        raise MockReplyError(f"{where}: a reply dict needs 'content' and/or 'tool_calls'")
    content = raw.get("content", "")
    if not isinstance(content, str):
        raise MockReplyError(f"{where}: field 'content' must be a string, got {_type_name(content)}")
    raw_calls = raw.get("tool_calls", [])
    if not isinstance(raw_calls, list):
        raise MockReplyError(f"{where}: field 'tool_calls' must be a list, got {_type_name(raw_calls)}")
    calls = [_parse_tool_call(item, where, i) for i, item in enumerate(raw_calls)]
    fields: dict[str, Any] = {"content": content, "tool_calls": calls}
    if "usage" in raw:
        fields["usage"] = _parse_usage(raw["usage"], where)
    if "finish_reason" in raw:
        reason = raw["finish_reason"]
        if reason is not None and not isinstance(reason, str):
            raise MockReplyError(f"{where}: field 'finish_reason' must be a string")
        fields["finish_reason"] = reason
    return LLMResponse(**fields)


def coerce_reply(value: object, where: str) -> LLMResponse:
    """A scripted ``str | dict | LLMResponse`` as a fresh ``LLMResponse``; ``MockReplyError`` if bad."""
    if isinstance(value, str):
        return LLMResponse(content=value)
    if isinstance(value, LLMResponse):
        return deep_clone(value)
    if isinstance(value, dict):
        return _parse_dict(value, where)
    raise MockReplyError(f"{where}: expected a str, dict or LLMResponse, got {_type_name(value)}")


def _message_words(message: Message) -> int:
    words = _words(message.content)
    for call in message.tool_calls:
        words += 1 + _words(_args_text(call.args))
    return words


class _WordTally:
    """Remembers the word count of the last conversation so a grown one only counts its new messages."""

    __slots__ = ("count", "first", "last", "length", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.first: object = None
        self.last: object = None
        self.length = 0
        self.count = 0

    def words_in(self, messages: Sequence[Message]) -> int:
        with self.lock:
            return self._words_in(messages)

    def _words_in(self, messages: Sequence[Message]) -> int:
        n = self.length
        if n and len(messages) >= n and messages[0] is self.first and messages[n - 1] is self.last:
            total = self.count + sum(_message_words(m) for m in messages[n:])
        else:
            total = sum(_message_words(m) for m in messages)
        if messages:
            self.first, self.last, self.length, self.count = messages[0], messages[-1], len(messages), total
        return total


def estimate_usage(request: LLMRequest, response: LLMResponse, tally: _WordTally | None = None) -> Usage:
    """Deterministic token estimate: whitespace words in, whitespace words (and tool calls) out."""
    words_in = _words(request.system_prompt)
    words_in += (
        tally.words_in(request.messages) if tally is not None else sum(_message_words(m) for m in request.messages)
    )
    words_out = _words(response.content)
    for call in response.tool_calls:
        words_out += 1 + _words(_args_text(call.args))
    return Usage(input_tokens=words_in, output_tokens=words_out)


def split_words(text: str) -> list[str]:
    """Split text into word chunks (leading whitespace kept) whose concatenation is the text."""
    return _WORD_CHUNK.findall(text)


class MockProvider(BaseProvider):
    """Answers from a fixed reply, a script of replies, or a ``respond`` function; records every request.

    ``deterministic_for_seed``: one seeded request always gets one answer (a rerun may reuse a recorded one)."""

    deterministic_for_seed = True
    carries_forced_tool_choice = True
    carries_native_output = True
    """The script sees the whole request (``tool_choice``, ``response_format``): it carries both."""

    def __init__(
        self,
        *,
        reply: str | None = None,
        replies: Sequence[Reply] | None = None,
        respond: RespondFn | None = None,
        name: str = "mock",
        usage: Usage | dict[str, int] | None = None,
        record_requests: bool = True,
    ) -> None:
        options = (("reply", reply), ("replies", replies), ("respond", respond))
        given = [label for label, value in options if value is not None]
        if len(given) != 1:
            detail = "none was given" if not given else f"got {', '.join(given)}"
            raise ProviderConfigError(f"mock() needs exactly one of reply=, replies= or respond= ({detail})")
        if reply is not None and not isinstance(reply, str):
            raise ProviderConfigError(f"mock(reply=...) must be a str, got {_type_name(reply)}")
        if respond is not None and not callable(respond):
            raise ProviderConfigError("mock(respond=...) must be callable")
        if replies is not None and (isinstance(replies, str | bytes | dict) or not isinstance(replies, Sequence)):
            raise ProviderConfigError("mock(replies=...) must be a list of str, dict or LLMResponse")
        self.name = name
        self.record_requests = record_requests
        self._tally = _WordTally()
        self._reply = reply
        self._replies = (
            [coerce_reply(item, f"mock replies[{i}]") for i, item in enumerate(replies)]
            if replies is not None
            else None
        )
        self._respond = respond
        self._usage = _parse_usage(usage, "mock(usage=...)") if usage is not None else None
        self._lock = threading.Lock()
        self._calls = 0
        self.requests: list[LLMRequest] = []

    @property
    def calls(self) -> int:
        """How many times the provider was called (``complete`` or ``stream``)."""
        return self._calls

    def reset(self) -> None:
        """Rewind the script and forget recorded requests."""
        with self._lock:
            self._calls = 0
            self.requests.clear()

    def __repr__(self) -> str:
        return f"MockProvider(name={self.name!r}, calls={self._calls})"

    def _record(self, request: LLMRequest) -> int:
        copy = deep_clone(request) if self.record_requests else None
        with self._lock:
            self._calls += 1
            if copy is not None:
                self.requests.append(copy)
            return self._calls

    async def _answer(self, request: LLMRequest, call_number: int) -> LLMResponse:
        if self._reply is not None:
            response = LLMResponse(content=self._reply)
        elif self._replies is not None:
            if call_number > len(self._replies):
                count = len(self._replies)
                scripted = "1 reply was" if count == 1 else f"{count} replies were"
                label = "mock provider" if self.name == "mock" else f"mock provider {self.name!r}"
                raise MockExhaustedError(
                    f"{label}: {scripted} scripted and call {call_number} asked for another "
                    "(add replies, or use respond= to answer any number of calls)",
                    provider=self.name,
                )
            response = deep_clone(self._replies[call_number - 1])
        else:
            assert self._respond is not None
            result = self._respond(request)
            if inspect.isawaitable(result):
                result = await result
            response = coerce_reply(result, f"mock respond() result for call {call_number}")
        return self._finish(request, response)

    def _finish(self, request: LLMRequest, response: LLMResponse) -> LLMResponse:
        update: dict[str, Any] = {}
        if "usage" not in response.model_fields_set:
            update["usage"] = (
                self._usage.model_copy() if self._usage else estimate_usage(request, response, self._tally)
            )
        if response.model is None:
            update["model"] = request.model or self.name
        if response.finish_reason is None:
            update["finish_reason"] = "tool_calls" if response.tool_calls else "stop"
        if update:  # ``response.model_copy(update=update)`` made in place: ``_answer`` built it, nobody else holds it
            response.__dict__.update(update)
            response.__pydantic_fields_set__.update(update)
        return response

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Return the next scripted answer."""
        return await self._answer(request, self._record(request))

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Yield the next scripted answer word by word, then its tool calls, then ``done``."""
        response = await self._answer(request, self._record(request))
        for piece in split_words(response.content):
            yield StreamChunk(kind="text", text=piece)
        for call in response.tool_calls:
            yield StreamChunk(kind="tool_call", tool_call=call)
        yield StreamChunk(kind="done", response=response)


def mock(
    reply: str | None = None,
    *,
    replies: Sequence[Reply] | None = None,
    respond: RespondFn | None = None,
    name: str = "mock",
    usage: Usage | dict[str, int] | None = None,
    record_requests: bool = True,
) -> MockProvider:
    """A scripted provider: ``reply`` (always), ``replies`` (in order) or ``respond(request)`` (computed).

    ``record_requests=False`` keeps no transcript (each recorded request is a deep copy: O(history) per call)."""
    return MockProvider(
        reply=reply, replies=replies, respond=respond, name=name, usage=usage, record_requests=record_requests
    )
