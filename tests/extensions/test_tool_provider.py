"""Tool providers: tools per iteration beside the static ones, gated by predicates, recorded per iteration."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, define_tool
from agentfootprint.agent import AgentBuildError
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import ProviderContext, gated_tools, skill_scoped_tools, static_tools


def named(name: str, text: str) -> Any:
    return define_tool(
        name=name,
        description=f"The {name} tool.",
        input_schema={"type": "object", "properties": {}},
        execute=lambda a: text,
    )


async def test_R004_123_a_provider_supplies_tools_per_iteration_dispatched_beside_static_tools() -> None:
    """R004-123: a ToolProvider (.tool_provider()) supplies tools per iteration, dispatched alongside static tools;
    gated tools are offered only while the predicate holds; what was offered is recorded per iteration."""
    offered: list[list[str]] = []

    def respond(req: LLMRequest) -> Any:
        offered.append(sorted(t.name for t in req.tools))
        if len(offered) == 1:
            return {"tool_calls": [{"id": "a", "name": "stock", "args": {}}, {"id": "b", "name": "local", "args": {}}]}
        return "Stock is 7 and local is here."

    after_first = gated_tools(static_tools([named("stock", "7")], id="warehouse"), lambda n, ctx: True, id="open")
    late = gated_tools(static_tools([named("refund", "done")], id="cash"), lambda n, ctx: ctx.iteration >= 2, id="late")
    agent = (
        Agent.create(provider=mock(respond=respond))
        .tool(named("local", "here"))
        .tool_provider(after_first)
        .tool_provider(late)
        .build()
    )
    result = await agent.run("stock?")
    assert result.answer == "Stock is 7 and local is here."
    assert offered == [["local", "stock"], ["local", "refund", "stock"]]
    state = agent.last_snapshot().state  # type: ignore[union-attr]
    assert [(r["name"], r["content"]) for r in state["tool_results"]] == [("stock", "7"), ("local", "here")]
    assert state["tools_offered"] == [
        {"iteration": 1, "provider": "open", "tools": ["stock"]},
        {"iteration": 1, "provider": "late", "tools": []},
        {"iteration": 2, "provider": "open", "tools": ["stock"]},
        {"iteration": 2, "provider": "late", "tools": ["refund"]},
    ]
    bt = backtrack(agent)
    assert ("tool", "stock") in [(s.kind, s.id) for s in bt.sources]
    assert agent.source_ids()["stock"] == "tool"
    without = agent.without("stock")
    assert "stock" not in [t.name for t in (await _offer(without))]


async def _offer(agent: Agent) -> list[Any]:
    seen: list[Any] = []

    def respond(req: LLMRequest) -> str:
        seen.extend(req.tools)
        return "ok"

    rebuilt = Agent(agent.config.__class__(**{**agent.config.__dict__, "provider": mock(respond=respond)}))
    await rebuilt.run("x")
    return seen


async def test_skill_scoped_tools_follow_the_active_skill() -> None:
    ctx = ProviderContext(iteration=1, active_skills=("billing",))
    provider = skill_scoped_tools("billing", [named("charge", "ok")])
    assert [t.name for t in await provider.list(ctx)] == ["charge"]  # type: ignore[misc]
    assert list(await provider.list(ProviderContext(iteration=1))) == []  # type: ignore[misc]


async def test_a_raising_gate_fails_the_stage_never_lets_tools_through() -> None:
    def broken(name: str, ctx: ProviderContext) -> bool:
        raise RuntimeError("policy down")

    agent = (
        Agent.create(provider=mock(reply="x"))
        .tool_provider(gated_tools(static_tools([named("a", "1")]), broken))
        .build()
    )
    with pytest.raises(RuntimeError, match="policy down"):
        await agent.run("hi")


def test_hostile_providers_are_refused_by_name() -> None:
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).tool_provider(object())  # type: ignore[arg-type]
    p = static_tools([named("a", "1")], id="same")
    with pytest.raises(AgentBuildError, match="already used"):
        Agent.create(provider=mock(reply="x")).tool_provider(p).tool_provider(static_tools([], id="same"))
