"""anthropic(): Messages API wire format, tool_use / tool_result blocks, SSE event streaming."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint.providers import (
    LLMRequest,
    Message,
    ProviderAuthError,
    ProviderConfigError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    RateLimitError,
    ToolCall,
    ToolSpec,
    Usage,
    anthropic,
)

from ._support import SECRET, FakeServer, collect, fixture, raw_reply, user_request

BASE = "https://api.anthropic.com"


def json_fixture(name: str) -> FakeServer:
    return FakeServer(raw_reply(fixture(name), content_type="application/json"))


async def test_plain_answer_headers_and_body() -> None:
    server = json_fixture("anthropic_answer.json")
    response = await anthropic(SECRET, "claude-sonnet-4-5", transport=server.transport).complete(user_request())
    assert server.last.url == f"{BASE}/v1/messages"
    assert server.last.headers["x-api-key"] == SECRET
    assert server.last.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in server.last.headers
    assert server.last.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You are a refunds assistant.",
        "messages": [{"role": "user", "content": "Should order A-1001 be refunded?"}],
    }
    assert response.content == "Refund DECLINED: the order is 47 days old."
    assert response.usage == Usage(input_tokens=38, output_tokens=14)
    assert (response.model, response.finish_reason) == ("claude-sonnet-4-5-20250929", "stop")


async def test_tool_use_blocks_and_merged_tool_results() -> None:
    server = json_fixture("anthropic_tool_use.json")
    request = LLMRequest(
        messages=[
            Message(role="user", content="Refund A-1001?"),
            Message(
                role="assistant",
                content="Checking.",
                tool_calls=[
                    ToolCall(id="toolu_1", name="lookup_order", args={"orderId": "A-1001"}),
                    ToolCall(id="toolu_2", name="get_policy", args={}),
                ],
            ),
            Message(role="tool", content="47 days", tool_call_id="toolu_1", tool_name="lookup_order"),
            Message(role="tool", content="30-day window", tool_call_id="toolu_2", tool_name="get_policy"),
            Message(role="user", content="And now?"),
        ],
        tools=[ToolSpec(name="lookup_order", description="Find an order", input_schema={"type": "object"})],
        seed=3,
        temperature=0.5,
        max_tokens=200,
    )
    response = await anthropic(SECRET, "claude-x", transport=server.transport).complete(request)
    body = server.last.body
    assert "system" not in body and "seed" not in body
    assert (body["max_tokens"], body["temperature"]) == (200, 0.5)
    assert body["tools"] == [
        {"name": "lookup_order", "description": "Find an order", "input_schema": {"type": "object"}}
    ]
    assert body["messages"] == [
        {"role": "user", "content": "Refund A-1001?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"orderId": "A-1001"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_policy", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "47 days"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "30-day window"},
            ],
        },
        {"role": "user", "content": "And now?"},
    ]
    assert response.content == "I'll look up that order."
    assert response.tool_calls == [
        ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="lookup_order", args={"orderId": "A-1001"})
    ]
    assert response.finish_reason == "tool_calls"


async def test_assistant_turn_with_only_tool_calls_has_no_empty_text_block() -> None:
    server = json_fixture("anthropic_answer.json")
    request = LLMRequest(
        messages=[
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=[ToolCall(id="t", name="n", args={})]),
            Message(role="tool", content="r", tool_call_id="t", tool_name="n"),
        ],
    )
    await anthropic(SECRET, "claude-x", transport=server.transport).complete(request)
    assert server.last.body["messages"][1]["content"] == [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]


async def test_missing_key_is_refused_before_any_request() -> None:
    server = json_fixture("anthropic_answer.json")
    provider = anthropic(model="claude-x", transport=server.transport)
    with pytest.raises(ProviderAuthError, match="ANTHROPIC_API_KEY"):
        await provider.complete(user_request())
    with pytest.raises(ProviderAuthError):
        await collect(provider.stream(user_request()))
    assert server.seen == []


async def test_key_falls_back_to_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    server = json_fixture("anthropic_answer.json")
    await anthropic(model="claude-x", transport=server.transport).complete(user_request())
    assert server.last.headers["x-api-key"] == "sk-ant-env"


def test_max_tokens_must_be_positive() -> None:
    with pytest.raises(ProviderConfigError):
        anthropic(SECRET, max_tokens=0)


async def test_stream_text_events() -> None:
    server = FakeServer(raw_reply(fixture("anthropic_stream_text.sse")))
    chunks = await collect(anthropic(SECRET, "claude-x", transport=server.transport).stream(user_request()))
    assert server.last.body["stream"] is True
    assert [c.text for c in chunks if c.kind == "text"] == ["Refund", " DECLINED."]
    done = chunks[-1].response
    assert done is not None
    assert done.content == "Refund DECLINED."
    assert done.usage == Usage(input_tokens=25, output_tokens=15)
    assert done.finish_reason == "stop"


async def test_stream_tool_use_input_json_deltas() -> None:
    server = FakeServer(raw_reply(fixture("anthropic_stream_tool_use.sse")))
    chunks = await collect(anthropic(SECRET, "claude-x", transport=server.transport).stream(user_request()))
    assert [c.kind for c in chunks] == ["text", "tool_call", "done"]
    call = ToolCall(id="toolu_01T1x1fJ34qAmk2tNTrN7Up6", name="lookup_order", args={"orderId": "A-1001"})
    assert chunks[1].tool_call == call
    done = chunks[-1].response
    assert done is not None
    assert (done.content, done.tool_calls, done.finish_reason) == (
        "Let me check the order.",
        [call],
        "tool_calls",
    )
    assert done.usage == Usage(input_tokens=472, output_tokens=89)


@pytest.mark.parametrize(
    ("kind", "error_type"),
    [
        ("overloaded_error", ProviderServerError),
        ("rate_limit_error", RateLimitError),
        ("invalid_request_error", ProviderRequestError),
    ],
)
async def test_stream_error_event_is_typed(kind: str, error_type: type[Exception]) -> None:
    body = (
        "event: message_start\n"
        'data: {"type":"message_start","message":{"model":"claude-x",'
        '"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        "event: error\n"
        f'data: {{"type":"error","error":{{"type":"{kind}","message":"Overloaded"}}}}\n\n'
    )
    server = FakeServer(raw_reply(body))
    with pytest.raises(error_type, match="Overloaded"):
        await collect(anthropic(SECRET, "claude-x", transport=server.transport).stream(user_request()))


async def test_stream_cut_before_message_stop_is_typed() -> None:
    text = fixture("anthropic_stream_text.sse").decode()
    server = FakeServer(raw_reply(text[: text.index("event: message_delta")]))
    with pytest.raises(ProviderResponseError, match="ended before"):
        await collect(anthropic(SECRET, "claude-x", transport=server.transport).stream(user_request()))


async def test_stream_input_delta_for_unknown_block_is_typed() -> None:
    body = (
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":4,'
        '"delta":{"type":"input_json_delta","partial_json":"{}"}}\n\n'
    )
    server = FakeServer(raw_reply(body))
    with pytest.raises(ProviderResponseError, match="not a tool_use"):
        await collect(anthropic(SECRET, "claude-x", transport=server.transport).stream(user_request()))


def _sdk_message(usage: dict[str, object]) -> bytes:
    """A Messages response, validated and serialized by the anthropic SDK itself."""
    from anthropic.types import Message as SDKMessage

    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    return SDKMessage.model_validate(message).model_dump_json().encode()


async def test_cached_prompt_tokens_count_as_input() -> None:
    usage = {
        "input_tokens": 20,
        "output_tokens": 7,
        "cache_read_input_tokens": 1800,
        "cache_creation_input_tokens": 300,
    }
    server = FakeServer(raw_reply(_sdk_message(usage), content_type="application/json"))
    response = await anthropic(SECRET, "claude-x", transport=server.transport).complete(user_request())
    assert response.usage == Usage(input_tokens=2120, output_tokens=7, cached_input_tokens=1800, cache_write_tokens=300)
    assert response.usage.total_tokens == 2127


async def test_null_cache_fields_are_zero() -> None:
    server = FakeServer(
        raw_reply(_sdk_message({"input_tokens": 20, "output_tokens": 7}), content_type="application/json")
    )
    response = await anthropic(SECRET, "claude-x", transport=server.transport).complete(user_request())
    assert response.usage == Usage(input_tokens=20, output_tokens=7)
    assert response.usage.model_dump() == {"input_tokens": 20, "output_tokens": 7, "reasoning_tokens": 0}


def _sse(*events: dict[str, object]) -> bytes:
    import json

    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


_START = {
    "type": "message_start",
    "message": {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 5,
            "output_tokens": 1,
            "cache_read_input_tokens": 900,
            "cache_creation_input_tokens": 0,
        },
    },
}


@pytest.mark.parametrize(
    ("delta_usage", "expected"),
    [
        ({"output_tokens": 12}, Usage(input_tokens=905, output_tokens=12, cached_input_tokens=900)),
        (
            {"output_tokens": 12, "input_tokens": None, "cache_read_input_tokens": None},
            Usage(input_tokens=905, output_tokens=12, cached_input_tokens=900),
        ),
        (
            {"output_tokens": 12, "input_tokens": 5, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 40},
            Usage(input_tokens=945, output_tokens=12, cached_input_tokens=900, cache_write_tokens=40),
        ),
    ],
)
async def test_streamed_cached_tokens(delta_usage: dict[str, object], expected: Usage) -> None:
    events = (
        _START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": delta_usage},
        {"type": "message_stop"},
    )
    from ._vendors import anthropic_events

    for event in events:
        anthropic_events().validate_python(event)
    server = FakeServer(raw_reply(_sse(*events)))
    chunks = await collect(anthropic(SECRET, "claude-x", transport=server.transport).stream(user_request()))
    assert chunks[-1].response is not None and chunks[-1].response.usage == expected


@pytest.mark.parametrize("bad", [-1, "many", True, 1e999])
async def test_hostile_cache_counts_are_a_bad_response(bad: object) -> None:
    import json

    usage = {"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": bad}
    body = {"content": [{"type": "text", "text": "ok"}], "usage": usage}
    server = FakeServer(raw_reply(json.dumps(body).encode(), content_type="application/json"))
    with pytest.raises(ProviderResponseError) as info:
        await anthropic(SECRET, "claude-x", transport=server.transport).complete(user_request())
    assert "cache_read_input_tokens" in str(info.value)


class _Answer(BaseModel):
    refund: bool


@pytest.mark.parametrize("vendor", ["anthropic", "bedrock"])
async def test_thinking_provider_with_tool_forced_output_is_refused_at_run_start(vendor: str) -> None:
    from agentfootprint import Agent, OutputStrategyUnsupportedError
    from agentfootprint.providers import bedrock, with_retry

    server = FakeServer()
    if vendor == "anthropic":
        provider: Any = anthropic(SECRET, "claude-x", thinking_budget=2048, transport=server.transport)
    else:
        provider = bedrock("m", region="us-east-1", api_key="k", thinking_budget=2048, transport=server.transport)
    assert provider.carries_forced_tool_choice is False
    agent = (
        Agent.create(provider=with_retry(provider), model="m").output_schema(_Answer, strategy="tool-forced").build()
    )
    with pytest.raises(OutputStrategyUnsupportedError) as info:
        await agent.run("refund?")
    assert info.value.strategy == "tool-forced" and server.seen == []


@pytest.mark.parametrize("vendor", ["anthropic", "bedrock"])
async def test_the_agents_own_thinking_budget_with_tool_forced_output_is_refused_at_run_start(vendor: str) -> None:
    """Issue 38 item 6: a thinking budget set on the agent (.thinking(budget=...)) rather than on the provider is
    refused at run start too, never by a 400 from the API; a provider that does not refuse it still runs."""
    from agentfootprint import Agent, OutputStrategyUnsupportedError
    from agentfootprint.providers import bedrock, mock, with_retry

    server = FakeServer()
    if vendor == "anthropic":
        provider: Any = anthropic(SECRET, "claude-x", transport=server.transport)
    else:
        provider = bedrock("m", region="us-east-1", api_key="k", transport=server.transport)
    agent = (
        Agent.create(provider=with_retry(provider), model="m")
        .thinking(budget=2048)
        .output_schema(_Answer, strategy="tool-forced")
        .build()
    )
    with pytest.raises(OutputStrategyUnsupportedError) as info:
        await agent.run("refund?")
    assert info.value.strategy == "tool-forced" and server.seen == []
    assert "thinking" in str(info.value) and SECRET not in str(info.value)
    plain = mock(replies=[{"tool_calls": [{"id": "c1", "name": "respond_with_schema", "args": {"refund": True}}]}])
    other = Agent.create(provider=plain, model="m").thinking(budget=2048).output_schema(_Answer, strategy="tool-forced")
    assert (await other.build().run("refund?")).status == "completed"


@pytest.mark.parametrize("vendor", ["anthropic", "bedrock"])
def test_without_thinking_a_forced_tool_is_still_offered(vendor: str) -> None:
    from agentfootprint.providers import bedrock

    provider: Any = anthropic(SECRET, "claude-x") if vendor == "anthropic" else bedrock("m", region="r", api_key="k")
    assert provider.carries_forced_tool_choice is True


@pytest.mark.parametrize("vendor", ["anthropic", "bedrock"])
@pytest.mark.parametrize("call", ["complete", "stream"])
async def test_request_thinking_with_a_forced_tool_is_refused_before_sending(vendor: str, call: str) -> None:
    from agentfootprint.providers import ProviderConfigError, ThinkingRequest, bedrock

    server = FakeServer()
    if vendor == "anthropic":
        provider: Any = anthropic(SECRET, "claude-x", transport=server.transport)
    else:
        provider = bedrock("m", region="us-east-1", api_key="k", transport=server.transport)
    request = user_request(tools=[ToolSpec(name="answer")], tool_choice="answer", thinking=ThinkingRequest(budget=2048))
    with pytest.raises(ProviderConfigError) as info:
        if call == "complete":
            await provider.complete(request)
        else:
            await collect(provider.stream(request))
    assert info.value.code == "ERR_PROVIDER_THINKING_FORCED_TOOL" and server.seen == []
    assert "instruct" in str(info.value)
