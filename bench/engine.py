"""Engine benchmark: per-stage overhead with full recording vs LangGraph, and loop growth (time, memory)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).parent))

from _common import retained_bytes, time_async, write_results

from agentfootprint.flow import flow_chart


def step(s: Any) -> None:
    s["n"] = s["n"] + 1


def our_chain(n: int) -> Any:
    b = flow_chart("S0", step, id="s0")
    for i in range(1, n):
        b = b.then(f"S{i}", step, id=f"s{i}")
    return b.build()


class GraphState(TypedDict):
    n: int


def langgraph_chain(n: int) -> Any:
    from langgraph.graph import END, START, StateGraph

    g: Any = StateGraph(GraphState)
    for i in range(n):
        g.add_node(f"s{i}", lambda st: {"n": st["n"] + 1})
    g.add_edge(START, "s0")
    for i in range(n - 1):
        g.add_edge(f"s{i}", f"s{i + 1}")
    g.add_edge(f"s{n - 1}", END)
    return g.compile()


def loop_chart(iterations: int) -> Any:
    def body(s: Any) -> None:
        i = s.get("i", 0) + 1
        s["i"] = i
        s.append("history", {"step": i, "note": f"iteration {i}"})
        if i >= iterations:
            s.break_("done")

    return flow_chart("Body", body, id="body", max_iterations=iterations + 1).loop_to("body").build()


async def main() -> dict[str, Any]:
    per_stage: dict[str, Any] = {}
    for n in (10, 100, 1000):
        ours = our_chain(n)
        lg = langgraph_chain(n)
        cfg = {"recursion_limit": n + 10}
        repeat = 15 if n < 1000 else 5
        t_ours = await time_async(lambda ours=ours: ours.run({"n": 0}), repeat=repeat)
        t_lg = await time_async(lambda lg=lg, cfg=cfg: lg.ainvoke({"n": 0}, config=cfg), repeat=repeat)
        per_stage[str(n)] = {
            "agentfootprint_us_per_stage": round(t_ours / n * 1e6, 2),
            "langgraph_us_per_stage": round(t_lg / n * 1e6, 2),
            "ratio": round(t_ours / t_lg, 4),
        }
    n, n4 = 1000, 4000
    t_n = await time_async(lambda: loop_chart(n).run(), repeat=5)
    t_4n = await time_async(lambda: loop_chart(n4).run(), repeat=5)
    m_n = await retained_bytes(lambda: loop_chart(n).run())
    m_4n = await retained_bytes(lambda: loop_chart(n4).run())
    ratios = {
        "engine.per_stage_vs_langgraph": per_stage["100"]["ratio"],
        "engine.loop_time_growth_4x": round(t_4n / t_n, 3),
        "engine.loop_memory_growth_4x": round(m_4n / m_n, 3),
    }
    targets = {
        "engine.per_stage_vs_langgraph": 0.25,
        "engine.loop_time_growth_4x": 4.5,
        "engine.loop_memory_growth_4x": 4.5,
    }
    return {
        "ratios": ratios,
        "targets": targets,
        "within_target": {k: ratios[k] <= targets[k] for k in ratios},
        "per_stage": per_stage,
        "loop": {
            "iterations": [n, n4],
            "seconds": [round(t_n, 4), round(t_4n, 4)],
            "retained_bytes": [m_n, m_4n],
        },
        "notes": "Ratios are agentfootprint / LangGraph on the same chain in one process (ainvoke, no checkpointer); "
        "our stages record full reads, writes and commits. Loop: a 1-key read/write + append per iteration.",
    }


if __name__ == "__main__":
    result = asyncio.run(main())
    path = write_results("engine", result)
    print(f"engine: {result['ratios']} (targets {result['targets']}) -> {path}")
