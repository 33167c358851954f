"""The why explorer under load: the run list of a 10,000-run SQLite store (first page, deep page, search, flags;
with and without the summary columns) and of the same runs in PostgreSQL, a 200-iteration run's page (API and
rendered in Chromium), and the server's memory over 1,000 page loads (the RSS of ``agentfootprint ui`` at load 100
against load 1,000, and the live Python heap a load leaves behind, by tracemalloc). Writes results/explorer.json.

Goals (issue 36): list <= 300 ms, a 200-iteration run's page <= 1 s, memory flat over 1,000 loads.

``python bench/explorer.py --run-page`` measures only the 200-iteration run's page (served from a store holding just
that run) and updates those figures in results/explorer.json, keeping the others."""

from __future__ import annotations

import gc
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from _common import write_results

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from tests._live import free_port  # noqa: E402
from tests._postgres import throwaway_postgres  # noqa: E402
from tests.explorer import _runs  # noqa: E402
from tests.explorer._server import serving  # noqa: E402

from agentfootprint._flagship import QUESTION, refunds_agent  # noqa: E402
from agentfootprint.explain import Recording, recording_of  # noqa: E402
from agentfootprint.explorer import explorer_app  # noqa: E402
from agentfootprint.stores import open_store  # noqa: E402
from agentfootprint.stores.recordings import SQLiteRecordingStore  # noqa: E402

RUNS = 10_000
LIST_GOAL_MS = 300.0
PAGE_GOAL_MS = 1000.0
LOADS = 1000
MARKS = (100, 250, 500, 750, 1000)
FLAT = 0.05
ITERATIONS = 200
"""Memory is flat when RSS grows by less than this share from load 100 to load 1,000 ..."""
HEAP_PER_LOAD = 1024.0
"""... and a page load leaves less than this many bytes of live Python heap behind (a run's view is ~100 KB)."""
PG_BIN = Path("/usr/lib/postgresql/15/bin")
AGENTS = [f"agent-{i:02d}" for i in range(12)]
WORDS = ["refund", "invoice", "shipping", "warranty", "APPROVED", "DECLINED", "order", "late", "VIP", "policy"]


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


def generated(bases: list[Recording], *, seed: int) -> list[tuple[str, dict[str, Any], float]]:
    """The store's runs: ``RUNS`` variants of ``bases`` made over the last 90 days."""
    rng = random.Random(seed)
    now = time.time()
    return [(*variant(rng.choice(bases), rng, i), now - rng.uniform(0, 90 * 86_400)) for i in range(RUNS)]


def fill(store: Any, made: list[tuple[str, dict[str, Any], float]], *, summaries: bool) -> list[str]:
    """Put the runs into ``store``, with or without the question and answer columns."""
    for run_id, raw, when in made:
        state = raw["snapshot"]["state"]
        store.put(
            run_id,
            json.dumps(raw, separators=(",", ":")),
            agent=raw["agent"],
            created_at=when,
            question=str(state.get("user_message") or "") if summaries else "",
            answer=str(state.get("answer") or "") if summaries else "",
        )
    return [run_id for run_id, _, _ in made]


def build_store(path: Path, bases: list[Recording], *, summaries: bool, seed: int) -> list[str]:
    store = SQLiteRecordingStore(path)
    try:
        return fill(store, generated(bases, seed=seed), summaries=summaries)
    finally:
        store.close()


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


def rss_kb(pid: int | str = "self") -> int:
    """Resident memory of process ``pid`` in KB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def page_loads(base: str, ids: list[str], at_mark: Any) -> None:
    """``LOADS`` page loads (each the page, a listing page and a run); ``at_mark(n)`` after each load in MARKS."""
    rng = random.Random(3)
    for n in range(1, LOADS + 1):
        get(f"{base}/")
        get(f"{base}/api/runs?offset={rng.randrange(0, RUNS, 50)}")
        get(f"{base}/api/runs/{rng.choice(ids)}")
        if n in MARKS:
            at_mark(n)


def server_rss(path: Path, ids: list[str]) -> dict[str, Any]:
    """The RSS of ``agentfootprint ui PATH`` (a process of its own) over ``LOADS`` page loads."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cli = [sys.executable, "-m", "agentfootprint", "ui", str(path), "--port", str(port)]
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                get(f"{base}/api/info")
                break
            except OSError:
                time.sleep(0.1)
        rss: dict[int, int] = {}
        page_loads(base, ids, lambda n: rss.__setitem__(n, rss_kb(proc.pid)))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"rss_kb_after": rss, "rss_ratio_1000_to_100": round(rss[LOADS] / rss[MARKS[0]], 4)}


def heap_growth(base: str, ids: list[str]) -> dict[str, Any]:
    """The live Python heap tracemalloc sees (after a collection) over ``LOADS`` loads of a server in this
    process, traced from the first load: what one load leaves behind, in bytes."""
    heap: dict[int, int] = {}

    def mark(n: int) -> None:
        gc.collect()
        heap[n] = tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    try:
        page_loads(base, ids, mark)
    finally:
        tracemalloc.stop()
    return {
        "heap_kb_after": {n: round(v / 1024, 1) for n, v in heap.items()},
        "heap_bytes_per_load_100_to_1000": round((heap[LOADS] - heap[MARKS[0]]) / (LOADS - MARKS[0]), 1),
        "heap_bytes_per_load_500_to_1000": round((heap[LOADS] - heap[500]) / (LOADS - 500), 1),
    }


def memory_over_loads(path: Path, base: str, ids: list[str]) -> dict[str, Any]:
    """Flat: the server's RSS at load 1,000 within 5 % of load 100, and under 1 KB of Python heap kept per load."""
    found = {"loads": LOADS, **server_rss(path, ids), **heap_growth(base, ids)}
    found["flat"] = (
        found["rss_ratio_1000_to_100"] < 1 + FLAT and found["heap_bytes_per_load_100_to_1000"] < HEAP_PER_LOAD
    )
    return found


def postgres_listing(bases: list[Recording]) -> dict[str, Any] | None:
    """The same 10,000 runs in PostgreSQL (stored without summaries: the store's generated columns read them from
    each body): the first search (adding those columns), then every listing; None without a server."""
    if not (PG_BIN / "initdb").exists():
        return None
    with throwaway_postgres(PG_BIN, "PostgreSQL") as url:
        family = open_store(url)
        t0 = time.perf_counter()
        fill(family.recordings, generated(bases, seed=7), summaries=False)
        built = round(time.perf_counter() - t0, 1)
        family.close()
        t0 = time.perf_counter()
        app = explorer_app(url)  # its first search adds the listing columns (one rewrite of the table)
        columns = round(time.perf_counter() - t0, 1)
        with serving(app) as base:
            listed = listing(base)
    return {"store_build_s": built, "listing_columns_added_s": columns, "list_ms": listed}


MARKS_JS = """
window.__marks = {};
const mark = (name) => {
  window.__marks[name] = performance.now();
  requestAnimationFrame(() => setTimeout(() => { window.__marks[name + "_painted"] = performance.now(); }, 0));
};
const has = (sel) => document.querySelector(sel) !== null;
const SHOWN = ["#question", "#answer", "#flowchart", "#steps li", "#timeline tbody tr", "#narrative summary"];
new MutationObserver(() => {
  const m = window.__marks;
  if (!("shown" in m) && SHOWN.every(has)) mark("shown");
  if (!("sources" in m) && has("#sources")) mark("sources");
  if (!("everything" in m) && document.querySelectorAll("[data-complete]").length === 3) mark("everything");
}).observe(document, { subtree: true, childList: true, attributes: true });
"""
"""Times the run page marks itself (ms from the start of the navigation): ``shown`` when question, answer,
flowchart, the first steps and calls and the narrative are in the page, ``sources`` when every source's chain
is, ``everything`` when the last step, call and source are drawn; each ``_painted`` at the frame after."""


def browser_page_ms(base: str, run_id: str) -> dict[str, Any] | None:
    """The run page in headless Chromium, median of 5 loads after a first: the page's own marks (from the start of
    the navigation to the frame that shows it), and the wall time Playwright sees (its polling included); None
    without Chromium."""
    if shutil.which("/usr/bin/chromium") is None:
        return None
    from playwright.sync_api import sync_playwright

    marks: list[dict[str, float]] = []
    wall: dict[str, list[float]] = {"page_shown": [], "sources_traced": []}
    done = "() => 'everything_painted' in window.__marks && 'sources_painted' in window.__marks"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(60_000)
        page.add_init_script(MARKS_JS)
        for _ in range(6):
            page.goto("about:blank")
            t0 = time.perf_counter()
            page.goto(f"{base}/#/run/{run_id}")
            page.locator("#timeline tbody tr").first.wait_for()
            wall["page_shown"].append((time.perf_counter() - t0) * 1000.0)
            page.locator("#sources .source").first.wait_for()
            wall["sources_traced"].append((time.perf_counter() - t0) * 1000.0)
            while not page.evaluate(done):  # the page's CSP refuses wait_for_function's eval
                time.sleep(0.05)
            marks.append(page.evaluate("() => window.__marks"))
        browser.close()

    def median(name: str) -> float:
        return round(statistics.median(m[name] for m in marks[1:]), 1)

    return {
        "page_shown": median("shown_painted"),
        "sources_traced": median("sources_painted"),
        "everything_drawn": median("everything_painted"),
        "wall_ms_seen_by_playwright": {k: round(statistics.median(v[1:]), 1) for k, v in wall.items()},
    }


def run_page(base: str, long: Recording, flagship_id: str | None) -> dict[str, Any]:
    """The 200-iteration run's page: the JSON the page asks for (and with narrative, with everything), its
    sources, and the page in Chromium."""
    url = f"{base}/api/runs/{long.snapshot.run_id}"
    page_url = url + "?sources=false&narrative=false"
    found: dict[str, Any] = {
        "api_200_iterations_page": median_ms(page_url, repeat=5),
        "api_200_iterations_page_kb": round(len(get(page_url)[1]) / 1024, 1),
        "api_200_iterations_backtrack": median_ms(url + "/backtrack", repeat=3),
        "api_200_iterations_with_narrative": median_ms(url + "?sources=false", repeat=3),
        "api_200_iterations_everything": median_ms(url, repeat=3),
    }
    if flagship_id is not None:
        found["api_flagship"] = median_ms(f"{base}/api/runs/{flagship_id}")
    found["browser_200_iterations"] = browser_page_ms(base, long.snapshot.run_id)
    found["load_average_1min"] = round(os.getloadavg()[0], 1)  # a shared machine: how busy it was
    return found


def page_verdict(page: dict[str, Any]) -> dict[str, bool]:
    """Whether the run's page is within the goal: its JSON, and in Chromium the page and its sources' chains."""
    shown = page["browser_200_iterations"]
    return {
        "run_page_ok": page["api_200_iterations_page"] <= PAGE_GOAL_MS
        and (shown is None or shown["page_shown"] <= PAGE_GOAL_MS),
        "sources_within_goal": page["api_200_iterations_backtrack"] <= PAGE_GOAL_MS
        and (shown is None or shown["sources_traced"] <= PAGE_GOAL_MS),
    }


def long_run_figures(long: Recording) -> dict[str, Any]:
    return {
        "iterations": ITERATIONS,
        "commits": len(long.snapshot.commit_log),
        "body_kb": round(len(long.model_dump_json()) / 1024, 1),
    }


def only_run_page() -> None:
    """Measure the run page alone (a store holding just the long run) and update those figures in the results."""
    long = _runs.long_run(ITERATIONS)
    out = Path(__file__).parent / "results" / "explorer.json"
    results = json.loads(out.read_text(), object_pairs_hook=lambda kv: {int(k) if k.isdigit() else k: v for k, v in kv})
    for key in ("benchmark", "python", "machine"):
        results.pop(key, None)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long.sqlite"
        store = SQLiteRecordingStore(path)
        store.put(long.snapshot.run_id, long.model_dump_json(), agent="long", question="Do the long task")
        store.close()
        with serving(explorer_app(path)) as base:
            page = run_page(base, long, None)
    page["api_flagship"] = results.get("run_page_ms", {}).get("api_flagship")
    results["run_page_ms"] = page
    results["long_run"] = long_run_figures(long)
    results["run_page_when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results["verdict"].update(page_verdict(page))
    write_results("explorer", results)
    print(json.dumps({"run_page_ms": page, "verdict": results["verdict"]}, indent=1))


def main() -> None:
    bases = [_runs.wrong(), _runs.fixed(), _runs.paused(), recording_of(refunds_agent().run_sync(QUESTION))]
    long = _runs.long_run(ITERATIONS)
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
        results["long_run"] = long_run_figures(long)
        for name, (store_path, _) in stores.items():
            t0 = time.perf_counter()
            with serving(explorer_app(store_path)) as base:
                get(f"{base}/api/runs")
                cold = round((time.perf_counter() - t0) * 1000.0, 1)
                results.setdefault("cold_first_page_ms", {})[name] = cold  # server start + mirroring the store
                results.setdefault("list_ms", {})[name] = listing(base)
            print(f"listing {name} done", flush=True)
        with serving(explorer_app(path)) as base:
            get(f"{base}/api/runs")  # the store mirrored first: its mirroring must not share the page's time
            results["run_page_ms"] = run_page(base, long, ids[0])
            results["run_page_when"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            print("run page done", flush=True)
            results["memory"] = memory_over_loads(path, base, ids)
            print("memory done", flush=True)
    results["postgres"] = postgres_listing(bases)
    print("postgres done", flush=True)
    worst_list = max(results["list_ms"]["with_summaries"].values())
    results["verdict"] = {
        "list_first_page_ok": results["list_ms"]["with_summaries"]["first_page"] <= LIST_GOAL_MS,
        "list_every_filter_ok": worst_list <= LIST_GOAL_MS,
        "list_worst_ms": worst_list,
        "list_worst_without_summaries_ms": max(results["list_ms"]["without_summaries"].values()),
        **page_verdict(results["run_page_ms"]),
        "memory_flat": results["memory"]["flat"],
        "list_worst_postgres_ms": max(results["postgres"]["list_ms"].values()) if results["postgres"] else None,
    }
    out = write_results("explorer", results)
    print(json.dumps(results, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    if "--run-page" in sys.argv:
        only_run_page()
    else:
        main()
