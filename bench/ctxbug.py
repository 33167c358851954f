"""Planted context bugs: does localization name the exact culprit sets, and at what cost in reruns?

Each instance is an agent with 5-100 ablatable sources and one or two planted culprits (a single culprit, a
redundant pair where either one misleads, a conjunctive pair where both are needed), of every kind: fact,
instruction, skill, memory entry, RAG chunk, tool result. The scripted model answers only from what it receives
(the planted markers it can see, and the request's seed for its noise: 0 %, 10 % or 20 % of answers flipped).
Group search is scored against one-at-a-time ablation over all sources.

Run: ``python bench/ctxbug.py`` (``--quick`` for a smaller suite, ``--local`` adds the llama.cpp model)."""

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

from agentfootprint import Agent, define_fact, define_instruction, define_skill, define_steering, define_tool
from agentfootprint.context import Chunk, InMemoryMemoryStore, MemoryEntry, define_memory, define_rag
from agentfootprint.context.memory import memory_namespace
from agentfootprint.explain import LocalizationReport, localize_context_bug
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

KINDS = ("fact", "instruction", "skill", "memory", "rag", "tool")
PATTERNS = ("single", "redundant", "conjunctive")
SIZES = (5, 20, 50, 100)
NOISES = (0.0, 0.1, 0.2)
WORDS = (
    "ledger shipment invoice warehouse courier pallet tariff voucher rebate quota audit bracket clause carrier "
    "freight manifest dossier roster ticket batch window channel region tier segment cohort archive folio"
).split()
WRONG, RIGHT = "DECISION: APPROVED — exception applies.", "DECISION: DECLINED — outside the policy window."
QUESTION = "Should case 17 be approved?"
WHO = Identity(tenant="acme", principal="ops")
SAMPLES = 3
MAX_SAMPLES = 20


FILLER_KINDS = ("fact", "instruction", "steering", "memory", "rag")


class _SeededStore(InMemoryMemoryStore):
    """Memory holding the planted turns only: the runs' own turns are not written back (fixed sources)."""

    def seed(self, namespace: Any, entries: list[MemoryEntry]) -> None:
        super().append(namespace, entries)

    def append(self, namespace: Any, entries: Any) -> None:
        return None


def flipped(a: str, b: str) -> bool:
    return ("APPROVED" in a) != ("APPROVED" in b)


@dataclass
class Planted:
    """One generated instance: its agent, the ids of its planted culprits and the culprit sets expected."""

    index: int
    pattern: str
    kinds: tuple[str, ...]
    sources: int
    noise: float
    culprits: tuple[str, ...]
    expected: set[frozenset[str]]
    agent: Agent
    seed: int = 0
    notes: list[str] = field(default_factory=list)


def _noise_hit(noise: float, seed: int | None, text: str) -> bool:
    if noise <= 0:
        return False
    digest = hashlib.sha256(f"{seed}|{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < noise


def scripted(markers: tuple[str, ...], pattern: str, noise: float, skill_id: str) -> Any:
    """A model that reads skills and calls the CRM first, then answers from the markers it can see."""

    def respond(req: LLMRequest) -> Any:
        offered = {t.name for t in req.tools}
        called = {m.tool_name for m in req.messages if m.role == "tool"}
        if "read_skill" in offered and "read_skill" not in called:
            return {"tool_calls": [{"id": "s1", "name": "read_skill", "args": {"id": skill_id}}]}
        if "crm" in offered and "crm" not in called:
            return {"tool_calls": [{"id": "c1", "name": "crm", "args": {"case": 17}}]}
        seen = req.system_prompt + "\n" + "\n".join(m.content for m in req.messages)
        present = [m in seen for m in markers]
        wrong = all(present) if pattern == "conjunctive" else any(present)
        if _noise_hit(noise, req.seed, seen):
            wrong = not wrong
        return WRONG if wrong else RIGHT

    return respond


def _filler(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def build_instance(index: int, pattern: str, kinds: tuple[str, ...], size: int, noise: float) -> Planted:
    """An agent with ``size`` ablatable sources, of which ``kinds`` (one or two) are planted culprits."""
    rng = random.Random(index * 7919 + size)
    markers = tuple(f"kx{rng.randrange(10**6):06d}q{j}" for j in range(len(kinds)))
    culprit_ids: list[str] = []
    # fixed sources: one skill (always read), the CRM tool (always called); the rest is filled with context
    skill_id = "playbook"
    skill_body = f"Playbook: {_filler(rng, 8)}"
    crm_text = f"Case 17: {_filler(rng, 10)}"
    store = _SeededStore()
    memory_entries: list[MemoryEntry] = []
    chunks: list[Chunk] = []
    injections: list[Any] = []
    remaining = size - 2
    planted_by_slot: dict[str, list[str]] = {}
    for j, kind in enumerate(kinds):
        marker = markers[j]
        text = f"Exception code {marker} is on file for this case."
        if kind == "skill" and skill_id not in planted_by_slot.get("skill", []):
            skill_body += f" {text}"
            culprit_ids.append(skill_id)
            planted_by_slot.setdefault("skill", []).append(skill_id)
        elif kind == "tool" and "crm" not in planted_by_slot.get("tool", []):
            crm_text += f" {text}"
            culprit_ids.append("crm")
            planted_by_slot.setdefault("tool", []).append("crm")
        elif kind == "memory":
            eid = f"turn-{j}:user"
            memory_entries.append(MemoryEntry(id=eid, role="user", content=text, run_id=f"turn-{j}", created_at=1.0))
            culprit_ids.append(eid)
            remaining -= 1
        elif kind == "rag":
            cid = f"kb-{j}-{rng.randrange(1000)}"
            chunks.append(Chunk(id=cid, text=text, score=1.0))
            culprit_ids.append(cid)
            remaining -= 1
        else:
            cid = f"{kind if kind in ('fact', 'instruction') else 'fact'}-planted-{j}"
            injections.append(
                define_instruction(id=cid, prompt=text) if kind == "instruction" else define_fact(id=cid, data=text)
            )
            culprit_ids.append(cid)
            remaining -= 1
    filler_kinds = list(FILLER_KINDS)
    for k in range(max(0, remaining)):
        kind = filler_kinds[k % len(filler_kinds)]
        text = f"{kind.title()} note {k}: {_filler(rng, 6)}"
        if kind == "memory":
            memory_entries.append(
                MemoryEntry(id=f"old-{k}:user", role="user", content=text, run_id=f"old-{k}", created_at=0.5)
            )
        elif kind == "rag":
            chunks.append(Chunk(id=f"doc-{k}", text=text, score=0.5))
        elif kind == "instruction":
            injections.append(define_instruction(id=f"ins-{k}", prompt=text))
        elif kind == "steering":
            injections.append(define_steering(id=f"steer-{k}", prompt=text))
        else:
            injections.append(define_fact(id=f"fact-{k}", data=text))
    rng.shuffle(injections)
    rng.shuffle(memory_entries)
    rng.shuffle(chunks)
    crm = define_tool(
        name="crm", description="Look up a case.", input_schema={"type": "object"}, execute=lambda a, c: crm_text
    )
    skill = define_skill(id=skill_id, description="How to handle cases.", body=skill_body)
    provider = mock(respond=scripted(markers, pattern, noise, skill_id), record_requests=False)
    builder = Agent.create(provider=provider, model="scripted", max_iterations=4, name=f"case-{index}")
    builder = builder.system("You decide case approvals. Policy: decline outside the window.").tool(crm).skill(skill)
    for inj in injections:
        builder = builder.inject(inj)
    if memory_entries:
        memory_entries.sort(key=lambda e: e.created_at)
        store.seed(memory_namespace("history", WHO, "seed"), memory_entries)
        builder = builder.memory(define_memory(id="history", store=store, recall=len(memory_entries)))
    if chunks:
        found = list(chunks)
        builder = builder.rag(define_rag(id="kb", retriever=lambda q: found, k=len(found)))
    agent = builder.build()
    if pattern == "conjunctive":
        expected = {frozenset([c]) for c in culprit_ids}
    else:
        expected = {frozenset(culprit_ids)}
    return Planted(index, pattern, kinds, size, noise, tuple(culprit_ids), expected, agent)


async def plant(index: int, pattern: str, kinds: tuple[str, ...], size: int, noise: float) -> Planted:
    """Build the instance and run it once with a seed whose answer is the wrong one (the bug a user saw)."""
    inst = build_instance(index, pattern, kinds, size, noise)
    for seed in range(1000, 1100):
        result = await inst.agent.run(QUESTION, identity=WHO, seed=seed)
        if "APPROVED" in (result.answer or ""):
            inst.seed = seed
            return inst
    raise RuntimeError(f"instance {index} never answered wrongly")


def suite(quick: bool) -> list[tuple[str, tuple[str, ...], int, float]]:
    """Every pattern x culprit kind x size x noise (216 instances; ``quick`` keeps one size per cell)."""
    specs: list[tuple[str, tuple[str, ...], int, float]] = []
    for p_i, pattern in enumerate(PATTERNS):
        for k_i, kind in enumerate(KINDS):
            kinds = (kind,) if pattern == "single" else (kind, KINDS[(k_i + 1 + p_i) % len(KINDS)])
            for s_i, size in enumerate(SIZES):
                for noise in NOISES:
                    if quick and s_i != (k_i + p_i) % len(SIZES):
                        continue
                    specs.append((pattern, kinds, size, noise))
    return specs


def confirmed_sets(report: LocalizationReport) -> list[frozenset[str]]:
    return [frozenset(c.ids) for c in report.culprit_sets if c.verdict == "confirmed"]


async def localize(inst: Planted, search: str) -> LocalizationReport:
    return await localize_context_bug(
        inst.agent,
        samples=SAMPLES,
        max_samples=MAX_SAMPLES if inst.noise > 0 else None,
        max_suspects=None,
        search=search,  # type: ignore[arg-type]
        outcome_changed=flipped,
        progress=False,
    )


def score(inst: Planted, report: LocalizationReport) -> dict[str, Any]:
    found = confirmed_sets(report)
    false = [sorted(s) for s in found if s not in inst.expected]
    return {
        "exact": set(found) == inst.expected and len(found) == len(inst.expected),
        "top1": bool(found) and found[0] in inst.expected,
        "confirmed": len(found),
        "false": len(false),
        "false_sets": false,
        "reruns": report.reruns,
    }


async def run_mock(quick: bool, single_every: int) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for index, (pattern, kinds, size, noise) in enumerate(suite(quick)):
        inst = await plant(index, pattern, kinds, size, noise)
        group = await localize(inst, "group")
        row = {
            "index": index,
            "pattern": pattern,
            "kinds": list(kinds),
            "sources": group.sources_considered,
            "noise": noise,
            "expected": sorted(sorted(s) for s in inst.expected),
            "group": score(inst, group),
            "flags": group.honesty_flags,
        }
        if index % single_every == 0 or (size == 100 and pattern == "single"):
            row["single"] = score(inst, await localize(inst, "single"))
        rows.append(row)
    return {"rows": rows, "elapsed_s": round(time.perf_counter() - started, 2)}


def _rate(rows: list[dict[str, Any]], arm: str, key: str) -> float:
    hits = [r[arm][key] for r in rows if arm in r]
    return round(sum(1 for h in hits if h) / len(hits), 4) if hits else float("nan")


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    confirmed = sum(r["group"]["confirmed"] for r in rows)
    false = sum(r["group"]["false"] for r in rows)
    by: dict[str, Any] = {}
    for key, values in (("pattern", PATTERNS), ("noise", NOISES)):
        for v in values:
            sub = [r for r in rows if r[key] == v]
            by[f"{key}={v}"] = {"n": len(sub), "exact": _rate(sub, "group", "exact")}
    for kind in KINDS:
        sub = [r for r in rows if kind in r["kinds"]]
        by[f"kind={kind}"] = {"n": len(sub), "exact": _rate(sub, "group", "exact")}
    paired = [r for r in rows if "single" in r]
    ratio = [r["group"]["reruns"] / r["single"]["reruns"] for r in paired if r["single"]["reruns"]]
    hundred = [r for r in paired if r["sources"] >= 100 and r["pattern"] == "single"]
    hundred_clean = [r for r in hundred if r["noise"] == 0]
    return {
        "instances": len(rows),
        "exact_culprit_set_accuracy": _rate(rows, "group", "exact"),
        "top1_accuracy": _rate(rows, "group", "top1"),
        "false_confirmation_rate": round(false / confirmed, 4) if confirmed else 0.0,
        "false_confirmations": false,
        "confirmed_sets": confirmed,
        "group_reruns_mean": round(statistics.mean(r["group"]["reruns"] for r in rows), 1),
        "single_reruns_mean": round(statistics.mean(r["single"]["reruns"] for r in paired), 1) if paired else None,
        "single_exact_accuracy": _rate(paired, "single", "exact"),
        "group_vs_single_reruns_mean_ratio": round(statistics.mean(ratio), 4) if ratio else None,
        "group_vs_single_reruns_100_sources_one_culprit": round(
            statistics.mean(r["group"]["reruns"] / r["single"]["reruns"] for r in hundred), 4
        )
        if hundred
        else None,
        "group_vs_single_reruns_100_sources_one_culprit_noise0": round(
            statistics.mean(r["group"]["reruns"] / r["single"]["reruns"] for r in hundred_clean), 4
        )
        if hundred_clean
        else None,
        "by": by,
    }


async def timing(latency: float = 0.05) -> dict[str, Any]:
    """100 sources, one culprit, a mock model taking ``latency`` s per call: localization (4 concurrent reruns)
    against the run's own time."""
    inst = build_instance(10_000, "single", ("fact",), 100, 0.0)
    inner = inst.agent.config.provider

    async def slow(req: LLMRequest) -> Any:
        await asyncio.sleep(latency)
        return await inner.complete(req)

    from dataclasses import replace

    agent = Agent(replace(inst.agent.config, provider=mock(respond=slow, record_requests=False)))
    runs = []
    for seed in range(1000, 1005):
        t0 = time.perf_counter()
        await agent.run(QUESTION, identity=WHO, seed=seed)
        runs.append(time.perf_counter() - t0)
    await agent.run(QUESTION, identity=WHO, seed=1000)
    run_s = statistics.median(runs)
    t1 = time.perf_counter()
    report = await localize_context_bug(
        agent, outcome_changed=flipped, search="group", max_suspects=None, concurrency=4, progress=False
    )
    loc_s = time.perf_counter() - t1
    return {
        "model_latency_s": latency,
        "run_s": round(run_s, 4),
        "localize_s": round(loc_s, 4),
        "ratio": round(loc_s / run_s, 2),
        "reruns": report.reruns,
        "found": [list(c.ids) for c in report.confirmed_sets],
        "expected": sorted(inst.culprits),
    }


async def main(quick: bool = False, local: bool = False) -> dict[str, Any]:
    mocked = await run_mock(quick, single_every=3 if quick else 6)
    summary = summarize(mocked["rows"])
    time_100 = await timing()
    ratios = {
        "ctxbug.exact_culprit_set_accuracy": summary["exact_culprit_set_accuracy"],
        "ctxbug.false_confirmation_rate": summary["false_confirmation_rate"],
        "ctxbug.group_vs_single_reruns_100_one_culprit": summary["group_vs_single_reruns_100_sources_one_culprit"],
        "ctxbug.localize_100_vs_run": time_100["ratio"],
    }
    targets = {
        "ctxbug.exact_culprit_set_accuracy": (">=", 0.95),
        "ctxbug.false_confirmation_rate": ("<=", 0.01),
        "ctxbug.group_vs_single_reruns_100_one_culprit": ("<=", 0.25),
        "ctxbug.localize_100_vs_run": ("<=", 10.0),
    }
    within = {
        k: (ratios[k] is not None and (ratios[k] >= t if op == ">=" else ratios[k] <= t))
        for k, (op, t) in targets.items()
    }
    payload: dict[str, Any] = {
        "ratios": ratios,
        "targets": {k: f"{op} {t}" for k, (op, t) in targets.items()},
        "within_target": within,
        "summary": summary,
        "timing_100_sources": time_100,
        "elapsed_s": mocked["elapsed_s"],
        "rows": mocked["rows"],
    }
    if local:
        from ctxbug_local import run_local

        payload["local_llm"] = await run_local()
    return payload


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    result = asyncio.run(main(quick=quick, local="--local" in sys.argv))
    path = write_results("ctxbug", result)
    s = result["summary"]
    print(
        f"ctxbug: {s['instances']} instances, exact {s['exact_culprit_set_accuracy']}, top-1 {s['top1_accuracy']}, "
        f"false {s['false_confirmation_rate']}, reruns group/single {s['group_vs_single_reruns_mean_ratio']}; "
        f"{result['ratios']} -> {path}"
    )
