"""Shared HTTP plumbing for the wire providers: client per call, status and transport error mapping."""

from __future__ import annotations

import importlib
import json
import threading
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from agentfootprint.providers._models import LLMRequest
from agentfootprint.providers._wire import WireFormatError, clean_text, parse_json, server_message
from agentfootprint.providers.base import BaseProvider
from agentfootprint.providers.errors import (
    ModelNotFoundError,
    ModelRequiredError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)

if TYPE_CHECKING:
    import httpx2

_SECRET_HEADER_HINTS = ("auth", "key", "token", "secret", "cookie")


_ssl_context: list[Any] = []
_ssl_lock = threading.Lock()


def _httpx() -> Any:
    return importlib.import_module("httpx2")


def _shared_ssl_context() -> Any:
    """One default SSL context for all clients (building one costs ~30 ms; it is not bound to a loop)."""
    with _ssl_lock:
        if not _ssl_context:
            _ssl_context.append(_httpx().create_ssl_context())
        return _ssl_context[0]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``retry-after`` header (numeric form only); None when absent or unreadable."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if seconds != seconds or seconds < 0 or seconds == float("inf"):
        return None
    return seconds


_NEVER_SOON = 1e12  # a numeric retry-after too large for a float: the server means "not any time soon"


def _numeric_wait(value: str | None) -> float | None:
    seconds = parse_retry_after(value)
    if seconds is None and value is not None:
        try:
            overflowed = float(value.strip()) == float("inf") and "inf" not in value.lower()
        except ValueError:
            return None
        return _NEVER_SOON if overflowed else None
    return seconds


def retry_after_from(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from ``retry-after-ms``, else ``retry-after`` (seconds or HTTP-date); None when unreadable."""
    millis = _numeric_wait(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get("retry-after")
    seconds = _numeric_wait(value)
    if seconds is not None or value is None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # an HTTP-date is always GMT ("-0000" and a missing zone parse as naive)
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - now(), 0.0)


class HTTPProvider(BaseProvider):
    """Base of the HTTP providers: holds base URL, default model, headers and secrets to scrub."""

    factory: str = "provider"
    key_hint: str = "the api_key argument"

    def __init__(
        self,
        *,
        name: str,
        base_url: str,
        model: str | None,
        timeout: float,
        transport: httpx2.AsyncBaseTransport | None,
        headers: Mapping[str, str] | None,
        secret: str | None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ProviderConfigError(f"{self.factory}(): base_url must start with http:// or https://")
        if timeout <= 0:
            raise ProviderConfigError(f"{self.factory}(): timeout must be a positive number of seconds")
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = float(timeout)
        self._transport = transport
        self._headers = dict(headers or {})
        self._secrets: tuple[str, ...] = ()
        self.add_secret(secret)
        for key, value in self._headers.items():
            if any(hint in key.lower() for hint in _SECRET_HEADER_HINTS):
                parts = value.split()
                self.add_secret(value if len(parts) == 1 else None)
                for part in parts:
                    self.add_secret(part if len(part) >= 8 else None)

    def add_secret(self, secret: str | None) -> None:
        """Scrub ``secret`` (and fragments of it) from every message this provider writes from now on."""
        if secret and secret not in self._secrets:
            self._secrets = tuple(sorted({*self._secrets, secret}, key=len, reverse=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, model={self.model!r})"

    def request_headers(self) -> dict[str, str]:
        """Headers for every request (subclasses add auth)."""
        return {"content-type": "application/json", "accept": "application/json", **self._headers}

    def url(self, path: str) -> str:
        """The full URL of ``path`` (subclasses add query strings or route by model)."""
        return self.base_url + path

    async def prepare_headers(self, url: str, content: bytes) -> dict[str, str]:
        """The headers of one request to ``url`` with body ``content`` (subclasses fetch tokens or sign here)."""
        return self.request_headers()

    def resolve_model(self, request: LLMRequest) -> str:
        """``request.model`` if set, else the provider default, else ``ModelRequiredError``."""
        model = request.model or self.model
        if not model:
            raise ModelRequiredError(
                f"{self.name}: no model given; pass model= to {self.factory}() or set LLMRequest.model"
            )
        return model

    def safe(self, text: str, limit: int = 300) -> str:
        """Text with every configured secret removed and cut to ``limit`` characters."""
        return clean_text(text, self._secrets, limit)

    def connect_hint(self) -> str:
        """What to tell the user when the server cannot be reached."""
        return "is the server running?"

    def model_hint(self, model: str) -> str:
        """Extra advice for a missing model."""
        return "check the model name the server serves"

    def bad_response(self, exc: WireFormatError) -> ProviderResponseError:
        """A ``ProviderResponseError`` for a body of the wrong shape."""
        return ProviderResponseError(
            f"{self.name} at {self.base_url} sent a response this client cannot read: {self.safe(str(exc))}",
            provider=self.name,
        )

    def status_error(self, status: int, raw: bytes, headers: Mapping[str, str], model: str) -> ProviderError:
        """Map an HTTP error status to the typed error that says what to do."""
        message = self.safe(server_message(raw)) or "(no error text)"
        where = f"{self.name} at {self.base_url}"
        if status in (401, 403):
            return ProviderAuthError(
                f"{where} refused the API key ({status}): {message}. Check {self.key_hint}.",
                provider=self.name,
                status=status,
            )
        if status == 404 and "model" in message.lower():
            return ModelNotFoundError(
                f"{where} does not have model {self.safe(model, 120)!r} (404): {message}. {self.model_hint(model)}.",
                model=model,
                provider=self.name,
                status=status,
            )
        if status == 408:
            return ProviderTimeoutError(
                f"{where} timed out the request (408): {message}", provider=self.name, status=408
            )
        if status == 429:
            retry_after = retry_after_from(headers)
            wait = f"; retry after {retry_after:g}s" if retry_after is not None else ""
            return RateLimitError(
                f"{where} is rate limiting (429){wait}: {message}",
                retry_after=retry_after,
                provider=self.name,
                status=status,
            )
        if status >= 500:
            return ProviderServerError(f"{where} failed ({status}): {message}", provider=self.name, status=status)
        if status == 404:
            return ProviderRequestError(
                f"{where} has no such endpoint (404): {message}. Check base_url.",
                provider=self.name,
                status=status,
            )
        return ProviderRequestError(
            f"{where} rejected the request ({status}): {message}", provider=self.name, status=status
        )

    def transport_error(self, exc: Exception) -> ProviderError:
        """Map an httpx2 exception to a typed error."""
        httpx2 = _httpx()
        detail = self.safe(str(exc) or type(exc).__name__, 200)
        if isinstance(exc, httpx2.TimeoutException):
            return ProviderTimeoutError(
                f"{self.name} at {self.base_url} did not answer within {self.timeout:g}s ({detail}); "
                "raise timeout= or check the server's load",
                provider=self.name,
            )
        if isinstance(exc, httpx2.ConnectError):
            return ProviderConnectionError(
                f"could not connect to {self.base_url} — {self.connect_hint()} ({detail})", provider=self.name
            )
        if isinstance(exc, httpx2.TransportError):
            return ProviderConnectionError(
                f"the connection to {self.base_url} failed mid-request ({type(exc).__name__}: {detail})",
                provider=self.name,
            )
        return ProviderResponseError(
            f"{self.name} at {self.base_url}: unreadable HTTP exchange ({type(exc).__name__}: {detail})",
            provider=self.name,
        )

    def _client(self) -> tuple[Any, bool]:
        httpx2 = _httpx()
        client = httpx2.AsyncClient(
            transport=self._transport, timeout=httpx2.Timeout(self.timeout), verify=_shared_ssl_context()
        )
        return client, self._transport is None

    async def post_json(self, path: str, body: dict[str, Any], model: str) -> Any:
        """POST ``body`` and return the parsed JSON answer, or raise a typed error."""
        httpx2 = _httpx()
        url = self.url(path)
        content = json.dumps(body).encode()
        headers = await self.prepare_headers(url, content)
        client, owned = self._client()
        try:
            try:
                response = await client.post(url, content=content, headers=headers)
                raw = await response.aread()
            except httpx2.HTTPError as exc:
                raise self.transport_error(exc) from None
            if response.status_code >= 300:
                raise self.status_error(response.status_code, raw, response.headers, model)
            try:
                return parse_json(raw, "the response body")
            except WireFormatError as exc:
                raise self.bad_response(exc) from None
        finally:
            if owned:
                await client.aclose()

    def stream_lines(self, path: str, body: dict[str, Any], model: str) -> AsyncGenerator[str, None]:
        """POST ``body`` and yield the streamed response line by line, mapping every failure."""
        return self._stream(path, body, model, lines=True)

    def stream_bytes(self, path: str, body: dict[str, Any], model: str) -> AsyncGenerator[bytes, None]:
        """POST ``body`` and yield the raw streamed response bytes, mapping every failure."""
        return self._stream(path, body, model, lines=False)

    async def _stream(self, path: str, body: dict[str, Any], model: str, *, lines: bool) -> AsyncGenerator[Any, None]:
        httpx2 = _httpx()
        url = self.url(path)
        content = json.dumps(body).encode()
        headers = await self.prepare_headers(url, content)
        client, owned = self._client()
        try:
            try:
                async with client.stream("POST", url, content=content, headers=headers) as response:
                    if response.status_code >= 300:
                        raw = await response.aread()
                        raise self.status_error(response.status_code, raw, response.headers, model)
                    pieces = response.aiter_lines() if lines else response.aiter_bytes()
                    async for piece in pieces:
                        yield piece
            except httpx2.HTTPError as exc:
                raise self.transport_error(exc) from None
        finally:
            if owned:
                await client.aclose()
