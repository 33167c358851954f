"""Proven citations per sentence: on generated multi-fact answers, does ``cite`` name the exact sources of every
sentence, never mark a sentence supported by a source that does not support it, and at what cost in reruns next to
whole-answer localization on the same cases?

Each case is an agent whose scripted model answers 3-5 claims (plus, sometimes, a sentence it says on its own). A
claim is backed by one source, by two it needs together (conjunctive), by two either of which suffices (redundant),
or by its own and one another claim needs too (shared); without its sources the model says something else. Decoy
sources share words with the claims. Sources are facts and instructions; answers are prose, bullets, numbered lists
or lines, with abbreviations, decimals, quotes and questions; wording is drawn from templates per claim. Noise: 0-20
% of answers (by seed) have one sentence reworded at random. The user's run is a clean one. ``cite`` runs with its
defaults; localization runs ``localize_context_bug`` with its defaults and the same change detector (the answer
changed when any sentence did).

A second, stress suite (45 cases) rewords each sentence on its own (5, 10 or 20 % per sentence, so up to two answers
in three differ somewhere), answers the claims in a seed-dependent order and adds 20-50 decoys.

Run: ``python bench/citations.py`` (``--quick`` for 24 cases)."""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint import Agent, define_fact, define_instruction
from agentfootprint.explain import cite, localize_context_bug
from agentfootprint.explain._cite import sentence_changed, split_sentences
from agentfootprint.providers import LLMRequest, mock

PATTERNS = ("single", "single", "conjunctive", "redundant", "shared")
NOISES = (0.0, 0.1, 0.2)
STRESS_NOISES = (0.05, 0.1, 0.2)
SHAPES = ("prose", "bullets", "numbered", "lines")
TOPICS = (
    "harbor", "bridge", "library", "orchard", "railway", "museum", "reservoir", "stadium", "observatory", "market",
    "lighthouse", "canal", "quarry", "vineyard", "airfield", "foundry",
)  # fmt: skip
CLAIMS = (
    "The {t} opened in {y}.",
    "Dr. Alvarez says the {t} cost {v}.{w} million dollars!",
    "According to the registry, the {t} holds {v} tons, i.e. about {w} percent of capacity.",
    'Locals call the {t} "{n}".',
    "Did you know the {t} was rebuilt in {y}?",
    "Mr. Okafor runs the {t} with {v} staff (approx. {w} part-time).",
)
SOURCES = (
    "Record {m}: the {t} details are {x}.",
    "Note {m} about the {t}: value {x}.",
    "Archive entry {m} lists {x} for the {t}.",
)
MISSING = ("I have no record about the {t}.", "Nothing is known about the {t} here.", "The {t}: unknown.")
OWN = ("I hope this helps!", "Let me know if you need more.", "These figures may change over time.")
NAMES = ("Old Blue", "The Anchor", "Greystone", "Northgate", "Half Moon")


def _hash(seed: int | None, text: str) -> float:
    return int.from_bytes(hashlib.sha256(f"{seed}|{text}".encode()).digest()[:8], "big") / 2**64


def _reword(line: str) -> str:
    """The same claim, worded differently (a word inserted inside it: the sentence's words no longer run on)."""
    words = line.split()
    return " ".join([*words[:2], "reportedly", *words[2:]])


@dataclass
class Claim:
    text: str
    missing: str
    sources: list[str]
    rule: str  # "all" (every source needed) or "any" (either suffices)


@dataclass
class Case:
    index: int
    noise: float
    shape: str
    sources: dict[str, tuple[str, str]]  # id -> (kind, text)
    claims: list[Claim]
    own: str | None
    patterns: list[str] = field(default_factory=list)
    sentence_noise: float = 0.0
    shuffle: bool = False

    def answer(self, present: set[str], seed: int | None, *, noisy: bool = True) -> str:
        lines = []
        for c in self.claims:
            ok = all(s in present for s in c.sources) if c.rule == "all" else any(s in present for s in c.sources)
            lines.append(c.text if ok else c.missing)
        if self.own:
            lines.append(self.own)
        key = "|".join(sorted(present))
        if noisy and self.sentence_noise:  # every sentence reworded on its own
            lines = [_reword(line) if _hash(seed, f"{k}{key}") < self.sentence_noise
                     else line for k, line in enumerate(lines)]  # fmt: skip
        if noisy and self.shuffle:
            random.Random(seed).shuffle(lines)
        roll = _hash(seed, key)
        if noisy and roll < self.noise:  # one sentence reworded at random
            k = int(roll / self.noise * len(lines)) % len(lines)
            lines[k] = _reword(lines[k])
        if self.shape == "bullets":
            return "Here is what I found:\n" + "\n".join(f"- {line}" for line in lines)
        if self.shape == "numbered":
            return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
        if self.shape == "lines":
            return "\n".join(lines)
        return " ".join(lines)

    def expected(self, sentences: list[str]) -> list[set[str]]:
        """The planted sources of each sentence of the user's answer (a header line or its own sentence: none)."""
        planted = {c.text: set(c.sources) for c in self.claims}
        return [planted.get(sentence, set()) for sentence in sentences]


def build_case(index: int, rng: random.Random, *, stress: bool = False) -> Case:
    """A case of the main suite; ``stress``: per-sentence noise, claims in any order, and 20-50 decoys."""
    noise = 0.0 if stress else NOISES[index % len(NOISES)]
    shape = SHAPES[(index // len(NOISES)) % len(SHAPES)]
    count = rng.randint(3, 5)
    topics = rng.sample(TOPICS, count + 3)
    sources: dict[str, tuple[str, str]] = {}
    claims: list[Claim] = []
    patterns: list[str] = []
    sid = 0

    def source(topic: str) -> str:
        nonlocal sid
        sid += 1
        key = f"src-{sid}"
        kind = rng.choice(("fact", "instruction"))
        text = rng.choice(SOURCES).format(m=rng.randint(100, 999), t=topic, x=rng.randint(1000, 9999))
        sources[key] = (kind, text)
        return key

    for topic in topics[:count]:
        pattern = rng.choice(PATTERNS) if claims else rng.choice(PATTERNS[:-1])
        patterns.append(pattern)
        ids = [source(topic)] + ([source(topic)] if pattern in ("conjunctive", "redundant") else [])
        if pattern == "shared":  # also needs a source another claim needs
            ids.append(claims[-1].sources[0])
        text = rng.choice(CLAIMS).format(
            t=topic, y=rng.randint(1850, 2020), v=rng.randint(2, 99), w=rng.randint(1, 9), n=rng.choice(NAMES)
        )
        claims.append(Claim(text, rng.choice(MISSING).format(t=topic), ids, "any" if pattern == "redundant" else "all"))
    for topic in [*topics[count:], *rng.sample(topics[:count], min(2, count))]:  # decoys, some on a claim's topic
        for _ in range(rng.randint(4, 10) if stress else rng.randint(1, 3)):
            source(topic)
    keys = list(sources)
    rng.shuffle(keys)
    own = rng.choice(OWN) if rng.random() < 0.4 else None
    case = Case(index, noise, shape, {k: sources[k] for k in keys}, claims, own, patterns)
    if stress:
        case.sentence_noise, case.shuffle = STRESS_NOISES[index % len(STRESS_NOISES)], True
    return case


def agent_for(case: Case) -> Agent:
    def respond(req: LLMRequest) -> Any:
        present = {k for k, (_, text) in case.sources.items() if text in req.system_prompt}
        return case.answer(present, req.seed)

    builder = Agent.create(provider=mock(respond=respond), model="m", name=f"case{case.index}")
    for key, (kind, text) in case.sources.items():
        builder = (
            builder.fact(define_fact(id=key, data=text))
            if kind == "fact"
            else builder.instruction(define_instruction(id=key, prompt=text))
        )
    return builder.build()


async def clean_run(agent: Agent, case: Case) -> str:
    clean = sorted(split_sentences(case.answer(set(case.sources), None, noisy=False)))
    for seed in range(500, 800):  # the user saw an answer with no sentence reworded (in any order)
        answer = str((await agent.run("Tell me about these places.", seed=seed)).answer)
        if sorted(split_sentences(answer)) == clean:
            return answer
    raise RuntimeError("no clean run")


async def one(case: Case) -> dict[str, Any]:
    agent = agent_for(case)
    answer = await clean_run(agent, case)
    sentences = split_sentences(answer)
    expected = case.expected(sentences)
    t0 = time.perf_counter()
    cites = await cite(agent, progress=False)
    took = time.perf_counter() - t0
    got = [set(s.sources) for s in cites.sentences]
    assert len(got) == len(expected) == len(sentences), (case.index, sentences)
    exact = [g == e for g, e in zip(got, expected, strict=True)]
    wrong = sum(1 for g, e in zip(got, expected, strict=True) if g - e)

    def any_changed(_original: str, rerun: str) -> bool:
        return any(sentence_changed(s, rerun) for s in sentences)

    report = await localize_context_bug(agent, outcome_changed=any_changed, progress=False, max_suspects=None)
    return {
        "case": case.index,
        "noise": case.noise,
        "sentence_noise": case.sentence_noise,
        "shape": case.shape,
        "claims": len(case.claims),
        "patterns": case.patterns,
        "sources": len(case.sources),
        "sentences": len(expected),
        "exact_sentences": sum(exact),
        "exact_case": all(exact),
        "wrongly_supported": wrong,
        "misses": [
            {"sentence": i, "text": sentences[i], "expected": sorted(e), "got": sorted(g)}
            for i, (g, e) in enumerate(zip(got, expected, strict=True))
            if g != e
        ],
        "flags": cites.honesty_flags,
        "cite_reruns": cites.reruns,
        "localize_reruns": report.reruns,
        "seconds": round(took, 3),
    }


async def suite(count: int, *, stress: bool) -> dict[str, Any]:
    rng = random.Random(37 + stress)
    cases = [build_case(i, rng, stress=stress) for i in range(count)]
    rows = [await one(c) for c in cases]
    sentences = sum(r["sentences"] for r in rows)
    exact = sum(r["exact_sentences"] for r in rows)
    ratios = [r["cite_reruns"] / max(1, r["localize_reruns"]) for r in rows]
    by: dict[str, Any] = {}
    for key in ("sentence_noise", "claims") if stress else ("noise", "shape", "claims"):
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            groups.setdefault(str(r[key]), []).append(r)
        by[key] = {
            k: {
                "cases": len(g),
                "exact_sentences": round(sum(r["exact_sentences"] for r in g) / sum(r["sentences"] for r in g), 4),
                "reruns_ratio": round(sum(r["cite_reruns"] for r in g) / sum(r["localize_reruns"] for r in g), 3),
            }
            for k, g in sorted(groups.items())
        }
    pattern_hits: dict[str, list[int]] = {}
    for r, c in zip(rows, cases, strict=True):
        missed = {m["text"] for m in r["misses"]}
        for claim, p in zip(c.claims, c.patterns, strict=True):
            hit = pattern_hits.setdefault(p, [0, 0])
            hit[0] += claim.text not in missed
            hit[1] += 1
    return {
        "cases": len(rows),
        "sentences": sentences,
        "exact_sentence_rate": round(exact / sentences, 4),
        "exact_case_rate": round(sum(r["exact_case"] for r in rows) / len(rows), 4),
        "wrongly_supported_sentences": sum(r["wrongly_supported"] for r in rows),
        "cite_reruns_total": sum(r["cite_reruns"] for r in rows),
        "localize_reruns_total": sum(r["localize_reruns"] for r in rows),
        "reruns_ratio_total": round(sum(r["cite_reruns"] for r in rows) / sum(r["localize_reruns"] for r in rows), 3),
        "reruns_ratio_median": round(statistics.median(ratios), 3),
        "reruns_ratio_max": round(max(ratios), 3),
        "exact_by_pattern": {k: round(v[0] / v[1], 4) for k, v in sorted(pattern_hits.items())},
        "by": by,
        "targets": {"exact_sentence_rate": ">= 0.90", "wrongly_supported_sentences": "0", "reruns_ratio": "<= 1.5"},
        "rows": rows,
    }


async def main(quick: bool) -> dict[str, Any]:
    result = await suite(24 if quick else 120, stress=False)
    result["stress"] = await suite(9 if quick else 45, stress=True)
    return result


if __name__ == "__main__":
    result = asyncio.run(main("--quick" in sys.argv))
    print({k: v for k, v in result.items() if k not in ("rows", "stress")})
    print({k: v for k, v in result["stress"].items() if k != "rows"})
    if "--quick" not in sys.argv:
        print(write_results("citations", result))
