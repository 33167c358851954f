"""Scale benchmark: 40 ablation reruns on a 50 ms-per-call model, serial vs asyncio vs Ray local (2 CPUs)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import time_async, write_results

from agentfootprint import Agent
from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent, scripted_model
from agentfootprint.explain import LocalizationReport, localize_context_bug
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.scale import Executor, InProcessExecutor

MODEL_LATENCY_S = 0.05
SAMPLES = 10  # 10 seeds x (baseline + 3 suspects) = 40 reruns
RERUNS = SAMPLES * 4
FACTORY = "scale:slow_agent"


async def _slow_model(req: LLMRequest) -> Any:
    await asyncio.sleep(MODEL_LATENCY_S)
    return scripted_model(req)


def slow_agent() -> Agent:
    """The flagship refunds agent on a mock model that takes 50 ms per call (two calls per run)."""
    return refunds_agent(mock(respond=_slow_model, record_requests=False))


async def _localize(
    agent: Agent, concurrency: int, executor: Executor | None = None, factory: str | None = None
) -> LocalizationReport:
    report = await localize_context_bug(
        agent,
        samples=SAMPLES,
        outcome_changed=approved_flipped,
        concurrency=concurrency,
        progress=False,
        executor=executor,
        agent_factory=factory,
    )
    if report.baseline_errors or any(s.errors for s in report.suspects) or len(report.confirmed) != 1:
        raise RuntimeError(f"unexpected localization: {report.honesty_flags} {[s.errors for s in report.suspects]}")
    return report


async def _ray(agent: Agent, cpus_per_run: float) -> dict[str, Any]:
    try:
        import ray  # noqa: F401
    except ImportError:
        return {"skipped": "ray is not installed (pip install 'agentfootprint[ray]')"}
    from agentfootprint.scale import RayExecutor

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    executor = RayExecutor(num_cpus=2, cpus_per_run=cpus_per_run)
    t0 = time.perf_counter()
    executor.start()
    init_s = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        await _localize(agent, RERUNS, executor, FACTORY)
        cold_s = time.perf_counter() - t0
        warm_s = await time_async(lambda: _localize(agent, RERUNS, executor, FACTORY), repeat=3, warmup=0)
    finally:
        executor.shutdown()
    return {"init_s": round(init_s, 3), "cold_s": round(cold_s, 3), "seconds": round(warm_s, 3)}


async def main() -> dict[str, Any]:
    agent = slow_agent()
    await agent.run(QUESTION)
    serial = await time_async(lambda: _localize(agent, 1), repeat=3, warmup=1)
    concurrent = await time_async(lambda: _localize(agent, 8), repeat=3, warmup=1)
    via_executor = await time_async(
        lambda: _localize(agent, RERUNS, InProcessExecutor(concurrency=8), FACTORY), repeat=3, warmup=1
    )
    ray_whole = await _ray(agent, 1.0)
    ray_frac = await _ray(agent, 0.25)
    modes: dict[str, Any] = {
        "in_process_serial": {"seconds": round(serial, 3), "concurrency": 1},
        "asyncio_concurrent": {"seconds": round(concurrent, 3), "concurrency": 8},
        "in_process_executor": {"seconds": round(via_executor, 3), "concurrency": 8, "via": "RunSpec + factory"},
        "ray_local_2cpu": {**ray_whole, "num_cpus": 2, "cpus_per_run": 1.0},
        "ray_local_2cpu_quarter_cpu_tasks": {**ray_frac, "num_cpus": 2, "cpus_per_run": 0.25},
    }
    ratios = {
        f"scale.{name}_vs_serial": round(mode["seconds"] / serial, 4)
        for name, mode in modes.items()
        if "seconds" in mode and name != "in_process_serial"
    }
    targets = {"scale.asyncio_concurrent_vs_serial": 0.25, "scale.ray_local_2cpu_vs_serial": 0.75}
    return {
        "ratios": ratios,
        "targets": targets,
        "within_target": {k: ratios[k] <= v for k, v in targets.items() if k in ratios},
        "modes": modes,
        "reruns": RERUNS,
        "model_calls_per_rerun": "2 (tool call, then answer); 1 when the tool is ablated",
        "model_latency_s": MODEL_LATENCY_S,
        "cpus": os.cpu_count(),
        "notes": "Wall time of one causal localization (10 seeds x baseline + 3 suspects = 40 reruns) on the flagship "
        "agent whose mock model sleeps 50 ms per call (asyncio.sleep: latency, not CPU). Ratios are mode / serial "
        "(lower is faster). Ray: local instance, 2 CPUs, each rerun a task; seconds are warm medians, init_s and "
        "cold_s (first batch, worker start-up and imports) are reported apart.",
    }


if __name__ == "__main__":
    result = asyncio.run(main())
    path = write_results("scale", result)
    print(f"scale: {result['ratios']} (targets {result['targets']}) -> {path}")
