"""The vendor's response id reaches ``LLMResponse.id`` (OpenAI ``id``, Anthropic ``id``, Gemini ``responseId``),
from bodies and streams built by the vendors' own SDK types; a reply without one leaves it None."""

from __future__ import annotations

import json

import pytest

from agentfootprint.providers import ProviderResponseError, anthropic, gemini, openai_compatible

from ._sdk_bodies import anthropic_message, openai_completion
from ._support import SECRET, FakeServer, collect, raw_reply, user_request

BASE = "https://api.openai.com/v1"


async def test_openai_response_id() -> None:
    server = FakeServer(
        raw_reply(openai_completion("chatcmpl-9xYz", "gpt-4o-2024-08-06"), content_type="application/json")
    )
    response = await openai_compatible(BASE, model="gpt-4o", transport=server.transport).complete(user_request())
    assert (response.id, response.model) == ("chatcmpl-9xYz", "gpt-4o-2024-08-06")


async def test_openai_streamed_response_id() -> None:
    from openai.types.chat import ChatCompletionChunk

    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        data = {
            "id": "chatcmpl-s1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {ChatCompletionChunk.model_validate(data).model_dump_json()}\n\n"

    body = chunk({"role": "assistant", "content": "o"}) + chunk({"content": "k"}, "stop") + "data: [DONE]\n\n"
    server = FakeServer(raw_reply(body))
    chunks = await collect(openai_compatible(BASE, model="gpt-4o", transport=server.transport).stream(user_request()))
    done = chunks[-1].response
    assert done is not None and (done.content, done.id) == ("ok", "chatcmpl-s1")


async def test_anthropic_response_id_from_body_and_stream() -> None:
    usage = {"input_tokens": 3, "output_tokens": 1}
    raw = anthropic_message("msg_01AbC", "claude-sonnet-4-5-20250929", usage)
    server = FakeServer(raw_reply(raw, content_type="application/json"))
    response = await anthropic(SECRET, "claude-sonnet-4-5", transport=server.transport).complete(user_request())
    assert response.id == "msg_01AbC"

    from ._vendors import anthropic_events

    message = {**json.loads(raw), "content": [], "stop_reason": None}
    start = {"type": "message_start", "message": message}
    events = [
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]
    for event in events:
        anthropic_events().validate_python(event)
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    server = FakeServer(raw_reply(sse))
    chunks = await collect(anthropic(SECRET, "claude-sonnet-4-5", transport=server.transport).stream(user_request()))
    done = chunks[-1].response
    assert done is not None and done.id == "msg_01AbC"


async def test_gemini_response_id() -> None:
    from google.genai.types import GenerateContentResponse

    body = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "gW9kaPqX",
    }
    typed = GenerateContentResponse.model_validate(body)
    assert typed.response_id == "gW9kaPqX"  # the SDK reads the same field
    server = FakeServer(raw_reply(json.dumps(body), content_type="application/json"))
    response = await gemini(api_key=SECRET, model="gemini-2.5-flash", transport=server.transport).complete(
        user_request()
    )
    assert (response.id, response.model) == ("gW9kaPqX", "gemini-2.5-flash")


async def test_a_reply_without_an_id_leaves_it_none() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
    server = FakeServer(raw_reply(json.dumps(body), content_type="application/json"))
    response = await openai_compatible(BASE, model="m", transport=server.transport).complete(user_request())
    assert response.id is None


@pytest.mark.parametrize("bad", [7, ["x"], {"a": 1}])
async def test_a_non_string_id_is_a_bad_response(bad: object) -> None:
    body = {"id": bad, "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}
    server = FakeServer(raw_reply(json.dumps(body), content_type="application/json"))
    with pytest.raises(ProviderResponseError):
        await openai_compatible(BASE, model="m", transport=server.transport).complete(user_request())
