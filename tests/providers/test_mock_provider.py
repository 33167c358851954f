"""mock(): reply / replies / respond, exhaustion, validation, usage, streaming, concurrency."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.providers import (
    LLMRequest,
    LLMResponse,
    Message,
    MockExhaustedError,
    MockProvider,
    MockReplyError,
    ProviderConfigError,
    ProviderError,
    ToolCall,
    Usage,
    mock,
)
from agentfootprint.providers.mock_provider import split_words

from ._support import collect, user_request


async def test_reply_answers_every_call_the_same() -> None:
    provider = mock("Refund DECLINED.")
    for _ in range(3):
        response = await provider.complete(user_request())
        assert response.content == "Refund DECLINED."
        assert response.tool_calls == []
    assert provider.calls == 3
    assert isinstance(provider, MockProvider)


async def test_replies_are_used_in_order_with_every_form() -> None:
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1001"}}]},
            LLMResponse(content="from a model object"),
            "plain text",
            {"content": "both", "tool_calls": [{"id": "t2", "name": "x", "args": {}}]},
        ]
    )
    first = await provider.complete(user_request())
    assert first.content == ""
    assert first.tool_calls == [ToolCall(id="t1", name="lookup_order", args={"orderId": "A-1001"})]
    assert first.finish_reason == "tool_calls"
    assert (await provider.complete(user_request())).content == "from a model object"
    third = await provider.complete(user_request())
    assert (third.content, third.finish_reason) == ("plain text", "stop")
    fourth = await provider.complete(user_request())
    assert (fourth.content, [c.id for c in fourth.tool_calls]) == ("both", ["t2"])


async def test_exhaustion_says_how_many_were_scripted_and_which_call_asked() -> None:
    provider = mock(replies=["a", "b"])
    await provider.complete(user_request())
    await provider.complete(user_request())
    with pytest.raises(MockExhaustedError) as info:
        await provider.complete(user_request())
    message = str(info.value)
    assert message.startswith("mock provider: 2 replies were scripted and call 3 asked for another")
    assert info.value.code == "ERR_MOCK_EXHAUSTED"
    assert isinstance(info.value, ProviderError)
    assert info.value.retryable is False
    assert provider.calls == 3


async def test_exhaustion_message_singular_and_named() -> None:
    provider = mock(replies=["only"], name="planner")
    await provider.complete(user_request())
    with pytest.raises(MockExhaustedError, match=r"^mock provider 'planner': 1 reply was scripted and call 2 asked"):
        await provider.complete(user_request())


async def test_empty_script_is_exhausted_on_the_first_call() -> None:
    with pytest.raises(MockExhaustedError, match="0 replies were scripted and call 1 asked"):
        await mock(replies=[]).complete(user_request())


async def test_respond_sync_sees_the_request() -> None:
    def respond(request: LLMRequest) -> str:
        return f"echo: {request.messages[-1].content} ({len(request.tools)} tools)"

    provider = mock(respond=respond)
    response = await provider.complete(user_request("ping"))
    assert response.content == "echo: ping (0 tools)"


async def test_respond_async_and_dict_results() -> None:
    async def respond(request: LLMRequest) -> dict[str, Any]:
        await asyncio.sleep(0)
        if request.messages[-1].role == "user":
            return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1001"}}]}
        return {"content": "done"}

    provider = mock(respond=respond)
    first = await provider.complete(user_request())
    assert first.tool_calls[0].name == "lookup_order"
    follow = user_request()
    follow.messages.append(Message(role="assistant", tool_calls=first.tool_calls))
    follow.messages.append(Message(role="tool", content="47 days", tool_call_id="t1", tool_name="lookup_order"))
    assert (await provider.complete(follow)).content == "done"


async def test_respond_returning_llm_response_keeps_its_fields() -> None:
    scripted = LLMResponse(content="x", usage=Usage(input_tokens=100, output_tokens=5), finish_reason="length")
    provider = mock(respond=lambda request: scripted)
    response = await provider.complete(user_request())
    assert response.usage == Usage(input_tokens=100, output_tokens=5)
    assert response.finish_reason == "length"
    assert response is not scripted


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"text": "hi"}, "'text'"),
        ({}, "'content' and/or 'tool_calls'"),
        ({"content": 42}, "'content'"),
        ({"tool_calls": {"id": "t"}}, "'tool_calls'"),
        ({"tool_calls": ["lookup"]}, "'tool_calls[0]'"),
        ({"tool_calls": [{"id": "t1", "args": {}}]}, "'tool_calls[0].name'"),
        ({"tool_calls": [{"id": "t1", "name": "x", "args": [1, 2]}]}, "'tool_calls[0].args'"),
        ({"tool_calls": [{"id": 7, "name": "x"}]}, "'tool_calls[0].id'"),
        ({"tool_calls": [{"id": "t", "name": "x", "arguments": "{}"}]}, "'tool_calls[0].arguments'"),
        ({"content": "x", "usage": {"input_tokens": -1}}, "'usage.input_tokens'"),
        ({"content": "x", "usage": {"prompt_tokens": 1}}, "'usage.prompt_tokens'"),
    ],
)
def test_bad_scripted_dict_names_the_field(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(MockReplyError) as info:
        mock(replies=["fine", bad])
    assert field in str(info.value)
    assert "replies[1]" in str(info.value)
    assert info.value.code == "ERR_MOCK_REPLY_INVALID"


async def test_bad_respond_result_is_a_typed_error_at_call_time() -> None:
    provider = mock(respond=lambda request: {"tool_calls": [{"name": ""}]})
    with pytest.raises(MockReplyError, match=r"call 1.*'tool_calls\[0\]\.name'"):
        await provider.complete(user_request())
    with pytest.raises(MockReplyError, match="got None"):
        await mock(respond=lambda request: None).complete(user_request())  # type: ignore[arg-type,return-value]


def test_tool_call_id_may_be_omitted_in_scripts() -> None:
    provider = mock(replies=[{"tool_calls": [{"name": "a"}, {"name": "b", "args": {"k": 1}}]}])
    response = asyncio.run(provider.complete(user_request()))
    assert [(c.id, c.name, c.args) for c in response.tool_calls] == [
        ("call_0", "a", {}),
        ("call_1", "b", {"k": 1}),
    ]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"reply": "a", "replies": ["b"]}, {"reply": "a", "respond": str}, {"replies": [], "respond": str}],
)
def test_exactly_one_source_is_required(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ProviderConfigError, match="exactly one of reply=, replies= or respond="):
        mock(**kwargs)


def test_wrong_argument_types_are_refused() -> None:
    with pytest.raises(ProviderConfigError):
        mock(replies="not a list")
    with pytest.raises(ProviderConfigError):
        mock(respond="not callable")  # type: ignore[arg-type]
    with pytest.raises(ProviderConfigError):
        mock(123)  # type: ignore[arg-type]


async def test_empty_reply_string_is_allowed() -> None:
    assert (await mock("").complete(user_request())).content == ""


async def test_requests_are_recorded_as_deep_copies() -> None:
    provider = mock("ok")
    request = user_request("original")
    await provider.complete(request)
    request.messages[0].content = "mutated after the call"
    request.messages.append(Message(role="user", content="more"))
    assert provider.requests[0].messages == [Message(role="user", content="original")]
    assert provider.requests[0] is not request


async def test_usage_is_a_deterministic_word_estimate() -> None:
    provider = mock("three word answer")
    request = LLMRequest(
        system_prompt="You are helpful.",
        messages=[Message(role="user", content="Is it refundable now?")],
        model="mock-1",
    )
    response = await provider.complete(request)
    assert response.usage == Usage(input_tokens=3 + 4, output_tokens=3)
    assert response.model == "mock-1"
    again = await provider.complete(request)
    assert again.usage == response.usage


async def test_usage_override_and_model_default() -> None:
    provider = mock("x", usage={"input_tokens": 10, "output_tokens": 2}, name="m")
    response = await provider.complete(user_request())
    assert response.usage == Usage(input_tokens=10, output_tokens=2)
    assert response.model == "m"
    scripted = mock(replies=[{"content": "y", "usage": {"output_tokens": 9}}], usage=Usage(input_tokens=1))
    assert (await scripted.complete(user_request())).usage == Usage(input_tokens=0, output_tokens=9)


async def test_stream_splits_words_and_ends_with_the_full_response() -> None:
    provider = mock(replies=[{"content": "Refund  DECLINED: too late. ", "tool_calls": [{"id": "t", "name": "x"}]}])
    chunks = await collect(provider.stream(user_request()))
    texts = [c.text for c in chunks if c.kind == "text"]
    assert texts == ["Refund", "  DECLINED:", " too", " late.", " "]
    assert [c.kind for c in chunks[-2:]] == ["tool_call", "done"]
    done = chunks[-1].response
    assert done is not None
    assert done.content == "".join(texts)
    assert done.tool_calls == [ToolCall(id="t", name="x", args={})]
    assert provider.calls == 1


async def test_stream_of_empty_content_yields_only_done() -> None:
    chunks = await collect(mock("").stream(user_request()))
    assert [c.kind for c in chunks] == ["done"]


async def test_stream_exhaustion_raises_before_any_chunk() -> None:
    provider = mock(replies=[])
    with pytest.raises(MockExhaustedError):
        await collect(provider.stream(user_request()))


@given(st.text(alphabet=st.sampled_from("ab \n\t."), max_size=40))
def test_split_words_concatenates_back(text: str) -> None:
    pieces = split_words(text)
    assert "".join(pieces) == text
    assert all(p for p in pieces)


async def test_concurrent_calls_each_get_one_scripted_reply() -> None:
    provider = mock(replies=[f"answer {i}" for i in range(40)])
    results = await asyncio.gather(*(provider.complete(user_request(f"q{i}")) for i in range(40)))
    assert sorted(r.content for r in results) == sorted(f"answer {i}" for i in range(40))
    assert provider.calls == 40
    assert len(provider.requests) == 40


def test_successive_event_loops_and_threads() -> None:
    provider = mock(replies=[str(i) for i in range(12)])
    assert asyncio.run(provider.complete(user_request())).content == "0"
    assert asyncio.run(provider.complete(user_request())).content == "1"
    seen: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            content = asyncio.run(provider.complete(user_request())).content
            with lock:
                seen.append(content)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen, key=int) == [str(i) for i in range(2, 12)]


async def test_reset_rewinds_the_script() -> None:
    provider = mock(replies=["a"])
    await provider.complete(user_request())
    provider.reset()
    assert provider.calls == 0 and provider.requests == []
    assert (await provider.complete(user_request())).content == "a"


async def test_scripted_replies_are_not_shared_between_calls() -> None:
    provider = mock(reply="x")
    first = await provider.complete(user_request())
    first.tool_calls.append(ToolCall(id="z", name="z", args={}))
    assert (await provider.complete(user_request())).tool_calls == []
    scripted = mock(replies=[{"tool_calls": [{"id": "a", "name": "n", "args": {"k": [1]}}]}])
    response = await scripted.complete(user_request())
    response.tool_calls[0].args["k"].append(2)
    scripted.reset()
    assert (await scripted.complete(user_request())).tool_calls[0].args == {"k": [1]}
