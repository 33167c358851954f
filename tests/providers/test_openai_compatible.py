"""openai_compatible(): Chat Completions wire format, tool calls, SSE streaming."""

from __future__ import annotations

import json

import pytest

from agentfootprint.providers import (
    LLMRequest,
    Message,
    ModelRequiredError,
    ProviderConfigError,
    ProviderResponseError,
    ProviderServerError,
    ToolCall,
    ToolSpec,
    Usage,
    openai_compatible,
)

from ._support import SECRET, FakeServer, collect, fixture, json_reply, raw_reply, user_request

BASE = "http://127.0.0.1:8000/v1"


def conversation() -> LLMRequest:
    return LLMRequest(
        system_prompt="You are a refunds assistant.",
        messages=[
            Message(role="user", content="Should order A-1001 be refunded?"),
            Message(
                role="assistant",
                content="",
                tool_calls=[
                    ToolCall(id="call_1", name="lookup_order", args={"orderId": "A-1001"}),
                    ToolCall(id="call_2", name="get_policy", args={}),
                ],
            ),
            Message(role="tool", content="purchased 47 days ago", tool_call_id="call_1", tool_name="lookup_order"),
            Message(role="tool", content='{"days": 30}', tool_call_id="call_2", tool_name="get_policy"),
        ],
        tools=[
            ToolSpec(
                name="lookup_order",
                description="Find an order",
                input_schema={
                    "type": "object",
                    "properties": {"orderId": {"type": "string"}},
                    "required": ["orderId"],
                },
            )
        ],
        model="llama-3.1-8b",
    )


async def test_plain_answer_request_and_response() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    provider = openai_compatible(BASE, api_key=SECRET, model="gpt-4o-mini", transport=server.transport)
    response = await provider.complete(user_request())
    assert server.last.method == "POST"
    assert server.last.url == f"{BASE}/chat/completions"
    assert server.last.headers["authorization"] == f"Bearer {SECRET}"
    assert server.last.body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a refunds assistant."},
            {"role": "user", "content": "Should order A-1001 be refunded?"},
        ],
    }
    assert response.content == "Refund DECLINED: the order is 47 days old."
    assert response.usage == Usage(input_tokens=42, output_tokens=11)
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.finish_reason == "stop"
    assert response.tool_calls == []


async def test_tool_call_round_trip_wire_shape() -> None:
    server = FakeServer(raw_reply(fixture("openai_tool_call.json"), content_type="application/json"))
    provider = openai_compatible(BASE, transport=server.transport)
    response = await provider.complete(conversation())
    body = server.last.body
    assert body["model"] == "llama-3.1-8b"
    assert body["messages"][1:] == [
        {"role": "user", "content": "Should order A-1001 be refunded?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"orderId": "A-1001"}'},
                },
                {"id": "call_2", "type": "function", "function": {"name": "get_policy", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "purchased 47 days ago"},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"days": 30}'},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "description": "Find an order",
                "parameters": {
                    "type": "object",
                    "properties": {"orderId": {"type": "string"}},
                    "required": ["orderId"],
                },
            },
        }
    ]
    assert response.content == ""
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == [
        ToolCall(id="call_abc123", name="lookup_order", args={"orderId": "A-1001"}),
        ToolCall(id="call_def456", name="get_policy", args={}),
    ]


async def test_sampling_fields_pass_through_only_when_set() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    provider = openai_compatible(BASE, model="m", transport=server.transport)
    await provider.complete(user_request())
    assert set(server.last.body) == {"model", "messages"}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    await provider.complete(user_request(seed=7, temperature=0.0, max_tokens=64, response_format=fmt))
    body = server.last.body
    assert (body["seed"], body["temperature"], body["max_tokens"], body["response_format"]) == (
        7,
        0.0,
        64,
        fmt,
    )


async def test_request_model_wins_over_the_default() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    provider = openai_compatible(BASE, model="default-model", transport=server.transport)
    await provider.complete(user_request(model="override"))
    assert server.last.body["model"] == "override"
    await provider.complete(user_request())
    assert server.last.body["model"] == "default-model"


async def test_no_model_anywhere_is_a_typed_error_before_any_request() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    provider = openai_compatible(BASE, transport=server.transport)
    with pytest.raises(ModelRequiredError, match="no model given") as info:
        await provider.complete(user_request())
    assert info.value.code == "ERR_MODEL_REQUIRED"
    with pytest.raises(ModelRequiredError):
        await collect(provider.stream(user_request()))
    assert server.seen == []


async def test_key_falls_back_to_env_only_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    await openai_compatible(BASE, model="m", transport=server.transport).complete(user_request())
    assert "authorization" not in server.last.headers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    await openai_compatible(BASE, model="m", transport=server.transport).complete(user_request())
    assert server.last.headers["authorization"] == "Bearer sk-from-env"
    await openai_compatible(BASE, "sk-explicit", "m", transport=server.transport).complete(user_request())
    assert server.last.headers["authorization"] == "Bearer sk-explicit"


async def test_custom_headers_are_sent() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    provider = openai_compatible(BASE, model="m", transport=server.transport, headers={"x-team": "refunds"})
    await provider.complete(user_request())
    assert server.last.headers["x-team"] == "refunds"


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [('{"orderId": "A-1', "not valid JSON"), ("[1, 2]", "got array"), ('"text"', "got string")],
)
async def test_unusable_arguments_become_empty_args_with_a_reason(arguments: str, reason: str) -> None:
    body = json.loads(fixture("openai_tool_call.json"))
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = arguments
    server = FakeServer(json_reply(body))
    response = await openai_compatible(BASE, model="m", transport=server.transport).complete(user_request())
    bad, good = response.tool_calls
    assert bad.args == {} and bad.args_error is not None and reason in bad.args_error
    assert good.args_error is None


async def test_empty_arguments_string_means_no_args() -> None:
    body = json.loads(fixture("openai_tool_call.json"))
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = ""
    server = FakeServer(json_reply(body))
    response = await openai_compatible(BASE, model="m", transport=server.transport).complete(user_request())
    assert (response.tool_calls[0].args, response.tool_calls[0].args_error) == ({}, None)


async def test_stream_text_chunks_and_usage() -> None:
    server = FakeServer(raw_reply(fixture("openai_stream_text.sse")))
    provider = openai_compatible(BASE, model="gpt-4o-mini", transport=server.transport)
    chunks = await collect(provider.stream(user_request()))
    assert server.last.body["stream"] is True
    assert server.last.body["stream_options"] == {"include_usage": True}
    assert [c.text for c in chunks if c.kind == "text"] == ["Refund", " DECLINED", "."]
    assert chunks[-1].kind == "done"
    done = chunks[-1].response
    assert done is not None
    assert done.content == "Refund DECLINED."
    assert done.usage == Usage(input_tokens=30, output_tokens=3)
    assert (done.finish_reason, done.model) == ("stop", "gpt-4o-mini")


async def test_stream_assembles_tool_call_argument_deltas_by_index() -> None:
    server = FakeServer(raw_reply(fixture("openai_stream_tool_call.sse")))
    provider = openai_compatible(BASE, model="gpt-4o-mini", transport=server.transport)
    chunks = await collect(provider.stream(conversation()))
    calls = [c.tool_call for c in chunks if c.kind == "tool_call"]
    expected = [
        ToolCall(id="call_abc123", name="lookup_order", args={"orderId": "A-1001"}),
        ToolCall(id="call_def456", name="get_policy", args={}),
    ]
    assert calls == expected
    assert [c.kind for c in chunks] == ["tool_call", "tool_call", "done"]
    done = chunks[-1].response
    assert done is not None
    assert done.tool_calls == expected
    assert done.usage == Usage(input_tokens=88, output_tokens=19)
    assert done.finish_reason == "tool_calls"


async def test_stream_without_done_marker_but_with_finish_reason_completes() -> None:
    body = fixture("openai_stream_text.sse").decode().replace("data: [DONE]\n", "")
    server = FakeServer(raw_reply(body))
    chunks = await collect(openai_compatible(BASE, model="m", transport=server.transport).stream(user_request()))
    assert chunks[-1].response is not None and chunks[-1].response.content == "Refund DECLINED."


async def test_stream_cut_short_is_a_typed_error() -> None:
    lines = fixture("openai_stream_text.sse").decode().split("\n\n")
    server = FakeServer(raw_reply("\n\n".join(lines[:3]) + "\n\n"))
    provider = openai_compatible(BASE, model="m", transport=server.transport)
    received: list[str] = []
    with pytest.raises(ProviderResponseError, match="ended before the response was complete"):
        async for chunk in provider.stream(user_request()):
            received.append(chunk.text)
    assert received == ["Refund", " DECLINED"]


async def test_stream_error_event_is_a_server_error() -> None:
    body = (
        'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
        'data: {"error":{"message":"model overloaded","type":"server_error"}}\n\n'
    )
    server = FakeServer(raw_reply(body))
    with pytest.raises(ProviderServerError, match="model overloaded") as info:
        await collect(openai_compatible(BASE, model="m", transport=server.transport).stream(user_request()))
    assert info.value.retryable is True


async def test_stream_reads_groq_usage_and_ignores_comments() -> None:
    body = (
        ": keep-alive\n\n"
        'data: {"model":"llama3-70b","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],'
        '"x_groq":{"id":"req_1","usage":{"prompt_tokens":5,"completion_tokens":1}}}\n\n'
        "data: [DONE]\n\n"
    )
    server = FakeServer(raw_reply(body))
    chunks = await collect(openai_compatible(BASE, model="m", transport=server.transport).stream(user_request()))
    assert chunks[-1].response is not None
    assert chunks[-1].response.usage == Usage(input_tokens=5, output_tokens=1)


def test_base_url_and_timeout_are_validated() -> None:
    with pytest.raises(ProviderConfigError, match="http:// or https://"):
        openai_compatible("localhost:8080/v1")
    with pytest.raises(ProviderConfigError, match="timeout"):
        openai_compatible(BASE, timeout=0)


async def test_trailing_slash_in_base_url_is_tolerated() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    await openai_compatible(BASE + "/", model="m", transport=server.transport).complete(user_request())
    assert server.last.url == f"{BASE}/chat/completions"


@pytest.mark.parametrize(
    ("base_url", "model", "key"),
    [
        ("https://api.openai.com/v1", "gpt-4o-mini", "max_completion_tokens"),
        ("https://api.openai.com/v1", "o3-mini", "max_completion_tokens"),
        (BASE, "o1", "max_completion_tokens"),
        (BASE, "o4-mini-2025-04-16", "max_completion_tokens"),
        (BASE, "gpt-5", "max_completion_tokens"),
        (BASE, "GPT-5-mini", "max_completion_tokens"),
        (BASE, "openai/gpt-5.1", "max_completion_tokens"),
        (BASE, "qwen2.5-7b", "max_tokens"),
        (BASE, "gpt-4o", "max_tokens"),
        (BASE, "ollama/llama3:o1", "max_tokens"),
        (BASE, "oo1", "max_tokens"),
        (BASE, "o", "max_tokens"),
        (BASE, "gpt-50x", "max_tokens"),
    ],
)
async def test_reasoning_models_get_max_completion_tokens(base_url: str, model: str, key: str) -> None:
    from ._vendors import check_typed_dict, sdk_adapter

    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    provider = openai_compatible(base_url, "k", model=model, transport=server.transport)
    await provider.complete(user_request(max_tokens=300))
    body = server.last.body
    assert body[key] == 300
    assert {"max_tokens", "max_completion_tokens"} - {key} & set(body) == set()
    check_typed_dict(sdk_adapter("openai", False), body, "openai request")


async def test_no_token_limit_sends_neither_field() -> None:
    server = FakeServer(raw_reply(fixture("openai_answer.json"), content_type="application/json"))
    await openai_compatible(BASE, model="o3", transport=server.transport).complete(user_request())
    assert not {"max_tokens", "max_completion_tokens"} & set(server.last.body)


async def test_cached_prompt_tokens_are_reported_within_input() -> None:
    from openai.types.chat import ChatCompletion

    answer = json.loads(fixture("openai_answer.json"))
    answer["usage"] = {
        "prompt_tokens": 2000,
        "completion_tokens": 9,
        "total_tokens": 2009,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    raw = ChatCompletion.model_validate(answer).model_dump_json().encode()
    server = FakeServer(raw_reply(raw, content_type="application/json"))
    response = await openai_compatible(BASE, model="gpt-4o", transport=server.transport).complete(user_request())
    assert (response.usage.input_tokens, response.usage.cached_input_tokens) == (2000, 1920)
