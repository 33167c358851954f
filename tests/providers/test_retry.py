"""with_retry(): which errors are retried, backoff delays, attempts, streaming rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.providers import (
    LLMResponse,
    ModelRequiredError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
    mock,
    openai_compatible,
    with_retry,
)

from ._support import (
    FakeServer,
    FakeSleep,
    ScriptedProvider,
    collect,
    fixture,
    json_reply,
    raw_reply,
    user_request,
)


def server_error() -> ProviderServerError:
    return ProviderServerError("boom", provider="p", status=500)


async def test_retries_server_errors_then_succeeds() -> None:
    inner = ScriptedProvider("p", server_error(), ProviderTimeoutError("slow", provider="p"), LLMResponse(content="ok"))
    sleep = FakeSleep()
    response = await with_retry(inner, sleep=sleep).complete(user_request())
    assert response.content == "ok"
    assert inner.calls == 3
    assert sleep.delays == [0.5, 1.0]
    assert [(a.provider, a.attempt, a.outcome, a.error_code, a.status) for a in response.attempts] == [
        ("p", 1, "error", "ERR_PROVIDER_SERVER", 500),
        ("p", 2, "error", "ERR_PROVIDER_TIMEOUT", None),
        ("p", 3, "ok", None, None),
    ]
    assert all(a.elapsed_ms >= 0 for a in response.attempts)


@pytest.mark.parametrize(
    "error",
    [
        ProviderRequestError("bad request", provider="p", status=400),
        ProviderAuthError("bad key", provider="p", status=401),
        ProviderError("generic", provider="p"),
    ],
)
async def test_never_retries_non_retryable_errors(error: ProviderError) -> None:
    inner = ScriptedProvider("p", error, LLMResponse(content="never reached"))
    sleep = FakeSleep()
    with pytest.raises(type(error)) as info:
        await with_retry(inner, sleep=sleep).complete(user_request())
    assert inner.calls == 1 and sleep.delays == []
    assert [a.outcome for a in info.value.attempts] == ["error"]


async def test_gives_up_after_max_attempts_with_every_attempt_attached() -> None:
    inner = ScriptedProvider("p", server_error())
    sleep = FakeSleep()
    with pytest.raises(ProviderServerError) as info:
        await with_retry(inner, max_attempts=4, sleep=sleep).complete(user_request())
    assert inner.calls == 4
    assert sleep.delays == [0.5, 1.0, 2.0]
    assert [a.attempt for a in info.value.attempts] == [1, 2, 3, 4]


async def test_backoff_is_capped_at_max_delay() -> None:
    sleep = FakeSleep()
    with pytest.raises(ProviderServerError):
        await with_retry(
            ScriptedProvider("p", server_error()), max_attempts=8, base_delay=0.5, max_delay=3.0, sleep=sleep
        ).complete(user_request())
    assert sleep.delays == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0]


async def test_rate_limit_waits_the_whole_retry_after_beyond_max_delay() -> None:
    sleep = FakeSleep()
    inner = ScriptedProvider(
        "p",
        RateLimitError("slow down", retry_after=2.5, provider="p"),
        RateLimitError("slow down", retry_after=30.0, provider="p"),
        RateLimitError("slow down", provider="p"),
        LLMResponse(content="ok"),
    )
    await with_retry(inner, max_attempts=4, max_delay=8.0, sleep=sleep).complete(user_request())
    assert sleep.delays == [2.5, 30.0, 2.0]


async def test_retry_after_beyond_max_retry_after_is_raised_at_once() -> None:
    sleep = FakeSleep()
    inner = ScriptedProvider("p", RateLimitError("slow down", retry_after=3600.0, provider="p"), LLMResponse())
    with pytest.raises(RateLimitError) as caught:
        await with_retry(inner, max_attempts=5, sleep=sleep, max_retry_after=60.0).complete(user_request())
    assert sleep.delays == [] and inner.calls == 1
    assert [a.error_code for a in caught.value.attempts] == ["ERR_PROVIDER_RATE_LIMIT"]


async def test_retry_after_in_a_stream_is_honoured_in_full() -> None:
    sleep = FakeSleep()
    inner = ScriptedProvider("p", RateLimitError("slow", retry_after=30.0, provider="p"), LLMResponse(content="ok"))
    chunks = await collect(with_retry(inner, sleep=sleep).stream(user_request()))
    assert chunks[-1].response is not None and chunks[-1].response.content == "ok"
    assert sleep.delays == [30.0]


async def test_jitter_callable_and_fraction() -> None:
    sleep = FakeSleep()
    inner = ScriptedProvider("p", server_error(), server_error(), LLMResponse(content="ok"))
    await with_retry(inner, sleep=sleep, jitter=lambda d: d / 2).complete(user_request())
    assert sleep.delays == [0.25, 0.5]
    sleep = FakeSleep()
    inner = ScriptedProvider("p", server_error(), server_error(), LLMResponse(content="ok"))
    await with_retry(inner, sleep=sleep, jitter=0.5).complete(user_request())
    assert 0.25 <= sleep.delays[0] <= 0.5 and 0.5 <= sleep.delays[1] <= 1.0


async def test_connection_refused_over_http_is_retried() -> None:
    import httpx2

    server = FakeServer(
        httpx2.ConnectError("refused"),
        raw_reply(fixture("openai_answer.json"), content_type="application/json"),
    )
    provider = openai_compatible("http://127.0.0.1:8080/v1", model="m", transport=server.transport)
    sleep = FakeSleep()
    response = await with_retry(provider, sleep=sleep).complete(user_request())
    assert response.content.startswith("Refund DECLINED")
    assert [a.error_code for a in response.attempts] == ["ERR_PROVIDER_CONNECTION", None]
    assert [a.provider for a in response.attempts] == ["openai_compatible", "openai_compatible"]
    assert len(server.seen) == 2 and sleep.delays == [0.5]


async def test_http_400_is_sent_once() -> None:
    server = FakeServer(json_reply({"error": {"message": "bad"}}, status=400))
    provider = openai_compatible("http://127.0.0.1:8080/v1", model="m", transport=server.transport)
    sleep = FakeSleep()
    with pytest.raises(ProviderRequestError):
        await with_retry(provider, sleep=sleep).complete(user_request())
    assert len(server.seen) == 1 and sleep.delays == []


async def test_http_429_retry_after_header_drives_the_delay() -> None:
    server = FakeServer(
        json_reply({"error": {"message": "rate"}}, status=429, headers={"retry-after": "3"}),
        raw_reply(fixture("openai_answer.json"), content_type="application/json"),
    )
    provider = openai_compatible("http://127.0.0.1:8080/v1", model="m", transport=server.transport)
    sleep = FakeSleep()
    response = await with_retry(provider, sleep=sleep).complete(user_request())
    assert sleep.delays == [3.0]
    assert [a.status for a in response.attempts] == [429, None]


async def test_config_errors_and_exhausted_mocks_are_not_retried() -> None:
    sleep = FakeSleep()
    provider = openai_compatible("http://127.0.0.1:8080/v1", transport=FakeServer().transport)
    with pytest.raises(ModelRequiredError):
        await with_retry(provider, sleep=sleep).complete(user_request())
    exhausted = mock(replies=[])
    with pytest.raises(ProviderError):
        await with_retry(exhausted, sleep=sleep).complete(user_request())
    assert exhausted.calls == 1 and sleep.delays == []


async def test_stream_retries_before_the_first_chunk() -> None:
    inner = ScriptedProvider("p", server_error(), LLMResponse(content="streamed"))
    sleep = FakeSleep()
    chunks = await collect(with_retry(inner, sleep=sleep).stream(user_request()))
    assert [c.kind for c in chunks] == ["text", "done"]
    done = chunks[-1].response
    assert done is not None and [a.outcome for a in done.attempts] == ["error", "ok"]
    assert sleep.delays == [0.5]


async def test_stream_error_after_first_chunk_propagates() -> None:
    inner = ScriptedProvider("p", ("after-first-chunk", server_error()), LLMResponse(content="never"))
    sleep = FakeSleep()
    received: list[str] = []
    with pytest.raises(ProviderServerError) as info:
        async for chunk in with_retry(inner, sleep=sleep).stream(user_request()):
            received.append(chunk.text)
    assert received == ["partial "]
    assert inner.calls == 1 and sleep.delays == []
    assert len(info.value.attempts) == 1


async def test_retry_keeps_the_inner_name() -> None:
    assert with_retry(mock("x", name="primary")).name == "primary"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"max_attempts": 1.5},
        {"base_delay": -1},
        {"max_delay": -1},
        {"jitter": 2.0},
        {"max_retry_after": -1},
        {"max_retry_after": float("nan")},
        {"max_retry_after": float("inf")},
        {"max_delay": "8"},
    ],
)
def test_invalid_settings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ProviderConfigError):
        with_retry(mock("x"), **kwargs)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    outcomes=st.lists(st.sampled_from(["500", "429", "timeout", "conn", "400", "ok"]), min_size=1, max_size=10),
    max_attempts=st.integers(1, 6),
    base_delay=st.floats(0, 5),
    max_delay=st.floats(0, 10),
    retry_after=st.one_of(st.none(), st.floats(0, 100)),
    max_retry_after=st.floats(0, 100),
)
def test_property_attempts_bounded_and_delays_capped(
    outcomes: list[str],
    max_attempts: int,
    base_delay: float,
    max_delay: float,
    retry_after: float | None,
    max_retry_after: float,
) -> None:
    import asyncio

    def make(kind: str) -> LLMResponse | ProviderError:
        if kind == "500":
            return server_error()
        if kind == "429":
            return RateLimitError("r", retry_after=retry_after, provider="p")
        if kind == "timeout":
            return ProviderTimeoutError("t", provider="p")
        if kind == "conn":
            return ProviderConnectionError("c", provider="p")
        if kind == "400":
            return ProviderRequestError("b", provider="p", status=400)
        return LLMResponse(content="ok")

    inner = ScriptedProvider("p", *(make(k) for k in outcomes))
    sleep = FakeSleep()
    wrapped = with_retry(
        inner,
        max_attempts=max_attempts,
        base_delay=base_delay,
        max_delay=max_delay,
        sleep=sleep,
        max_retry_after=max_retry_after,
    )
    try:
        response = asyncio.run(wrapped.complete(user_request()))
        attempts = response.attempts
        assert attempts[-1].outcome == "ok"
    except ProviderError as error:
        attempts = error.attempts
        assert attempts[-1].outcome == "error"
    assert inner.calls == len(attempts) <= max_attempts
    assert len(sleep.delays) == inner.calls - 1
    assert all(0 <= d <= max(max_delay, max_retry_after) for d in sleep.delays)
    if retry_after is not None and retry_after <= max_retry_after:
        waits = zip(sleep.delays, attempts, strict=False)
        assert all(d == retry_after for d, a in waits if a.error_code == "ERR_PROVIDER_RATE_LIMIT")
    assert all(a.outcome == "error" for a in attempts[:-1])
