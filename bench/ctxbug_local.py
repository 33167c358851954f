"""Planted context bugs on a real sampling model: SmolLM2-135M on llama.cpp (in-process) at temperature 0.7.

A handful of office-assistant agents where one fact, or either of two facts, gives the door code the model repeats;
localization must name exactly those facts under the statistical rule. Needs the ``local-llm`` extra
(``make test-setup`` installs it); writes ``bench/results/ctxbug_local.json``.

Run: ``python bench/ctxbug_local.py``; ``bench/ctxbug.py --local`` runs it too."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint import Agent, define_fact
from agentfootprint.explain import localize_context_bug

QUESTION = "What is the door code for the office?"
CODE = "4417"
TEMPERATURE = 0.7
FILLERS = [
    ("wifi", "The office wifi password is tulip-garden."),
    ("parking", "Visitors park on level 2."),
    ("lunch", "Lunch is served at noon."),
    ("badge", "Badges are collected at reception."),
    ("printer", "The printer is next to the kitchen."),
]
CASES: list[dict[str, Any]] = [
    {"name": "single culprit, 4 sources", "planted": {"code": "The door code for the office is 4417."}, "fill": 3},
    {"name": "single culprit, 6 sources", "planted": {"keypad": "Keypad at the office door: 4417."}, "fill": 5},
    {
        "name": "redundant pair, 5 sources",
        "planted": {"code": "The door code for the office is 4417.", "memo": "Memo: office door opens with 4417."},
        "fill": 3,
    },
]


def changed(a: str, b: str) -> bool:
    return (CODE in a) != (CODE in b)


def office_agent(provider: Any, case: dict[str, Any]) -> Agent:
    builder = Agent.create(provider=provider, model="", max_iterations=2, temperature=TEMPERATURE, max_tokens=32)
    builder = builder.system("You are an office assistant. Answer briefly using the facts.")
    facts = list(FILLERS[: case["fill"]])
    for i, (fid, text) in enumerate(case["planted"].items()):
        facts.insert(1 + 2 * i, (fid, text))
    for fid, text in facts:
        builder = builder.fact(define_fact(id=fid, data=text))
    return builder.build()


async def run_local(samples: int = 3, max_samples: int = 8) -> dict[str, Any]:
    """Localize each planted case on the local model; honest numbers, or why it could not run."""
    try:
        from agentfootprint.providers.local import local_llm

        provider = local_llm(mode="in-process", temperature=TEMPERATURE, seed=0, max_tokens=32)
    except Exception as exc:  # the extra is optional: say why nothing ran
        return {"skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for case in CASES:
            agent = office_agent(provider, case)
            seed = None
            for s in range(1000, 1010):  # the run a user saw: the model repeated the planted code
                if CODE in ((await agent.run(QUESTION, seed=s)).answer or ""):
                    seed = s
                    break
            if seed is None:
                rows.append({"case": case["name"], "skipped": "the model never repeated the planted code"})
                continue
            t0 = time.perf_counter()
            report = await localize_context_bug(
                agent,
                samples=samples,
                max_samples=max_samples,
                outcome_changed=changed,
                concurrency=1,
                progress=False,
            )
            planted = set(case["planted"])
            expected = {frozenset(planted)}
            found = [frozenset(c.ids) for c in report.confirmed_sets]
            rows.append(
                {
                    "case": case["name"],
                    "expected": sorted(planted),
                    "found": [sorted(f) for f in found],
                    "exact": set(found) == expected and len(found) == 1,
                    "false_confirmations": sum(1 for f in found if f not in expected),
                    "baseline": f"{report.baseline_flips}/{report.baseline_samples}",
                    "reruns": report.reruns,
                    "test": report.test,
                    "seconds": round(time.perf_counter() - t0, 1),
                    "suspects": [(s.id, s.verdict, f"{s.flips}/{s.samples}") for s in report.suspects],
                    "flags": report.honesty_flags,
                }
            )
    finally:
        provider.close()
    done = [r for r in rows if "exact" in r]
    return {
        "model": "SmolLM2-135M-Instruct (llama.cpp, in-process)",
        "temperature": TEMPERATURE,
        "samples": samples,
        "max_samples": max_samples,
        "cases": len(rows),
        "exact": sum(1 for r in done if r["exact"]),
        "false_confirmations": sum(r["false_confirmations"] for r in done),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "rows": rows,
    }


if __name__ == "__main__":
    result = asyncio.run(run_local())
    path = write_results("ctxbug_local", result)
    print(f"ctxbug_local: {result.get('exact')}/{result.get('cases')} exact, {result} -> {path}")
