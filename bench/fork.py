"""Fork cost: a fork at iteration K of an N-iteration tool loop, against the full run. The prefix is served from
the recording (0 model calls, 0 tool calls); what is left is the agent's own stages and the live tail.
Writes results/fork.json."""

from __future__ import annotations

import asyncio
import gc
import random
import statistics
import sys
import time
from typing import Any

from _common import write_results

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.explain import diff, fork
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock

STOP = "STOP"


class Model:
    """A scripted model with a per-call latency: it calls ``plan[k]`` for the k-th tool result it has seen and
    answers once the plan is done or a tool said STOP; counts calls and the input it read (words)."""

    def __init__(self, plan: list[str], latency_s: float) -> None:
        self.plan = plan
        self.latency_s = latency_s
        self.calls = 0
        self.words = 0
        self.first_call_at: float | None = None
        # with no latency the figure is this process's CPU time (stable on a shared machine); with one, wall time
        self.clock = time.perf_counter if latency_s else time.process_time

    async def respond(self, req: LLMRequest) -> LLMResponse | str:
        if self.first_call_at is None:
            self.first_call_at = self.clock()
        self.calls += 1
        self.words += sum(len(str(m.content).split()) for m in req.messages) + len(req.system_prompt.split())
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        done = [m for m in req.messages if m.role == "tool"]
        k = len(done)
        if k < len(self.plan) and not (done and done[-1].content == STOP):
            return LLMResponse(content="", tool_calls=[ToolCall(id=f"c{k}", name=self.plan[k], args={"q": f"q{k}"})])
        return f"done after {k} results"

    def reset(self) -> None:
        self.calls = self.words = 0
        self.first_call_at = None


def build(model: Model, tools: list[str]) -> Agent:
    builder = Agent.create(provider=mock(respond=model.respond), model="m", max_iterations=1000).system("Work.")
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


async def case(n: int, k: int, latency_s: float, *, change: bool, seed: int, repeat: int) -> dict[str, Any]:
    """One figure: the full N-iteration run, then a fork at iteration K (with ``change``: the tool result of that
    iteration says STOP, so the model answers at once; without: the rest of the loop runs live)."""
    rng = random.Random(seed)
    tools = [f"t{i}" for i in range(rng.randint(1, 4))]
    plan = [rng.choice(tools) for _ in range(n - 1)]  # N model calls: N-1 tool calls, then the answer
    model = Model(plan, latency_s)
    agent = build(model, tools)
    fulls, forks, prefixes = [], [], []
    full_calls = full_words = 0
    fork_calls = fork_words = 0
    agree: bool | None = None
    for _ in range(repeat):
        model.reset()
        gc.collect()
        t0 = model.clock()
        original = await agent.run("go", seed=1)
        fulls.append(model.clock() - t0)
        full_calls, full_words = model.calls, model.words
        calls = call_ids(original)
        at = calls[k - 1]
        name = plan[k - 1]
        ordinal = sum(1 for t in plan[: k - 1] if t == name) + 1
        replace = {f"{name}#{ordinal}": STOP} if change else None
        model.reset()
        gc.collect()
        t0 = model.clock()
        forked = await fork(original, agent, at=at, replace=replace)
        t1 = model.clock()
        forks.append(t1 - t0)
        prefixes.append((model.first_call_at or t1) - t0)
        fork_calls, fork_words = model.calls, model.words
        if not change:
            agree = diff(original, forked).agree
    full, fork_s, prefix = statistics.median(fulls), statistics.median(forks), statistics.median(prefixes)
    return {
        "iterations": n,
        "fork_at_iteration": k,
        "latency_ms": round(latency_s * 1000, 1),
        "clock": "wall" if latency_s else "cpu",
        "change": "tool result says STOP (the model answers at once)" if change else "none (the rest runs live)",
        "full_run_s": round(full, 4),
        "fork_s": round(fork_s, 4),
        "fork_over_full": round(fork_s / full, 4),
        "prefix_replay_s": round(prefix, 4),
        "prefix_over_full": round(prefix / full, 4),
        "model_calls_full": full_calls,
        "model_calls_fork": fork_calls,
        "model_calls_in_prefix": 0 if fork_calls == n - k + 1 or change else fork_calls - (n - k + 1),
        "input_words_fork_over_full": round(fork_words / full_words, 4),
        **({"no_change_reproduces_run": agree} if agree is not None else {}),
    }


async def main(quick: bool) -> dict[str, Any]:
    repeat = 1 if quick else 3
    headline = [
        await case(200, 150, 0.0, change=True, seed=0, repeat=repeat),
        await case(200, 150, 0.02, change=True, seed=0, repeat=repeat),
        await case(200, 150, 0.0, change=False, seed=0, repeat=repeat),
        await case(200, 150, 0.02, change=False, seed=0, repeat=repeat),
    ]
    rng = random.Random(35)
    generated = []
    for n in (20, 60, 120, 200) if not quick else (20, 60):
        for frac in (0.1, 0.5, 0.75, 0.95):
            k = max(1, min(n, round(n * frac)))
            generated.append(await case(n, k, 0.0, change=True, seed=rng.randrange(1 << 30), repeat=1))
    claim = headline[1]
    fails = [g for g in generated if g["fork_over_full"] > 0.1]
    return {
        "claim": "a fork at iteration 150 of a 200-iteration run costs <= 0.1x the full run",
        "claim_holds_at_20ms_per_call": claim["fork_over_full"] <= 0.1,
        "claim_holds_framework_only": headline[0]["fork_over_full"] <= 0.1,
        "headline": headline,
        "generated_framework_only": generated,
        "generated_over_0.1": [(g["iterations"], g["fork_at_iteration"], g["fork_over_full"]) for g in fails],
    }


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    payload = asyncio.run(main(quick))
    path = write_results("fork", payload)
    for row in payload["headline"]:
        print(
            f"N={row['iterations']} K={row['fork_at_iteration']} latency={row['latency_ms']}ms"
            f" change={row['change'][:9]}: "
            f"full {row['full_run_s']}s fork {row['fork_s']}s ratio {row['fork_over_full']} "
            f"(prefix {row['prefix_over_full']}, calls {row['model_calls_fork']}/{row['model_calls_full']})"
        )
    print(f"generated over 0.1: {payload['generated_over_0.1']}")
    print(f"wrote {path}")
