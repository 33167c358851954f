"""Amazon Bedrock's Converse API (``/model/{id}/converse``), event-stream streaming, SigV4 through botocore."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

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
    opt_int,
    opt_str,
    parse_arguments,
    parse_json,
    refuse_forced_tool_with_thinking,
    req_str,
)
from agentfootprint.providers.errors import (
    ModelNotFoundError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

if TYPE_CHECKING:
    import httpx2

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
_EXTRA = "pip install 'agentfootprint[bedrock]'"


def botocore_module(module: str) -> Any:
    """``botocore.<module>``, or a config error saying which extra to install."""
    try:
        return importlib.import_module(f"botocore.{module}")
    except ImportError:
        raise ProviderConfigError(f"bedrock() signs requests with botocore: {_EXTRA}") from None


def _tool_result(content: str) -> list[dict[str, Any]]:
    """A tool result as Converse ``toolResult.content`` (JSON objects as ``json``, anything else as ``text``)."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        value = None
    return [{"json": value}] if isinstance(value, dict) else [{"text": content}]


def _reasoning_to_wire(reasoning: list[ReasoningBlock]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in reasoning:
        if block.source != "bedrock.reasoning_content" or block.signature is None:
            continue
        if block.kind == "redacted":
            blocks.append({"reasoningContent": {"redactedContent": block.signature}})
        else:
            text = {"text": block.text, "signature": block.signature}
            blocks.append({"reasoningContent": {"reasoningText": text}})
    return blocks


def to_wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Converse ``messages``; consecutive tool results merge into one user message."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            block = {"toolResult": {"toolUseId": message.tool_call_id or "", "content": _tool_result(message.content)}}
            last = wire[-1] if wire else None
            if last is not None and last["role"] == "user" and "toolResult" in last["content"][-1]:
                last["content"].append(block)
            else:
                wire.append({"role": "user", "content": [block]})
        elif message.role == "assistant":
            content: list[dict[str, Any]] = _reasoning_to_wire(message.reasoning)
            if message.content or not message.tool_calls:
                content.append({"text": message.content})
            content.extend(
                {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.args}}
                for call in message.tool_calls
            )
            wire.append({"role": "assistant", "content": content})
        else:
            wire.append({"role": "user", "content": [{"text": message.content}]})
    return wire


def _tool_spec(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One ``toolSpec``; Converse refuses an empty description, so a blank one is left out."""
    spec: dict[str, Any] = {"name": name, "inputSchema": {"json": schema}}
    if description.strip():
        spec["description"] = description
    return spec


def build_body(request: LLMRequest, *, thinking_budget: int | None = None) -> dict[str, Any]:
    """The Converse request body (the model id travels in the URL)."""
    body: dict[str, Any] = {"messages": to_wire_messages(request.messages)}
    if request.system_prompt:
        body["system"] = [{"text": request.system_prompt}]
    inference: dict[str, Any] = {}
    if request.max_tokens is not None:
        inference["maxTokens"] = request.max_tokens
    if request.temperature is not None and thinking_budget is None:
        inference["temperature"] = request.temperature
    refuse_forced_tool_with_thinking("bedrock", request.tool_choice, thinking_budget)
    if thinking_budget is not None:
        inference["maxTokens"] = max(inference.get("maxTokens", 0), thinking_budget + 1024)
        body["additionalModelRequestFields"] = {"thinking": {"type": "enabled", "budget_tokens": thinking_budget}}
    if inference:
        body["inferenceConfig"] = inference
    if request.tools:
        body["toolConfig"] = {
            "tools": [{"toolSpec": _tool_spec(t.name, t.description, t.input_schema)} for t in request.tools]
        }
        if request.tool_choice is not None:
            body["toolConfig"]["toolChoice"] = {"tool": {"name": request.tool_choice}}
    return body


def _usage(raw: object, where: str) -> Usage:
    data = as_dict(raw, where)
    read = opt_int(data, "cacheReadInputTokens", where)
    written = opt_int(data, "cacheWriteInputTokens", where)
    return Usage(  # Converse leaves cache reads and writes out of inputTokens
        input_tokens=opt_int(data, "inputTokens", where) + read + written,
        output_tokens=opt_int(data, "outputTokens", where),
        cached_input_tokens=read,
        cache_write_tokens=written,
    )


def _finish(reason: str | None) -> str | None:
    return _STOP_REASONS.get(reason, reason) if reason is not None else None


def _reasoning_block(raw: object, where: str) -> ReasoningBlock:
    data = as_dict(raw, where)
    if data.get("redactedContent") is not None:
        redacted = data["redactedContent"]
        if not isinstance(redacted, str):
            raise WireFormatError(f"'{where}.redactedContent' should be a base64 string")
        return ReasoningBlock(kind="redacted", signature=redacted, source="bedrock.reasoning_content")
    text = as_dict(data.get("reasoningText") or {}, f"{where}.reasoningText")
    return ReasoningBlock(
        text=opt_str(text, "text", f"{where}.reasoningText") or "",
        signature=opt_str(text, "signature", f"{where}.reasoningText"),
        source="bedrock.reasoning_content",
    )


def parse_response(data: object) -> LLMResponse:
    """A Converse response body as an ``LLMResponse``."""
    body = as_dict(data, "body")
    output = as_dict(body.get("output"), "output")
    message = as_dict(output.get("message"), "output.message")
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningBlock] = []
    for i, raw in enumerate(as_list(message.get("content"), "output.message.content")):
        where = f"output.message.content[{i}]"
        block = as_dict(raw, where)
        if block.get("text") is not None:
            text.append(opt_str(block, "text", where) or "")
        elif block.get("toolUse") is not None:
            use = as_dict(block["toolUse"], f"{where}.toolUse")
            args, error = parse_arguments(use.get("input"))
            calls.append(
                ToolCall(
                    id=req_str(use, "toolUseId", f"{where}.toolUse"),
                    name=req_str(use, "name", f"{where}.toolUse"),
                    args=args,
                    args_error=error,
                )
            )
        elif block.get("reasoningContent") is not None:
            reasoning.append(_reasoning_block(block["reasoningContent"], f"{where}.reasoningContent"))
    return LLMResponse(
        content="".join(text),
        tool_calls=calls,
        reasoning=reasoning,
        usage=_usage(body["usage"], "usage") if body.get("usage") is not None else Usage(),
        finish_reason=_finish(opt_str(body, "stopReason", "body")),
    )


class _StreamState:
    """Accumulates ConverseStream events into one response."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.tools: dict[int, dict[str, Any]] = {}
        self.thinking: dict[int, dict[str, Any]] = {}
        self.reasoning: list[ReasoningBlock] = []
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.metadata = False

    def feed(self, event: str, payload: dict[str, Any]) -> list[StreamChunk]:
        """Absorb one event; return the chunks it settles."""
        if event == "contentBlockStart":
            index = _index(payload)
            start = as_dict(payload.get("start") or {}, "contentBlockStart.start")
            if start.get("toolUse") is not None:
                use = as_dict(start["toolUse"], "contentBlockStart.start.toolUse")
                self.tools[index] = {
                    "id": req_str(use, "toolUseId", "toolUse"),
                    "name": req_str(use, "name", "toolUse"),
                    "parts": [],
                }
        elif event == "contentBlockDelta":
            return self._delta(_index(payload), as_dict(payload.get("delta"), "contentBlockDelta.delta"))
        elif event == "contentBlockStop":
            return self._close(_index(payload))
        elif event == "messageStop":
            self.stop_reason = opt_str(payload, "stopReason", "messageStop")
        elif event == "metadata":
            self.metadata = True
            if payload.get("usage") is not None:
                self.usage = _usage(payload["usage"], "metadata.usage")
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[StreamChunk]:
        if delta.get("text") is not None:
            piece = opt_str(delta, "text", "delta") or ""
            self.text.append(piece)
            return [StreamChunk(kind="text", text=piece)] if piece else []
        if delta.get("toolUse") is not None:
            slot = self.tools.get(index)
            if slot is None:
                raise WireFormatError(f"a toolUse delta for block {index}, which did not start as a tool use")
            slot["parts"].append(opt_str(as_dict(delta["toolUse"], "delta.toolUse"), "input", "delta.toolUse") or "")
        elif delta.get("reasoningContent") is not None:
            part = as_dict(delta["reasoningContent"], "delta.reasoningContent")
            slot = self.thinking.setdefault(index, {"parts": [], "signature": None, "redacted": None})
            if part.get("redactedContent") is not None:
                slot["redacted"] = opt_str(part, "redactedContent", "delta.reasoningContent")
            slot["signature"] = opt_str(part, "signature", "delta.reasoningContent") or slot["signature"]
            piece = opt_str(part, "text", "delta.reasoningContent") or ""
            if piece:
                slot["parts"].append(piece)
                return [StreamChunk(kind="reasoning", text=piece)]
        return []

    def _close(self, index: int) -> list[StreamChunk]:
        thought = self.thinking.pop(index, None)
        if thought is not None:
            if thought["redacted"] is not None:
                self.reasoning.append(
                    ReasoningBlock(kind="redacted", signature=thought["redacted"], source="bedrock.reasoning_content")
                )
            else:
                self.reasoning.append(
                    ReasoningBlock(
                        text="".join(thought["parts"]),
                        signature=thought["signature"],
                        source="bedrock.reasoning_content",
                    )
                )
        slot = self.tools.pop(index, None)
        if slot is None:
            return []
        args, error = parse_arguments("".join(slot["parts"]))
        call = ToolCall(id=slot["id"], name=slot["name"], args=args, args_error=error)
        self.calls.append(call)
        return [StreamChunk(kind="tool_call", tool_call=call)]

    def finish(self) -> list[StreamChunk]:
        """Close blocks the stream left open."""
        out: list[StreamChunk] = []
        for index in sorted({*self.tools, *self.thinking}):
            out.extend(self._close(index))
        return out

    def response(self) -> LLMResponse:
        """The assembled answer (Converse names no model in its reply, so ``model`` stays None)."""
        return LLMResponse(
            content="".join(self.text),
            tool_calls=self.calls,
            reasoning=self.reasoning,
            usage=self.usage,
            finish_reason=_finish(self.stop_reason),
        )


def _index(payload: dict[str, Any]) -> int:
    index = payload.get("contentBlockIndex")
    if not isinstance(index, int) or isinstance(index, bool):
        raise WireFormatError("'contentBlockIndex' of a content block event should be an integer")
    return index


def _error_type(headers: Mapping[str, str], raw: bytes) -> str:
    """The AWS error code, from ``x-amzn-ErrorType`` or the body's ``__type``."""
    kind = headers.get("x-amzn-errortype") or ""
    if not kind:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("__type"), str):
            kind = data["__type"]
    return kind.split(":", 1)[0].rsplit("#", 1)[-1]


def _aws_message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return raw.decode("utf-8", errors="replace")
    if isinstance(data, dict):
        for key in ("message", "Message"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return raw.decode("utf-8", errors="replace")


class BedrockProvider(HTTPProvider):
    """Models on Amazon Bedrock through the Converse API, signed with AWS credentials (or a Bedrock API key)."""

    factory = "bedrock"
    carries_native_output = False
    key_hint = (
        "your AWS credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or api_key= / "
        "AWS_BEARER_TOKEN_BEDROCK) and that this model is enabled for your account in the Bedrock console"
    )

    def __init__(
        self,
        model: str | None = None,
        *,
        region: str | None = None,
        profile: str | None = None,
        api_key: str | None = None,
        credentials: Any = None,
        endpoint_url: str | None = None,
        thinking_budget: int | None = None,
        timeout: float = 120.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        name: str = "bedrock",
    ) -> None:
        if thinking_budget is not None and (isinstance(thinking_budget, bool) or thinking_budget < 1024):
            raise ProviderConfigError("bedrock(): thinking_budget must be an integer of at least 1024 tokens")
        self.thinking_budget = thinking_budget
        self.carries_forced_tool_choice = thinking_budget is None
        """Claude on Bedrock refuses a forced ``toolChoice`` while thinking: a thinking provider does not offer it."""
        self.carries_forced_tool_choice_while_thinking = False
        """Nor with a thinking budget the agent sends per request (``.thinking(budget)``)."""
        key = api_key if api_key is not None else os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
        self._api_key = key or None
        self._profile = profile
        self._credentials = credentials
        region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if not region and self._api_key is None:
            region = botocore_module("session").Session(profile=profile).get_config_variable("region")
        if not region:
            raise ProviderConfigError("bedrock(): no AWS region; pass region= or set AWS_REGION")
        if self._api_key is None:
            botocore_module("auth")
        self.region = region
        super().__init__(
            name=name,
            base_url=endpoint_url
            or os.environ.get("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")
            or os.environ.get("AWS_ENDPOINT_URL")
            or f"https://bedrock-runtime.{region}.amazonaws.com",
            model=model,
            timeout=timeout,
            transport=transport,
            headers=None,
            secret=key,
        )

    def __repr__(self) -> str:
        return f"BedrockProvider(name={self.name!r}, region={self.region!r}, model={self.model!r})"

    def model_path(self, model: str, operation: str) -> str:
        """``/model/{modelId}/{operation}`` with the id escaped as botocore escapes it (ARNs included)."""
        return f"/model/{quote(model, safe='')}/{operation}"

    def model_hint(self, model: str) -> str:
        """Bedrock-specific advice."""
        return "Use a model id or inference profile id your region offers, with model access enabled"

    async def _frozen_credentials(self) -> Any:
        if self._credentials is None:
            session = botocore_module("session").Session(profile=self._profile)
            self._credentials = await asyncio.to_thread(session.get_credentials)
            if self._credentials is None:
                raise ProviderAuthError(
                    f"{self.name}: no AWS credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                    "AWS_PROFILE, or pass api_key= (a Bedrock API key)",
                    provider=self.name,
                )
        getter = getattr(self._credentials, "get_frozen_credentials", None)
        return await asyncio.to_thread(getter) if getter is not None else self._credentials

    async def prepare_headers(self, url: str, content: bytes) -> dict[str, str]:
        """``Authorization: Bearer`` for an API key, else headers signed with SigV4 by botocore's signer."""
        headers = self.request_headers()
        if self._api_key is not None:
            headers["authorization"] = f"Bearer {self._api_key}"
            return headers
        auth, awsrequest = botocore_module("auth"), botocore_module("awsrequest")
        try:
            credentials = await self._frozen_credentials()
        except ProviderError:
            raise
        except Exception as exc:  # botocore raises many unrelated types while resolving credentials
            raise ProviderAuthError(
                f"{self.name}: loading AWS credentials failed ({type(exc).__name__}); check {self.key_hint}",
                provider=self.name,
            ) from None
        self.add_secret(getattr(credentials, "secret_key", None))
        self.add_secret(getattr(credentials, "token", None))
        signed = awsrequest.AWSRequest(method="POST", url=url, data=content, headers=headers)
        auth.SigV4Auth(credentials, "bedrock", self.region).add_auth(signed)
        return {key: value for key, value in signed.headers.items()}

    def status_error(self, status: int, raw: bytes, headers: Mapping[str, str], model: str) -> ProviderError:
        """AWS errors by their ``x-amzn-ErrorType``: each becomes the typed error that says what to do."""
        kind = _error_type(headers, raw)
        message = self.safe(_aws_message(raw)) or "(no error text)"
        where = f"{self.name} at {self.base_url}"
        if kind in ("UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException") or (
            kind == "AccessDeniedException"
        ):
            return ProviderAuthError(
                f"{where} refused the credentials ({kind}, {status}): {message}. Check {self.key_hint}.",
                provider=self.name,
                status=status,
            )
        if kind == "ResourceNotFoundException" or (
            kind == "ValidationException" and "model identifier is invalid" in message.lower()
        ):
            return ModelNotFoundError(
                f"{where} does not have model {self.safe(model, 120)!r} ({kind}): {message}. {self.model_hint(model)}.",
                model=model,
                provider=self.name,
                status=status,
            )
        if kind == "ModelTimeoutException":
            return ProviderTimeoutError(f"{where}: the model timed out ({kind}): {message}", provider=self.name)
        if kind in ("ModelErrorException", "ModelNotReadyException"):
            return ProviderServerError(
                f"{where}: the model failed ({kind}, {status}): {message}", provider=self.name, status=status
            )
        if kind == "ServiceQuotaExceededException":
            return RateLimitError(
                f"{where}: quota exceeded ({kind}): {message}. Raise the quota or lower the request rate.",
                provider=self.name,
                status=status,
            )
        return super().status_error(status, raw, headers, model)

    def _stream_error(self, kind: str, payload: bytes) -> ProviderError:
        message = self.safe(_aws_message(payload)) or "(no error text)"
        where = f"{self.name} at {self.base_url} reported an error mid-stream ({kind or 'error'})"
        if kind in ("throttlingException", "ThrottlingException"):
            return RateLimitError(f"{where}: {message}", provider=self.name)
        if kind in ("validationException", "ValidationException"):
            return ProviderRequestError(f"{where}: {message}", provider=self.name)
        return ProviderServerError(f"{where}: {message}", provider=self.name)

    def _body(self, request: LLMRequest) -> dict[str, Any]:
        return build_body(
            request, thinking_budget=request.thinking.budget if request.thinking else self.thinking_budget
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One Converse call."""
        model = self.resolve_model(request)
        data = await self.post_json(self.model_path(model, "converse"), self._body(request), model)
        try:
            response = parse_response(data)
        except WireFormatError as exc:
            raise self.bad_response(exc) from None
        return response  # Converse names no model in its reply: the request's is not repeated as the answer's

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """ConverseStream: AWS event-stream frames decoded by botocore; tool calls yielded as their blocks stop."""
        model = self.resolve_model(request)
        eventstream = botocore_module("eventstream")
        chunks = self.stream_bytes(self.model_path(model, "converse-stream"), self._body(request), model)
        decoder = eventstream.EventStreamBuffer()
        state = _StreamState()
        try:
            async for raw in chunks:
                decoder.add_data(raw)
                try:
                    for message in decoder:
                        headers = message.headers
                        kind = headers.get(":message-type")
                        if kind in ("exception", "error"):
                            name = headers.get(":exception-type") or headers.get(":error-code") or ""
                            raise self._stream_error(str(name), message.payload)
                        event = str(headers.get(":event-type") or "")
                        payload = as_dict(parse_json(message.payload or b"{}", "a stream event"), event or "event")
                        for chunk in state.feed(event, payload):
                            yield chunk
                except eventstream.ParserError as exc:
                    unreadable = WireFormatError(f"unreadable event-stream frame ({type(exc).__name__})")
                    raise self.bad_response(unreadable) from None
                except WireFormatError as exc:
                    raise self.bad_response(exc) from None
        finally:
            await chunks.aclose()
        if state.stop_reason is None:
            raise ProviderResponseError(
                f"{self.name} at {self.base_url}: the stream ended before the response was complete",
                provider=self.name,
            )
        for chunk in state.finish():
            yield chunk
        yield StreamChunk(kind="done", response=state.response())


def bedrock(
    model: str | None = None,
    *,
    region: str | None = None,
    profile: str | None = None,
    api_key: str | None = None,
    credentials: Any = None,
    endpoint_url: str | None = None,
    thinking_budget: int | None = None,
    timeout: float = 120.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    name: str = "bedrock",
) -> BedrockProvider:
    """A provider for Amazon Bedrock's Converse API (needs the ``bedrock`` extra unless ``api_key`` is given).

    Credentials come from botocore's usual chain (environment, ``profile``/``AWS_PROFILE``, SSO, instance role)
    unless ``credentials`` (botocore credentials) or a Bedrock ``api_key`` (``AWS_BEARER_TOKEN_BEDROCK``) is given.
    ``model`` is a model id, an inference profile id or an ARN; ``thinking_budget`` turns on Claude's thinking.
    ``endpoint_url`` falls back to ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` / ``AWS_ENDPOINT_URL`` (VPC endpoints, proxies).
    """
    return BedrockProvider(
        model,
        region=region,
        profile=profile,
        api_key=api_key,
        credentials=credentials,
        endpoint_url=endpoint_url,
        thinking_budget=thinking_budget,
        timeout=timeout,
        transport=transport,
        name=name,
    )
