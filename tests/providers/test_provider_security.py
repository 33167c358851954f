"""Hostile servers: unreadable or malformed bodies give typed errors; secrets never reach a message."""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.providers import (
    LLMResponse,
    Provider,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
    anthropic,
    azure_openai,
    bedrock,
    gemini,
    ollama,
    openai_compatible,
)
from agentfootprint.providers._http import parse_retry_after

from ._support import SECRET, FakeServer, Reply, collect, json_reply, raw_reply, user_request

BUILDERS: dict[str, Callable[[httpx2.MockTransport], Provider]] = {
    "openai": lambda t: openai_compatible("http://127.0.0.1:8080/v1", SECRET, "m", transport=t),
    "ollama": lambda t: ollama("m", transport=t, headers={"Authorization": f"Bearer {SECRET}"}),
    "anthropic": lambda t: anthropic(SECRET, "m", transport=t),
    "gemini": lambda t: gemini(SECRET, "m", transport=t),
    "bedrock": lambda t: bedrock("m", region="us-east-1", api_key=SECRET, transport=t),
    "azure_openai": lambda t: azure_openai("https://res.openai.azure.com", "dep", api_key=SECRET, transport=t),
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


def run_complete(provider: Provider) -> LLMResponse:
    return asyncio.run(provider.complete(user_request()))


def run_stream(provider: Provider) -> LLMResponse:
    chunks = asyncio.run(collect(provider.stream(user_request())))
    assert chunks[-1].response is not None
    return chunks[-1].response


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize(
    "body",
    [
        b"<html><body>502 Bad Gateway</body></html>",
        b"",
        b"\xff\xfe\x00garbage",
        b"[]",
        b'"just a string"',
        b"{}",
        b'{"choices": "nope", "message": 5, "content": 7}',
        b'{"choices": [{"message": {"content": 5, "tool_calls": [{"function": {}}]}}]}',
        b'{"message": {"content": "", "tool_calls": [{"function": {"name": 3}}]}}',
        b'{"content": [{"type": "tool_use", "input": {}}]}',
        b"[" * 100_000,
    ],
)
def test_malformed_200_bodies_are_typed_errors(name: str, body: bytes) -> None:
    provider = BUILDERS[name](FakeServer(raw_reply(body, content_type="application/json")).transport)
    with pytest.raises(ProviderResponseError) as info:
        run_complete(provider)
    assert info.value.code == "ERR_PROVIDER_BAD_RESPONSE"
    assert SECRET not in str(info.value)


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize(
    "body",
    [
        b"data: {not json}\n\n",
        b"data: [1, 2]\n\n",
        b'{"message": 4, "done": true}\n',
        b'{"model": "m", "done": false}\nnot json at all\n',
        b'event: content_block_start\ndata: {"type":"content_block_start","index":"0"}\n\n',
        b"",
    ],
)
def test_malformed_streams_are_typed_errors(name: str, body: bytes) -> None:
    provider = BUILDERS[name](FakeServer(raw_reply(body)).transport)
    with pytest.raises(ProviderError):
        run_stream(provider)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(BUILDERS)),
    data=json_values,
    status=st.sampled_from([200, 200, 400, 404, 429, 500]),
)
def test_fuzzed_json_bodies_never_crash(name: str, data: Any, status: int) -> None:
    provider = BUILDERS[name](FakeServer(json_reply(data, status=status)).transport)
    try:
        response = run_complete(provider)
    except ProviderError as error:
        assert SECRET not in str(error)
    else:
        assert isinstance(response, LLMResponse)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(BUILDERS)), events=st.lists(json_values, max_size=5), sse=st.booleans())
def test_fuzzed_stream_events_never_crash(name: str, events: list[Any], sse: bool) -> None:
    if sse:
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    else:
        body = "".join(json.dumps(e) + "\n" for e in events)
    provider = BUILDERS[name](FakeServer(raw_reply(body)).transport)
    try:
        response = run_stream(provider)
    except ProviderError as error:
        assert SECRET not in str(error)
    else:
        assert isinstance(response, LLMResponse)


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("status", [400, 500])
def test_huge_error_text_is_truncated_and_key_redacted(name: str, status: int) -> None:
    text = f"your key {SECRET} is fine but " + "x" * 100_000
    provider = BUILDERS[name](FakeServer(json_reply({"error": {"message": text}}, status=status)).transport)
    with pytest.raises((ProviderRequestError, ProviderServerError)) as info:
        run_complete(provider)
    message = str(info.value)
    assert SECRET not in message and "[redacted]" in message
    assert len(message) < 300 + 120
    assert "x" * 300 not in message


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_non_json_error_body_and_control_characters(name: str) -> None:
    body = b"<h1>Forbidden\r\nX-Injected: 1</h1>\x1b[31m fake log line"
    provider = BUILDERS[name](FakeServer(Reply(400, body, {"content-type": "text/html"})).transport)
    with pytest.raises(ProviderRequestError) as info:
        run_complete(provider)
    message = str(info.value)
    assert "Forbidden" in message
    assert "\n" not in message and "\r" not in message and "\x1b" not in message


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_key_never_in_repr_or_error_attributes(name: str) -> None:
    provider = BUILDERS[name](FakeServer(json_reply({"error": {"message": SECRET}}, status=401)).transport)
    assert SECRET not in repr(provider)
    with pytest.raises(ProviderError) as info:
        run_complete(provider)
    assert SECRET not in repr(vars(info.value))
    assert SECRET not in repr(info.value.args)


def test_connection_error_detail_is_scrubbed() -> None:
    server = FakeServer(httpx2.ConnectError(f"proxy said {SECRET}"))
    provider = openai_compatible("http://127.0.0.1:8080/v1", SECRET, "m", transport=server.transport)
    with pytest.raises(ProviderError) as info:
        run_complete(provider)
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("5", 5.0), (" 1.5 ", 1.5), ("-3", None), ("inf", None), ("nan", None), ("soon", None), (None, None)],
)
def test_retry_after_parsing_is_defensive(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


def test_errors_survive_pickling() -> None:
    error = RateLimitError("slow", retry_after=2.0, provider="p", status=429)
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.retry_after, clone.provider, clone.status, clone.retryable, clone.code) == (
        "slow",
        2.0,
        "p",
        429,
        True,
        "ERR_PROVIDER_RATE_LIMIT",
    )
