"""HTTP failures map to typed errors that say what to do, for every HTTP provider, streaming or not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from agentfootprint.providers import (
    LLMResponse,
    ModelNotFoundError,
    Provider,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
    anthropic,
    ollama,
    openai_compatible,
)

from ._support import SECRET, FakeServer, Outcome, collect, json_reply, user_request

Factory = Callable[[httpx2.MockTransport], Provider]

FACTORIES: dict[str, tuple[Factory, str]] = {
    "openai": (
        lambda t: openai_compatible("http://127.0.0.1:8080/v1", SECRET, "qwen2.5-7b", transport=t),
        "http://127.0.0.1:8080/v1",
    ),
    "ollama": (
        lambda t: ollama("qwen2.5-7b", transport=t, headers={"Authorization": f"Bearer {SECRET}"}),
        "http://127.0.0.1:11434",
    ),
    "anthropic": (lambda t: anthropic(SECRET, "qwen2.5-7b", transport=t), "https://api.anthropic.com"),
}


@pytest.fixture(params=sorted(FACTORIES))
def make(request: pytest.FixtureRequest) -> tuple[Callable[..., Provider], str]:
    factory, base = FACTORIES[request.param]

    def build(*outcomes: Outcome) -> Provider:
        return factory(FakeServer(*outcomes).transport)

    return build, base


@pytest.fixture(params=["complete", "stream"])
def call(request: pytest.FixtureRequest) -> Callable[[Provider], Any]:
    async def via_complete(provider: Provider) -> LLMResponse:
        return await provider.complete(user_request())

    async def via_stream(provider: Provider) -> LLMResponse:
        chunks = await collect(provider.stream(user_request()))
        assert chunks[-1].response is not None
        return chunks[-1].response

    return via_complete if request.param == "complete" else via_stream


async def test_connection_refused(make: Any, call: Any) -> None:
    build, base = make
    provider = build(httpx2.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(ProviderConnectionError) as info:
        await call(provider)
    assert str(info.value).startswith(f"could not connect to {base} — is the server running?")
    assert (info.value.retryable, info.value.status, info.value.provider) == (True, None, provider.name)


async def test_timeout(make: Any, call: Any) -> None:
    build, _ = make
    with pytest.raises(ProviderTimeoutError, match="did not answer within") as info:
        await call(build(httpx2.ReadTimeout("timed out")))
    assert info.value.retryable is True
    assert info.value.code == "ERR_PROVIDER_TIMEOUT"


async def test_connection_dropped_mid_request(make: Any, call: Any) -> None:
    build, _ = make
    with pytest.raises(ProviderConnectionError, match="failed mid-request"):
        await call(build(httpx2.RemoteProtocolError("peer closed connection")))


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_never_show_the_key(make: Any, call: Any, status: int) -> None:
    build, _ = make
    body = {"error": {"message": f"Incorrect API key provided: {SECRET}", "type": "invalid_request_error"}}
    with pytest.raises(ProviderAuthError) as info:
        await call(build(json_reply(body, status=status)))
    err = info.value
    assert SECRET not in str(err) and SECRET not in repr(err)
    assert "API key" in str(err) and "[redacted]" in str(err)
    assert (err.status, err.retryable) == (status, False)


async def test_missing_model(make: Any, call: Any) -> None:
    build, _ = make
    body = {"error": {"message": "The model `qwen2.5-7b` does not exist.", "code": "model_not_found"}}
    with pytest.raises(ModelNotFoundError) as info:
        await call(build(json_reply(body, status=404)))
    assert "'qwen2.5-7b'" in str(info.value)
    assert (info.value.model, info.value.status, info.value.retryable) == ("qwen2.5-7b", 404, False)


async def test_404_without_model_points_at_base_url(make: Any, call: Any) -> None:
    build, _ = make
    with pytest.raises(ProviderRequestError, match="Check base_url") as info:
        await call(build(json_reply({"detail": "Not Found"}, status=404)))
    assert not isinstance(info.value, ModelNotFoundError)


@pytest.mark.parametrize(("header", "expected"), [("7", 7.0), ("0.5", 0.5), (None, None), ("Wed, 21 Oct 2099", None)])
async def test_rate_limit_with_retry_after(make: Any, call: Any, header: str | None, expected: float | None) -> None:
    build, _ = make
    headers = {"retry-after": header} if header is not None else {}
    with pytest.raises(RateLimitError) as info:
        await call(build(json_reply({"error": {"message": "Rate limit reached"}}, status=429, headers=headers)))
    assert info.value.retry_after == expected
    assert (info.value.retryable, info.value.status) == (True, 429)
    assert "Rate limit reached" in str(info.value)


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_server_errors_are_retryable(make: Any, call: Any, status: int) -> None:
    build, _ = make
    with pytest.raises(ProviderServerError) as info:
        await call(build(json_reply({"error": {"message": "upstream exploded"}}, status=status)))
    assert (info.value.status, info.value.retryable) == (status, True)
    assert "upstream exploded" in str(info.value)


async def test_other_4xx_is_a_request_error_with_server_text(make: Any, call: Any) -> None:
    build, _ = make
    body = {"error": {"message": "'messages' must contain at least one item", "type": "invalid_request_error"}}
    with pytest.raises(ProviderRequestError, match="must contain at least one item") as info:
        await call(build(json_reply(body, status=400)))
    assert (info.value.status, info.value.retryable, info.value.code) == (400, False, "ERR_PROVIDER_REQUEST")


async def test_408_is_a_retryable_timeout(make: Any, call: Any) -> None:
    build, _ = make
    with pytest.raises(ProviderTimeoutError) as info:
        await call(build(json_reply({"error": "request timeout"}, status=408)))
    assert info.value.status == 408


def test_every_error_class_has_a_distinct_stable_code() -> None:
    from agentfootprint import providers

    classes = [getattr(providers, n) for n in providers.__all__ if n.endswith("Error")]
    codes = [c.code for c in classes]
    assert all(code.startswith("ERR_") for code in codes)
    assert len(set(codes)) == len(codes)
    assert all(issubclass(c, providers.ProviderError) or issubclass(c, providers.ProviderConfigError) for c in classes)
    assert all(isinstance(c("x"), ProviderError) == issubclass(c, ProviderError) for c in classes)


NOW = 1_899_999_900.0  # 120 s before Tue, 17 Mar 2030 17:47:00 GMT


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "30"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "30"}, 30.0),
        ({"retry-after-ms": "-5", "retry-after": "2"}, 2.0),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({"retry-after": "Tue, 17 Mar 2030 17:47:00 GMT"}, 120.0),
        ({"retry-after": "Tue, 17 Mar 2030 17:47:00 -0000"}, 120.0),
        ({"retry-after": "Tue, 17 Mar 2030 17:47:00"}, 120.0),
        ({"retry-after": "Tue, 17 Mar 2030 18:47:00 +0100"}, 120.0),
        ({"retry-after": "Mon, 01 Jan 2001 00:00:00 GMT"}, 0.0),
        ({"retry-after": "Wed, 21 Oct 2099"}, None),
        ({"retry-after": "Tue, 99 Mar 2030 17:47:00 GMT"}, None),
        ({"retry-after": "\x00\xff garbage"}, None),
        ({"retry-after": ""}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "1e999"}, 1e12),
        ({"retry-after-ms": "1e999"}, 1e9),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    from agentfootprint.providers._http import retry_after_from

    assert retry_after_from(headers, now=lambda: NOW) == expected


@pytest.mark.parametrize(
    "headers",
    [{"retry-after-ms": "1500"}, {"retry-after-ms": "250", "retry-after": "30"}, {"retry-after": "4"}, {}],
)
def test_retry_after_matches_the_openai_and_anthropic_sdks(headers: dict[str, str]) -> None:
    from anthropic._base_client import BaseClient as AnthropicClient
    from openai._base_client import BaseClient as OpenAIClient

    from agentfootprint.providers._http import retry_after_from

    ours = retry_after_from(httpx2.Headers(headers))
    assert ours == OpenAIClient._parse_retry_after_header(None, httpx2.Headers(headers))  # type: ignore[arg-type]
    assert ours == AnthropicClient._parse_retry_after_header(None, httpx2.Headers(headers))  # type: ignore[arg-type]


def test_an_http_date_retry_after_agrees_with_the_openai_sdk() -> None:
    import time
    from email.utils import formatdate

    from openai._base_client import BaseClient as OpenAIClient

    from agentfootprint.providers._http import retry_after_from

    headers = httpx2.Headers({"retry-after": formatdate(time.time() + 90, usegmt=True)})
    theirs = OpenAIClient._parse_retry_after_header(None, headers)  # type: ignore[arg-type]
    ours = retry_after_from(headers)
    assert theirs is not None and ours is not None and abs(ours - theirs) < 2.0 and 85 < ours <= 90


@pytest.mark.parametrize(("header", "value", "expected"), [("retry-after-ms", "2500", 2.5), ("retry-after", "0", 0.0)])
async def test_rate_limit_reads_retry_after_ms(make: Any, call: Any, header: str, value: str, expected: float) -> None:
    build, _ = make
    with pytest.raises(RateLimitError) as info:
        await call(build(json_reply({"error": {"message": "slow"}}, status=429, headers={header: value})))
    assert info.value.retry_after == expected
