"""Chat Completions over HTTP: OpenAI, vLLM, llama.cpp server, Ollama's /v1, Groq and alike."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint.providers._http import HTTPProvider
from agentfootprint.providers._models import (
    LLMRequest,
    LLMResponse,
    Message,
    ReasoningBlock,
    ReasoningSource,
    StreamChunk,
    ToolCall,
    ToolSpec,
    Usage,
)
from agentfootprint.providers._reasoning import ThinkSplitter, split_think
from agentfootprint.providers._wire import (
    WireFormatError,
    as_dict,
    as_list,
    iter_sse,
    opt_int,
    opt_str,
    parse_arguments,
    parse_json,
    req_str,
)
from agentfootprint.providers.errors import ProviderConfigError, ProviderResponseError, ProviderServerError

if TYPE_CHECKING:
    import httpx2


def to_wire_messages(system_prompt: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Chat Completions ``messages``; the system prompt leads as a system message."""
    wire: list[dict[str, Any]] = []
    if system_prompt:
        wire.append({"role": "system", "content": system_prompt})
    for message in messages:
        if message.role == "tool":
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content})
        elif message.role == "assistant" and message.tool_calls:
            wire.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": json.dumps(call.args)},
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


def tools_to_wire(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs in the ``{type: function, function: {...}}`` shape."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
        }
        for t in tools
    ]


CacheHint = Literal["auto", "prompt_cache_key", "cache_prompt", "none"]


def cache_prefix_key(request: LLMRequest, model: str) -> str | None:
    """A stable key for the request's cacheable system-prompt prefix (ends at its last cache marker), or None."""
    offsets = [int(m["char_offset"]) for m in request.cache_markers if m.get("slot") == "system_prompt"]
    if not offsets:
        return None
    prefix = request.system_prompt[: max(offsets)]
    return "af-" + hashlib.sha256(f"{model}\n{prefix}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


TokenLimitKey = Literal["max_tokens", "max_completion_tokens"]
_REASONING_MODEL = re.compile(r"(o\d+|gpt-5)([-.:_].*)?", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    """OpenAI's reasoning models (o-series, gpt-5 family), also behind a router prefix such as ``openai/``."""
    return _REASONING_MODEL.fullmatch(model.rsplit("/", 1)[-1].strip()) is not None


def build_body(
    request: LLMRequest,
    model: str,
    *,
    stream: bool,
    cache_hint: CacheHint = "none",
    token_limit_key: TokenLimitKey = "max_tokens",
) -> dict[str, Any]:
    """The Chat Completions request body; with cache markers, the cache hint the server understands
    (``prompt_cache_key`` for OpenAI's automatic prefix caching, ``cache_prompt`` for llama.cpp servers)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": to_wire_messages(request.system_prompt, request.messages),
    }
    if cache_hint == "prompt_cache_key":
        key = cache_prefix_key(request, model)
        if key is not None:
            body["prompt_cache_key"] = key
    elif cache_hint == "cache_prompt" and request.cache_markers:
        body["cache_prompt"] = True
    if request.tools:
        body["tools"] = tools_to_wire(request.tools)
    if request.tool_choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
    for key in ("seed", "temperature", "response_format"):
        value = getattr(request, key)
        if value is not None:
            body[key] = value
    if request.max_tokens is not None:
        body[token_limit_key] = request.max_tokens
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


_REASONING_FIELDS: tuple[tuple[str, ReasoningSource], ...] = (
    ("reasoning_content", "openai.reasoning_content"),
    ("reasoning", "openai.reasoning"),
)
"""Where Chat Completions servers put reasoning text: vLLM, DeepSeek, llama.cpp; OpenRouter, Ollama, Groq."""


def _usage(raw: object, where: str) -> Usage:
    data = as_dict(raw, where)
    details = data.get("completion_tokens_details")
    reasoning = 0
    if isinstance(details, dict):
        reasoning = opt_int(details, "reasoning_tokens", f"{where}.completion_tokens_details")
    prompt = data.get("prompt_tokens_details")
    cached = opt_int(prompt, "cached_tokens", f"{where}.prompt_tokens_details") if isinstance(prompt, dict) else 0
    return Usage(  # prompt_tokens already counts the cached part
        input_tokens=opt_int(data, "prompt_tokens", where),
        output_tokens=opt_int(data, "completion_tokens", where),
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
    )


def reasoning_fields(message: dict[str, Any], where: str) -> list[tuple[ReasoningSource, str]]:
    """``(source, text)`` for each non-empty reasoning field of a message or delta."""
    found: list[tuple[ReasoningSource, str]] = []
    for key, source in _REASONING_FIELDS:
        text = opt_str(message, key, where)
        if text:
            found.append((source, text))
    return found


def _tool_call(raw: object, index: int) -> ToolCall:
    where = f"choices[0].message.tool_calls[{index}]"
    call = as_dict(raw, where)
    function = as_dict(call.get("function"), f"{where}.function")
    args, error = parse_arguments(function.get("arguments"))
    call_id = opt_str(call, "id", where) or f"call_{index}"
    return ToolCall(id=call_id, name=req_str(function, "name", f"{where}.function"), args=args, args_error=error)


def parse_response(data: object) -> LLMResponse:
    """A Chat Completions JSON body as an ``LLMResponse`` (raises ``WireFormatError`` on a wrong shape)."""
    body = as_dict(data, "body")
    choices = as_list(body.get("choices"), "choices")
    if not choices:
        raise WireFormatError("'choices' is missing or empty")
    choice = as_dict(choices[0], "choices[0]")
    message = as_dict(choice.get("message"), "choices[0].message")
    calls = [
        _tool_call(c, i) for i, c in enumerate(as_list(message.get("tool_calls"), "choices[0].message.tool_calls"))
    ]
    usage = _usage(body["usage"], "usage") if body.get("usage") is not None else Usage()
    reasoning = [
        ReasoningBlock(text=text, source=source) for source, text in reasoning_fields(message, "choices[0].message")
    ]
    content, thought = split_think(opt_str(message, "content", "choices[0].message") or "")
    return LLMResponse(
        content=content,
        tool_calls=calls,
        reasoning=reasoning + thought,
        usage=usage,
        model=opt_str(body, "model", "body"),
        id=opt_str(body, "id", "body"),
        finish_reason=opt_str(choice, "finish_reason", "choices[0]"),
    )


class _StreamState:
    """Accumulates Chat Completions stream deltas into one response."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: dict[ReasoningSource, list[str]] = {}
        self.think = ThinkSplitter()
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage = Usage()
        self.model: str | None = None
        self.id: str | None = None
        self.finish_reason: str | None = None

    def feed(self, data: object) -> list[tuple[str, str]]:
        """Absorb one chunk; return its ``("text" | "reasoning", delta)`` pieces."""
        chunk = as_dict(data, "chunk")
        self.model = opt_str(chunk, "model", "chunk") or self.model
        self.id = opt_str(chunk, "id", "chunk") or self.id
        if chunk.get("usage") is not None:
            self.usage = _usage(chunk["usage"], "chunk.usage")
        x_groq = chunk.get("x_groq")
        if isinstance(x_groq, dict) and isinstance(x_groq.get("usage"), dict):
            self.usage = _usage(x_groq["usage"], "chunk.x_groq.usage")
        pieces: list[tuple[str, str]] = []
        for i, raw_choice in enumerate(as_list(chunk.get("choices"), "chunk.choices")):
            choice = as_dict(raw_choice, f"chunk.choices[{i}]")
            self.finish_reason = opt_str(choice, "finish_reason", "chunk.choices[]") or self.finish_reason
            delta = as_dict(choice.get("delta") or {}, "chunk.choices[].delta")
            for source, thought in reasoning_fields(delta, "chunk.choices[].delta"):
                self.reasoning.setdefault(source, []).append(thought)
                pieces.append(("reasoning", thought))
            text = opt_str(delta, "content", "chunk.choices[].delta")
            if text:
                pieces.extend(self._text(self.think.feed(text)))
            for j, raw_call in enumerate(as_list(delta.get("tool_calls"), "chunk.choices[].delta.tool_calls")):
                self._feed_call(as_dict(raw_call, f"chunk.choices[].delta.tool_calls[{j}]"), j)
        return pieces

    def _text(self, pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
        self.text.extend(piece for kind, piece in pieces if kind == "text")
        return pieces

    def finish(self) -> list[tuple[str, str]]:
        """Pieces still held back by the ``<think>`` splitter."""
        return self._text(self.think.flush())

    def reasoning_blocks(self) -> list[ReasoningBlock]:
        """The streamed reasoning as blocks, in the order of :func:`parse_response`."""
        blocks = [ReasoningBlock(text="".join(parts), source=source) for source, parts in self.reasoning.items()]
        return blocks + self.think.blocks()

    def closing_chunks(self, calls: list[ToolCall], model: str | None) -> list[StreamChunk]:
        """The stream's last chunks: one per tool call, then ``done`` with the whole response."""
        response = LLMResponse(
            content="".join(self.text),
            tool_calls=calls,
            reasoning=self.reasoning_blocks(),
            usage=self.usage,
            model=model,
            id=self.id,
            finish_reason=self.finish_reason,
        )
        chunks = [StreamChunk(kind="tool_call", tool_call=call) for call in calls]
        return [*chunks, StreamChunk(kind="done", response=response)]

    def _feed_call(self, call: dict[str, Any], position: int) -> None:
        index = call.get("index", position)
        if not isinstance(index, int) or isinstance(index, bool):
            raise WireFormatError("'chunk.choices[].delta.tool_calls[].index' should be an integer")
        slot = self.calls.setdefault(index, {"id": None, "name": "", "arguments": []})
        call_id = opt_str(call, "id", "tool_call delta")
        if call_id:
            slot["id"] = call_id
        function = as_dict(call.get("function") or {}, "tool_call delta.function")
        name = opt_str(function, "name", "tool_call delta.function")
        if name:
            slot["name"] += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            slot["arguments"].append(arguments)
        elif isinstance(arguments, dict):
            slot["arguments"] = [json.dumps(arguments)]

    def tool_calls(self) -> list[ToolCall]:
        """The assembled tool calls, in index order."""
        calls: list[ToolCall] = []
        for position, index in enumerate(sorted(self.calls)):
            slot = self.calls[index]
            if not slot["name"]:
                raise WireFormatError(f"streamed tool call {index} never received a function name")
            args, error = parse_arguments("".join(slot["arguments"]))
            calls.append(ToolCall(id=slot["id"] or f"call_{position}", name=slot["name"], args=args, args_error=error))
        return calls


class OpenAICompatibleProvider(HTTPProvider):
    """A Chat Completions endpoint (``POST {base_url}/chat/completions``)."""

    factory = "openai_compatible"
    cache_hint: CacheHint = "none"
    carries_native_output = True
    """``response_format`` (a JSON schema) is on the Chat Completions wire."""
    key_hint = "api_key= (or the OPENAI_API_KEY environment variable)"

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str | None = None,
        *,
        timeout: float = 60.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        name: str = "openai_compatible",
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._api_key = key or None
        super().__init__(
            name=name,
            base_url=base_url,
            model=model,
            timeout=timeout,
            transport=transport,
            headers=headers,
            secret=key,
        )

    @property
    def carries_forced_tool_choice(self) -> bool:
        """OpenAI itself honours a forced ``tool_choice``; what another compatible server does with it is its own
        business, so only the real endpoint declares it."""
        return "api.openai.com" in self.base_url

    def request_headers(self) -> dict[str, str]:
        """JSON headers plus ``Authorization: Bearer`` when a key is configured."""
        headers = super().request_headers()
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def chat_path(self, model: str) -> str:
        """The path (and query) of the Chat Completions endpoint under ``base_url``."""
        return "/chat/completions"

    def token_limit_key(self, model: str) -> TokenLimitKey:
        """``max_completion_tokens`` for OpenAI itself and reasoning models (which refuse ``max_tokens``);
        ``max_tokens`` elsewhere, the field vLLM, llama.cpp and Ollama read."""
        if "api.openai.com" in self.base_url or is_reasoning_model(model):
            return "max_completion_tokens"
        return "max_tokens"

    def _build(self, request: LLMRequest, model: str, *, stream: bool) -> dict[str, Any]:
        return build_body(
            request, model, stream=stream, cache_hint=self.cache_hint, token_limit_key=self.token_limit_key(model)
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One non-streaming Chat Completions call."""
        model = self.resolve_model(request)
        data = await self.post_json(self.chat_path(model), self._build(request, model, stream=False), model)
        try:
            return parse_response(data)
        except WireFormatError as exc:
            raise self.bad_response(exc) from None

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream over SSE; tool calls are yielded once complete, then ``done`` with the full response."""
        model = self.resolve_model(request)
        state = _StreamState()
        finished = False
        lines = self.stream_lines(self.chat_path(model), self._build(request, model, stream=True), model)
        events = iter_sse(lines)
        try:
            async for _event, data in events:
                if data.strip() == "[DONE]":
                    finished = True
                    break
                try:
                    payload = parse_json(data, "a stream event")
                    if isinstance(payload, dict) and payload.get("error") is not None:
                        raise ProviderServerError(
                            f"{self.name} at {self.base_url} reported an error mid-stream: "
                            f"{self.safe(_error_text(payload['error']))}",
                            provider=self.name,
                        )
                    pieces = state.feed(payload)
                except WireFormatError as exc:
                    raise self.bad_response(exc) from None
                for kind, piece in pieces:
                    yield StreamChunk(kind="text" if kind == "text" else "reasoning", text=piece)
        finally:
            await events.aclose()
            await lines.aclose()
        if not finished and state.finish_reason is None:
            raise ProviderResponseError(
                f"{self.name} at {self.base_url}: the stream ended before the response was complete",
                provider=self.name,
            )
        for kind, piece in state.finish():
            yield StreamChunk(kind="text" if kind == "text" else "reasoning", text=piece)
        try:
            calls = state.tool_calls()
        except WireFormatError as exc:
            raise self.bad_response(exc) from None
        for chunk in state.closing_chunks(calls, state.model):
            yield chunk


def _error_text(error: object) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return error if isinstance(error, str) else "unknown error"


def openai_compatible(
    base_url: str,
    api_key: str | None = None,
    model: str | None = None,
    *,
    timeout: float = 60.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    headers: Mapping[str, str] | None = None,
    name: str = "openai_compatible",
    cache_hint: CacheHint = "auto",
) -> OpenAICompatibleProvider:
    """A provider for any Chat Completions server; ``base_url`` includes the version path (``.../v1``).

    ``cache_hint``: how the agent's prompt-cache markers reach the wire. ``"auto"`` sends OpenAI's
    ``prompt_cache_key`` to api.openai.com and nothing elsewhere; ``"cache_prompt"`` is llama.cpp's flag."""
    provider = OpenAICompatibleProvider(
        base_url, api_key, model, timeout=timeout, transport=transport, headers=headers, name=name
    )
    if cache_hint not in ("auto", "prompt_cache_key", "cache_prompt", "none"):
        raise ProviderConfigError("cache_hint must be 'auto', 'prompt_cache_key', 'cache_prompt' or 'none'")
    if cache_hint == "auto":
        cache_hint = "prompt_cache_key" if "api.openai.com" in base_url else "none"
    provider.cache_hint = cache_hint
    return provider
