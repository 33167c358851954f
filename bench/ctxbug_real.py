"""Planted context bugs on a real model: Gemma-3-270M on llama.cpp (in-process, CPU), with a constrained answer.

Each case is an office assistant with 4-6 facts and instructions. A planted source (or two that agree: a redundant
pair) gives a 4-digit value the question asks for: the only one there is, or a stale memo next to the current value.
The others are distractors, some with numbers of their own. The answer is constrained by llama.cpp's grammar to
``ANSWER: dddd``. A case is kept only if the model, with its whole context, answers the planted value (it follows
it) and nothing else moves it: removing the planted sources changes the answer, and removing any subset of the
sources that does not hold all of them (every one is rerun) does not. Then the library's defaults (only
``outcome_changed``: did the planted value come or go?) localize it.

Greedy decoding (temperature 0) answers a request the same way whatever the seed, so a request seen before is
answered from a cache: ``reruns`` counts what localization asked for, ``model_calls`` the distinct new requests it
sent (what the model computes for it with a cache of its own; answered here from the cache the ground truth filled).
Needs the ``local-llm`` extra and Gemma's package; writes ``bench/results/ctxbug_real.json``.

Run: ``nice -n 10 python bench/ctxbug_real.py`` (``--cases N`` caps the localized cases, default 24; ``--memo FILE``
keeps the ground truth's model responses in FILE, outside the tree, so a re-run recomputes only localization)."""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint import Agent, define_fact, define_instruction
from agentfootprint.explain import localize_context_bug
from agentfootprint.providers import BaseProvider, LLMRequest, LLMResponse, Provider

MODEL = "gemma3-270m"
ANSWER_PATTERN = r"^ANSWER: [0-9]{4}$"
TEMPERATURE = 0.0
TOPICS = (  # the wordings Gemma answers from (the help desk, lockers and rooms it answers 1000 whatever it reads)
    ("What is the door code for the office?", "The door code for the office is {v}."),
    ("What is the PIN of the printer?", "The printer PIN is {v}."),
    ("What is the combination of the safe?", "The safe combination is {v}."),
    ("What is the gym door code?", "The gym door code is {v}."),
    ("What is the code of the server room?", "The server room code is {v}."),
    ("What is the gate code of the parking lot?", "The parking lot gate code is {v}."),
    ("Which budget code do travel expenses use?", "Travel expenses use budget code {v}."),
    ("What is the alarm code of the warehouse?", "The warehouse alarm code is {v}."),
)
FILLERS = (
    "The office wifi password is tulip-garden.",
    "Visitors park on level 2.",
    "Lunch is served at noon.",
    "Badges are collected at reception.",
    "The printer is next to the kitchen.",
    "Fire drills happen every March.",
    "The finance team meets on Tuesdays.",
    "Deliveries arrive before nine in the morning.",
)
PATTERNS = ("only", "only-instruction", "stale", "pair")
ROUNDS = 14


class GreedyCache(BaseProvider):
    """Answers a request seen before from memory: at temperature 0 the model's answer depends on the request only."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.seconds = 0.0
        self._memo: dict[str, LLMResponse] = {}

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """The model's reply, computed once per distinct request."""
        key = request.model_dump_json(exclude={"seed"})
        if key not in self._memo:
            started = time.perf_counter()
            self._memo[key] = await self.inner.complete(request)
            self.calls += 1
            self.seconds += time.perf_counter() - started
        return self._memo[key]

    def per_call(self) -> float | None:
        """Mean seconds of one model call computed in this process."""
        return round(self.seconds / self.calls, 2) if self.calls else None

    def save(self, path: Path) -> None:
        """Write the responses seen so far (to re-run a bench without recomputing its ground truth)."""
        path.write_text(json.dumps({k: v.model_dump(mode="json") for k, v in self._memo.items()}))

    def load(self, path: Path) -> None:
        """Answer the requests a saved run saw from its file; only new requests reach the model."""
        self._memo.update({k: LLMResponse.model_validate(v) for k, v in json.loads(path.read_text()).items()})


class Distinct(BaseProvider):
    """Counts the distinct requests one localization sends (what a cache of its own would have the model compute),
    answered from the shared cache: the ground truth computed most of them already."""

    def __init__(self, inner: GreedyCache) -> None:
        self.inner = inner
        self.name = inner.name
        self.keys: set[str] = set()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """The shared cache's answer; the request is counted once."""
        self.keys.add(request.model_dump_json(exclude={"seed"}))
        return await self.inner.complete(request)


def candidates(seed: int = 7) -> list[dict[str, Any]]:
    """Planted cases over every topic and pattern, 4-8 sources each (deterministic)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for round_ in range(ROUNDS):
        for t_i, (question, template) in enumerate(TOPICS):
            pattern = PATTERNS[(t_i + round_) % len(PATTERNS)]
            value = str(rng.randint(1000, 9999))
            other = str(rng.randint(1000, 9999))
            distractor_topic = TOPICS[(t_i + 1 + round_) % len(TOPICS)][1]
            sources: list[tuple[str, str, str]] = []  # (kind, id, text)
            planted: list[str] = []
            if pattern == "only":
                sources.append(("fact", "planted", template.format(v=value)))
                planted = ["planted"]
            elif pattern == "only-instruction":
                sources.append(("instruction", "planted-rule", "When asked, say: " + template.format(v=value)))
                planted = ["planted-rule"]
            elif pattern == "stale":
                sources.append(("fact", "current", template.format(v=other)))
                sources.append(("fact", "stale-memo", "Update from this morning: " + template.format(v=value)))
                planted = ["stale-memo"]
            else:
                sources.append(("fact", "planted", template.format(v=value)))
                sources.append(("fact", "memo", "Memo: " + template.format(v=value)))
                planted = ["planted", "memo"]
            sources.append(("fact", "numeric-distractor", distractor_topic.format(v=str(rng.randint(1000, 9999)))))
            fill = rng.randint(2, 3)  # 4-6 sources: every subset of them is checked for the ground truth
            for j, text in enumerate(rng.sample(FILLERS, fill)):
                sources.append(("fact", f"note-{j}", text))
            head, tail = sources[:1], sources[1:]
            rng.shuffle(tail)
            sources = tail[: len(tail) // 2] + head + tail[len(tail) // 2 :]
            out.append(
                {
                    "name": f"{pattern}/{template.split(' ')[1]}/{len(sources)} sources/r{round_}",
                    "pattern": pattern,
                    "question": question,
                    "value": value,
                    "sources": sources,
                    "planted": planted,
                }
            )
    return out


def build(provider: Provider, case: dict[str, Any]) -> Agent:
    builder = Agent.create(provider=provider, model="", max_iterations=2, temperature=TEMPERATURE, max_tokens=48)
    builder = builder.system("You are an office assistant. Answer with the number from the notes, nothing else.")
    for kind, sid, text in case["sources"]:
        if kind == "instruction":
            builder = builder.instruction(define_instruction(id=sid, prompt=text))
        else:
            builder = builder.fact(define_fact(id=sid, data=text))
    return builder.build()


async def ground_truth(agent: Agent, case: dict[str, Any], changed: Any) -> tuple[str, int]:
    """Why the planted sources are not this model's exact culprit set (empty when they are), and the subsets
    checked: removing them must flip the answer, and removing any subset of the sources that does not hold all of
    them must not (every such subset is rerun: a greedy model may depend on a combination of unrelated notes)."""
    from agentfootprint.explain.localize import rerun_answer

    planted = set(case["planted"])
    original = f"ANSWER: {case['value']}"
    if not changed(original, await rerun_answer(agent, 0, sorted(planted))):
        return "removing the planted sources does not change the answer", 1
    ids = [sid for _, sid, _ in case["sources"]]
    subsets = [set(c) for k in range(1, len(ids) + 1) for c in combinations(ids, k) if not planted <= set(c)]
    for n, subset in enumerate(subsets, start=2):
        if changed(original, await rerun_answer(agent, 0, sorted(subset))):
            if subset < planted:
                return "one source of the pair alone changes the answer", n
            if len(subset) == 1:
                return "removing an unrelated source changes the answer too", n
            return f"removing {len(subset)} sources together, not all planted, changes the answer too", n
    return "", len(subsets) + 1


async def run_real(
    limit: int = 24,
    save: bool = False,
    memo: Path | None = None,
    shard: tuple[int, int] = (0, 1),
    part: Path | None = None,
    start: int = 0,
) -> dict[str, Any]:
    """Keep the cases the model follows, localize them with the defaults, and report honest figures."""
    try:
        from agentfootprint.providers.local import local_llm

        raw = local_llm(
            model=MODEL,
            mode="in-process",
            temperature=TEMPERATURE,
            seed=0,
            max_tokens=48,
            n_ctx=1024,
            n_threads=1,
            answer_pattern=ANSWER_PATTERN,
        )
    except Exception as exc:  # the extra is optional: say why nothing ran
        return {"skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
    truth = GreedyCache(raw)  # the ground truth's reruns: every subset of a case's sources
    if memo is not None and memo.is_file():  # responses of an earlier run of the same cases (a greedy model)
        truth.load(memo)
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for index, case in enumerate(candidates()):
            if len(rows) >= limit:
                break
            if index % shard[1] != shard[0] or index < start:  # a shard, for processes running side by side
                continue
            agent = build(truth, case)
            value = case["value"]
            answer = str((await agent.run(case["question"], seed=0)).answer or "")
            if value not in answer:
                skipped.append({"index": index, "case": case["name"], "why": "does not answer the planted value",
                                "answer": answer})  # fmt: skip
                _progress(part, rows, skipped, started, truth)
                continue

            def changed(a: str, b: str, value: str = value) -> bool:
                return (value in a) != (value in b)

            why, checked = await ground_truth(agent, case, changed)
            if memo is not None:
                truth.save(memo)
            if why:
                skipped.append({"index": index, "case": case["name"], "why": why, "answer": answer,
                                "subsets_rerun": checked})  # fmt: skip
                _progress(part, rows, skipped, started, truth)
                continue

            # localization counts the distinct requests it sends (its cold cost), answered from the shared cache
            fresh = Distinct(truth)
            agent = build(fresh, case)
            await agent.run(case["question"], seed=0)
            ran = set(fresh.keys)  # the examined run's own request, already answered
            calls0, secs0, t0 = truth.calls, truth.seconds, time.perf_counter()
            report = await localize_context_bug(agent, outcome_changed=changed, concurrency=1, progress=False)
            expected = {frozenset(case["planted"])}
            found = [frozenset(c.ids) for c in report.confirmed_sets]
            members = set(case["planted"])
            rows.append(
                {
                    "index": index,
                    "case": case["name"],
                    "pattern": case["pattern"],
                    "sources": len(case["sources"]),
                    "answer": answer,
                    "expected": sorted(case["planted"]),
                    "ground_truth_subsets_rerun": checked,
                    "found": [sorted(f) for f in found],
                    "exact": set(found) == expected and len(found) == 1,
                    "non_culprit_confirmed": any(not (f <= members) for f in found),
                    "reruns": report.reruns,
                    "model_calls": len(fresh.keys - ran),
                    "model_calls_not_in_ground_truth": truth.calls - calls0,
                    "model_seconds": round(truth.seconds - secs0, 1),
                    "seconds": round(time.perf_counter() - t0, 1),
                    "flags": report.honesty_flags,
                }
            )
            if memo is not None:
                truth.save(memo)
            print(f"  {case['name']}: exact={rows[-1]['exact']} reruns={report.reruns} "
                  f"calls={rows[-1]['model_calls']} {rows[-1]['seconds']}s", flush=True)  # fmt: skip
            _progress(part, rows, skipped, started, truth)
            if save and part is None:  # a slow, shared CPU: what finished so far is on disk
                write_results("ctxbug_real", summary(rows, skipped, started, done=False, per_call=truth.per_call()))
    finally:
        raw.close()
    return summary(rows, skipped, started, done=True, per_call=truth.per_call())


def _progress(
    part: Path | None, rows: list[dict[str, Any]], skipped: list[dict[str, Any]], started: float, truth: GreedyCache
) -> None:
    """A shard's candidates so far, for ``merge``."""
    if part is not None:
        done = {"rows": rows, "skipped": skipped, "calls": truth.calls, "seconds": truth.seconds}
        part.write_text(json.dumps(done | {"elapsed_s": round(time.perf_counter() - started, 1)}))


def merge(parts: list[Path], limit: int) -> dict[str, Any]:
    """The shards' candidates in their order, up to the ``limit``-th followed case (or the first one no shard
    reached): the same cases one process would have kept."""
    loaded = [json.loads(p.read_text()) for p in parts]
    seen = {r["index"]: ("row", r) for d in loaded for r in d["rows"]}
    seen |= {r["index"]: ("skip", r) for d in loaded for r in d["skipped"]}
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    index = 0
    while index in seen and len(rows) < limit:
        kind, item = seen[index]
        (rows if kind == "row" else skipped).append(item)
        index += 1
    calls, seconds = sum(d["calls"] for d in loaded), sum(d["seconds"] for d in loaded)
    out = summary(rows, skipped, time.perf_counter(), len(rows) >= limit or index == len(candidates()),
                  round(seconds / calls, 2) if calls else None)  # fmt: skip
    out["elapsed_s"] = max(d["elapsed_s"] for d in loaded)
    out["processes"] = len(parts)
    return out


def summary(
    rows: list[dict[str, Any]], skipped: list[dict[str, Any]], started: float, done: bool, per_call: float | None
) -> dict[str, Any]:
    calls = statistics.median(r["model_calls"] for r in rows) if rows else None
    return {
        "finished": done,
        "model": "Gemma-3-270M-it Q4_K_M (llama.cpp in-process, 1 thread, CPU)",
        "temperature": TEMPERATURE,
        "answer_pattern": ANSWER_PATTERN,
        "ground_truth": "every subset of a case's sources not holding all planted ones is rerun: none may flip",
        "candidates": len(rows) + len(skipped),
        "cases": len(rows),
        "not_followed": len(skipped),
        "exact": sum(1 for r in rows if r["exact"]),
        "instances_with_a_non_culprit_confirmed": sum(1 for r in rows if r["non_culprit_confirmed"]),
        "reruns_median": statistics.median(r["reruns"] for r in rows) if rows else None,
        "model_calls_median": calls,
        "model_call_seconds_mean": per_call,
        "cold_seconds_median_estimate": round(calls * per_call, 1) if calls is not None and per_call else None,
        "by_pattern": {
            p: {
                "n": sum(1 for r in rows if r["pattern"] == p),
                "exact": sum(1 for r in rows if r["pattern"] == p and r["exact"]),
            }
            for p in PATTERNS
        },
        "elapsed_s": round(time.perf_counter() - started, 1),
        "rows": rows,
        "not_followed_cases": skipped,
    }


if __name__ == "__main__":
    limit = int(sys.argv[sys.argv.index("--cases") + 1]) if "--cases" in sys.argv else 24
    memo = Path(sys.argv[sys.argv.index("--memo") + 1]) if "--memo" in sys.argv else None
    if "--shard" in sys.argv:  # --shard I/N --part FILE [--from K]: one of N processes side by side; --merge FILE...
        i, n = (int(x) for x in sys.argv[sys.argv.index("--shard") + 1].split("/"))
        part = Path(sys.argv[sys.argv.index("--part") + 1])
        start = int(sys.argv[sys.argv.index("--from") + 1]) if "--from" in sys.argv else 0
        asyncio.run(run_real(limit, memo=memo, shard=(i, n), part=part, start=start))
        sys.exit(0)
    if "--merge" in sys.argv:
        files = sys.argv[sys.argv.index("--merge") + 1 :]
        end = next((i for i, a in enumerate(files) if a.startswith("--")), len(files))
        result = merge([Path(a) for a in files[:end]], limit)
    else:
        result = asyncio.run(run_real(limit, save=True, memo=memo))
    path = write_results("ctxbug_real", result)
    keys = ("cases", "not_followed", "exact", "instances_with_a_non_culprit_confirmed", "reruns_median")
    print(f"ctxbug_real: { {k: result.get(k) for k in keys} } -> {path}")
