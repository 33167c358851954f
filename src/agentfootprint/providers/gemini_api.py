"""Google's Gemini models: the Gemini API (key) or Vertex AI (Google credentials), with SSE streaming."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agentfootprint.providers._http import HTTPProvider, parse_retry_after
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
    req_str,
)
from agentfootprint.providers.errors import (
    ProviderAuthError,
    ProviderConfigError,
    ProviderError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
)

if TYPE_CHECKING:
    import httpx2

GEMINI_API_URL = "https://generativelanguage.googleapis.com"
GENERATED_ID_PREFIX = "gemini_call_"
"""Tool-call ids this client made up (the wire gave none); they are not sent back to the API."""
_CLOUD_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _tool_response(content: str) -> dict[str, Any]:
    """A tool result as a ``functionResponse.response`` object (JSON objects pass through, text is wrapped)."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        value = None
    return value if isinstance(value, dict) else {"result": content}


def to_wire_contents(messages: list[Message]) -> list[dict[str, Any]]:
    """Our conversation as Gemini ``contents``; consecutive tool results merge into one user turn."""
    contents: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            response: dict[str, Any] = {
                "name": message.tool_name or "",
                "response": _tool_response(message.content),
            }
            if message.tool_call_id and not message.tool_call_id.startswith(GENERATED_ID_PREFIX):
                response["id"] = message.tool_call_id
            part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and "functionResponse" in last["parts"][-1]:
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
        elif message.role == "assistant":
            parts: list[dict[str, Any]] = [
                {"text": block.text, "thought": True, "thoughtSignature": block.signature}
                for block in message.reasoning
                if block.source == "gemini.thought" and block.signature and block.text
            ]
            if message.content or not message.tool_calls:
                parts.append({"text": message.content})
            for call in message.tool_calls:
                function: dict[str, Any] = {"name": call.name, "args": call.args}
                if not call.id.startswith(GENERATED_ID_PREFIX):
                    function["id"] = call.id
                item: dict[str, Any] = {"functionCall": function}
                if call.signature:
                    item["thoughtSignature"] = call.signature
                parts.append(item)
            contents.append({"role": "model", "parts": parts})
        else:
            contents.append({"role": "user", "parts": [{"text": message.content}]})
    return contents


def build_body(
    request: LLMRequest, *, thinking_budget: int | None = None, include_thoughts: bool = False
) -> dict[str, Any]:
    """The ``generateContent`` request body (camelCase, as the REST API takes it)."""
    body: dict[str, Any] = {"contents": to_wire_contents(request.messages)}
    if request.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": request.system_prompt}]}
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {"name": t.name, "description": t.description, "parametersJsonSchema": t.input_schema}
                    for t in request.tools
                ]
            }
        ]
    if request.tool_choice is not None:
        body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [request.tool_choice]}}
    config: dict[str, Any] = {}
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.max_tokens is not None:
        config["maxOutputTokens"] = request.max_tokens
    if request.seed is not None:
        config["seed"] = request.seed
    fmt = request.response_format
    if fmt is not None and fmt.get("type") in ("json_object", "json_schema"):
        config["responseMimeType"] = "application/json"
        schema = fmt.get("json_schema")
        if isinstance(schema, dict) and isinstance(schema.get("schema"), dict):
            config["responseJsonSchema"] = schema["schema"]
    if thinking_budget is not None or include_thoughts:
        thinking: dict[str, Any] = {"includeThoughts": include_thoughts}
        if thinking_budget is not None:
            thinking["thinkingBudget"] = thinking_budget
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body


def _usage(body: dict[str, Any]) -> Usage | None:
    if body.get("usageMetadata") is None:
        return None
    data = as_dict(body["usageMetadata"], "usageMetadata")
    thoughts = opt_int(data, "thoughtsTokenCount", "usageMetadata")
    return Usage(  # promptTokenCount already counts the cached part
        input_tokens=opt_int(data, "promptTokenCount", "usageMetadata"),
        output_tokens=opt_int(data, "candidatesTokenCount", "usageMetadata") + thoughts,
        reasoning_tokens=thoughts,
        cached_input_tokens=opt_int(data, "cachedContentTokenCount", "usageMetadata"),
    )


class _Turn:
    """Accumulates the parts of one candidate, whole or streamed chunk by chunk."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thoughts: list[str] = []
        self.thought_signature: str | None = None
        self.calls: list[ToolCall] = []
        self.usage = Usage()
        self.model: str | None = None
        self.id: str | None = None
        self.finish: str | None = None
        self.blocked: str | None = None

    def feed(self, data: object) -> list[StreamChunk]:
        """Absorb one response body (or stream chunk); return the chunks it settles."""
        body = as_dict(data, "body")
        self.model = opt_str(body, "modelVersion", "body") or self.model
        self.id = opt_str(body, "responseId", "body") or self.id
        usage = _usage(body)
        if usage is not None:
            self.usage = usage
        feedback = body.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self.blocked = feedback["blockReason"]
        out: list[StreamChunk] = []
        candidates = as_list(body.get("candidates"), "candidates")
        if not candidates:
            return out
        candidate = as_dict(candidates[0], "candidates[0]")
        self.finish = opt_str(candidate, "finishReason", "candidates[0]") or self.finish
        content = as_dict(candidate.get("content") or {}, "candidates[0].content")
        for i, raw in enumerate(as_list(content.get("parts"), "candidates[0].content.parts")):
            out.extend(self._part(as_dict(raw, f"candidates[0].content.parts[{i}]"), i))
        return out

    def _part(self, part: dict[str, Any], i: int) -> list[StreamChunk]:
        where = f"candidates[0].content.parts[{i}]"
        signature = opt_str(part, "thoughtSignature", where)
        if part.get("functionCall") is not None:
            function = as_dict(part["functionCall"], f"{where}.functionCall")
            args, error = parse_arguments(function.get("args"))
            call_id = opt_str(function, "id", f"{where}.functionCall") or f"{GENERATED_ID_PREFIX}{len(self.calls)}"
            call = ToolCall(
                id=call_id,
                name=req_str(function, "name", f"{where}.functionCall"),
                args=args,
                args_error=error,
                signature=signature,
            )
            self.calls.append(call)
            return [StreamChunk(kind="tool_call", tool_call=call)]
        text = opt_str(part, "text", where) or ""
        if part.get("thought") is True:
            self.thought_signature = signature or self.thought_signature
            self.thoughts.append(text)
            return [StreamChunk(kind="reasoning", text=text)] if text else []
        if signature:
            self.thought_signature = signature
        self.text.append(text)
        return [StreamChunk(kind="text", text=text)] if text else []

    def response(self) -> LLMResponse:
        """The assembled answer."""
        reasoning = []
        if self.thoughts or self.thought_signature:
            reasoning.append(
                ReasoningBlock(
                    kind="summary",
                    text="".join(self.thoughts),
                    signature=self.thought_signature,
                    source="gemini.thought",
                )
            )
        finish = "tool_calls" if self.calls else _FINISH.get(self.finish or "", (self.finish or "").lower() or None)
        return LLMResponse(
            content="".join(self.text),
            tool_calls=self.calls,
            reasoning=reasoning,
            usage=self.usage,
            model=self.model,
            id=self.id,
            finish_reason=finish,
        )


class GeminiProvider(HTTPProvider):
    """Gemini through the Gemini API (``x-goog-api-key``) or Vertex AI (OAuth bearer from Google credentials)."""

    factory = "gemini"
    carries_forced_tool_choice = True
    carries_native_output = True
    key_hint = "api_key= (or the GEMINI_API_KEY / GOOGLE_API_KEY environment variable)"

    def __init__(
        self,
        api_key: str | None = None,
        model: str | None = None,
        *,
        vertex: bool = False,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        base_url: str | None = None,
        api_version: str | None = None,
        thinking_budget: int | None = None,
        include_thoughts: bool = False,
        timeout: float = 60.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        name: str = "gemini",
    ) -> None:
        if thinking_budget is not None and (
            isinstance(thinking_budget, bool) or not isinstance(thinking_budget, int) or thinking_budget < -1
        ):
            raise ProviderConfigError("gemini(): thinking_budget must be an integer (0 turns thinking off, -1 = auto)")
        self.vertex = bool(vertex)
        self.thinking_budget = thinking_budget
        self.include_thoughts = bool(include_thoughts)
        self._credentials = credentials
        key: str | None = None
        if self.vertex:
            project = project or os.environ.get("GOOGLE_CLOUD_PROJECT")
            location = location or os.environ.get("GOOGLE_CLOUD_LOCATION") or "global"
            if not project:
                raise ProviderConfigError("gemini(vertex=True): no project; pass project= or set GOOGLE_CLOUD_PROJECT")
            host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
            self.api_version = api_version or "v1"
            self._prefix = (
                f"/{self.api_version}/projects/{quote(project, safe='')}/locations/{quote(location, safe='')}"
            )
            self._prefix += "/publishers/google/models/"
            base = base_url or os.environ.get("GOOGLE_VERTEX_BASE_URL") or f"https://{host}"
            self.key_hint = "your Google credentials (gcloud auth application-default login, or credentials=)"
        else:
            key = (
                api_key
                if api_key is not None
                else (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"))  # google-genai's order
            )
            self.api_version = api_version or "v1beta"
            self._prefix = f"/{self.api_version}/models/"
            base = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or GEMINI_API_URL
        self._api_key = key or None
        super().__init__(
            name=name,
            base_url=base,
            model=model,
            timeout=timeout,
            transport=transport,
            headers=None,
            secret=key,
        )

    def model_path(self, model: str, method: str) -> str:
        """``/v1beta/models/{model}:{method}`` (or the Vertex AI publisher path)."""
        return f"{self._prefix}{quote(model.removeprefix('models/'), safe='')}:{method}"

    def model_hint(self, model: str) -> str:
        """Gemini-specific advice."""
        return "List the models your key can use with GET /v1beta/models"

    def request_headers(self) -> dict[str, str]:
        """JSON headers plus ``x-goog-api-key`` on the Gemini API."""
        headers = super().request_headers()
        if self._api_key:
            headers["x-goog-api-key"] = self._api_key
        return headers

    async def prepare_headers(self, url: str, content: bytes) -> dict[str, str]:
        """Add a fresh OAuth token on Vertex AI; require a key on the Gemini API."""
        headers = self.request_headers()
        if not self.vertex:
            if not self._api_key:
                raise ProviderAuthError(
                    f"{self.name}: no API key; pass api_key= to gemini() or set GEMINI_API_KEY", provider=self.name
                )
            return headers
        token = await self._token()
        self.add_secret(token)
        headers["authorization"] = f"Bearer {token}"
        return headers

    async def _token(self) -> str:
        try:
            google_auth: Any = importlib.import_module("google.auth")
            transport: Any = importlib.import_module("google.auth.transport.requests")
        except ImportError:
            raise ProviderConfigError(
                "gemini(vertex=True) needs google-auth: pip install 'agentfootprint[gemini]'"
            ) from None
        if self._credentials is None:
            try:
                credentials, _project = await asyncio.to_thread(google_auth.default, scopes=[_CLOUD_SCOPE])
            except google_auth.exceptions.DefaultCredentialsError:
                raise ProviderAuthError(
                    f"{self.name}: no Google credentials found; run `gcloud auth application-default login` "
                    "or pass credentials=",
                    provider=self.name,
                ) from None
            self._credentials = credentials
        credentials = self._credentials
        if not getattr(credentials, "valid", False) or not getattr(credentials, "token", None):
            try:
                await asyncio.to_thread(credentials.refresh, transport.Request())
            except google_auth.exceptions.GoogleAuthError as exc:
                raise ProviderAuthError(
                    f"{self.name}: refreshing the Google credentials failed ({type(exc).__name__}); "
                    "run `gcloud auth application-default login` or check credentials=",
                    provider=self.name,
                ) from None
        token = getattr(credentials, "token", None)
        if not isinstance(token, str) or not token:
            raise ProviderAuthError(f"{self.name}: the Google credentials gave no access token", provider=self.name)
        return token

    def status_error(self, status: int, raw: bytes, headers: Mapping[str, str], model: str) -> ProviderError:
        """Google's error body: an invalid key is a 400, and a 429 carries its retry delay in ``details``."""
        info = _google_error(raw)
        if status == 400 and (info["reason"] == "API_KEY_INVALID" or "API key not valid" in info["message"]):
            return ProviderAuthError(
                f"{self.name} at {self.base_url} refused the API key ({status}): {self.safe(info['message'])}. "
                f"Check {self.key_hint}.",
                provider=self.name,
                status=status,
            )
        error = super().status_error(status, raw, headers, model)
        if isinstance(error, RateLimitError) and error.retry_after is None and info["retry_delay"] is not None:
            error.retry_after = info["retry_delay"]
        return error

    def _body(self, request: LLMRequest) -> dict[str, Any]:
        return build_body(
            request,
            thinking_budget=request.thinking.budget if request.thinking else self.thinking_budget,
            include_thoughts=self.include_thoughts,
        )

    def _finish(self, turn: _Turn) -> LLMResponse:
        if turn.blocked and not turn.text and not turn.calls:
            raise ProviderResponseError(
                f"{self.name} blocked the prompt ({self.safe(turn.blocked, 40)}); rephrase it or adjust the "
                "safety settings of your Google project",
                provider=self.name,
            )
        return turn.response()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One ``generateContent`` call."""
        model = self.resolve_model(request)
        data = await self.post_json(self.model_path(model, "generateContent"), self._body(request), model)
        turn = _Turn()
        try:
            turn.feed(data)
            if not as_list(as_dict(data, "body").get("candidates"), "candidates") and turn.blocked is None:
                raise WireFormatError("'candidates' is missing or empty")
        except WireFormatError as exc:
            raise self.bad_response(exc) from None
        return self._finish(turn)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """``streamGenerateContent?alt=sse``: each event is a partial response; the last carries the finish."""
        model = self.resolve_model(request)
        path = self.model_path(model, "streamGenerateContent") + "?alt=sse"
        lines = self.stream_lines(path, self._body(request), model)
        events = iter_sse(lines)
        turn = _Turn()
        try:
            async for _event, data in events:
                try:
                    payload = parse_json(data, "a stream event")
                    if isinstance(payload, dict) and payload.get("error") is not None:
                        raise ProviderServerError(
                            f"{self.name} at {self.base_url} reported an error mid-stream: "
                            f"{self.safe(_google_error(data.encode())['message'])}",
                            provider=self.name,
                        )
                    chunks = turn.feed(payload)
                except WireFormatError as exc:
                    raise self.bad_response(exc) from None
                for chunk in chunks:
                    yield chunk
        finally:
            await events.aclose()
            await lines.aclose()
        if turn.finish is None and turn.blocked is None:
            raise ProviderResponseError(
                f"{self.name} at {self.base_url}: the stream ended before the response was complete",
                provider=self.name,
            )
        yield StreamChunk(kind="done", response=self._finish(turn))


def _google_error(raw: bytes) -> dict[str, Any]:
    """``message``, ``reason`` and ``retry_delay`` (seconds) of a Google API error body, when present."""
    info: dict[str, Any] = {"message": raw.decode("utf-8", errors="replace"), "reason": None, "retry_delay": None}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return info
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return info
    if isinstance(error.get("message"), str):
        info["message"] = error["message"]
    details = error.get("details")
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, dict):
            continue
        if isinstance(detail.get("reason"), str):
            info["reason"] = detail["reason"]
        delay = detail.get("retryDelay")
        match = _DURATION.match(delay) if isinstance(delay, str) else None
        if match:
            info["retry_delay"] = parse_retry_after(match.group(1))
    return info


def gemini(
    api_key: str | None = None,
    model: str | None = None,
    *,
    vertex: bool = False,
    project: str | None = None,
    location: str | None = None,
    credentials: Any = None,
    base_url: str | None = None,
    api_version: str | None = None,
    thinking_budget: int | None = None,
    include_thoughts: bool = False,
    timeout: float = 60.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    name: str = "gemini",
) -> GeminiProvider:
    """A provider for Gemini: the Gemini API with a key (``GEMINI_API_KEY``), or Vertex AI with ``vertex=True``.

    Vertex AI takes ``project``/``location`` (or ``GOOGLE_CLOUD_PROJECT``/``GOOGLE_CLOUD_LOCATION``) and Google
    credentials (``credentials=`` or application default credentials; needs the ``gemini`` extra).
    ``include_thoughts`` asks for thought summaries, returned as ``LLMResponse.reasoning``.
    """
    return GeminiProvider(
        api_key,
        model,
        vertex=vertex,
        project=project,
        location=location,
        credentials=credentials,
        base_url=base_url,
        api_version=api_version,
        thinking_budget=thinking_budget,
        include_thoughts=include_thoughts,
        timeout=timeout,
        transport=transport,
        name=name,
    )
