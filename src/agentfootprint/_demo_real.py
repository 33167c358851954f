"""``agentfootprint demo --real``: the flagship refunds agent on a real local model, answered and explained."""

from __future__ import annotations

import time
from typing import Any, Literal

from rich.console import Console


def run_real_demo(
    console: Console | None = None,
    *,
    mode: Literal["server", "in-process"] = "server",
    samples: int = 2,
    max_suspects: int = 3,
    max_tokens: int = 96,
) -> dict[str, Any]:
    """Run the refunds agent on SmolLM2 via llama.cpp (temperature 0, seed 0), then backtrack and localize it."""
    from agentfootprint._flagship import QUESTION, refunds_agent
    from agentfootprint.explain import backtrack, localize_sync
    from agentfootprint.providers.local import local_llm

    console = console or Console()
    console.rule("[bold]agentfootprint demo --real: the refunds agent on a local model")
    started = time.monotonic()
    with local_llm(mode=mode, temperature=0.0, seed=0, max_tokens=max_tokens, max_tool_rounds=1) as provider:
        console.print(f"Model: SmolLM2-135M-Instruct on llama.cpp ({mode}), temperature 0, seed 0", highlight=False)
        agent = refunds_agent(provider)
        result = agent.run_sync(QUESTION, seed=0)
        console.print(f"[bold]User:[/bold] {QUESTION}")
        console.print(f"[bold]Agent:[/bold] {result.answer}", markup=False, highlight=False)
        console.rule("Backtrack: every piece of context that reached the final model call")
        bt = backtrack(agent)
        console.print(str(bt), markup=False, highlight=False)
        console.rule(f"Localize: rank suspects, then prove by ablation ({samples} seeded reruns each)")
        report = localize_sync(agent, samples=samples, max_suspects=max_suspects, concurrency=1, progress=False)
        console.print(str(report), markup=False, highlight=False)
    elapsed = time.monotonic() - started
    console.print(f"\nDone in {elapsed:.1f}s (model start-up included).", highlight=False)
    return {
        "answer": result.answer,
        "backtrack": str(bt),
        "localization": report,
        "confirmed": [s.id for s in report.confirmed],
        "seconds": elapsed,
    }
