"""Fork cost: a fork at iteration K of an N-iteration tool loop, against the full run. The prefix is served from
the recording (0 model calls, 0 tool calls): an agent's run is restored at the step's iteration from its recorded
commits, and what is left is that iteration, the checks and the live tail. Also the same fork re-executing its prefix
(the path before the restore) and a fork inside a composition (a two-step Sequence, still re-executed). Writes
results/fork.json."""

from __future__ import annotations

import asyncio
import gc
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from _common import write_results

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.compose import Sequence
from agentfootprint.explain import _fork as fork_module
from agentfootprint.explain import diff, fork
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock

STOP = "STOP"


class Model:
    """A scripted model: it calls ``plan[k]`` after the k-th tool result and answers once the plan is done or a tool
    said STOP; counts its calls; with ``sleep_s`` it waits that long per call."""

    def __init__(self, plan: list[str], sleep_s: float) -> None:
        self.plan = plan
        self.sleep_s = sleep_s
        self.calls = 0

    async def respond(self, req: LLMRequest) -> LLMResponse | str:
        self.calls += 1
        if self.sleep_s:
            await asyncio.sleep(self.sleep_s)
        k = (len(req.messages) - 1) // 2  # the question, then an assistant turn and a tool result per iteration
        if k < len(self.plan) and not (k and req.messages[-1].content == STOP):
            return LLMResponse(content="", tool_calls=[ToolCall(id=f"c{k}", name=self.plan[k], args={"q": f"q{k}"})])
        return f"done after {k} results"

    def reset(self) -> None:
        self.calls = 0


def build(model: Model, tools: list[str]) -> Agent:
    provider = mock(respond=model.respond, record_requests=False)  # no request transcript: as in bench/agent.py
    builder = Agent.create(provider=provider, model="m", max_iterations=1000).system("Work.")
    for name in tools:
        builder = builder.tool(
            define_tool(
                name=name,
                description=f"{name} tool",
                input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
                execute=lambda args, ctx, name=name: f"{name} found {args.get('q')}",
            )
        )
    return builder.fact(define_fact(id="policy", data="Answer when the work is done.")).build()


def call_ids(result: Any) -> list[str]:
    return [c.runtime_stage_id for c in result.recorded().snapshot.commit_log if c.stage_id == "call-llm"]


LATENCIES = (0.0, 0.02, 0.2, 1.0)
"""Model latencies (seconds per call) the cost model prices: none (the framework alone), a very fast hosted model,
a typical one, a slow one."""


def priced(cpu_s: float, calls: int) -> dict[str, float]:
    """A run's cost at each latency: this process's CPU time plus the latency of every model call it made."""
    return {f"{round(lat * 1000)}ms": cpu_s + lat * calls for lat in LATENCIES}


@contextmanager
def re_executing(on: bool) -> Iterator[None]:
    """With ``on``: every fork re-executes its prefix (served, checked), as all forks did before the restore."""
    saved = fork_module._fast_start
    if on:
        fork_module._fast_start = lambda *args: None  # type: ignore[assignment]
    try:
        yield
    finally:
        fork_module._fast_start = saved  # type: ignore[assignment]


async def case(
    n: int, k: int, *, change: bool, seed: int, repeat: int, sleep_s: float = 0.0, re_execute: bool = False
) -> dict[str, Any]:
    """One figure: the full N-iteration run, then a fork at iteration K (with ``change``: the tool result of that
    iteration says STOP, so the model answers at once; without: the rest of the loop runs live). With ``sleep_s``
    the model really waits and wall time is measured too; with ``re_execute`` the fork re-executes its prefix
    instead of restoring it (the path compositions and pause chains still take)."""
    rng = random.Random(seed)
    tools = [f"t{i}" for i in range(rng.randint(1, 4))]
    plan = [rng.choice(tools) for _ in range(n - 1)]  # N model calls: N-1 tool calls, then the answer
    model = Model(plan, sleep_s)
    agent = build(model, tools)
    samples: dict[str, list[float]] = {"full_cpu": [], "fork_cpu": [], "full_wall": [], "fork_wall": []}
    full_calls = fork_calls = 0
    agree: bool | None = None
    for _ in range(repeat):
        model.reset()
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        original = await agent.run("go", seed=1)
        samples["full_cpu"].append(time.process_time() - c0)
        samples["full_wall"].append(time.perf_counter() - w0)
        full_calls = model.calls
        calls = call_ids(original)
        at = calls[k - 1]
        name = plan[k - 1]
        ordinal = sum(1 for t in plan[: k - 1] if t == name) + 1
        replace = {f"{name}#{ordinal}": STOP} if change else None
        model.reset()
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        with re_executing(re_execute):
            forked = await fork(original, agent, at=at, replace=replace)
        samples["fork_cpu"].append(time.process_time() - c0)
        samples["fork_wall"].append(time.perf_counter() - w0)
        fork_calls = model.calls
        if not change:
            agree = diff(original, forked).agree
    med = {key: statistics.median(v) for key, v in samples.items()}
    full_cost, fork_cost = priced(med["full_cpu"], full_calls), priced(med["fork_cpu"], fork_calls)
    row: dict[str, Any] = {
        "prefix": "re-executed (served, checked)" if re_execute else "restored from the recording",
        "iterations": n,
        "fork_at_iteration": k,
        "change": "tool result says STOP (the model answers at once)" if change else "none (the rest runs live)",
        "full_run_cpu_s": round(med["full_cpu"], 4),
        "fork_cpu_s": round(med["fork_cpu"], 4),
        "model_calls_full": full_calls,
        "model_calls_fork": fork_calls,
        # the model saw only the live calls: the one at K and what followed (with STOP: the answer, at once)
        "model_calls_in_prefix": fork_calls - (2 if change and k < n else n - k + 1),
        "fork_over_full_by_latency": {lat: round(fork_cost[lat] / full_cost[lat], 4) for lat in full_cost},
    }
    if sleep_s:
        row["wall_with_real_sleep_ms"] = round(sleep_s * 1000)
        row["fork_over_full_wall"] = round(med["fork_wall"] / med["full_wall"], 4)
    if agree is not None:
        row["no_change_reproduces_run"] = agree
    return row


async def composition_case(n: int, k: int, *, seed: int, repeat: int) -> dict[str, Any]:
    """A fork inside a composition: a two-step Sequence whose members loop N/2 model calls each, forked at its K-th
    model call overall with no change (the first member's calls and the second's before K are served)."""
    rng = random.Random(seed)
    tools = [f"t{i}" for i in range(rng.randint(1, 4))]
    models = [Model([rng.choice(tools) for _ in range(n // 2 - 1)], 0.0) for _ in range(2)]
    seq = Sequence.create("pipe").step("first", build(models[0], tools)).step("second", build(models[1], tools))
    runner = seq.build()
    samples: dict[str, list[float]] = {"full_cpu": [], "fork_cpu": []}
    calls_full = calls_fork = 0
    agree = False
    for _ in range(repeat):
        for m in models:
            m.reset()
        gc.collect()
        c0 = time.process_time()
        original = await runner.run("go", seed=1)
        samples["full_cpu"].append(time.process_time() - c0)
        calls_full = sum(m.calls for m in models)
        at = call_ids(original)[k - 1]
        for m in models:
            m.reset()
        gc.collect()
        c0 = time.process_time()
        forked = await fork(original, runner, at=at)
        samples["fork_cpu"].append(time.process_time() - c0)
        calls_fork = sum(m.calls for m in models)
        agree = diff(original, forked).agree
    med = {key: statistics.median(v) for key, v in samples.items()}
    full_cost, fork_cost = priced(med["full_cpu"], calls_full), priced(med["fork_cpu"], calls_fork)
    return {
        "composition": "Sequence of two agents",
        "prefix": "re-executed (served, checked): a composition is not restored",
        "iterations": n,
        "fork_at_iteration": k,
        "change": "none (the rest runs live)",
        "full_run_cpu_s": round(med["full_cpu"], 4),
        "fork_cpu_s": round(med["fork_cpu"], 4),
        "model_calls_full": calls_full,
        "model_calls_fork": calls_fork,
        "model_calls_in_prefix": calls_fork - (n - k + 1),
        "fork_over_full_by_latency": {lat: round(fork_cost[lat] / full_cost[lat], 4) for lat in full_cost},
        "no_change_reproduces_run": agree,
    }


async def main(quick: bool) -> dict[str, Any]:
    repeat = 1 if quick else 3
    headline = [
        await case(200, 150, change=True, seed=0, repeat=repeat),
        await case(200, 150, change=False, seed=0, repeat=repeat),
        await case(200, 150, change=True, seed=0, repeat=1, sleep_s=0.02),
        await case(200, 150, change=True, seed=0, repeat=repeat, re_execute=True),
    ]
    rng = random.Random(35)
    generated = []
    for n in (20, 60, 120, 200) if not quick else (20, 60):
        for frac in (0.1, 0.5, 0.75, 0.95):
            k = max(1, min(n, round(n * frac)))
            generated.append(await case(n, k, change=True, seed=rng.randrange(1 << 30), repeat=repeat))
    compositions = [
        await composition_case(200, 150, seed=3, repeat=repeat),
        await composition_case(200, 60, seed=4, repeat=repeat),
    ]
    claim = headline[0]["fork_over_full_by_latency"]
    return {
        "claim": "a fork at iteration 150 of a 200-iteration run costs <= 0.1x the full run",
        "cost_model": "this process's CPU time + model latency x model calls (CPU time: stable on a shared machine)",
        "claim_holds_by_latency": {lat: ratio <= 0.1 for lat, ratio in claim.items()},
        "headline": headline,
        "compositions": compositions,
        "generated": generated,
        "generated_over_0.1": [
            (g["iterations"], g["fork_at_iteration"], lat, ratio)
            for g in generated
            for lat, ratio in g["fork_over_full_by_latency"].items()
            if ratio > 0.1
        ],
    }


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    payload = asyncio.run(main(quick))
    path = write_results("fork", payload)
    for row in payload["headline"]:
        print(
            f"{row['prefix'][:11]} N={row['iterations']} K={row['fork_at_iteration']} change={row['change'][:9]}: "
            f"fork/full {row['fork_over_full_by_latency']} wall {row.get('fork_over_full_wall', '-')} "
            f"calls {row['model_calls_fork']}/{row['model_calls_full']} (in prefix: {row['model_calls_in_prefix']})"
        )
    for row in payload["compositions"]:
        print(
            f"composition N={row['iterations']} K={row['fork_at_iteration']}: fork/full "
            f"{row['fork_over_full_by_latency']} calls {row['model_calls_fork']}/{row['model_calls_full']} "
            f"(in prefix: {row['model_calls_in_prefix']}, reproduces: {row['no_change_reproduces_run']})"
        )
    print(f"claim holds by latency: {payload['claim_holds_by_latency']}")
    print(f"generated over 0.1: {payload['generated_over_0.1']}")
    print(f"wrote {path}")
