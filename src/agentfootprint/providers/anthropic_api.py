"""Anthropic's Messages API (``POST /v1/messages``) over HTTP, with SSE streaming."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentfootprint.providers._anthropic_cache import anthropic_cache_control
from agentfootprint.providers._http import HTTPProvider
from agentfootprint.providers._models import (
    LLMRequest,
    LLMResponse,
    Message,
    ReasoningBlock,
    StreamChunk,
    ToolCall,
    Usage,
)
from agentfootprint.providers._wire import (
    WireFormatError,
    as_dict,
    as_list,
    iter_sse,
    opt_int,
    opt_str,
    parse_arguments,
    parse_json,
    refuse_forced_tool_with_thinking,
    req_str,
)
from agentfootprint.providers.errors import (
    ProviderAuthError,
    ProviderConfigError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
)

if TYPE_CHECKING:
    import httpx2

API_VERSION = "2023-06-01"
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


def to_wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Messages API turns; consecutive tool results merge into one user turn."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
            }
            last = wire[-1] if wire else None
            if last is not None and last.get("_tool_results"):
                last["content"].append(block)
            else:
                wire.append({"role": "user", "content": [block], "_tool_results": True})
        elif message.role == "assistant" and message.tool_calls:
            blocks: list[dict[str, Any]] = thinking_to_wire(message.reasoning)
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks.extend(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args}
                for call in message.tool_calls
            )
            wire.append({"role": "assistant", "content": blocks})
        else:
            wire.append({"role": message.role, "content": message.content})
    for item in wire:
        item.pop("_tool_results", None)
    return wire


def thinking_to_wire(reasoning: list[ReasoningBlock]) -> list[dict[str, Any]]:
    """Signed thinking blocks of an assistant turn, echoed unchanged as the API requires during tool use."""
    blocks: list[dict[str, Any]] = []
    for block in reasoning:
        if block.signature is None:
            continue
        if block.source == "anthropic.thinking":
            blocks.append({"type": "thinking", "thinking": block.text, "signature": block.signature})
        elif block.source == "anthropic.redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": block.signature})
    return blocks


def usage_from(data: dict[str, Any], where: str, before: Usage | None = None) -> Usage:
    """Anthropic's usage as a ``Usage``, cache reads and writes counted as input (the API leaves them out of
    ``input_tokens``); a field a ``message_delta`` omits or nulls keeps its ``before`` value (counts are cumulative)."""
    prior = before or Usage()

    def count(key: str, default: int) -> int:
        return opt_int(data, key, where) if data.get(key) is not None else default

    read = count("cache_read_input_tokens", prior.cached_input_tokens)
    written = count("cache_creation_input_tokens", prior.cache_write_tokens)
    uncached = count("input_tokens", prior.input_tokens - prior.cached_input_tokens - prior.cache_write_tokens)
    return Usage(
        input_tokens=uncached + read + written,
        output_tokens=count("output_tokens", prior.output_tokens),
        cached_input_tokens=read,
        cache_write_tokens=written,
    )


def build_body(
    request: LLMRequest, model: str, max_tokens: int, *, stream: bool, thinking_budget: int | None = None
) -> dict[str, Any]:
    """The Messages API request body (seed has no Anthropic equivalent and is not sent).

    With a thinking budget, ``temperature`` is not sent (the API refuses it alongside thinking) and a
    ``max_tokens`` at or below the budget is raised by the budget, so the answer keeps its room.
    """
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens if request.max_tokens is not None else max_tokens,
        "messages": to_wire_messages(request.messages),
    }
    if request.system_prompt:
        body["system"] = request.system_prompt
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
        ]
    if request.tool_choice is not None:
        body["tool_choice"] = {"type": "tool", "name": request.tool_choice}
    refuse_forced_tool_with_thinking("anthropic", request.tool_choice, thinking_budget)
    if thinking_budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        if body["max_tokens"] <= thinking_budget:
            body["max_tokens"] += thinking_budget
    elif request.temperature is not None:
        body["temperature"] = request.temperature
    if stream:
        body["stream"] = True
    if request.cache_markers:
        body = anthropic_cache_control(request.cache_markers, body)
    return body


def _finish(reason: str | None) -> str | None:
    return _STOP_REASONS.get(reason, reason) if reason is not None else None


def parse_response(data: object) -> LLMResponse:
    """A Messages API body as an ``LLMResponse`` (text blocks joined, ``tool_use`` blocks as tool calls)."""
    body = as_dict(data, "body")
    if "content" not in body:
        raise WireFormatError("'content' is missing")
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningBlock] = []
    for i, raw in enumerate(as_list(body.get("content"), "content")):
        block = as_dict(raw, f"content[{i}]")
        kind = opt_str(block, "type", f"content[{i}]")
        if kind == "text":
            text.append(opt_str(block, "text", f"content[{i}]") or "")
        elif kind == "thinking":
            reasoning.append(
                ReasoningBlock(
                    text=opt_str(block, "thinking", f"content[{i}]") or "",
                    signature=opt_str(block, "signature", f"content[{i}]"),
                    source="anthropic.thinking",
                )
            )
        elif kind == "redacted_thinking":
            reasoning.append(
                ReasoningBlock(
                    kind="redacted",
                    signature=opt_str(block, "data", f"content[{i}]"),
                    source="anthropic.redacted_thinking",
                )
            )
        elif kind == "tool_use":
            args, error = parse_arguments(block.get("input"))
            calls.append(
                ToolCall(
                    id=req_str(block, "id", f"content[{i}]"),
                    name=req_str(block, "name", f"content[{i}]"),
                    args=args,
                    args_error=error,
                )
            )
    usage = as_dict(body.get("usage") or {}, "usage")
    return LLMResponse(
        content="".join(text),
        tool_calls=calls,
        reasoning=reasoning,
        usage=usage_from(usage, "usage"),
        model=opt_str(body, "model", "body"),
        id=opt_str(body, "id", "body"),
        finish_reason=_finish(opt_str(body, "stop_reason", "body")),
    )


class _Block:
    """One content block being streamed."""

    def __init__(self, kind: str, call_id: str = "", name: str = "") -> None:
        self.kind = kind
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []
        self.signature: str | None = None
        self.done = False

    def reasoning(self) -> ReasoningBlock | None:
        """The block as reasoning, when it is a thinking block."""
        if self.kind == "thinking":
            return ReasoningBlock(text="".join(self.parts), signature=self.signature, source="anthropic.thinking")
        if self.kind == "redacted_thinking":
            return ReasoningBlock(kind="redacted", signature=self.signature, source="anthropic.redacted_thinking")
        return None


class AnthropicProvider(HTTPProvider):
    """Claude models through the Messages API."""

    factory = "anthropic"
    carries_native_output = False
    key_hint = "api_key= (or the ANTHROPIC_API_KEY environment variable)"

    def __init__(
        self,
        api_key: str | None = None,
        model: str | None = None,
        *,
        base_url: str | None = None,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        name: str = "anthropic",
        thinking_budget: int | None = None,
    ) -> None:
        if max_tokens <= 0:
            raise ProviderConfigError("anthropic(): max_tokens must be a positive integer")
        if thinking_budget is not None and (isinstance(thinking_budget, bool) or thinking_budget < 1024):
            raise ProviderConfigError("anthropic(): thinking_budget must be an integer of at least 1024 tokens")
        self.thinking_budget = thinking_budget
        self.carries_forced_tool_choice = thinking_budget is None
        """A forced ``tool_choice`` is refused by the API while thinking, so a thinking provider does not offer it."""
        self.carries_forced_tool_choice_while_thinking = False
        """Nor with a thinking budget the agent sends per request (``.thinking(budget)``)."""
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        self._api_key = key or None
        self.max_tokens = max_tokens
        super().__init__(
            name=name,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com",
            model=model,
            timeout=timeout,
            transport=transport,
            headers=None,
            secret=key,
        )

    def request_headers(self) -> dict[str, str]:
        """JSON headers plus ``x-api-key`` and ``anthropic-version``."""
        headers = super().request_headers()
        headers["anthropic-version"] = API_VERSION
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _require_key(self) -> None:
        if not self._api_key:
            raise ProviderAuthError(
                f"{self.name}: no API key; pass api_key= to anthropic() or set ANTHROPIC_API_KEY",
                provider=self.name,
            )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One non-streaming Messages API call."""
        model = self.resolve_model(request)
        self._require_key()
        body = build_body(
            request,
            model,
            self.max_tokens,
            stream=False,
            thinking_budget=request.thinking.budget if request.thinking else self.thinking_budget,
        )
        data = await self.post_json("/v1/messages", body, model)
        try:
            return parse_response(data)
        except WireFormatError as exc:
            raise self.bad_response(exc) from None

    def _stream_error(self, payload: dict[str, Any]) -> ProviderError:
        error = payload.get("error")
        kind = error.get("type") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        text = self.safe(message if isinstance(message, str) else "unknown error")
        where = f"{self.name} at {self.base_url} reported an error mid-stream"
        if kind == "rate_limit_error":
            return RateLimitError(f"{where}: {text}", provider=self.name)
        if kind in ("invalid_request_error", "not_found_error", "permission_error", "authentication_error"):
            return ProviderRequestError(f"{where} ({kind}): {text}", provider=self.name)
        return ProviderServerError(f"{where} ({kind or 'error'}): {text}", provider=self.name)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream SSE events; each ``tool_use`` block is yielded when it stops, then ``done``."""
        model = self.resolve_model(request)
        self._require_key()
        body = build_body(
            request,
            model,
            self.max_tokens,
            stream=True,
            thinking_budget=request.thinking.budget if request.thinking else self.thinking_budget,
        )
        lines = self.stream_lines("/v1/messages", body, model)
        events = iter_sse(lines)
        blocks: dict[int, _Block] = {}
        text: list[str] = []
        calls: list[ToolCall] = []
        reasoning: list[ReasoningBlock] = []
        usage = Usage()
        model_name: str | None = None
        response_id: str | None = None
        stop_reason: str | None = None
        finished = False
        try:
            async for _event, data in events:
                try:
                    payload = as_dict(parse_json(data, "a stream event"), "event")
                    kind = opt_str(payload, "type", "event")
                    if kind == "error":
                        raise self._stream_error(payload)
                    if kind == "message_start":
                        message = as_dict(payload.get("message"), "message_start.message")
                        model_name = opt_str(message, "model", "message_start.message")
                        response_id = opt_str(message, "id", "message_start.message")
                        start_usage = as_dict(message.get("usage") or {}, "message_start.message.usage")
                        usage = usage_from(start_usage, "message_start.message.usage")
                    elif kind == "content_block_start":
                        index = self._index(payload)
                        block = as_dict(payload.get("content_block"), "content_block_start.content_block")
                        block_kind = opt_str(block, "type", "content_block") or ""
                        if block_kind == "tool_use":
                            blocks[index] = _Block(
                                "tool_use",
                                req_str(block, "id", "content_block"),
                                req_str(block, "name", "content_block"),
                            )
                        else:
                            blocks[index] = opened = _Block(block_kind)
                            if block_kind == "redacted_thinking":
                                opened.signature = opt_str(block, "data", "content_block")
                            elif block_kind == "thinking":
                                opened.signature = opt_str(block, "signature", "content_block") or None
                                initial = opt_str(block, "thinking", "content_block")
                                if initial:
                                    opened.parts.append(initial)
                                    yield StreamChunk(kind="reasoning", text=initial)
                            initial = opt_str(block, "text", "content_block") if block_kind == "text" else None
                            if initial:
                                text.append(initial)
                                yield StreamChunk(kind="text", text=initial)
                    elif kind == "content_block_delta":
                        index = self._index(payload)
                        delta = as_dict(payload.get("delta"), "content_block_delta.delta")
                        delta_kind = opt_str(delta, "type", "delta")
                        if delta_kind == "text_delta":
                            piece = opt_str(delta, "text", "delta") or ""
                            if piece:
                                text.append(piece)
                                yield StreamChunk(kind="text", text=piece)
                        elif delta_kind in ("thinking_delta", "signature_delta"):
                            open_block = blocks.get(index)
                            if open_block is None or open_block.kind != "thinking":
                                raise WireFormatError(f"{delta_kind} for block {index}, which is not a thinking block")
                            if delta_kind == "signature_delta":
                                open_block.signature = opt_str(delta, "signature", "delta")
                            else:
                                piece = opt_str(delta, "thinking", "delta") or ""
                                if piece:
                                    open_block.parts.append(piece)
                                    yield StreamChunk(kind="reasoning", text=piece)
                        elif delta_kind == "input_json_delta":
                            open_block = blocks.get(index)
                            if open_block is None or open_block.kind != "tool_use":
                                raise WireFormatError(f"input_json_delta for block {index}, which is not a tool_use")
                            open_block.parts.append(opt_str(delta, "partial_json", "delta") or "")
                    elif kind == "content_block_stop":
                        index = self._index(payload)
                        closed = blocks.get(index)
                        thought = closed.reasoning() if closed is not None and not closed.done else None
                        if closed is not None and thought is not None:
                            closed.done = True
                            reasoning.append(thought)
                        if closed is not None and closed.kind == "tool_use" and not closed.done:
                            closed.done = True
                            args, error = parse_arguments("".join(closed.parts))
                            call = ToolCall(id=closed.call_id, name=closed.name, args=args, args_error=error)
                            calls.append(call)
                            yield StreamChunk(kind="tool_call", tool_call=call)
                    elif kind == "message_delta":
                        delta = as_dict(payload.get("delta") or {}, "message_delta.delta")
                        stop_reason = opt_str(delta, "stop_reason", "message_delta.delta") or stop_reason
                        end_usage = as_dict(payload.get("usage") or {}, "message_delta.usage")
                        usage = usage_from(end_usage, "message_delta.usage", before=usage)
                    elif kind == "message_stop":
                        finished = True
                        break
                except WireFormatError as exc:
                    raise self.bad_response(exc) from None
        finally:
            await events.aclose()
            await lines.aclose()
        if not finished and stop_reason is None:
            raise ProviderResponseError(
                f"{self.name} at {self.base_url}: the stream ended before the response was complete",
                provider=self.name,
            )
        for pending in blocks.values():
            leftover = pending.reasoning() if not pending.done else None
            if leftover is not None:
                reasoning.append(leftover)
            if pending.kind == "tool_use" and not pending.done:
                args, error = parse_arguments("".join(pending.parts))
                call = ToolCall(id=pending.call_id, name=pending.name, args=args, args_error=error)
                calls.append(call)
                yield StreamChunk(kind="tool_call", tool_call=call)
        response = LLMResponse(
            content="".join(text),
            tool_calls=calls,
            reasoning=reasoning,
            usage=usage,
            model=model_name,
            id=response_id,
            finish_reason=_finish(stop_reason),
        )
        yield StreamChunk(kind="done", response=response)

    @staticmethod
    def _index(payload: dict[str, Any]) -> int:
        index = payload.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise WireFormatError("'index' of a content block event should be an integer")
        return index


def anthropic(
    api_key: str | None = None,
    model: str | None = None,
    *,
    base_url: str | None = None,
    max_tokens: int = 1024,
    timeout: float = 60.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    name: str = "anthropic",
    thinking_budget: int | None = None,
) -> AnthropicProvider:
    """A provider for Anthropic's Messages API; key and URL fall back to ``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL``.

    ``thinking_budget`` turns on extended thinking; the thinking comes back as ``LLMResponse.reasoning``.
    """
    return AnthropicProvider(
        api_key,
        model,
        base_url=base_url,
        max_tokens=max_tokens,
        timeout=timeout,
        transport=transport,
        name=name,
        thinking_budget=thinking_budget,
    )
