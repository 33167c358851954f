"""A fake vendor server on loopback whose wire is checked against the vendors' own SDK code.

Every request body is validated with the vendor's types (openai / anthropic request TypedDicts through a pydantic
TypeAdapter, google-genai models, botocore's ParamValidator on the Converse service model, the ollama client's
ChatRequest); every answer, stream event and error body is built from the vendor's types before it is served.
A request that fails validation is recorded in ``server.problems`` and answered with a 599.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import TypeAdapter

MODEL = "m-1"
BEDROCK_MODEL = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-x-v1:0"
DEPLOYMENT = "dep-1"
API_KEY = "sk-vendor-KEY-0a1b2c3d4e5f6789"
AWS_ACCESS = "AKIAEXAMPLEACCESS01"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Xa2"
REGION = "us-east-1"


@dataclass
class Turn:
    """What the scripted model says: text, tool calls, reasoning and token counts."""

    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    reasoning: str = ""
    signature: str = "c2lnLTE="
    usage: tuple[int, int] = (12, 5)
    reasoning_tokens: int = 0


@dataclass
class Fail:
    """A scripted HTTP failure of one kind, in the vendor's own error shape."""

    kind: Literal["auth", "model", "rate", "server", "bad_request"]
    message: str = "scripted failure"
    retry_after: float | None = None


Outcome = Turn | Fail


@dataclass
class Seen:
    """One request the server received (body parsed as JSON)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes
    body: Any


Response = tuple[int, dict[str, str], list[bytes]]


def materialize(value: Any) -> Any:
    """A validated TypedDict value with pydantic's lazy iterables turned into lists (validating them)."""
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [materialize(v) for v in value]
    if hasattr(value, "__next__"):
        return [materialize(v) for v in value]
    return value


@functools.cache
def sdk_adapter(vendor: str, streaming: bool) -> TypeAdapter[Any]:
    """The vendor SDK's request TypedDict as a pydantic TypeAdapter (built once: it is slow to build)."""
    if vendor == "openai":
        from openai.types.chat import completion_create_params as openai_params

        kind: Any = openai_params.CompletionCreateParamsStreaming if streaming else None
        return TypeAdapter(kind or openai_params.CompletionCreateParamsNonStreaming)
    from anthropic.types import message_create_params as anthropic_params

    kind = anthropic_params.MessageCreateParamsStreaming if streaming else None
    return TypeAdapter(kind or anthropic_params.MessageCreateParamsNonStreaming)


@functools.cache
def anthropic_events() -> TypeAdapter[Any]:
    """The anthropic SDK's stream-event union as a TypeAdapter (built once)."""
    from anthropic.types import RawMessageStreamEvent

    return TypeAdapter(RawMessageStreamEvent)


@functools.cache
def bedrock_service() -> Any:
    """botocore's bedrock-runtime service model (loaded once)."""
    import botocore.session

    return botocore.session.get_session().get_service_model("bedrock-runtime")


def check_typed_dict(adapter: TypeAdapter[Any], body: dict[str, Any], what: str) -> None:
    """``body`` validates as the SDK's request TypedDict and loses nothing (no key the SDK does not know)."""
    validated = materialize(adapter.validate_python(body))
    if validated != body:
        raise AssertionError(f"{what}: keys or values the SDK does not know: sent {body!r}, SDK kept {validated!r}")


def _usage_total(turn: Turn) -> int:
    return turn.usage[0] + turn.usage[1]


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: ``(event name or None, JSON-able data)``."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def split(data: bytes, size: int = 7) -> list[bytes]:
    """Bytes cut in small pieces, so clients must reassemble frames and lines across reads."""
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


class OpenAIWire:
    """Chat Completions, checked with the ``openai`` SDK (Azure OpenAI shares it with its own path and auth)."""

    name = "openai"

    def __init__(self, azure: bool = False, entra_token: str | None = None, deployment: str = DEPLOYMENT) -> None:
        self.azure = azure
        self.deployment = deployment
        self.entra_token = entra_token

    def check(self, seen: Seen) -> None:
        if self.azure:
            if seen.path != f"/openai/deployments/{self.deployment}/chat/completions":
                raise AssertionError(f"azure path {seen.path}")
            if seen.query.get("api-version") != ["2024-10-21"]:
                raise AssertionError(f"azure api-version {seen.query}")
            if self.entra_token:
                if seen.headers.get("authorization") != f"Bearer {self.entra_token}":
                    raise AssertionError("azure: missing Entra ID bearer token")
            elif seen.headers.get("api-key") != API_KEY or "authorization" in seen.headers:
                raise AssertionError("azure: expected the api-key header only")
        else:
            if seen.path != "/v1/chat/completions":
                raise AssertionError(f"openai path {seen.path}")
            if seen.headers.get("authorization") != f"Bearer {API_KEY}":
                raise AssertionError("openai: missing bearer key")
        check_typed_dict(sdk_adapter("openai", bool(seen.body.get("stream"))), seen.body, "openai request")

    def is_stream(self, seen: Seen) -> bool:
        return bool(seen.body.get("stream"))

    def answer(self, turn: Turn, seen: Seen) -> Response:
        from openai.types.chat import ChatCompletion

        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.reasoning:
            message["reasoning_content"] = turn.reasoning
        if turn.calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, n, a in turn.calls
            ]
        completion = ChatCompletion.model_validate(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": seen.body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if turn.calls else "stop"}],
                "usage": {
                    "prompt_tokens": turn.usage[0],
                    "completion_tokens": turn.usage[1],
                    "total_tokens": _usage_total(turn),
                    "completion_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
                },
            }
        )
        return 200, {"content-type": "application/json"}, [completion.model_dump_json().encode()]

    def stream(self, turn: Turn, seen: Seen) -> Response:
        from openai.types.chat import ChatCompletionChunk

        model = seen.body["model"]

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> str:
            choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
            data: dict[str, Any] = {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": model,
                "choices": choices,
            }
            if usage:
                data["usage"] = usage
            return ChatCompletionChunk.model_validate(data).model_dump_json(exclude_unset=True)

        events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant"}))]
        for piece in _pieces(turn.reasoning):
            events.append((None, chunk({"reasoning_content": piece})))
        for piece in _pieces(turn.text):
            events.append((None, chunk({"content": piece})))
        for index, (call_id, name, args) in enumerate(turn.calls):
            text = json.dumps(args)
            head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            events.append((None, chunk({"tool_calls": [head]})))
            for piece in _pieces(text):
                events.append((None, chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})))
        events.append((None, chunk({}, "tool_calls" if turn.calls else "stop")))
        usage = {
            "prompt_tokens": turn.usage[0],
            "completion_tokens": turn.usage[1],
            "total_tokens": _usage_total(turn),
            "completion_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
        }
        events.append((None, chunk({}, usage=usage)))
        events.append((None, "[DONE]"))
        return 200, {"content-type": "text/event-stream"}, split(sse(events))

    def fail(self, fail: Fail) -> Response:
        from openai.types.shared import ErrorObject

        status, kind, code = {
            "auth": (401, "invalid_request_error", "invalid_api_key"),
            "model": (404, "invalid_request_error", "model_not_found"),
            "rate": (429, "requests", "rate_limit_exceeded"),
            "server": (500, "server_error", None),
            "bad_request": (400, "invalid_request_error", None),
        }[fail.kind]
        message = fail.message if fail.kind != "model" else f"The model `{MODEL}` does not exist. {fail.message}"
        error = ErrorObject(message=message, type=kind, param=None, code=code)
        headers = {"content-type": "application/json"}
        if fail.retry_after is not None:
            headers["retry-after"] = f"{fail.retry_after:g}"
        return status, headers, [json.dumps({"error": error.model_dump()}).encode()]


def _pieces(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class AnthropicWire:
    """The Messages API, checked with the ``anthropic`` SDK."""

    name = "anthropic"

    def check(self, seen: Seen) -> None:
        if seen.path != "/v1/messages":
            raise AssertionError(f"anthropic path {seen.path}")
        if seen.headers.get("x-api-key") != API_KEY or not seen.headers.get("anthropic-version"):
            raise AssertionError("anthropic: missing x-api-key or anthropic-version")
        check_typed_dict(sdk_adapter("anthropic", bool(seen.body.get("stream"))), seen.body, "anthropic request")

    def is_stream(self, seen: Seen) -> bool:
        return bool(seen.body.get("stream"))

    def _content(self, turn: Turn) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        if turn.reasoning:
            content.append({"type": "thinking", "thinking": turn.reasoning, "signature": turn.signature})
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in turn.calls]
        return content

    def answer(self, turn: Turn, seen: Seen) -> Response:
        from anthropic.types import Message

        message = Message.model_validate(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": seen.body["model"],
                "content": self._content(turn),
                "stop_reason": "tool_use" if turn.calls else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": turn.usage[0], "output_tokens": turn.usage[1]},
            }
        )
        return 200, {"content-type": "application/json"}, [message.model_dump_json().encode()]

    def stream(self, turn: Turn, seen: Seen) -> Response:
        adapter = anthropic_events()
        raw: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": seen.body["model"],
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": turn.usage[0], "output_tokens": 1},
                },
            }
        ]
        index = 0
        if turn.reasoning:
            raw.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            )
            raw += [
                {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}}
                for p in _pieces(turn.reasoning)
            ]
            raw.append(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": turn.signature},
                }
            )
            raw.append({"type": "content_block_stop", "index": index})
            index += 1
        if turn.text:
            raw.append({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
            raw += [
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}
                for p in _pieces(turn.text)
            ]
            raw.append({"type": "content_block_stop", "index": index})
            index += 1
        for call_id, name, args in turn.calls:
            block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            raw.append({"type": "content_block_start", "index": index, "content_block": block})
            raw += [
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
                for p in _pieces(json.dumps(args))
            ]
            raw.append({"type": "content_block_stop", "index": index})
            index += 1
        raw.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": turn.usage[1]},
            }
        )
        raw.append({"type": "message_stop"})
        events = [(item["type"], adapter.validate_python(item).model_dump_json()) for item in raw]
        return 200, {"content-type": "text/event-stream"}, split(sse(events))

    def fail(self, fail: Fail) -> Response:
        from anthropic.types import ErrorResponse

        status, kind = {
            "auth": (401, "authentication_error"),
            "model": (404, "not_found_error"),
            "rate": (429, "rate_limit_error"),
            "server": (529, "overloaded_error"),
            "bad_request": (400, "invalid_request_error"),
        }[fail.kind]
        message = fail.message if fail.kind != "model" else f"model: {MODEL}. {fail.message}"
        body = ErrorResponse.model_validate({"type": "error", "error": {"type": kind, "message": message}})
        headers = {"content-type": "application/json"}
        if fail.retry_after is not None:
            headers["retry-after"] = f"{fail.retry_after:g}"
        return status, headers, [body.model_dump_json().encode()]


class GeminiWire:
    """The Gemini API, checked with ``google-genai``'s models (which forbid unknown fields)."""

    name = "gemini"
    _TOP = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings")

    def __init__(self, model: str = MODEL) -> None:
        self.model = model

    def check(self, seen: Seen) -> None:
        from google.genai import types

        method = "streamGenerateContent" if self.is_stream(seen) else "generateContent"
        if seen.path != f"/v1beta/models/{self.model}:{method}":
            raise AssertionError(f"gemini path {seen.path}")
        if self.is_stream(seen) and seen.query.get("alt") != ["sse"]:
            raise AssertionError("gemini: streaming needs alt=sse")
        if seen.headers.get("x-goog-api-key") != API_KEY:
            raise AssertionError("gemini: missing x-goog-api-key")
        body = seen.body
        unknown = set(body) - set(self._TOP)
        if unknown:
            raise AssertionError(f"gemini: unknown request fields {sorted(unknown)}")
        for item in body["contents"]:
            types.Content.model_validate(item)
        if "systemInstruction" in body:
            types.Content.model_validate(body["systemInstruction"])
        for tool in body.get("tools", []):
            types.Tool.model_validate(tool)
        if "generationConfig" in body:
            types.GenerationConfig.model_validate(body["generationConfig"])

    def is_stream(self, seen: Seen) -> bool:
        return seen.path.endswith(":streamGenerateContent")

    def _response(self, parts: list[Any], turn: Turn | None, finish: bool) -> str:
        from google.genai import types

        candidate = types.Candidate(content=types.Content(role="model", parts=parts), index=0)
        if finish:
            candidate.finish_reason = types.FinishReason.STOP
        response = types.GenerateContentResponse(candidates=[candidate], model_version=MODEL)
        if turn is not None:
            response.usage_metadata = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=turn.usage[0],
                candidates_token_count=turn.usage[1] - turn.reasoning_tokens,
                thoughts_token_count=turn.reasoning_tokens or None,
                total_token_count=_usage_total(turn),
            )
        return response.model_dump_json(by_alias=True, exclude_none=True)

    def _parts(self, turn: Turn) -> list[Any]:
        from google.genai import types

        parts = []
        signature = base64.b64decode(turn.signature)
        if turn.reasoning:
            parts.append(types.Part(text=turn.reasoning, thought=True))
        if turn.text:
            parts.append(types.Part(text=turn.text))
        for call_id, name, args in turn.calls:
            parts.append(
                types.Part(
                    function_call=types.FunctionCall(id=call_id, name=name, args=args), thought_signature=signature
                )
            )
        return parts

    def answer(self, turn: Turn, seen: Seen) -> Response:
        return 200, {"content-type": "application/json"}, [self._response(self._parts(turn), turn, True).encode()]

    def stream(self, turn: Turn, seen: Seen) -> Response:
        from google.genai import types

        events: list[tuple[str | None, Any]] = []
        for piece in _pieces(turn.reasoning):
            events.append((None, self._response([types.Part(text=piece, thought=True)], None, False)))
        for piece in _pieces(turn.text):
            events.append((None, self._response([types.Part(text=piece)], None, False)))
        calls = [p for p in self._parts(turn) if p.function_call is not None]
        events.append((None, self._response(calls, turn, True)))
        return 200, {"content-type": "text/event-stream"}, split(sse(events))

    def fail(self, fail: Fail) -> Response:
        from google.genai import errors

        status, code, reason = {
            "auth": (400, "INVALID_ARGUMENT", "API_KEY_INVALID"),
            "model": (404, "NOT_FOUND", None),
            "rate": (429, "RESOURCE_EXHAUSTED", None),
            "server": (503, "UNAVAILABLE", None),
            "bad_request": (400, "INVALID_ARGUMENT", None),
        }[fail.kind]
        message = fail.message
        if fail.kind == "auth":
            message = f"API key not valid. Please pass a valid API key. {fail.message}"
        if fail.kind == "model":
            message = f"models/{MODEL} is not found for API version v1beta. {fail.message}"
        details: list[dict[str, Any]] = []
        if reason:
            details.append({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason})
        if fail.retry_after is not None:
            details.append(
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{fail.retry_after:g}s"}
            )
        body = {"error": {"code": status, "message": message, "status": code, "details": details}}
        error = errors.APIError(status, body)
        if (error.code, error.message, error.status) != (status, message, code):
            raise AssertionError("google-genai does not read this error body")
        return status, {"content-type": "application/json"}, [json.dumps(body).encode()]


def eventstream_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message (string headers only), as the service frames them."""
    encoded = b""
    for name, value in headers.items():
        key, val = name.encode(), value.encode()
        encoded += struct.pack("!B", len(key)) + key + struct.pack("!BH", 7, len(val)) + val
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + encoded + payload
    return message + struct.pack("!I", binascii.crc32(message) & 0xFFFFFFFF)


class BedrockWire:
    """The Converse API, checked with botocore: ParamValidator, the rest-json serializer and parser, SigV4."""

    name = "bedrock"

    def __init__(
        self, bearer: str | None = None, session_token: str | None = None, model_id: str = BEDROCK_MODEL
    ) -> None:
        self.model = bedrock_service()
        self.model_id = model_id
        self.bearer = bearer
        self.session_token = session_token

    def _operation(self, seen: Seen) -> Any:
        return self.model.operation_model("ConverseStream" if self.is_stream(seen) else "Converse")

    def check(self, seen: Seen) -> None:
        from botocore.serialize import create_serializer
        from botocore.validate import ParamValidator

        operation = self._operation(seen)
        params = {"modelId": self.model_id, **seen.body}
        report = ParamValidator().validate(params, operation.input_shape)
        if report.has_errors():
            raise AssertionError(f"bedrock request: {report.generate_report()}")
        expected = create_serializer("rest-json").serialize_to_request(params, operation)
        if expected["url_path"] != seen.path:
            raise AssertionError(f"bedrock path {seen.path} != botocore's {expected['url_path']}")
        if json.loads(expected["body"]) != seen.body:
            raise AssertionError("bedrock body differs from botocore's serialization")
        self._check_auth(seen)

    def _check_auth(self, seen: Seen) -> None:
        if self.bearer is not None:
            if seen.headers.get("authorization") != f"Bearer {self.bearer}":
                raise AssertionError("bedrock: expected the API key as a bearer token")
            return
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        authorization = seen.headers.get("authorization", "")
        signed_names = authorization.split("SignedHeaders=")[1].split(",")[0].split(";") if authorization else []
        if not signed_names or "host" not in signed_names:
            raise AssertionError("bedrock: request is not SigV4-signed")
        if self.session_token is not None and seen.headers.get("x-amz-security-token") != self.session_token:
            raise AssertionError("bedrock: the session token was not sent")
        headers = {name: seen.headers[name] for name in signed_names if name != "host"}
        url = f"http://{seen.headers['host']}{seen.path}"
        request = AWSRequest(method="POST", url=url, data=seen.raw, headers=headers)
        request.context["timestamp"] = seen.headers["x-amz-date"]
        auth = SigV4Auth(Credentials(AWS_ACCESS, AWS_SECRET, self.session_token), "bedrock", REGION)
        canonical = auth.canonical_request(request)
        signature = auth.signature(auth.string_to_sign(request, canonical), request)
        if not authorization.endswith(f"Signature={signature}"):
            raise AssertionError("bedrock: the SigV4 signature does not verify")

    def is_stream(self, seen: Seen) -> bool:
        return seen.path.endswith("/converse-stream")

    def _content(self, turn: Turn) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        if turn.reasoning:
            content.append(
                {"reasoningContent": {"reasoningText": {"text": turn.reasoning, "signature": turn.signature}}}
            )
        if turn.text:
            content.append({"text": turn.text})
        content += [{"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a in turn.calls]
        return content

    def answer(self, turn: Turn, seen: Seen) -> Response:
        from botocore.parsers import create_parser
        from botocore.validate import ParamValidator

        operation = self._operation(seen)
        output = {
            "output": {"message": {"role": "assistant", "content": self._content(turn)}},
            "stopReason": "tool_use" if turn.calls else "end_turn",
            "usage": {"inputTokens": turn.usage[0], "outputTokens": turn.usage[1], "totalTokens": _usage_total(turn)},
            "metrics": {"latencyMs": 5},
        }
        report = ParamValidator().validate(output, operation.output_shape)
        if report.has_errors():
            raise AssertionError(f"bedrock response: {report.generate_report()}")
        raw = json.dumps(output).encode()
        parsed = create_parser("rest-json").parse(
            {"status_code": 200, "headers": {}, "body": raw}, operation.output_shape
        )
        parsed.pop("ResponseMetadata", None)
        if parsed != output:
            raise AssertionError("botocore parses this Converse response differently")
        return 200, {"content-type": "application/json"}, [raw]

    def stream(self, turn: Turn, seen: Seen) -> Response:
        from botocore.eventstream import EventStreamBuffer
        from botocore.validate import ParamValidator

        members = self._operation(seen).output_shape.members["stream"].members
        events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
        index = 0
        if turn.reasoning:
            events += [
                ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": p}}})
                for p in _pieces(turn.reasoning)
            ]
            delta = {"reasoningContent": {"signature": turn.signature}}
            events.append(("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
            events.append(("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        if turn.text:
            events += [
                ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": p}}) for p in _pieces(turn.text)
            ]
            events.append(("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        for call_id, name, args in turn.calls:
            start = {"toolUse": {"toolUseId": call_id, "name": name}}
            events.append(("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            events += [
                ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}})
                for p in _pieces(json.dumps(args))
            ]
            events.append(("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        events.append(("messageStop", {"stopReason": "tool_use" if turn.calls else "end_turn"}))
        usage = {"inputTokens": turn.usage[0], "outputTokens": turn.usage[1], "totalTokens": _usage_total(turn)}
        events.append(("metadata", {"usage": usage, "metrics": {"latencyMs": 5}}))
        body = b""
        for name, payload in events:
            report = ParamValidator().validate(payload, members[name])
            if report.has_errors():
                raise AssertionError(f"bedrock {name} event: {report.generate_report()}")
            headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
            body += eventstream_frame(headers, json.dumps(payload).encode())
        decoded = EventStreamBuffer()
        decoded.add_data(body)
        if [m.headers[":event-type"] for m in decoded] != [name for name, _ in events]:
            raise AssertionError("botocore does not decode these event-stream frames")
        return 200, {"content-type": "application/vnd.amazon.eventstream"}, split(body, 11)

    def fail(self, fail: Fail) -> Response:
        from botocore.parsers import create_parser

        status, code = {
            "auth": (403, "UnrecognizedClientException"),
            "model": (400, "ValidationException"),
            "rate": (429, "ThrottlingException"),
            "server": (503, "ServiceUnavailableException"),
            "bad_request": (400, "ValidationException"),
        }[fail.kind]
        message = fail.message
        if fail.kind == "model":
            message = f"The provided model identifier is invalid. {fail.message}"
        headers = {"content-type": "application/json", "x-amzn-errortype": f"{code}:http://internal.amazon.com/"}
        raw = json.dumps({"message": message}).encode()
        parsed = create_parser("rest-json").parse(
            {"status_code": status, "headers": headers, "body": raw},
            self.model.operation_model("Converse").output_shape,
        )
        if parsed["Error"]["Code"] != code or parsed["Error"]["Message"] != message:
            raise AssertionError("botocore does not read this error")
        return status, headers, [raw]


class OllamaWire:
    """Ollama's ``/api/chat``, checked with the ``ollama`` client's ChatRequest and ChatResponse."""

    name = "ollama"

    def check(self, seen: Seen) -> None:
        from ollama._types import ChatRequest, Message

        if seen.path != "/api/chat":
            raise AssertionError(f"ollama path {seen.path}")
        ChatRequest.model_validate(seen.body)
        unknown = set(seen.body) - set(ChatRequest.model_fields)
        for message in seen.body["messages"]:
            unknown |= set(message) - set(Message.model_fields)
            for call in message.get("tool_calls", []):
                unknown |= set(call) - set(Message.ToolCall.model_fields)
                unknown |= set(call["function"]) - set(Message.ToolCall.Function.model_fields)
        if unknown:
            raise AssertionError(f"ollama: fields the client does not model: {sorted(unknown)}")

    def is_stream(self, seen: Seen) -> bool:
        return bool(seen.body.get("stream"))

    def _line(self, message: dict[str, Any], turn: Turn, done: bool) -> str:
        from ollama._types import ChatResponse

        data: dict[str, Any] = {"model": MODEL, "created_at": "2026-01-01T00:00:00Z", "message": message, "done": done}
        if done:
            data.update(done_reason="stop", prompt_eval_count=turn.usage[0], eval_count=turn.usage[1])
        return ChatResponse.model_validate(data).model_dump_json(exclude_none=True)

    def _message(self, turn: Turn) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.reasoning:
            message["thinking"] = turn.reasoning
        if turn.calls:
            message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for _i, n, a in turn.calls]
        return message

    def answer(self, turn: Turn, seen: Seen) -> Response:
        return 200, {"content-type": "application/json"}, [self._line(self._message(turn), turn, True).encode()]

    def stream(self, turn: Turn, seen: Seen) -> Response:
        lines = [
            self._line({"role": "assistant", "content": "", "thinking": p}, turn, False)
            for p in _pieces(turn.reasoning)
        ]
        lines += [self._line({"role": "assistant", "content": p}, turn, False) for p in _pieces(turn.text)]
        final = self._message(Turn(calls=turn.calls))
        lines.append(self._line(final, turn, True))
        return 200, {"content-type": "application/x-ndjson"}, split(("\n".join(lines) + "\n").encode())

    def fail(self, fail: Fail) -> Response:
        status = {"auth": 401, "model": 404, "rate": 429, "server": 500, "bad_request": 400}[fail.kind]
        message = fail.message if fail.kind != "model" else f'model "{MODEL}" not found, try pulling it first'
        return status, {"content-type": "application/json"}, [json.dumps({"error": message}).encode()]


Wire = OpenAIWire | AnthropicWire | GeminiWire | BedrockWire | OllamaWire


class VendorServer:
    """A real HTTP server on 127.0.0.1 answering one vendor's wire from a script of outcomes."""

    def __init__(self) -> None:
        self.wire: Wire | None = None
        self.script: list[Outcome] = []
        self.seen: list[Seen] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                status, headers, chunks = server.handle(self.path, dict(self.headers.items()), raw)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for piece in chunks:
                    if piece:
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def use(self, wire: Wire, *outcomes: Outcome) -> VendorServer:
        """Serve ``wire`` with ``outcomes`` in order (the last one repeats); forget earlier requests."""
        with self._lock:
            self.wire, self.script, self.seen, self.problems = wire, list(outcomes), [], []
        return self

    def handle(self, target: str, headers: dict[str, str], raw: bytes) -> Response:
        parts = urlsplit(target)
        with self._lock:
            wire = self.wire
            assert wire is not None
            seen = Seen(
                method="POST",
                path=unquote(parts.path) if isinstance(wire, GeminiWire) else parts.path,
                query=parse_qs(parts.query),
                headers={k.lower(): v for k, v in headers.items()},
                raw=raw,
                body=json.loads(raw) if raw else None,
            )
            self.seen.append(seen)
            outcome = self.script[min(len(self.seen), len(self.script)) - 1]
        try:
            wire.check(seen)
        except Exception as exc:
            self.problems.append(f"{type(exc).__name__}: {exc}")
            return 599, {"content-type": "application/json"}, [b'{"error": {"message": "invalid request"}}']
        if isinstance(outcome, Fail):
            return wire.fail(outcome)
        return wire.stream(outcome, seen) if wire.is_stream(seen) else wire.answer(outcome, seen)

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()


def frames(body: bytes) -> Iterator[Any]:
    """Decode event-stream frames with botocore (for tests that read a served body)."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    buffer.add_data(body)
    yield from buffer


ProviderFactory = Callable[..., Any]
