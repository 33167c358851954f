"""ollama(): native /api/chat, synthesized tool-call ids, options, NDJSON streaming."""

from __future__ import annotations

import pytest

from agentfootprint.providers import (
    LLMRequest,
    Message,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderResponseError,
    ProviderServerError,
    ToolCall,
    ToolSpec,
    Usage,
    ollama,
)

from ._support import FakeServer, collect, fixture, json_reply, raw_reply, user_request

BASE = "http://127.0.0.1:11434"


def ndjson(name: str) -> bytes:
    return fixture(name)


async def test_plain_answer_request_and_response() -> None:
    server = FakeServer(raw_reply(fixture("ollama_answer.json"), content_type="application/json"))
    response = await ollama("llama3.2", transport=server.transport).complete(user_request())
    assert server.last.url == f"{BASE}/api/chat"
    assert server.last.body == {
        "model": "llama3.2",
        "messages": [
            {"role": "system", "content": "You are a refunds assistant."},
            {"role": "user", "content": "Should order A-1001 be refunded?"},
        ],
        "stream": False,
    }
    assert "authorization" not in server.last.headers
    assert response.content == "Refund DECLINED: the order is 47 days old."
    assert response.usage == Usage(input_tokens=26, output_tokens=12)
    assert (response.model, response.finish_reason) == ("llama3.2", "stop")


async def test_tool_calls_get_stable_synthesized_ids() -> None:
    server = FakeServer(raw_reply(fixture("ollama_tool_call.json"), content_type="application/json"))
    provider = ollama("llama3.2", transport=server.transport)
    first = await provider.complete(user_request())
    second = await provider.complete(user_request())
    assert first.tool_calls == [
        ToolCall(id="call_0", name="lookup_order", args={"orderId": "A-1001"}),
        ToolCall(id="call_1", name="get_policy", args={}),
    ]
    assert second.tool_calls == first.tool_calls
    assert first.finish_reason == "tool_calls"
    assert first.usage == Usage(input_tokens=94, output_tokens=23)


async def test_tool_round_trip_wire_shape_and_options() -> None:
    server = FakeServer(raw_reply(fixture("ollama_answer.json"), content_type="application/json"))
    request = LLMRequest(
        messages=[
            Message(role="user", content="Refund A-1001?"),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="call_0", name="lookup_order", args={"orderId": "A-1001"})],
            ),
            Message(role="tool", content="47 days", tool_call_id="call_0", tool_name="lookup_order"),
        ],
        tools=[ToolSpec(name="lookup_order", description="Find an order", input_schema={"type": "object"})],
        seed=42,
        temperature=0.2,
        max_tokens=128,
        response_format={"type": "json_object"},
    )
    await ollama("llama3.2", transport=server.transport).complete(request)
    body = server.last.body
    assert body["messages"] == [
        {"role": "user", "content": "Refund A-1001?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "lookup_order", "arguments": {"orderId": "A-1001"}}}],
        },
        {"role": "tool", "content": "47 days", "tool_name": "lookup_order"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Find an order",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert body["options"] == {"seed": 42, "temperature": 0.2, "num_predict": 128}
    assert body["format"] == "json"


async def test_json_schema_response_format_becomes_the_format_schema() -> None:
    server = FakeServer(raw_reply(fixture("ollama_answer.json"), content_type="application/json"))
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "v", "schema": schema}}
    await ollama("m", transport=server.transport).complete(user_request(response_format=fmt))
    assert server.last.body["format"] == schema


async def test_request_model_wins() -> None:
    server = FakeServer(raw_reply(fixture("ollama_answer.json"), content_type="application/json"))
    await ollama("llama3.2", transport=server.transport).complete(user_request(model="qwen2.5"))
    assert server.last.body["model"] == "qwen2.5"


async def test_stream_ndjson_text() -> None:
    server = FakeServer(raw_reply(ndjson("ollama_stream_text.ndjson"), content_type="application/x-ndjson"))
    chunks = await collect(ollama("llama3.2", transport=server.transport).stream(user_request()))
    assert server.last.body["stream"] is True
    assert [c.text for c in chunks if c.kind == "text"] == ["Refund", " DECLINED", "."]
    done = chunks[-1].response
    assert done is not None
    assert (done.content, done.usage, done.finish_reason) == (
        "Refund DECLINED.",
        Usage(input_tokens=26, output_tokens=3),
        "stop",
    )


async def test_stream_ndjson_tool_call() -> None:
    server = FakeServer(raw_reply(ndjson("ollama_stream_tool_call.ndjson"), content_type="application/x-ndjson"))
    chunks = await collect(ollama("llama3.2", transport=server.transport).stream(user_request()))
    assert [c.kind for c in chunks] == ["tool_call", "done"]
    assert chunks[0].tool_call == ToolCall(id="call_0", name="lookup_order", args={"orderId": "A-1001"})
    assert chunks[-1].response is not None and chunks[-1].response.finish_reason == "tool_calls"


async def test_stream_error_line_is_typed() -> None:
    body = '{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}\n{"error":"out of memory"}\n'
    server = FakeServer(raw_reply(body, content_type="application/x-ndjson"))
    with pytest.raises(ProviderServerError, match="out of memory"):
        await collect(ollama("m", transport=server.transport).stream(user_request()))


async def test_stream_without_done_line_is_typed() -> None:
    body = '{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}\n'
    server = FakeServer(raw_reply(body, content_type="application/x-ndjson"))
    with pytest.raises(ProviderResponseError, match="ended before"):
        await collect(ollama("m", transport=server.transport).stream(user_request()))


async def test_missing_model_names_ollama_pull() -> None:
    server = FakeServer(json_reply({"error": "model 'llama9' not found, try pulling it first"}, status=404))
    with pytest.raises(ModelNotFoundError) as info:
        await ollama("llama9", transport=server.transport).complete(user_request())
    assert "'llama9'" in str(info.value)
    assert "ollama pull llama9" in str(info.value)
    assert info.value.model == "llama9"


async def test_connection_refused_names_ollama_serve() -> None:
    import httpx2

    server = FakeServer(httpx2.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(ProviderConnectionError) as info:
        await ollama("m", transport=server.transport).complete(user_request())
    assert str(info.value).startswith("could not connect to http://127.0.0.1:11434 — is the server running?")
    assert "ollama serve" in str(info.value)


def _ollama_doctest_hosts() -> list[str | None]:
    """Every OLLAMA_HOST example the ollama client's own ``_parse_host`` doctests pin."""
    import inspect
    import re

    from ollama._client import _parse_host

    source = inspect.getsource(_parse_host)
    return [None if raw == "None" else raw[1:-1] for raw in re.findall(r">>> _parse_host\((None|'[^']*')\)", source)]


def test_ollama_host_is_read_as_the_ollama_client_reads_it() -> None:
    from ollama._client import _parse_host

    from agentfootprint.providers.ollama_api import ollama_host_url

    hosts = _ollama_doctest_hosts()
    assert len(hosts) > 20 and "0.0.0.0" not in hosts
    for host in [*hosts, "0.0.0.0", "0.0.0.0:8080", " 10.0.0.5 ", ":11500"]:
        assert ollama_host_url(host) == _parse_host(host.strip() if host else host), host


def test_ollama_host_env_without_a_port(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentfootprint.providers import ollama

    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0")
    assert ollama("llama3.2").base_url == "http://0.0.0.0:11434"
    monkeypatch.setenv("OLLAMA_HOST", "https://ollama.example.com")
    assert ollama("llama3.2").base_url == "https://ollama.example.com:443"


@pytest.mark.parametrize("host", ["host:99999", "ftp://host", "a b", "http://[::1", "host:port"])
def test_unreadable_ollama_host_is_refused_without_quoting_it(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentfootprint.providers import ProviderConfigError, ollama

    monkeypatch.setenv("OLLAMA_HOST", host)
    with pytest.raises(ProviderConfigError) as info:
        ollama("llama3.2")
    assert "OLLAMA_HOST" in str(info.value) and host not in str(info.value)
