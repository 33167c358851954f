"""with_fallback(): order of providers, attempts, and the stream-after-first-chunk rule."""

from __future__ import annotations

import pytest

from agentfootprint.providers import (
    LLMResponse,
    ModelRequiredError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderServerError,
    mock,
    openai_compatible,
    with_fallback,
    with_retry,
)

from ._support import FakeServer, FakeSleep, ScriptedProvider, collect, user_request


def boom(name: str) -> ProviderServerError:
    return ProviderServerError(f"{name} down", provider=name, status=503)


async def test_falls_back_in_order_and_records_every_attempt() -> None:
    a = ScriptedProvider("a", boom("a"))
    b = ScriptedProvider("b", ProviderAuthError("bad key", provider="b", status=401))
    c = ScriptedProvider("c", LLMResponse(content="from c"))
    response = await with_fallback(a, b, c).complete(user_request())
    assert response.content == "from c"
    assert [(x.provider, x.outcome, x.status) for x in response.attempts] == [
        ("a", "error", 503),
        ("b", "error", 401),
        ("c", "ok", None),
    ]


async def test_primary_success_never_touches_fallbacks() -> None:
    b = ScriptedProvider("b", LLMResponse(content="unused"))
    response = await with_fallback(mock("primary answer"), b).complete(user_request())
    assert response.content == "primary answer"
    assert b.calls == 0
    assert [(x.provider, x.attempt, x.outcome) for x in response.attempts] == [("mock", 1, "ok")]


async def test_all_failing_raises_the_last_error_with_all_attempts() -> None:
    with pytest.raises(ProviderServerError, match="b down") as info:
        await with_fallback(ScriptedProvider("a", boom("a")), ScriptedProvider("b", boom("b"))).complete(user_request())
    assert [x.provider for x in info.value.attempts] == ["a", "b"]


async def test_config_errors_are_not_fallen_back_from() -> None:
    unconfigured = openai_compatible("http://127.0.0.1:1/v1", transport=FakeServer().transport)
    b = ScriptedProvider("b", LLMResponse(content="x"))
    with pytest.raises(ModelRequiredError):
        await with_fallback(unconfigured, b).complete(user_request())
    assert b.calls == 0


async def test_nested_retry_attempts_are_flattened() -> None:
    sleep = FakeSleep()
    primary = with_retry(ScriptedProvider("a", boom("a")), max_attempts=2, sleep=sleep)
    secondary = with_retry(ScriptedProvider("b", boom("b"), LLMResponse(content="ok")), sleep=sleep)
    response = await with_fallback(primary, secondary).complete(user_request())
    assert [(x.provider, x.attempt, x.outcome) for x in response.attempts] == [
        ("a", 1, "error"),
        ("a", 2, "error"),
        ("b", 1, "error"),
        ("b", 2, "ok"),
    ]
    assert sleep.delays == [0.5, 0.5]


async def test_retry_around_fallback_counts_each_round() -> None:
    sleep = FakeSleep()
    a = ScriptedProvider("a", boom("a"), LLMResponse(content="a recovered"))
    b = ScriptedProvider("b", boom("b"))
    response = await with_retry(with_fallback(a, b), sleep=sleep).complete(user_request())
    assert response.content == "a recovered"
    assert [(x.provider, x.outcome) for x in response.attempts] == [
        ("a", "error"),
        ("b", "error"),
        ("a", "ok"),
    ]


async def test_stream_falls_back_before_the_first_chunk() -> None:
    a = ScriptedProvider("a", boom("a"))
    chunks = await collect(with_fallback(a, mock("secondary streams")).stream(user_request()))
    assert "".join(c.text for c in chunks if c.kind == "text") == "secondary streams"
    done = chunks[-1].response
    assert done is not None
    assert [(x.provider, x.outcome) for x in done.attempts] == [("a", "error"), ("mock", "ok")]


async def test_stream_error_after_the_first_chunk_propagates() -> None:
    a = ScriptedProvider("a", ("after-first-chunk", boom("a")))
    b = ScriptedProvider("b", LLMResponse(content="never"))
    received: list[str] = []
    with pytest.raises(ProviderServerError) as info:
        async for chunk in with_fallback(a, b).stream(user_request()):
            received.append(chunk.text)
    assert received == ["partial "]
    assert b.calls == 0
    assert [x.provider for x in info.value.attempts] == ["a"]


async def test_stream_all_failing_raises_last() -> None:
    with pytest.raises(ProviderServerError, match="b down") as info:
        await collect(
            with_fallback(ScriptedProvider("a", boom("a")), ScriptedProvider("b", boom("b"))).stream(user_request())
        )
    assert len(info.value.attempts) == 2


def test_name_and_validation() -> None:
    assert with_fallback(mock("x", name="a"), mock("y", name="b")).name == "fallback(a, b)"
    with pytest.raises(ProviderConfigError, match="not a provider"):
        with_fallback(mock("x"), "nope")  # type: ignore[arg-type]


async def test_fallback_after_a_mock_runs_out() -> None:
    primary = mock(replies=["first"])
    wrapped = with_fallback(primary, mock("backup"))
    assert (await wrapped.complete(user_request())).content == "first"
    second = await wrapped.complete(user_request())
    assert second.content == "backup"
    assert [x.error_code for x in second.attempts] == ["ERR_MOCK_EXHAUSTED", None]
