"""The why explorer under load: the run list of a 10,000-run SQLite store (first page, deep page, search, flags;
with and without the summary columns), a 200-iteration run's page (API and rendered in Chromium), and the
server's memory over 1,000 page loads. Writes results/explorer.json.

Goals (issue 36): list <= 300 ms, a 200-iteration run's page <= 1 s, memory flat over 1,000 loads."""

from __future__ import annotations

import json
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from _common import write_results

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from tests.explorer import _runs  # noqa: E402
from tests.explorer._server import serving  # noqa: E402

from agentfootprint import Agent  # noqa: E402
from agentfootprint._flagship import QUESTION, refunds_agent  # noqa: E402
from agentfootprint.explain import Recording, recording_of  # noqa: E402
from agentfootprint.explorer import explorer_app  # noqa: E402
from agentfootprint.providers import LLMRequest, mock  # noqa: E402
from agentfootprint.stores.recordings import SQLiteRecordingStore  # noqa: E402
from agentfootprint.tools import define_tool  # noqa: E402

RUNS = 10_000
LIST_GOAL_MS = 300.0
PAGE_GOAL_MS = 1000.0
LOADS = 1000
AGENTS = [f"agent-{i:02d}" for i in range(12)]
WORDS = ["refund", "invoice", "shipping", "warranty", "APPROVED", "DECLINED", "order", "late", "VIP", "policy"]


def long_run(iterations: int) -> Recording:
    """A run that calls a tool ``iterations - 1`` times before answering (one model call per iteration)."""

    def respond(req: LLMRequest) -> Any:
        calls = sum(1 for m in req.messages if m.role == "tool")
        if calls < iterations - 1:
            return {"tool_calls": [{"id": f"c{calls}", "name": "step", "args": {"n": calls}}]}
        return f"done after {calls} steps"

    step = define_tool(
        name="step",
        description="One step of a long task.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        execute=lambda args, ctx: f"step {args['n']} ok",
    )
    agent = (
        Agent.create(provider=mock(respond=respond), model="m", name="long", max_iterations=iterations + 1)
        .system("Work through the steps.")
        .tool(step)
        .build()
    )
    return recording_of(agent.run_sync("Do the long task"))


def variant(base: Recording, rng: random.Random, i: int) -> tuple[str, dict[str, Any]]:
    """A generated run: ``base`` under a new id with a random question, sometimes failed."""
    raw = json.loads(base.model_dump_json())
    snap = raw["snapshot"]
    snap["run_id"] = f"run-{i:05d}-{rng.randrange(16**6):06x}"
    snap["state"]["user_message"] = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) + f" #{i}"
    if rng.random() < 0.05:
        snap["commit_log"][-1]["failed"] = True
        snap["commit_log"][-1]["error"] = "RuntimeError"
    raw["agent"] = rng.choice(AGENTS)
    return snap["run_id"], raw


def build_store(path: Path, bases: list[Recording], *, summaries: bool, seed: int) -> list[str]:
    rng = random.Random(seed)
    store = SQLiteRecordingStore(path)
    ids: list[str] = []
    now = time.time()
    try:
        for i in range(RUNS):
            run_id, raw = variant(rng.choice(bases), rng, i)
            state = raw["snapshot"]["state"]
            store.put(
                run_id,
                json.dumps(raw, separators=(",", ":")),
                agent=raw["agent"],
                created_at=now - rng.uniform(0, 90 * 86_400),
                question=str(state.get("user_message") or "") if summaries else "",
                answer=str(state.get("answer") or "") if summaries else "",
            )
            ids.append(run_id)
    finally:
        store.close()
    return ids


def get(url: str) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as res:
        body = res.read()
    return (time.perf_counter() - t0) * 1000.0, body


def median_ms(url: str, repeat: int = 7) -> float:
    get(url)
    return round(statistics.median(get(url)[0] for _ in range(repeat)), 2)


def listing(base: str) -> dict[str, float]:
    q = urllib.parse.urlencode
    cases = {
        "first_page": "/api/runs",
        "deep_page": "/api/runs?" + q({"offset": RUNS - 50}),
        "search_word": "/api/runs?" + q({"q": "warranty"}),
        "search_rare": "/api/runs?" + q({"q": "#9999"}),
        "agent": "/api/runs?" + q({"agent": AGENTS[3]}),
        "date_window": "/api/runs?" + q({"since": time.time() - 7 * 86_400}),
        "has_error": "/api/runs?" + q({"failed": "true"}),
        "has_pause": "/api/runs?" + q({"paused": "true"}),
        "no_error_no_pause": "/api/runs?" + q({"failed": "false", "paused": "false"}),
        "search_and_error": "/api/runs?" + q({"q": "APPROVED", "failed": "true"}),
    }
    return {name: median_ms(base + path) for name, path in cases.items()}


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def browser_page_ms(base: str, run_id: str) -> dict[str, float] | None:
    """The run page in headless Chromium, median of 5: until question, stages and calls are on screen, and until
    every source's chain is; None without Chromium."""
    if shutil.which("/usr/bin/chromium") is None:
        return None
    from playwright.sync_api import sync_playwright

    shown, traced = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page()
        page.set_default_timeout(60_000)
        for _ in range(6):
            page.goto("about:blank")
            t0 = time.perf_counter()
            page.goto(f"{base}/#/run/{run_id}")
            page.locator("#steps li").last.wait_for()
            shown.append((time.perf_counter() - t0) * 1000.0)
            page.locator("#sources").wait_for()
            traced.append((time.perf_counter() - t0) * 1000.0)
        browser.close()
    return {
        "page_shown": round(statistics.median(shown[1:]), 2),
        "sources_traced": round(statistics.median(traced[1:]), 2),
    }


def main() -> None:
    bases = [_runs.wrong(), _runs.fixed(), _runs.paused(), recording_of(refunds_agent().run_sync(QUESTION))]
    long = long_run(200)
    print("runs made", flush=True)
    results: dict[str, Any] = {"runs": RUNS, "goals_ms": {"list": LIST_GOAL_MS, "run_page": PAGE_GOAL_MS}}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {}
        for name, summaries in (("with_summaries", True), ("without_summaries", False)):
            path = Path(tmp) / f"{name}.sqlite"
            t0 = time.perf_counter()
            ids = build_store(path, bases, summaries=summaries, seed=7)
            stores[name] = (path, ids)
            results.setdefault("store_build_s", {})[name] = round(time.perf_counter() - t0, 1)
            results.setdefault("store_mb", {})[name] = round(path.stat().st_size / 1e6, 1)
            print(f"store {name} built", flush=True)
        path, ids = stores["with_summaries"]
        store = SQLiteRecordingStore(path)
        store.put(long.snapshot.run_id, long.model_dump_json(), agent="long", question="Do the long task")
        store.close()
        results["long_run"] = {
            "iterations": 200,
            "commits": len(long.snapshot.commit_log),
            "body_kb": round(len(long.model_dump_json()) / 1024, 1),
        }
        for name, (store_path, _) in stores.items():
            t0 = time.perf_counter()
            with serving(explorer_app(store_path)) as base:
                get(f"{base}/api/runs")
                cold = round((time.perf_counter() - t0) * 1000.0, 1)
                results.setdefault("cold_first_page_ms", {})[name] = cold  # server start + mirroring the store
                results.setdefault("list_ms", {})[name] = listing(base)
            print(f"listing {name} done", flush=True)
        with serving(explorer_app(path)) as base:
            long_url = f"{base}/api/runs/{long.snapshot.run_id}"
            results["run_page_ms"] = {
                "api_200_iterations_page": median_ms(long_url + "?sources=false", repeat=5),
                "api_200_iterations_backtrack": median_ms(long_url + "/backtrack", repeat=3),
                "api_200_iterations_everything": median_ms(long_url, repeat=3),
                "api_flagship": median_ms(f"{base}/api/runs/{ids[0]}"),
                "browser_200_iterations": browser_page_ms(base, long.snapshot.run_id),
            }
            print("run page done", flush=True)
            rng = random.Random(3)
            marks: dict[int, int] = {}
            for n in range(1, LOADS + 1):
                get(f"{base}/")
                get(f"{base}/api/runs?offset={rng.randrange(0, RUNS, 50)}")
                get(f"{base}/api/runs/{rng.choice(ids)}")
                if n in (100, 250, 500, 750, 1000):
                    marks[n] = rss_kb()
            growth = (marks[1000] - marks[100]) / marks[100]
            results["memory"] = {
                "loads": LOADS,
                "rss_kb_after": marks,
                "growth_100_to_1000": round(growth, 4),
                "flat": growth < 0.05,
            }
    worst_list = max(results["list_ms"]["with_summaries"].values())
    results["verdict"] = {
        "list_first_page_ok": results["list_ms"]["with_summaries"]["first_page"] <= LIST_GOAL_MS,
        "list_every_filter_ok": worst_list <= LIST_GOAL_MS,
        "list_worst_ms": worst_list,
        "list_worst_without_summaries_ms": max(results["list_ms"]["without_summaries"].values()),
        "run_page_ok": results["run_page_ms"]["api_200_iterations_page"] <= PAGE_GOAL_MS,
        "sources_within_goal": results["run_page_ms"]["api_200_iterations_backtrack"] <= PAGE_GOAL_MS,
        "memory_flat": results["memory"]["flat"],
    }
    out = write_results("explorer", results)
    print(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
