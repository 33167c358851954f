"""Observer delivery with a slow listener: time until run() returns, inline vs deferred, and the drain that settles
the deferred events. Writes results/observers.json."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from _common import write_results

from agentfootprint import Agent, define_tool
from agentfootprint.events import AgentEvent
from agentfootprint.providers import mock

LISTENER_MS = 1.0
TURNS = 20


def slow_listener(event: AgentEvent) -> None:
    """A listener that does 1 ms of work per event (a synchronous exporter, say)."""
    end = time.perf_counter() + LISTENER_MS / 1000
    while time.perf_counter() < end:
        pass


async def measure(delivery: str) -> dict[str, Any]:
    lookup = define_tool(
        name="lookup",
        description="Look up",
        input_schema={"type": "object", "properties": {}},
        execute=lambda a, c: "ok",
    )
    answer_ms, drain_ms = [], []
    events = 0
    for _ in range(TURNS):
        replies = [{"tool_calls": [{"id": "c1", "name": "lookup", "args": {}}]}, "done"]
        agent = Agent.create(provider=mock(replies=replies), model="m", observer_delivery=delivery).tool(lookup).build()  # type: ignore[arg-type]
        counted: list[AgentEvent] = []
        agent.on("*", slow_listener)
        agent.on("*", counted.append)
        t0 = time.perf_counter()
        await agent.run("go")
        answer_ms.append((time.perf_counter() - t0) * 1000)
        t1 = time.perf_counter()
        drained = await agent.drain_observers(timeout=10)
        drain_ms.append((time.perf_counter() - t1) * 1000)
        assert drained.pending == 0
        events = len(counted)
    return {
        "events_per_run": events,
        "run_returns_ms": round(statistics.median(answer_ms), 3),
        "drain_ms": round(statistics.median(drain_ms), 3),
    }


async def main() -> None:
    inline = await measure("inline")
    deferred = await measure("deferred")
    result = {
        "listener_ms_per_event": LISTENER_MS,
        "inline": inline,
        "deferred": deferred,
        "run_returns_ratio_deferred_vs_inline": round(deferred["run_returns_ms"] / inline["run_returns_ms"], 3),
    }
    print(result)
    print(write_results("observers", result))


if __name__ == "__main__":
    asyncio.run(main())
