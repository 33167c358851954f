"""Interop against the real frameworks: exact culprit sets at the step on generated planted runs of pydantic-ai,
LangGraph and the OpenAI Agents SDK (offline models, their own instrumentation; tests/interop/_frameworks.py).

Planted: 60 generated cases round-robin over the three frameworks (1-4 plain tools, 0-3 documents behind a retriever
tool, the misleading text in one tool result or one document, five wordings). A case passes when the confirmed
culprit sets are exactly one set, the planted source alone. Two kinds the planting did not design for are reported
apart:
the cue returned by two tools (the exact culprit set is the pair), and a re-sent step answered by a model that
flips on its own one time in eight (seeded)."""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import write_results

from agentfootprint.explain import backtrack
from agentfootprint.interop import import_trace, localize_sync
from agentfootprint.providers import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the fixture producers live with the tests
from tests.interop._frameworks import FRAMEWORKS, VERSIONS, Case, ToolPlan, capture, planted_cases


def judge(case: Case, respond: Any, expected: set[frozenset[str]] | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    cap = capture(case)
    t1 = time.perf_counter()
    rec = import_trace(list(cap.spans))
    t2 = time.perf_counter()
    listed = case.planted_id in {s.id for s in backtrack(rec, at=cap.last_llm).sources}
    report = localize_sync(rec, at=cap.last_llm, provider=mock(respond=respond))
    found = {c.ids for c in report.culprit_sets if c.verdict == "confirmed"}
    exact = case.culprits_exact(found) if expected is None else {frozenset(f) for f in found} == expected
    return {
        "framework": case.framework,
        "spans": len(cap.spans),
        "tools": len(case.tools),
        "planted_in": "doc" if case.planted_id != case.planted_tool else "tool",
        "listed": listed,
        "exact": exact,
        "found": sorted(sorted(f) for f in found),
        "run_s": t1 - t0,
        "import_s": t2 - t1,
        "model_calls": report.model_calls,
    }


def twice(case: Case) -> tuple[Case, set[frozenset[str]]]:
    """The cue returned by two plain tools: only removing both changes the answer."""
    plain = [t for t in case.tools if not t.docs]
    extra = ToolPlan("second_opinion", "Ask a second source.", result=case.planted_text)
    first = replace(plain[0], result=case.planted_text)

    def cleaned(t: ToolPlan) -> ToolPlan:
        if t.name == first.name:
            return first
        docs = tuple(d for d in t.docs if d.text != case.planted_text)
        return replace(t, result=f"No notices for {t.name}." if t.result == case.planted_text else t.result, docs=docs)

    tools = (*(cleaned(t) for t in case.tools), extra)
    return replace(case, tools=tools, planted_id=first.name), {frozenset({first.name, extra.name})}


def noisy(case: Case, seed: int) -> Any:
    rng = random.Random(seed)

    def respond(request: Any) -> str:
        answer = case.respond(request)
        if rng.random() < 1 / 8:
            return case.truthful if answer == case.misleading else case.misleading
        return answer

    return respond


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r["framework"]].append(r)
    return {
        "cases": len(rows),
        "exact": sum(r["exact"] for r in rows),
        "exact_rate": round(sum(r["exact"] for r in rows) / len(rows), 4) if rows else None,
        "listed_rate": round(sum(r["listed"] for r in rows) / len(rows), 4) if rows else None,
        "per_framework": {
            fw: {
                "cases": len(rs),
                "exact": sum(r["exact"] for r in rs),
                "median_import_ms": round(1000 * statistics.median(r["import_s"] for r in rs), 2),
                "median_spans": statistics.median(r["spans"] for r in rs),
            }
            for fw, rs in sorted(by.items())
        },
        "failures": [r for r in rows if not r["exact"] or not r["listed"]],
    }


def main() -> None:
    cases = planted_cases(60)
    planted = [judge(c, c.respond) for c in cases]
    unplanned_twice = []
    for c in cases[:15]:
        if any(not t.docs for t in c.tools):
            case, expected = twice(c)
            unplanned_twice.append(judge(case, case.respond, expected))
    unplanned_noisy = [judge(c, noisy(c, n)) for n, c in enumerate(cases[15:30])]
    out = {
        "versions": VERSIONS,
        "frameworks": list(FRAMEWORKS),
        "planted": summary(planted),
        "target_exact_rate": 0.95,
        "unplanned_cue_twice": summary(unplanned_twice),
        "unplanned_noisy_model": summary(unplanned_noisy),
    }
    path = write_results("interop_frameworks", out)
    for key in ("planted", "unplanned_cue_twice", "unplanned_noisy_model"):
        s = out[key]
        print(f"{key}: {s['exact']}/{s['cases']} exact ({s['exact_rate']}), listed {s['listed_rate']}")
    print(path)


if __name__ == "__main__":
    main()
