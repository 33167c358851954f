"""The mock fills in a reply's usage, model and finish reason in place of ``model_copy`` (the reply is its own fresh
object), and counts argument words through a C encoder made once: both exactly as before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.providers import LLMRequest, LLMResponse, Message, ToolCall, Usage, mock
from agentfootprint.providers.mock_provider import _args_text, coerce_reply, estimate_usage

ARGS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=4), ARGS, max_size=4))
def test_argument_text_is_json_dumps_sorted(args: dict[str, Any]) -> None:
    assert _args_text(args) == json.dumps(args, sort_keys=True, default=str)


def test_argument_text_of_odd_values_and_a_cycle() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd"

    assert _args_text({"b": Odd(), "a": "é"}) == '{"a": "\\u00e9", "b": "odd"}'
    assert _args_text("plain") == json.dumps("plain", sort_keys=True, default=str)  # type: ignore[arg-type]
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="Circular reference detected"):
        _args_text(loop)
    assert _args_text({"x": [1, 2]}) == '{"x": [1, 2]}'


def _reference(provider: Any, request: LLMRequest, reply: Any) -> LLMResponse:
    """What ``_finish`` built before: ``model_copy(update=...)`` of the coerced reply."""
    response = coerce_reply(reply, "ref")
    update: dict[str, Any] = {}
    if "usage" not in response.model_fields_set:
        update["usage"] = estimate_usage(request, response)
    if response.model is None:
        update["model"] = request.model or provider.name
    if response.finish_reason is None:
        update["finish_reason"] = "tool_calls" if response.tool_calls else "stop"
    return response.model_copy(update=update) if update else response


REPLIES: list[Any] = [
    "hello there",
    {"tool_calls": [{"id": "c1", "name": "weather", "args": {"city": "Paris", "n": [1, {"b": 2}]}}]},
    {"content": "x", "usage": {"input_tokens": 3}, "finish_reason": "length"},
    LLMResponse(content="kept", model="given", finish_reason="stop", usage=Usage(input_tokens=1)),
    LLMResponse(content="partly", tool_calls=[ToolCall(id="a", name="t", args={"k": "v"})]),
]


@pytest.mark.parametrize("reply", REPLIES)
async def test_a_reply_is_what_model_copy_made(reply: Any) -> None:
    request = LLMRequest(system_prompt="be brief", messages=[Message(role="user", content="hi you")], model="m")
    provider = mock(replies=[reply, reply])
    got = await provider.complete(request)
    want = _reference(provider, request, reply)
    assert got == want
    assert got.model_fields_set == want.model_fields_set
    assert list(got.__dict__) == list(want.__dict__)
    again = await provider.complete(request)  # the script's own reply is untouched: the second call is the same
    assert again == want and again is not got and again.model_fields_set == want.model_fields_set
    if isinstance(reply, LLMResponse):
        assert "usage" not in reply.model_fields_set or reply.usage.input_tokens == 1
        assert (
            reply.model_fields_set == LLMResponse.model_validate(reply.model_dump(exclude_unset=True)).model_fields_set
        )


async def test_a_respond_function_that_returns_the_same_response_twice_gets_two_fresh_replies() -> None:
    shared = LLMResponse(content="same")
    provider = mock(respond=lambda request: shared)
    request = LLMRequest(messages=[Message(role="user", content="q")])
    first, second = await provider.complete(request), await provider.complete(request)
    assert first is not shared and second is not shared and first is not second
    assert shared.model_fields_set == {"content"} and shared.model is None and shared.finish_reason is None
    assert first == second
