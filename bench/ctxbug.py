"""Planted context bugs: does localization name the exact culprit sets, and at what cost in reruns?

Each instance is an agent with 5-150 ablatable sources and planted culprits of every kind (fact, instruction,
skill, memory entry, RAG chunk, tool result): a single culprit, a redundant pair where either one misleads, a
conjunctive pair where both are needed, three sources that mislead by a 2-of-3 vote, a culprit next to a removable
policy that carries the right answer (removing everything does not flip), and no culprit at all (the wrong answer
was the model's rare noisy one, or the model is wrong whatever its context says). The scripted model answers only
from what it receives (the planted markers it can see, and the request's seed for its noise: 0-30 % of answers
flipped). Culprit wording varies over templates, some sharing
no word with the answer. The library's defaults (only ``outcome_changed``) are scored, and a ContextCite-style
surrogate (random keep-1/2 masks, a Lasso fit of the flip on the ablation mask) at 32 and 64 reruns on the same bugs.

Run: ``python bench/ctxbug.py`` (``--quick`` for a smaller suite, ``--local`` adds the llama.cpp model, ``--jobs N``
spreads the instances over N processes; ``--every K`` re-runs every K-th instance of the full suite and compares it
with ``results/ctxbug.json``, into ``results/ctxbug_everyK.json``)."""

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

from _common import RESULTS, write_results

from agentfootprint import Agent, define_fact, define_instruction, define_skill, define_steering, define_tool
from agentfootprint.context import Chunk, InMemoryMemoryStore, MemoryEntry, define_memory, define_rag
from agentfootprint.context.memory import memory_namespace
from agentfootprint.explain import LocalizationReport, localize_context_bug
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

KINDS = ("fact", "instruction", "skill", "memory", "rag", "tool")
PATTERNS = ("single", "redundant", "conjunctive", "votes", "masking", "none", "nocause")
SIZES = (5, 20, 50, 100, 150)
NOISES = (0.0, 0.1, 0.2, 0.3)
TEMPLATES = (
    "Exception code {m} is on file for this case.",
    "Per memo {m}, the account is flagged for priority handling.",
    "Reference {m}: regional lead signed off last quarter.",
    "Ticket {m} notes the customer called twice about it.",
)
POLICY = "Hard rule: cases outside the window are always declined."
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
        if pattern == "conjunctive":
            wrong = all(present)
        elif pattern == "votes":
            wrong = sum(present) >= 2
        elif pattern == "masking":  # without the policy the model approves anyway
            wrong = any(present) or POLICY not in seen
        elif pattern == "nocause":  # the model is wrong whatever the context says
            wrong = True
        else:
            wrong = any(present)
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
    if pattern in ("none", "nocause"):
        kinds = ()
        markers = ()
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
        text = TEMPLATES[(index + j) % len(TEMPLATES)].format(m=marker)
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
    if pattern == "masking":
        injections.append(define_instruction(id="policy-window", prompt=POLICY))
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
    if pattern in ("conjunctive", "masking"):
        expected = {frozenset([c]) for c in culprit_ids}
    elif pattern == "votes":
        expected = {frozenset([a, b]) for a in culprit_ids for b in culprit_ids if a < b}
    elif pattern in ("none", "nocause"):
        expected = set()
    else:
        expected = {frozenset(culprit_ids)}
    return Planted(index, pattern, kinds, size, noise, tuple(culprit_ids), expected, agent)


async def plant(index: int, pattern: str, kinds: tuple[str, ...], size: int, noise: float) -> Planted:
    """Build the instance and run it once with a seed whose answer is the wrong one (the bug a user saw)."""
    inst = build_instance(index, pattern, kinds, size, noise)
    for seed in range(1000, 3000):
        result = await inst.agent.run(QUESTION, identity=WHO, seed=seed)
        if "APPROVED" in (result.answer or ""):
            inst.seed = seed
            return inst
    raise RuntimeError(f"instance {index} never answered wrongly")


def suite(quick: bool) -> list[tuple[str, tuple[str, ...], int, float]]:
    """Every pattern x culprit kinds x size x noise (``quick`` keeps one size per cell, and no-culprit cases at
    5 % noise too: a rare noisy wrong answer)."""
    specs: list[tuple[str, tuple[str, ...], int, float]] = []
    widths = {"single": 1, "redundant": 2, "conjunctive": 2, "votes": 3, "masking": 1, "none": 1, "nocause": 1}
    for p_i, pattern in enumerate(PATTERNS):
        for k_i in range(len(KINDS)):
            kinds = tuple(KINDS[(k_i + j * (1 + p_i)) % len(KINDS)] for j in range(widths[pattern]))
            kinds = kinds if len(set(kinds)) == len(kinds) else tuple(KINDS[(k_i + j) % len(KINDS)] for j in
                                                                      range(widths[pattern]))  # fmt: skip
            for s_i, size in enumerate(SIZES):
                for noise in (0.05, *NOISES[1:]) if pattern == "none" else NOISES:
                    if quick and s_i != (k_i + p_i) % len(SIZES):
                        continue
                    specs.append((pattern, kinds, size, noise))
    return specs


def confirmed_sets(report: LocalizationReport) -> list[frozenset[str]]:
    return [frozenset(c.ids) for c in report.culprit_sets if c.verdict == "confirmed"]


async def localize(inst: Planted) -> LocalizationReport:
    """The library's defaults: only ``outcome_changed`` is given."""
    return await localize_context_bug(inst.agent, outcome_changed=flipped, progress=False)


def lasso(x: Any, y: Any, lam: float, sweeps: int = 200) -> Any:
    """Coordinate-descent Lasso (centred, with an intercept): ContextCite's sparse linear surrogate."""
    import numpy as np

    xm, ym = x.mean(axis=0), y.mean()
    xc, yc = x - xm, y - ym
    n, d = xc.shape
    w = np.zeros(d)
    norms = (xc**2).sum(axis=0) / n
    resid = yc.copy()
    for _ in range(sweeps):
        moved = 0.0
        for j in range(d):
            if norms[j] == 0:
                continue
            rho = xc[:, j] @ resid / n + norms[j] * w[j]
            new = np.sign(rho) * max(abs(rho) - lam, 0.0) / norms[j]
            if new != w[j]:
                resid -= xc[:, j] * (new - w[j])
                moved = max(moved, abs(new - w[j]))
                w[j] = new
        if moved < 1e-6:
            break
    return w


async def surrogate(inst: Planted, ids: list[str], budget: int) -> set[frozenset[str]]:
    """ContextCite-style: ``budget`` reruns with each source kept with probability 1/2, a Lasso fit of the flip on
    the ablation mask; the sources with a clearly positive weight are read as culprits (one set per source, or
    one set when the weights say they act only together is not something a linear score can tell)."""
    import numpy as np

    from agentfootprint.explain.localize import rerun_answer

    rng = random.Random(inst.index * 31 + budget)
    masks, flips = [], []
    original = "APPROVED"
    for b in range(budget):
        ablated = [sid for sid in ids if rng.random() < 0.5]
        answer = await rerun_answer(inst.agent, 50_000 + b, ablated)
        masks.append([1.0 if sid in ablated else 0.0 for sid in ids])
        flips.append(1.0 if flipped(original, answer) else 0.0)
    w = lasso(np.array(masks), np.array(flips), lam=0.01 * max(1.0, np.log(len(ids))))
    top = float(w.max()) if len(w) else 0.0
    chosen = [ids[j] for j in range(len(ids)) if w[j] >= max(0.2, 0.5 * top)]
    return {frozenset([c]) for c in chosen}


def surrogate_exact(inst: Planted, found: set[frozenset[str]]) -> bool:
    """Generous to the surrogate: its chosen sources need only cover exactly the culprits' members (a linear score
    cannot say whether they act alone, together or by vote)."""
    members = {m for s in inst.expected for m in s}
    return {m for s in found for m in s} == members


def score(inst: Planted, report: LocalizationReport) -> dict[str, Any]:
    found = confirmed_sets(report)
    false = [sorted(s) for s in found if s not in inst.expected]
    members = {m for s in inst.expected for m in s}
    return {
        "exact": set(found) == inst.expected and len(found) == len(inst.expected),
        "non_culprit_confirmed": any(not (s <= members) for s in found),
        "top1": bool(found) and found[0] in inst.expected,
        "confirmed": len(found),
        "false": len(false),
        "false_sets": false,
        "reruns": report.reruns,
    }


def _shard(args: tuple[bool, int, int]) -> list[dict[str, Any]]:
    quick, shard, jobs = args
    return asyncio.run(_rows(quick, shard, jobs))


async def run_mock(quick: bool, budgets: tuple[int, ...] = (32, 64), jobs: int = 1) -> dict[str, Any]:
    """Every instance of the suite, in ``jobs`` processes (each instance is seeded by its index: same rows)."""
    started = time.perf_counter()
    if jobs <= 1:
        rows = await _rows(quick, 0, 1, budgets)
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            parts = list(pool.map(_shard, [(quick, i, jobs) for i in range(jobs)]))
        rows = sorted((r for part in parts for r in part), key=lambda r: r["index"])
    return {"rows": rows, "elapsed_s": round(time.perf_counter() - started, 2)}


async def _rows(quick: bool, shard: int, jobs: int, budgets: tuple[int, ...] = (32, 64)) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for index, (pattern, kinds, size, noise) in enumerate(suite(quick)):
        if index % jobs != shard:
            continue
        inst = await plant(index, pattern, kinds, size, noise)
        t0 = time.perf_counter()
        report = await localize(inst)
        row = {
            "index": index,
            "pattern": pattern,
            "kinds": list(kinds),
            "sources": report.sources_considered,
            "size": size,
            "noise": noise,
            "expected": sorted(sorted(s) for s in inst.expected),
            "group": score(inst, report),
            "flags": report.honesty_flags,
            "seconds": round(time.perf_counter() - t0, 3),
        }
        ids = sorted(inst.agent.ablatable_ids())
        for budget in budgets:
            found = await surrogate(inst, ids, budget)
            row[f"surrogate_{budget}"] = {
                "exact": surrogate_exact(inst, found),
                "found": sorted(sorted(f) for f in found),
            }
        rows.append(row)
    return rows


def _rate(rows: list[dict[str, Any]], arm: str, key: str) -> float:
    hits = [r[arm][key] for r in rows if arm in r]
    return round(sum(1 for h in hits if h) / len(hits), 4) if hits else float("nan")


def _median(rows: list[dict[str, Any]]) -> float | None:
    return statistics.median(r["group"]["reruns"] for r in rows) if rows else None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, Any] = {}
    for key, values in (("pattern", PATTERNS), ("noise", (*NOISES, 0.05)), ("size", SIZES)):
        for v in values:
            sub = [r for r in rows if r[key] == v]
            if sub:
                by[f"{key}={v}"] = {
                    "n": len(sub),
                    "exact": _rate(sub, "group", "exact"),
                    "surrogate_32": _rate(sub, "surrogate_32", "exact"),
                    "surrogate_64": _rate(sub, "surrogate_64", "exact"),
                    "reruns_median": _median(sub),
                }
    for kind in KINDS:
        sub = [r for r in rows if kind in r["kinds"]]
        by[f"kind={kind}"] = {"n": len(sub), "exact": _rate(sub, "group", "exact")}
    at100 = [r for r in rows if r["size"] == 100]
    one = [r for r in at100 if r["pattern"] == "single"]
    pairs = [r for r in at100 if r["pattern"] in ("redundant", "conjunctive")]
    none = [r for r in rows if r["pattern"] in ("none", "nocause")]
    return {
        "instances": len(rows),
        "exact_culprit_set_accuracy": _rate(rows, "group", "exact"),
        "instances_with_a_non_culprit_confirmed": round(
            sum(1 for r in rows if r["group"]["non_culprit_confirmed"]) / len(rows), 4
        ),
        "no_culprit_clean": round(sum(1 for r in none if r["group"]["confirmed"] == 0) / len(none), 4)
        if none
        else None,
        "surrogate_32_exact": _rate(rows, "surrogate_32", "exact"),
        "surrogate_64_exact": _rate(rows, "surrogate_64", "exact"),
        "reruns_median_100_single_noise0": _median([r for r in one if r["noise"] == 0]),
        "reruns_median_100_single_noise_0.1_0.2": _median([r for r in one if r["noise"] in (0.1, 0.2)]),
        "reruns_median_100_pairs": _median(pairs),
        "reruns_median_100_pairs_noise_0.1_0.2": _median([r for r in pairs if r["noise"] in (0.1, 0.2)]),
        "group_reruns_mean": round(statistics.mean(r["group"]["reruns"] for r in rows), 1),
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


async def main(quick: bool = False, local: bool = False, jobs: int = 1) -> dict[str, Any]:
    mocked = await run_mock(quick, jobs=jobs)
    summary = summarize(mocked["rows"])
    time_100 = await timing()
    ratios = {
        "ctxbug.exact_culprit_set_accuracy": summary["exact_culprit_set_accuracy"],
        "ctxbug.non_culprit_confirmed_rate": summary["instances_with_a_non_culprit_confirmed"],
        "ctxbug.no_culprit_clean": summary["no_culprit_clean"],
        "ctxbug.noisy_reruns_100_single": summary["reruns_median_100_single_noise_0.1_0.2"],
        "ctxbug.noiseless_reruns_100_single": summary["reruns_median_100_single_noise0"],
        "ctxbug.reruns_100_pairs": summary["reruns_median_100_pairs"],
        "ctxbug.vs_contextcite_at_32": round(summary["exact_culprit_set_accuracy"] - summary["surrogate_32_exact"], 4),
        "ctxbug.vs_contextcite_at_64": round(summary["exact_culprit_set_accuracy"] - summary["surrogate_64_exact"], 4),
        "ctxbug.localize_100_vs_run": time_100["ratio"],
    }
    targets = {
        "ctxbug.exact_culprit_set_accuracy": (">=", 0.95),
        "ctxbug.non_culprit_confirmed_rate": ("<=", 0.01),
        "ctxbug.no_culprit_clean": (">=", 1.0),
        "ctxbug.noisy_reruns_100_single": ("<=", 64),
        "ctxbug.noiseless_reruns_100_single": ("<=", 14),
        "ctxbug.reruns_100_pairs": ("<=", 96),
        "ctxbug.vs_contextcite_at_32": (">", 0.0),
        "ctxbug.vs_contextcite_at_64": (">", 0.0),
        "ctxbug.localize_100_vs_run": ("<=", 10.0),
    }
    within = {
        k: ratios[k] is not None and (ratios[k] >= t if op == ">=" else ratios[k] > t if op == ">" else ratios[k] <= t)
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


async def recheck(indices: list[int]) -> dict[str, Any]:
    """Instances of the full suite by index, localized again and compared with ``bench/results/ctxbug.json``'s row
    for the same index (the same seeded instance): what a change to the statistics moved, without the full run."""
    import json

    before = {r["index"]: r["group"] for r in json.loads((RESULTS / "ctxbug.json").read_text())["rows"]}
    specs, rows = suite(False), []
    for index in indices:
        pattern, kinds, size, noise = specs[index]
        inst = await plant(index, pattern, kinds, size, noise)
        g = score(inst, await localize(inst))
        row = {"index": index, "pattern": pattern, "size": size, "noise": noise}
        rows.append(row | {"now": g, "before": before[index]})
    both = [(r["now"], r["before"]) for r in rows]
    return {
        "instances": len(rows),
        "exact": {"now": sum(n["exact"] for n, _ in both), "before": sum(b["exact"] for _, b in both)},
        "non_culprit_confirmed": {
            "now": sum(n["non_culprit_confirmed"] for n, _ in both),
            "before": sum(b["non_culprit_confirmed"] for _, b in both),
        },
        "reruns_mean": {
            "now": round(statistics.mean(n["reruns"] for n, _ in both), 1),
            "before": round(statistics.mean(b["reruns"] for _, b in both), 1),
        },
        "rows": rows,
    }


if __name__ == "__main__" and "--every" in sys.argv:  # --every K [--offset J]: indices J, J+K, ... of the full suite
    k = int(sys.argv[sys.argv.index("--every") + 1])
    j = int(sys.argv[sys.argv.index("--offset") + 1]) if "--offset" in sys.argv else 0
    out = asyncio.run(recheck(list(range(j, len(suite(False)), k))))
    print(f"ctxbug recheck: {out['instances']} instances -> {write_results(f'ctxbug_every{k}', out)}")
elif __name__ == "__main__":
    quick = "--quick" in sys.argv
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 1
    result = asyncio.run(main(quick=quick, local="--local" in sys.argv, jobs=jobs))
    path = write_results("ctxbug", result)
    s = result["summary"]
    print(f"ctxbug: {s['instances']} instances; {result['ratios']}; within {result['within_target']} -> {path}")
