"""Property tests: our messages survive each wire format, and wire responses parse back to what was sent."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.providers import (
    LLMResponse,
    Message,
    StreamChunk,
    ToolCall,
    Usage,
    anthropic,
    anthropic_api,
    ollama,
    ollama_api,
    openai_compat,
    openai_compatible,
)

from ._support import FakeServer, json_reply, raw_reply, user_request

scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=10)
json_args = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=5),
    max_size=3,
)
names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
texts = st.text(max_size=30)


@st.composite
def tool_calls(draw: st.DrawFn, min_size: int = 0) -> list[ToolCall]:
    count = draw(st.integers(min_size, 3))
    prefix = draw(st.from_regex(r"[a-z]{1,4}", fullmatch=True))
    return [ToolCall(id=f"{prefix}_{i}", name=draw(names), args=draw(json_args)) for i in range(count)]


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """User turns, plain assistant turns, and assistant tool-call turns followed by one result per call."""
    messages: list[Message] = []
    for _ in range(draw(st.integers(1, 4))):
        messages.append(Message(role="user", content=draw(texts.filter(bool))))
        if draw(st.booleans()):
            calls = draw(tool_calls(min_size=1))
            messages.append(Message(role="assistant", content=draw(texts), tool_calls=calls))
            messages.extend(
                Message(role="tool", content=draw(texts), tool_call_id=c.id, tool_name=c.name) for c in calls
            )
        else:
            messages.append(Message(role="assistant", content=draw(texts)))
    return messages


def openai_inverse(wire: list[dict[str, Any]]) -> tuple[str, list[Message]]:
    """The wire back as messages; a tool result's name comes from the call it answers (the wire has no name)."""
    system, messages = "", []
    names: dict[str, str] = {}
    for item in wire:
        if item["role"] == "system":
            system = item["content"]
        elif item["role"] == "tool":
            messages.append(
                Message(
                    role="tool",
                    content=item["content"],
                    tool_call_id=item["tool_call_id"],
                    tool_name=names[item["tool_call_id"]],
                )
            )
        else:
            calls = [
                ToolCall(id=c["id"], name=c["function"]["name"], args=json.loads(c["function"]["arguments"]))
                for c in item.get("tool_calls", [])
            ]
            names.update((c.id, c.name) for c in calls)
            messages.append(Message(role=item["role"], content=item["content"], tool_calls=calls))
    return system, messages


def anthropic_inverse(wire: list[dict[str, Any]]) -> list[Message]:
    messages: list[Message] = []
    names_by_id: dict[str, str] = {}
    for item in wire:
        content = item["content"]
        if isinstance(content, str):
            messages.append(Message(role=item["role"], content=content))
        elif item["role"] == "user":
            messages.extend(
                Message(
                    role="tool",
                    content=b["content"],
                    tool_call_id=b["tool_use_id"],
                    tool_name=names_by_id[b["tool_use_id"]],
                )
                for b in content
            )
        else:
            text = "".join(b["text"] for b in content if b["type"] == "text")
            calls = [ToolCall(id=b["id"], name=b["name"], args=b["input"]) for b in content if b["type"] == "tool_use"]
            names_by_id.update((c.id, c.name) for c in calls)
            messages.append(Message(role="assistant", content=text, tool_calls=calls))
    return messages


def without_call_ids(messages: list[Message]) -> list[Message]:
    """Messages as Ollama's wire keeps them: tool calls and results matched by name and order, not by id."""
    return [
        m.model_copy(
            update={"tool_call_id": None, "tool_calls": [c.model_copy(update={"id": "-"}) for c in m.tool_calls]}
        )
        for m in messages
    ]


def ollama_inverse(wire: list[dict[str, Any]]) -> list[Message]:
    return [
        Message(
            role=item["role"],
            content=item["content"],
            tool_name=item.get("tool_name"),
            tool_calls=[
                ToolCall(id="-", name=c["function"]["name"], args=c["function"]["arguments"])
                for c in item.get("tool_calls", [])
            ],
        )
        for item in wire
        if item["role"] != "system"
    ]


def through_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


@given(system=texts, messages=conversations())
def test_openai_messages_round_trip(system: str, messages: list[Message]) -> None:
    wire = through_json(openai_compat.to_wire_messages(system, messages))
    assert openai_inverse(wire) == (system, messages)
    assert all(w["role"] in ("system", "user", "assistant", "tool") for w in wire)


@given(messages=conversations())
def test_anthropic_messages_round_trip_and_alternate(messages: list[Message]) -> None:
    wire = through_json(anthropic_api.to_wire_messages(messages))
    assert anthropic_inverse(wire) == messages
    for before, after in itertools.pairwise(wire):
        if isinstance(before["content"], list) and before["content"][0]["type"] == "tool_result":
            assert after["role"] != "user" or isinstance(after["content"], str)


@given(system=texts, messages=conversations())
def test_ollama_messages_round_trip(system: str, messages: list[Message]) -> None:
    wire = through_json(ollama_api.to_wire_messages(system, messages))
    assert ollama_inverse(wire) == without_call_ids(messages)
    assert (wire[0]["role"] == "system") == bool(system)


def openai_body(response: LLMResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content or None}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.args)}}
            for c in response.tool_calls
        ]
    return {
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if response.tool_calls else "stop"}],
        "usage": {
            "prompt_tokens": response.usage.input_tokens,
            "completion_tokens": response.usage.output_tokens,
        },
    }


def anthropic_body(response: LLMResponse) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": response.content}] if response.content else []
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in response.tool_calls]
    return {
        "type": "message",
        "model": "m",
        "content": blocks,
        "stop_reason": "tool_use" if response.tool_calls else "end_turn",
        "usage": {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens},
    }


def ollama_body(response: LLMResponse) -> dict[str, Any]:
    return {
        "model": "m",
        "message": {
            "role": "assistant",
            "content": response.content,
            "tool_calls": [{"function": {"name": c.name, "arguments": c.args}} for c in response.tool_calls],
        },
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": response.usage.input_tokens,
        "eval_count": response.usage.output_tokens,
    }


@st.composite
def responses(draw: st.DrawFn) -> LLMResponse:
    calls = draw(tool_calls())
    usage = Usage(input_tokens=draw(st.integers(0, 10**6)), output_tokens=draw(st.integers(0, 10**6)))
    return LLMResponse(content=draw(texts), tool_calls=calls, usage=usage)


@settings(deadline=None, max_examples=60)
@given(response=responses())
def test_wire_responses_parse_back(response: LLMResponse) -> None:
    cases = [
        (
            openai_compatible(
                "http://h/v1", model="m", transport=FakeServer(json_reply(openai_body(response))).transport
            ),
            False,
        ),
        (anthropic("k", "m", transport=FakeServer(json_reply(anthropic_body(response))).transport), False),
        (ollama("m", transport=FakeServer(json_reply(ollama_body(response))).transport), True),
    ]
    for provider, synthesized_ids in cases:
        parsed = asyncio.run(provider.complete(user_request()))
        expected = response.tool_calls
        if synthesized_ids:
            expected = [c.model_copy(update={"id": f"call_{i}"}) for i, c in enumerate(expected)]
        assert (parsed.content, parsed.tool_calls, parsed.usage) == (
            response.content,
            expected,
            response.usage,
        )
        assert parsed.finish_reason == ("tool_calls" if response.tool_calls else "stop")


def split_at(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def openai_sse(response: LLMResponse, cuts: list[int]) -> str:
    events: list[dict[str, Any]] = []
    for piece in split_at(response.content, cuts):
        events.append({"model": "m", "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    for i, call in enumerate(response.tool_calls):
        arguments = json.dumps(call.args)
        for j, piece in enumerate(split_at(arguments, cuts)):
            delta: dict[str, Any] = {"index": i, "function": {"arguments": piece}}
            if j == 0:
                delta.update(id=call.id, type="function")
                delta["function"]["name"] = call.name
            events.append({"choices": [{"index": 0, "delta": {"tool_calls": [delta]}, "finish_reason": None}]})
    events.append(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls" if response.tool_calls else "stop"}]}
    )
    events.append(
        {
            "choices": [],
            "usage": {
                "prompt_tokens": response.usage.input_tokens,
                "completion_tokens": response.usage.output_tokens,
            },
        }
    )
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def anthropic_sse(response: LLMResponse, cuts: list[int]) -> str:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "model": "m",
                "content": [],
                "usage": {"input_tokens": response.usage.input_tokens, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
        for p in split_at(response.content, cuts)
    ]
    events.append({"type": "content_block_stop", "index": 0})
    for i, call in enumerate(response.tool_calls, start=1):
        events.append(
            {
                "type": "content_block_start",
                "index": i,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
            }
        )
        events += [
            {
                "type": "content_block_delta",
                "index": i,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in split_at(json.dumps(call.args), cuts)
        ]
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if response.tool_calls else "end_turn"},
            "usage": {"output_tokens": response.usage.output_tokens},
        }
    )
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def assembled(chunks: list[StreamChunk]) -> tuple[str, list[ToolCall], LLMResponse]:
    done = chunks[-1].response
    assert chunks[-1].kind == "done" and done is not None
    text = "".join(c.text for c in chunks if c.kind == "text")
    calls = [c.tool_call for c in chunks if c.kind == "tool_call" and c.tool_call is not None]
    return text, calls, done


@settings(deadline=None, max_examples=60)
@given(response=responses(), cuts=st.lists(st.integers(0, 200), max_size=6))
def test_streams_reassemble_whatever_the_chunking(response: LLMResponse, cuts: list[int]) -> None:
    providers = [
        openai_compatible(
            "http://h/v1", model="m", transport=FakeServer(raw_reply(openai_sse(response, cuts))).transport
        ),
        anthropic("k", "m", transport=FakeServer(raw_reply(anthropic_sse(response, cuts))).transport),
    ]
    for provider in providers:

        async def run(p: Any = provider) -> list[StreamChunk]:
            return [c async for c in p.stream(user_request())]

        text, calls, done = assembled(asyncio.run(run()))
        assert text == done.content == response.content
        assert calls == done.tool_calls == response.tool_calls
        assert done.usage == response.usage
