"""A real model over the real wire: openai_compatible against llama.cpp serving SmolLM2-135M (temperature 0, seeded)."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.explain import backtrack, localize_context_bug
from agentfootprint.providers import LLMRequest, Message, ToolCall, ToolSpec, openai_compatible
from agentfootprint.providers.local import (
    DEFAULT_MODEL_ALIAS,
    LocalLLMProvider,
    LocalLLMServer,
    json_tool_calling,
    local_llm,
)

from .conftest import needs_local_llm

pytestmark = [pytest.mark.integration, needs_local_llm]

MAX_TOKENS = 48
LOOKUP = ToolSpec(
    name="lookup_order",
    description="Look up an order by its id: age in days, price and category.",
    input_schema={
        "type": "object",
        "properties": {"orderId": {"type": "string"}},
        "required": ["orderId"],
        "additionalProperties": False,
    },
)


def wire(server: LocalLLMServer) -> Any:
    return openai_compatible(base_url=server.base_url, api_key="", model=DEFAULT_MODEL_ALIAS, timeout=180)


def question(text: str, **extra: Any) -> LLMRequest:
    return LLMRequest(
        messages=[Message(role="user", content=text)], temperature=0.0, seed=0, max_tokens=MAX_TOKENS, **extra
    )


async def test_plain_answer_over_http(llama_server: LocalLLMServer) -> None:
    response = await wire(llama_server).complete(question("What is the capital of France? Answer in one word."))
    assert response.content.strip()
    assert response.usage.input_tokens > 0 and 0 < response.usage.output_tokens <= MAX_TOKENS
    assert response.finish_reason in ("stop", "length")


async def test_streaming_yields_token_chunks_then_done(llama_server: LocalLLMServer) -> None:
    provider = wire(llama_server)
    request = question("Name three colours.")
    chunks = [c async for c in provider.stream(request)]
    texts = [c.text for c in chunks if c.kind == "text"]
    assert len(texts) > 1, "expected several token chunks"
    assert [c.kind for c in chunks[-1:]] == ["done"]
    done = chunks[-1].response
    assert done is not None and done.content == "".join(texts)
    whole = await provider.complete(request)
    assert whole.content == done.content, "temperature 0: streamed and non-streamed answers agree"


async def test_tool_call_round_trip_via_json(llama_server: LocalLLMServer) -> None:
    provider = json_tool_calling(wire(llama_server), max_tool_rounds=1)
    ask = LLMRequest(
        system_prompt="You are a refunds assistant. Always look up the order with the lookup_order tool first.",
        messages=[Message(role="user", content="Look up order A-1001.")],
        tools=[LOOKUP],
        temperature=0.0,
        seed=0,
        max_tokens=MAX_TOKENS,
    )
    first = await provider.complete(ask)
    assert len(first.tool_calls) == 1, f"expected a tool call, got {first.content!r}"
    call = first.tool_calls[0]
    assert call.name == "lookup_order" and isinstance(call.args.get("orderId"), str) and call.args_error is None
    follow_up = ask.model_copy(
        update={
            "messages": [
                *ask.messages,
                Message(role="assistant", tool_calls=[ToolCall(id=call.id, name=call.name, args=call.args)]),
                Message(
                    role="tool",
                    content="Order A-1001: purchased 47 days ago, price $480.",
                    tool_call_id=call.id,
                    tool_name=call.name,
                ),
            ]
        }
    )
    second = await provider.complete(follow_up)
    assert second.tool_calls == [] and second.content.strip()


def _agent_on(server: LocalLLMServer) -> Any:
    provider = LocalLLMProvider(
        json_tool_calling(wire(server), max_tool_rounds=1),
        model=DEFAULT_MODEL_ALIAS,
        temperature=0.0,
        seed=0,
        max_tokens=MAX_TOKENS,
        mode="server",
    )
    return refunds_agent(provider)


async def test_backtrack_and_localization_are_deterministic(llama_server: LocalLLMServer) -> None:
    agent = _agent_on(llama_server)
    result = await agent.run(QUESTION, seed=0)
    answer = str(result.answer)
    assert answer.strip()
    trail = str(backtrack(agent))
    assert "vip-override-fact" in trail and answer[:40] in trail
    report = await localize_context_bug(agent, samples=2, max_suspects=1, concurrency=1, progress=False)
    assert report.mode == "causal" and report.samples == 2 and len(report.suspects) == 1
    assert all(s.verdict is not None and s.errors == 0 for s in report.suspects)
    assert report.baseline_flips == 0 and report.baseline_errors == 0, "seeded reruns at temperature 0 must agree"
    again = _agent_on(llama_server)
    second = await again.run(QUESTION, seed=0)
    assert str(second.answer) == answer
    assert str(backtrack(again)) == trail


def test_local_llm_in_process_answers_and_streams() -> None:
    import asyncio

    async def go(provider: LocalLLMProvider) -> tuple[str, str]:
        request = question("What is 2 + 2?")
        whole = await provider.complete(request)
        chunks = [c async for c in provider.stream(request)]
        assert chunks[-1].kind == "done" and chunks[-1].response is not None
        return whole.content, "".join(c.text for c in chunks if c.kind == "text")

    with local_llm(mode="in-process", max_tokens=16) as provider:
        whole, streamed = asyncio.run(go(provider))
    assert whole.strip() and whole == streamed


def test_local_llm_server_mode_starts_and_stops() -> None:
    import asyncio

    with local_llm(max_tokens=16) as provider:
        server = provider.server
        assert server is not None and server.running and provider.base_url is not None
        response = asyncio.run(provider.complete(question("Say hello.")))
        assert response.content.strip()
    assert not server.running
