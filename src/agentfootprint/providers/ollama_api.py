"""Ollama's native chat API (``POST /api/chat``), NDJSON streaming, no SDK."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

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
from agentfootprint.providers._reasoning import ThinkSplitter, split_think
from agentfootprint.providers._wire import (
    WireFormatError,
    as_dict,
    as_list,
    opt_int,
    opt_str,
    parse_arguments,
    parse_json,
    req_str,
)
from agentfootprint.providers.errors import ProviderConfigError, ProviderResponseError, ProviderServerError
from agentfootprint.providers.openai_compat import tools_to_wire

if TYPE_CHECKING:
    import httpx2


def to_wire_messages(system_prompt: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Ollama chat messages: arguments stay objects, results name their tool (no call ids)."""
    wire: list[dict[str, Any]] = []
    if system_prompt:
        wire.append({"role": "system", "content": system_prompt})
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.role == "tool":
            if message.tool_name:
                item["tool_name"] = message.tool_name
        if message.tool_calls:
            item["tool_calls"] = [
                {"function": {"name": call.name, "arguments": call.args}} for call in message.tool_calls
            ]
        wire.append(item)
    return wire


def build_body(request: LLMRequest, model: str, *, stream: bool) -> dict[str, Any]:
    """The ``/api/chat`` request body."""
    body: dict[str, Any] = {
        "model": model,
        "messages": to_wire_messages(request.system_prompt, request.messages),
        "stream": stream,
    }
    if request.tools:
        body["tools"] = tools_to_wire(request.tools)
    options: dict[str, Any] = {}
    if request.seed is not None:
        options["seed"] = request.seed
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if options:
        body["options"] = options
    fmt = request.response_format
    if fmt is not None:
        if fmt.get("type") == "json_schema" and isinstance(fmt.get("json_schema"), dict):
            body["format"] = fmt["json_schema"].get("schema", {})
        elif fmt.get("type") == "json_object":
            body["format"] = "json"
        else:
            body["format"] = fmt
    return body


def parse_tool_calls(message: dict[str, Any], first_index: int = 0) -> list[ToolCall]:
    """``message.tool_calls``, with stable ids ``call_0``, ``call_1``... when Ollama gives none."""
    calls: list[ToolCall] = []
    for offset, raw in enumerate(as_list(message.get("tool_calls"), "message.tool_calls")):
        index = first_index + offset
        where = f"message.tool_calls[{offset}]"
        call = as_dict(raw, where)
        function = as_dict(call.get("function"), f"{where}.function")
        args, error = parse_arguments(function.get("arguments"))
        call_id = opt_str(call, "id", where) or f"call_{index}"
        calls.append(
            ToolCall(id=call_id, name=req_str(function, "name", f"{where}.function"), args=args, args_error=error)
        )
    return calls


def _finish_reason(body: dict[str, Any], has_calls: bool) -> str | None:
    if has_calls:
        return "tool_calls"
    reason = opt_str(body, "done_reason", "body")
    return reason or ("stop" if body.get("done") else None)


def parse_response(data: object) -> LLMResponse:
    """A non-streaming ``/api/chat`` body as an ``LLMResponse``."""
    body = as_dict(data, "body")
    message = as_dict(body.get("message"), "message")
    calls = parse_tool_calls(message)
    content, thought = split_think(opt_str(message, "content", "message") or "")
    thinking = opt_str(message, "thinking", "message")
    native = [ReasoningBlock(text=thinking, source="ollama.thinking")] if thinking else []
    return LLMResponse(
        content=content,
        tool_calls=calls,
        reasoning=native + thought,
        usage=Usage(
            input_tokens=opt_int(body, "prompt_eval_count", "body"),
            output_tokens=opt_int(body, "eval_count", "body"),
        ),
        model=opt_str(body, "model", "body"),
        finish_reason=_finish_reason(body, bool(calls)),
    )


def ollama_host_url(host: str | None) -> str:
    """The base URL an ``OLLAMA_HOST`` value means, read as the ollama client reads it (a bare host keeps port 11434,
    ``http://`` / ``https://`` without a port mean 80 / 443, ``:port`` alone means local)."""
    value = (host or "").strip()
    scheme, _, hostport = value.partition("://")
    port = {"http": 80, "https": 443}.get(scheme, 11434) if hostport else 11434
    if not hostport:
        scheme, hostport = "http", value
    try:
        split = urlsplit(f"{scheme}://{hostport}")
        name, port = split.hostname or "127.0.0.1", split.port or port
    except ValueError:
        raise ProviderConfigError("OLLAMA_HOST is not a host[:port] or URL the ollama client can read") from None
    if scheme not in ("http", "https") or any(c.isspace() for c in name):
        raise ProviderConfigError("OLLAMA_HOST must be host[:port] or an http:// or https:// URL")
    if ":" in name:
        name = f"[{name}]"
    path = split.path.rstrip("/")
    return f"{scheme}://{name}:{port}{path}"


class OllamaProvider(HTTPProvider):
    """A local or remote Ollama server."""

    factory = "ollama"
    carries_forced_tool_choice = False
    carries_native_output = True
    key_hint = "the headers= given to ollama() for the proxy in front of the server"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 120.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        name: str = "ollama",
    ) -> None:
        if base_url is None:
            base_url = ollama_host_url(os.environ.get("OLLAMA_HOST"))
        super().__init__(
            name=name,
            base_url=base_url,
            model=model,
            timeout=timeout,
            transport=transport,
            headers=headers,
            secret=None,
        )

    def connect_hint(self) -> str:
        """Ollama-specific advice."""
        return "is the server running? Start it with `ollama serve`"

    def model_hint(self, model: str) -> str:
        """Ollama-specific advice."""
        return f"Pull it with `ollama pull {self.safe(model, 120)}`"

    def _error_line(self, payload: dict[str, Any], model: str) -> Exception:
        text = self.safe(str(payload["error"]))
        if "not found" in text.lower() and "model" in text.lower():
            return self.status_error(404, str(payload["error"]).encode(), {}, model)
        return ProviderServerError(f"{self.name} at {self.base_url} reported an error: {text}", provider=self.name)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One non-streaming ``/api/chat`` call."""
        model = self.resolve_model(request)
        data = await self.post_json("/api/chat", build_body(request, model, stream=False), model)
        if isinstance(data, dict) and data.get("error") is not None:
            raise self._error_line(data, model)
        try:
            return parse_response(data)
        except WireFormatError as exc:
            raise self.bad_response(exc) from None

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream NDJSON lines; the last line (``done: true``) carries usage."""
        model = self.resolve_model(request)
        lines = self.stream_lines("/api/chat", build_body(request, model, stream=True), model)
        text: list[str] = []
        thinking: list[str] = []
        think = ThinkSplitter()
        calls: list[ToolCall] = []
        final: dict[str, Any] | None = None
        try:
            async for line in lines:
                if not line.strip():
                    continue
                try:
                    payload = as_dict(parse_json(line, "a stream line"), "stream line")
                    if payload.get("error") is not None:
                        raise self._error_line(payload, model)
                    message = as_dict(payload.get("message") or {}, "message")
                    piece = opt_str(message, "content", "message") or ""
                    thought = opt_str(message, "thinking", "message") or ""
                    new_calls = parse_tool_calls(message, len(calls))
                except WireFormatError as exc:
                    raise self.bad_response(exc) from None
                if thought:
                    thinking.append(thought)
                    yield StreamChunk(kind="reasoning", text=thought)
                for kind, part in think.feed(piece) if piece else []:
                    if kind == "text":
                        text.append(part)
                    yield StreamChunk(kind="text" if kind == "text" else "reasoning", text=part)
                for call in new_calls:
                    calls.append(call)
                    yield StreamChunk(kind="tool_call", tool_call=call)
                if payload.get("done") is True:
                    final = payload
                    break
        finally:
            await lines.aclose()
        if final is None:
            raise ProviderResponseError(
                f"{self.name} at {self.base_url}: the stream ended before the response was complete",
                provider=self.name,
            )
        for kind, part in think.flush():
            if kind == "text":
                text.append(part)
            yield StreamChunk(kind="text" if kind == "text" else "reasoning", text=part)
        native = [ReasoningBlock(text="".join(thinking), source="ollama.thinking")] if thinking else []
        try:
            usage = Usage(
                input_tokens=opt_int(final, "prompt_eval_count", "body"),
                output_tokens=opt_int(final, "eval_count", "body"),
            )
            response = LLMResponse(
                content="".join(text),
                tool_calls=calls,
                reasoning=native + think.blocks(),
                usage=usage,
                model=opt_str(final, "model", "body"),
                finish_reason=_finish_reason(final, bool(calls)),
            )
        except WireFormatError as exc:
            raise self.bad_response(exc) from None
        yield StreamChunk(kind="done", response=response)


def ollama(
    model: str | None = None,
    *,
    base_url: str | None = None,
    timeout: float = 120.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    headers: Mapping[str, str] | None = None,
    name: str = "ollama",
) -> OllamaProvider:
    """A provider for Ollama's native ``/api/chat`` (``base_url`` defaults to ``OLLAMA_HOST``, else local).

    ``headers`` serve an authenticating proxy.
    """
    return OllamaProvider(model, base_url=base_url, timeout=timeout, transport=transport, headers=headers, name=name)
