"""Usage and cost: per call and per run, a pricing table, and a cost budget that warns or halts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, AgentBuildError
from agentfootprint.providers import mock

from .conftest import lookup_order


def looping(n_tool_calls: int) -> Any:
    def respond(req: Any) -> Any:
        done = sum(1 for m in req.messages if m.role == "tool")
        if done < n_tool_calls:
            return {
                "content": "working",
                "tool_calls": [{"id": f"c{done}", "name": "lookup_order", "args": {"orderId": "A"}}],
                "usage": {"input_tokens": 1000, "output_tokens": 100},
            }
        return {"content": "final", "usage": {"input_tokens": 1000, "output_tokens": 100}}

    return respond


async def test_usage_and_cost_per_run() -> None:
    agent = (
        Agent.create(provider=mock(respond=looping(2)), model="gpt-x", max_iterations=5)
        .tool(lookup_order)
        .pricing({"gpt-x": {"input": 0.5, "output": 1.5}})
        .build()
    )
    r = await agent.run("go")
    assert r.usage.input_tokens == 3000 and r.usage.output_tokens == 300
    assert r.cost == pytest.approx(3 * (0.5 + 0.15))
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["cost_total"] == pytest.approx(r.cost)


async def test_cost_budget_halt_stops_early_without_running_tools() -> None:
    agent = (
        Agent.create(provider=mock(respond=looping(10)), model="gpt-x", max_iterations=10)
        .tool(lookup_order)
        .pricing({"*": {"input": 0.5, "output": 1.5}})
        .cost_budget(1.0, action="halt")
        .build()
    )
    r = await agent.run("go")
    stopped = agent.stopped_early()
    assert r.status == "completed" and stopped is not None and stopped.reason == "cost-budget"
    assert stopped.iteration == 2 and stopped.pending_tool_calls == 1
    text = "\n".join(e.text for e in agent.last_narrative())
    assert '"Cost budget exceeded"' in text


async def test_cost_budget_warn_emits_once_and_keeps_going() -> None:
    warnings: list[Any] = []
    agent = (
        Agent.create(provider=mock(respond=looping(3)), model="gpt-x", max_iterations=10)
        .tool(lookup_order)
        .pricing({"*": {"input": 0.5, "output": 1.5}})
        .cost_budget(1.0, action="warn")
        .build()
    )
    agent.on("cost.budget_warning", warnings.append)
    r = await agent.run("go")
    assert r.answer == "final" and agent.stopped_early() is None and len(warnings) == 1


def test_bad_budget_refused() -> None:
    builder = Agent.create(provider=mock(reply="x"), model="m")
    with pytest.raises(AgentBuildError):
        builder.cost_budget(0)
    with pytest.raises(AgentBuildError):
        builder.cost_budget(1.0, action="explode")  # type: ignore[arg-type]


async def test_no_pricing_means_no_cost() -> None:
    r = await Agent.create(provider=mock(reply="x"), model="m").build().run("go")
    assert r.cost is None


async def test_retry_attempts_are_recorded() -> None:
    from agentfootprint.providers import ProviderServerError, with_retry

    calls = {"n": 0}

    def flaky(req: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ProviderServerError("boom", provider="mock", status=503)
        return "ok"

    async def no_sleep(_: float) -> None:
        return None

    provider = with_retry(mock(respond=flaky), max_attempts=3, sleep=no_sleep)
    agent = Agent.create(provider=provider, model="m").build()
    assert (await agent.run("go")).answer == "ok"
    snap = agent.last_snapshot()
    assert snap is not None
    attempts = snap.state["last_response"]["attempts"]
    assert [a["outcome"] for a in attempts] == ["error", "ok"]


def _cached_reply(**usage: int) -> Any:
    from agentfootprint.providers import LLMResponse, Usage

    return LLMResponse(content="done", usage=Usage(**usage))


async def test_prompt_cache_reads_and_writes_are_priced_at_their_own_rates() -> None:
    # Anthropic's figures as usage_from reports them: 20 fresh + 1800 read + 300 written = 2120 input
    reply = _cached_reply(input_tokens=2120, output_tokens=10, cached_input_tokens=1800, cache_write_tokens=300)
    rates = {"input": 3.0, "output": 15.0, "cached_input": 0.3, "cache_write": 3.75}
    agent = Agent.create(provider=mock(replies=[reply]), model="claude").pricing({"claude": rates}).build()
    r = await agent.run("go")
    assert r.usage.input_tokens == 2120
    assert r.cost == pytest.approx((20 * 3.0 + 1800 * 0.3 + 300 * 3.75 + 10 * 15.0) / 1000)


async def test_without_cache_rates_cached_tokens_cost_the_input_rate() -> None:
    reply = _cached_reply(input_tokens=2000, output_tokens=9, cached_input_tokens=1920)  # OpenAI: a part of input
    agent = (
        Agent.create(provider=mock(replies=[reply]), model="gpt").pricing({"*": {"input": 2.5, "output": 10}}).build()
    )
    r = await agent.run("go")
    assert r.cost == pytest.approx((2000 * 2.5 + 9 * 10) / 1000)


async def test_an_openai_cached_prompt_is_priced_from_the_sdk_response() -> None:
    from agentfootprint.providers import openai_compatible
    from tests.providers._sdk_bodies import openai_completion
    from tests.providers._support import FakeServer, raw_reply

    usage = {"prompt_tokens": 2000, "completion_tokens": 9, "total_tokens": 2009}
    raw = openai_completion("chatcmpl-1", "gpt-4o", {**usage, "prompt_tokens_details": {"cached_tokens": 1920}})
    server = FakeServer(raw_reply(raw, content_type="application/json"))
    provider = openai_compatible("https://api.openai.com/v1", api_key="k", model="gpt-4o", transport=server.transport)
    rates = {"input": 2.5, "output": 10.0, "cached_input": 1.25}
    agent = Agent.create(provider=provider, model="gpt-4o").pricing({"gpt-4o": rates}).build()
    r = await agent.run("go")
    assert r.cost == pytest.approx((80 * 2.5 + 1920 * 1.25 + 9 * 10.0) / 1000)


@pytest.mark.parametrize(
    ("rates", "code"),
    [
        ({"input": 1.0, "cached": 0.1}, "ERR_PRICING_KIND"),
        ({"input": -1.0}, "ERR_PRICING_RATE"),
        ({"input": float("nan")}, "ERR_PRICING_RATE"),
        ({"input": float("inf")}, "ERR_PRICING_RATE"),
        ({"input": True}, "ERR_PRICING_RATE"),
        ({"input": "1"}, "ERR_PRICING_RATE"),
    ],
)
def test_a_pricing_table_with_an_unknown_kind_or_a_bad_rate_is_refused(rates: Any, code: str) -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").pricing({"m": rates})
    assert info.value.code == code


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**5))
def test_cache_rates_equal_to_input_price_like_no_cache_at_all(fresh: int, read: int, written: int, out: int) -> None:
    from agentfootprint.agent._stages import cost_of
    from agentfootprint.providers import LLMResponse, Usage

    usage = Usage(
        input_tokens=fresh + read + written, output_tokens=out, cached_input_tokens=read, cache_write_tokens=written
    )
    plain = Agent.create(provider=mock(reply="x"), model="m").pricing({"m": {"input": 0.4, "output": 1.6}}).build()
    rates = {"input": 0.4, "output": 1.6, "cached_input": 0.4, "cache_write": 0.4}
    same = Agent.create(provider=mock(reply="x"), model="m").pricing({"m": rates}).build()
    response = LLMResponse(usage=usage)
    expected = ((fresh + read + written) * 0.4 + out * 1.6) / 1000
    assert cost_of(plain.config, response) == pytest.approx(expected)
    assert cost_of(same.config, response) == pytest.approx(expected)
