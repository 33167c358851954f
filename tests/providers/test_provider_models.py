"""Request/response models and the Provider protocol / BaseProvider default stream."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agentfootprint.providers import (
    BaseProvider,
    LLMRequest,
    LLMResponse,
    Message,
    Provider,
    StreamChunk,
    ToolCall,
    ToolSpec,
    Usage,
    mock,
)

from ._support import collect, user_request


def test_usage_total_and_add() -> None:
    total = Usage(input_tokens=3, output_tokens=4) + Usage(input_tokens=10, output_tokens=1)
    assert total == Usage(input_tokens=13, output_tokens=5)
    assert total.total_tokens == 18


def test_usage_add_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        _ = Usage() + 3  # type: ignore[operator]


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=8))
def test_usage_sum_matches_componentwise_sum(pairs: list[tuple[int, int]]) -> None:
    total = Usage()
    for i, o in pairs:
        total = total + Usage(input_tokens=i, output_tokens=o)
    assert total.input_tokens == sum(i for i, _ in pairs)
    assert total.total_tokens == sum(i + o for i, o in pairs)


def test_message_defaults_and_role_validation() -> None:
    message = Message(role="assistant")
    assert (message.content, message.tool_call_id, message.tool_name, message.tool_calls) == (
        "",
        None,
        None,
        [],
    )
    with pytest.raises(ValidationError):
        Message(role="system", content="no system role in messages")


def test_mutable_defaults_are_not_shared() -> None:
    first, second = LLMResponse(), LLMResponse()
    first.tool_calls.append(ToolCall(id="1", name="x", args={}))
    assert second.tool_calls == []


def test_request_json_round_trip() -> None:
    request = LLMRequest(
        system_prompt="sys",
        messages=[
            Message(role="user", content="hi"),
            Message(role="assistant", tool_calls=[ToolCall(id="t1", name="lookup", args={"id": 1})]),
            Message(role="tool", content='{"ok": true}', tool_call_id="t1", tool_name="lookup"),
        ],
        tools=[ToolSpec(name="lookup", description="Look up", input_schema={"type": "object"})],
        model="m",
        seed=7,
    )
    assert LLMRequest.model_validate(json.loads(request.model_dump_json())) == request


def test_request_model_defaults_to_empty() -> None:
    assert LLMRequest(messages=[]).model == ""


def test_tool_spec_default_schema_is_an_object_schema() -> None:
    assert ToolSpec(name="noop").input_schema == {"type": "object", "properties": {}}


class OnlyComplete(BaseProvider):
    name = "only-complete"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(content="hello there", tool_calls=[ToolCall(id="c1", name="t", args={"a": 1})])


async def test_base_provider_default_stream_yields_text_tool_calls_then_done() -> None:
    chunks = await collect(OnlyComplete().stream(user_request()))
    assert [c.kind for c in chunks] == ["text", "tool_call", "done"]
    assert chunks[0].text == "hello there"
    assert chunks[1].tool_call == ToolCall(id="c1", name="t", args={"a": 1})
    assert chunks[2].response == LLMResponse(
        content="hello there", tool_calls=[ToolCall(id="c1", name="t", args={"a": 1})]
    )


async def test_base_provider_default_stream_skips_empty_text() -> None:
    class Silent(BaseProvider):
        async def complete(self, request: LLMRequest) -> LLMResponse:
            return LLMResponse()

    chunks = await collect(Silent().stream(user_request()))
    assert [c.kind for c in chunks] == ["done"]


def test_providers_satisfy_the_protocol() -> None:
    assert isinstance(OnlyComplete(), Provider)
    assert isinstance(mock("x"), Provider)
    assert not isinstance(object(), Provider)


def test_stream_chunk_kinds_are_closed() -> None:
    with pytest.raises(ValidationError):
        StreamChunk(kind="thinking")


def test_usage_cache_counts_add_and_dump_only_when_set() -> None:
    cached = Usage(input_tokens=100, output_tokens=2, cached_input_tokens=80, cache_write_tokens=10)
    total = cached + Usage(input_tokens=5, output_tokens=1)
    assert total == Usage(input_tokens=105, output_tokens=3, cached_input_tokens=80, cache_write_tokens=10)
    assert Usage(**total.model_dump()) == total
    assert Usage.model_validate_json(total.model_dump_json()) == total
    assert Usage(input_tokens=1).model_dump() == {"input_tokens": 1, "output_tokens": 0, "reasoning_tokens": 0}


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6)), max_size=8))
def test_usage_cache_counts_sum_componentwise(rows: list[tuple[int, int, int]]) -> None:
    parts = (Usage(input_tokens=a + b + c, cached_input_tokens=b, cache_write_tokens=c) for a, b, c in rows)
    total = sum(parts, Usage())
    assert total.cached_input_tokens == sum(b for _, b, _ in rows)
    assert total.cache_write_tokens == sum(c for _, _, c in rows)
    assert total.input_tokens >= total.cached_input_tokens + total.cache_write_tokens


def test_usage_serialization_schema_still_names_every_count() -> None:
    schema = Usage.model_json_schema(mode="serialization")
    dump = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    assert set(dump["properties"]) == set(Usage.model_fields)
    assert dump["required"] == ["input_tokens", "output_tokens", "reasoning_tokens"]
