"""Long runs: retrieval latency at 10k and 100k chunks (SQLite + sqlite-vec, PostgreSQL + pgvector), memory recall
of planted facts across 500 turns, and a 500-turn conversation under compaction. Writes results/long_runs.json."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _common import write_results

from agentfootprint import Agent
from agentfootprint.context import define_memory
from agentfootprint.context.embedders import HashingEmbedder, minilm
from agentfootprint.context.memory_strategies import last_turns, semantic_top_k
from agentfootprint.context.sqlite_vectors import SQLiteVectorStore
from agentfootprint.context.vectors import StoredItem, VectorStore, fuse
from agentfootprint.context.window import SUMMARY_PREFIX
from agentfootprint.explain import backtrack
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, Message, mock

ROOT = Path(__file__).parents[1]
DIM = 384
QUERIES = 40


def _postgres() -> Any:
    """A throwaway PostgreSQL with pgvector (the server the set-up installs), or the reason there is none."""
    sys.path.insert(0, str(ROOT))
    from tests._postgres import throwaway_postgres
    from tests.context.conftest import pgvector_bin

    bin_dir = pgvector_bin()
    if bin_dir is None:
        return None, "PostgreSQL with pgvector not installed (make test-setup installs it)"
    return throwaway_postgres(bin_dir, "PostgreSQL with pgvector"), None


VOCABULARY = [f"w{n}" for n in range(5000)]
CLUSTERS = 256


def _corpus(n: int, rng: random.Random) -> tuple[list[StoredItem], Any]:
    """``n`` chunks like a real corpus: Zipf-distributed words from a 5,000-word vocabulary, and unit vectors in
    topic clusters (uniformly random vectors are every ANN index's worst case and no embedder's output)."""
    import numpy as np

    gen = np.random.default_rng(7)
    centers = gen.standard_normal((CLUSTERS, DIM)).astype("float32")
    vectors = centers[gen.integers(0, CLUSTERS, n)] + 0.35 * gen.standard_normal((n, DIM)).astype("float32")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    weights = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]
    items = [
        StoredItem(
            id=f"doc{i // 10}.md#{i % 10}",
            text=" ".join(rng.choices(VOCABULARY, weights=weights, k=60)) + f" ticket {i}",
            vector=tuple(float(x) for x in vectors[i]),
            metadata={"document_id": f"doc{i // 10}.md"},
        )
        for i in range(n)
    ]
    return items, vectors


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
    }


def _measure(store: VectorStore, items: list[StoredItem], vectors: Any, rng: random.Random) -> dict[str, Any]:
    import numpy as np

    t0 = time.perf_counter()
    for start in range(0, len(items), 1000):
        store.upsert("bench", items[start : start + 1000])
    load_s = time.perf_counter() - t0
    picks = [rng.randrange(len(items)) for _ in range(QUERIES)]
    near, key, hyb = [], [], []
    recall_hits = top1 = 0
    for p in picks:
        query = vectors[p] + np.random.default_rng(p).standard_normal(DIM).astype("float32") * 0.02
        t = time.perf_counter()
        found = store.nearest("bench", query.tolist(), 5)
        near.append(time.perf_counter() - t)
        exact = set(np.argsort(-(vectors @ query))[:5].tolist())
        got = [int(i.text.rsplit(" ", 1)[1]) for i, _ in found]
        recall_hits += len(set(got) & exact)
        top1 += bool(got) and got[0] == p
        words = " ".join(rng.choice(VOCABULARY[50:2000]) for _ in range(3))
        t = time.perf_counter()
        store.keyword("bench", words, 5)
        key.append(time.perf_counter() - t)
        t = time.perf_counter()
        fuse([store.nearest("bench", query.tolist(), 20), store.keyword("bench", words, 20)], 5)
        hyb.append(time.perf_counter() - t)
    return {
        "load_seconds": round(load_s, 2),
        "vector_top5": _ms(near),
        "keyword_top5": _ms(key),
        "hybrid_top5": _ms(hyb),
        "vector_recall_at_5_vs_exact": round(recall_hits / (5 * QUERIES), 3),
        "vector_top1_is_the_query_chunk": round(top1 / QUERIES, 3),
    }


def retrieval() -> dict[str, Any]:
    rng = random.Random(11)
    out: dict[str, Any] = {"dimension": DIM, "queries": QUERIES}
    context, reason = _postgres()
    with ExitStack() as stack:
        dsn = stack.enter_context(context) if context is not None else None
        for n in (10_000, 100_000):
            items, vectors = _corpus(n, rng)
            row: dict[str, Any] = {}
            with tempfile.TemporaryDirectory() as tmp:
                sqlite = SQLiteVectorStore(Path(tmp) / "bench.db")
                row["sqlite_vec"] = _measure(sqlite, items, vectors, rng)
                sqlite.close()
            if dsn is not None:
                from agentfootprint.context.postgres_vectors import PostgresVectorStore

                pg = PostgresVectorStore(dsn, dimension=DIM, table=f"bench_{n}")
                row["pgvector_hnsw"] = _measure(pg, items, vectors, rng)
                pg.close()
            else:
                row["pgvector_hnsw"] = {"skipped": reason}
            out[f"{n}_chunks"] = row
            print(f"retrieval {n}: {json.dumps(row)}", flush=True)
    return out


FACTS = [
    ("My locker number is 4417.", "What is my locker number?", "4417"),
    ("My dentist appointment is on the ninth of March.", "When is my dentist appointment?", "ninth of March"),
    ("The wifi password at the cabin is bluefinch22.", "What is the wifi password at the cabin?", "bluefinch22"),
    ("My manager's name is Priya Raman.", "What is my manager's name?", "Priya Raman"),
    ("I parked the car on level B3.", "Where did I park the car?", "B3"),
]
FILLER = [
    "Today the team reviewed the quarterly roadmap and agreed on two priorities.",
    "The weather turned cold in the afternoon and it started to rain.",
    "We discussed the release notes for the mobile app and fixed typos.",
    "Lunch was a vegetable curry from the place around the corner.",
    "The build pipeline was slow again so we added more caching.",
]


async def memory_recall(strategy_name: str, strategy: Any) -> dict[str, Any]:
    seen: list[str] = []

    def respond(request: LLMRequest) -> str:
        seen.append(request.system_prompt)
        return "Noted."

    mem = define_memory(id="mem", strategy=strategy)
    agent = Agent.create(provider=mock(respond=respond), model="m").memory(mem).build()
    who = Identity(tenant="bench", principal="user")
    plant_at = {3: 0, 90: 1, 210: 2, 330: 3, 450: 4}
    t0 = time.perf_counter()
    for turn in range(500):
        fact = plant_at.get(turn)
        text = FACTS[fact][0] if fact is not None else f"{FILLER[turn % len(FILLER)]} (note {turn})"
        await agent.run(text, identity=who)
    write_s = time.perf_counter() - t0
    hits, latencies = 0, []
    for _, question, answer in FACTS:
        t = time.perf_counter()
        await agent.run(question, identity=who)
        latencies.append(time.perf_counter() - t)
        hits += answer in seen[-1]
    return {
        "strategy": strategy_name,
        "recalled": f"{hits}/{len(FACTS)}",
        "seconds_for_500_turns": round(write_s, 2),
        "question_turn": _ms(latencies),
    }


def keep_facts(messages: list[Message]) -> str:
    carried = [m.content.split("\n\n", 1)[1] for m in messages if m.content.startswith(SUMMARY_PREFIX)]
    facts = [m.content for m in messages if "code" in m.content and not m.content.startswith(SUMMARY_PREFIX)]
    return " ".join(carried + facts)[:300] or f"{len(messages)} messages of small talk."


async def compaction() -> dict[str, Any]:
    def respond(request: LLMRequest) -> str:
        if request.messages[-1].content.endswith("vault code?"):
            found = re.search(r"vault code is (\d+)", " ".join(m.content for m in request.messages))
            return f"The vault code is {found.group(1) if found else 'unknown'}."
        return "Noted, thank you for telling me that detail about the weather today."

    threshold = 300
    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .compaction(threshold_tokens=threshold, summarizer=keep_facts, keep_recent_turns=3)
        .build()
    )
    sizes = []
    t0 = time.perf_counter()
    sizes.append((await agent.run("Remember: the vault code is 7731 and keep it safe please.")).usage.input_tokens)
    for i in range(498):
        sizes.append((await agent.follow_up(f"Turn {i}: it is sunny and warm with a light breeze.")).usage.input_tokens)
    final = await agent.follow_up("What is the vault code?")
    elapsed = time.perf_counter() - t0
    t = time.perf_counter()
    bt = backtrack(agent)
    bt_s = time.perf_counter() - t
    reached = any(s.trigger == "folded" and "7731" in s.text for s in bt.sources)
    cp = agent.checkpoint() or {}
    return {
        "turns": 500,
        "threshold_tokens": threshold,
        "max_request_tokens": max([*sizes, final.usage.input_tokens]),
        "answer": final.answer,
        "ms_per_turn": round(elapsed / 500 * 1000, 2),
        "folds_carried": len(cp.get("folded", [])),
        "history_messages_sent": len(cp.get("history", [])),
        "backtrack_reaches_turn_one": reached,
        "backtrack_ms": round(bt_s * 1000, 1),
        "backtrack_sources": len(bt.sources),
    }


SECTIONS = {"retrieval": "retrieval", "memory": "memory_recall_500_turns", "compaction": "compaction_500_turns"}


async def measure(section: str) -> Any:
    if section == "retrieval":
        return retrieval()
    if section == "memory":
        recall = [await memory_recall("last_turns(5)", last_turns(5))]
        hashing = semantic_top_k(embedder=HashingEmbedder(), k=4)
        recall.append(await memory_recall("semantic_top_k(hashing, k=4)", hashing))
        try:
            recall.append(await memory_recall("semantic_top_k(minilm, k=4)", semantic_top_k(embedder=minilm(), k=4)))
        except ImportError as exc:
            recall.append({"strategy": "semantic_top_k(minilm)", "skipped": type(exc).__name__})
        return recall
    return await compaction()


async def main(wanted: list[str]) -> None:
    """Every section, or only the named ones (``python bench/long_runs.py memory compaction``); a partial run keeps
    the other sections of the last results and says when and under what load each section was measured."""
    unknown = [w for w in wanted if w not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {unknown}; choose from {list(SECTIONS)}")
    sections = wanted or list(SECTIONS)
    path = ROOT / "bench" / "results" / "long_runs.json"
    previous = json.loads(path.read_text()) if wanted and path.exists() else {}
    results: dict[str, Any] = {key: previous[key] for key in (*SECTIONS.values(), "measured") if key in previous}
    measured = dict(results.get("measured") or {})
    for section in sections:
        results[SECTIONS[section]] = await measure(section)
        measured[section] = {
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_average_1m": round(os.getloadavg()[0], 1),
            "cpus": os.cpu_count(),
        }
        print(f"{section}: {results[SECTIONS[section]]}", flush=True)
    results["measured"] = measured
    print(write_results("long_runs", results))


if __name__ == "__main__":
    own = Path(sys.argv[0]).name == "long_runs.py"  # under bench/run_all.py every section runs
    asyncio.run(main(sys.argv[1:] if own else []))
