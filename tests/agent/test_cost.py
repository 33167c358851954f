"""Usage and cost: per call and per run, a pricing table, and a cost budget that warns or halts."""

from __future__ import annotations

from typing import Any

import pytest

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
