"""React modes (dynamic, classic, dynamic-grouped) and observer delivery (inline, deferred with drain)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint import Agent, define_instruction, define_tool
from agentfootprint.agent import ObserverDrainResult
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.events import AgentEvent
from agentfootprint.explain import backtrack
from agentfootprint.providers import mock

LOOKUP = define_tool(
    name="lookup",
    description="Look up an order",
    input_schema={"type": "object", "properties": {}},
    execute=lambda args, ctx: "Order A-1: shipped",
)
AFTER = define_instruction(id="after-lookup", prompt="Quote the order status.", on_tool_return="lookup")


def build(mode: str, provider: Any) -> Agent:
    return Agent.create(provider=provider, model="m", react_mode=mode).tool(LOOKUP).instruction(AFTER).build()  # type: ignore[arg-type]


def script() -> Any:
    return mock(replies=[{"tool_calls": [{"id": "c1", "name": "lookup", "args": {}}]}, "Order A-1 is shipped."])


async def test_R004_126_dynamic_is_the_default_and_recomposes_the_context_every_iteration() -> None:
    """R004-126: 'dynamic' (default): the instruction that fires on the tool's return reaches the next call."""
    provider = script()
    agent = Agent.create(provider=provider, model="m").tool(LOOKUP).instruction(AFTER).build()
    assert agent.config.react_mode == "dynamic"
    await agent.run("Where is A-1?")
    assert "Quote the order status." not in provider.requests[0].system_prompt
    assert "Quote the order status." in provider.requests[1].system_prompt


async def test_R004_126_classic_composes_the_context_once_per_turn() -> None:
    """R004-126: 'classic': iteration 1's context is what every call of the turn sees."""
    provider = script()
    agent = build("classic", provider)
    result = await agent.run("Where is A-1?")
    assert result.answer == "Order A-1 is shipped."
    assert provider.requests[1].system_prompt == provider.requests[0].system_prompt
    assert [t.name for t in provider.requests[1].tools] == ["lookup"]
    assert len(provider.requests[1].messages) == 3  # the tool result still reaches the model
    bt = backtrack(agent)
    assert bt.source("lookup") is not None and bt.source("after-lookup") is None


async def test_R004_126_dynamic_grouped_composes_the_request_as_one_recorded_step() -> None:
    """R004-126: 'dynamic-grouped': same requests as dynamic; one `context` step per iteration in the record."""
    grouped, dynamic = script(), script()
    await build("dynamic", dynamic).run("Where is A-1?")
    agent = build("dynamic-grouped", grouped)
    await agent.run("Where is A-1?")
    assert [r.model_dump() for r in grouped.requests] == [r.model_dump() for r in dynamic.requests]
    stages = [c.stage_id for c in agent.last_snapshot().commit_log]  # type: ignore[union-attr]
    assert stages.count("context") == 2 and "system-prompt" not in stages
    trail = backtrack(agent).source("after-lookup")
    assert trail is not None and trail.hops[2].runtime_stage_id == "context#7"
    with pytest.raises(AgentBuildError, match="react_mode"):
        Agent.create(provider=mock(reply="x"), react_mode="eager")  # type: ignore[arg-type]


async def test_R004_83_inline_delivery_is_the_default_listeners_see_events_during_the_run() -> None:
    """R004-83: inline (default): a listener has every event by the time run() returns; drain reports zeros."""
    agent = Agent.create(provider=mock(reply="ok"), model="m").build()
    seen: list[str] = []
    agent.on("*", lambda e: seen.append(e.type))
    await agent.run("hi")
    assert seen[0] == "agentfootprint.agent.turn_start" and seen[-1] == "agentfootprint.agent.turn_end"
    assert await agent.drain_observers() == ObserverDrainResult(delivered=0, pending=0, delivered_inline=0)


async def test_R004_83_deferred_delivery_runs_listeners_after_the_run_returns_in_order() -> None:
    """R004-83: deferred: events are captured during the run and delivered one beat behind, in order."""
    agent = Agent.create(provider=mock(reply="ok"), model="m", observer_delivery="deferred").build()
    seen: list[AgentEvent] = []
    agent.on("*", seen.append)
    await agent.run("hi")
    assert seen == []  # nothing delivered while the caller still holds the result
    await asyncio.sleep(0)
    drained = await agent.drain_observers(timeout=5)
    assert drained.pending == 0 and drained.delivered == len(seen) > 0
    assert seen[0].type == "agentfootprint.agent.turn_start" and seen[-1].type == "agentfootprint.agent.turn_end"
    assert [e.meta.run_id for e in seen] == [seen[0].meta.run_id] * len(seen)


async def test_R004_83_the_deferred_queue_is_bounded_and_never_loses_an_event() -> None:
    """R004-83: a full queue delivers its oldest event at once (backpressure), never drops one."""
    inline_seen: list[str] = []
    inline = Agent.create(provider=mock(reply="ok"), model="m").build()
    inline.on("*", lambda e: inline_seen.append(e.type))
    await inline.run("hi")
    agent = Agent.create(provider=mock(reply="ok"), model="m", observer_delivery="deferred", observer_queue=2).build()
    seen: list[str] = []
    agent.on("*", lambda e: seen.append(e.type))
    await agent.run("hi")
    assert len(seen) == len(inline_seen) - 2  # all but the two queued ones already delivered
    drained = await agent.drain_observers()
    assert seen == inline_seen and drained.delivered_inline == len(inline_seen) - 2
    with pytest.raises(AgentBuildError, match="observer_queue"):
        Agent.create(provider=mock(reply="x"), observer_queue=0)


async def test_R004_82_drain_observers_reports_zeros_before_the_first_run_and_what_is_still_pending() -> None:
    """R004-82: zeros before the first run; pending async listeners are reported at the deadline, never lost."""
    agent = Agent.create(provider=mock(reply="ok"), model="m", observer_delivery="deferred").build()
    assert await agent.drain_observers() == ObserverDrainResult()
    gate = asyncio.Event()

    async def slow(event: AgentEvent) -> None:
        await gate.wait()

    agent.on("agent.turn_end", slow)
    await agent.run("hi")
    first = await agent.drain_observers(timeout=0.05)
    assert first.pending == 1
    gate.set()
    assert (await agent.drain_observers(timeout=5)).pending == 0


def test_drain_observers_sync_twin() -> None:
    agent = Agent.create(provider=mock(reply="ok"), model="m", observer_delivery="deferred").build()
    agent.on("*", lambda e: None)
    agent.run_sync("hi")
    assert agent.drain_observers_sync().pending == 0
