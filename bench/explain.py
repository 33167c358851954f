"""Explain benchmark: backtrack cost vs the run it explains; localization with concurrent vs serial reruns."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent, scripted_model
from agentfootprint.explain import backtrack, localize_context_bug
from agentfootprint.providers import LLMRequest, mock


def long_agent(iterations: int) -> Agent:
    def respond(req: LLMRequest) -> Any:
        k = sum(1 for m in req.messages if m.role == "tool")
        if k + 1 >= iterations:
            return "done"
        return {"tool_calls": [{"id": f"c{k}", "name": "step", "args": {"n": k}}]}

    step = define_tool(
        name="step",
        description="one step",
        input_schema={"type": "object"},
        execute=lambda a, c: f"step {a.get('n')} ok",
    )
    return (
        Agent.create(provider=mock(respond=respond, record_requests=False), model="m", max_iterations=iterations + 1)
        .fact(define_fact(id="f", data="A fact."))
        .tool(step)
        .build()
    )


def slow_flagship(delay: float) -> Agent:
    async def respond(req: LLMRequest) -> Any:
        await asyncio.sleep(delay)  # simulated model latency
        return scripted_model(req)

    return refunds_agent(mock(respond=respond, record_requests=False))


async def main() -> dict[str, Any]:
    agent = long_agent(200)
    t0 = time.perf_counter()
    await agent.run("go")
    run_s = time.perf_counter() - t0
    samples = []
    for _ in range(5):
        t1 = time.perf_counter()
        bt = backtrack(agent)
        samples.append(time.perf_counter() - t1)
    backtrack_s = sorted(samples)[len(samples) // 2]

    flagship = slow_flagship(0.01)
    await flagship.run(QUESTION)
    t2 = time.perf_counter()
    await localize_context_bug(flagship, samples=3, outcome_changed=approved_flipped, concurrency=1, progress=False)
    serial_s = time.perf_counter() - t2
    t3 = time.perf_counter()
    report = await localize_context_bug(
        flagship, samples=3, outcome_changed=approved_flipped, concurrency=8, progress=False
    )
    concurrent_s = time.perf_counter() - t3
    ratios = {
        "explain.backtrack_vs_run_200": round(backtrack_s / run_s, 4),
        "explain.localize_concurrent_vs_serial": round(concurrent_s / serial_s, 4),
    }
    targets = {"explain.backtrack_vs_run_200": 0.05, "explain.localize_concurrent_vs_serial": 1.0}
    return {
        "ratios": ratios,
        "targets": targets,
        "within_target": {k: ratios[k] <= targets[k] for k in ratios},
        "details": {
            "run_200_s": round(run_s, 4),
            "backtrack_s": round(backtrack_s, 5),
            "sources": len(bt.sources),
            "localize_serial_s": round(serial_s, 4),
            "localize_concurrent_s": round(concurrent_s, 4),
            "confirmed": [s.id for s in report.confirmed],
        },
        "notes": "Backtrack walks the served snapshot of a 200-iteration run (~600 history messages). Localize: "
        "flagship, 3 samples, 3 suspects + baseline = 12 reruns, each model call sleeping 10 ms.",
    }


if __name__ == "__main__":
    result = asyncio.run(main())
    path = write_results("explain", result)
    print(f"explain: {result['ratios']} (targets {result['targets']}) -> {path}")
