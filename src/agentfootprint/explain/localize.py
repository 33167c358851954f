"""Localize a context bug: rank the sources that reached the answer, then prove suspects by ablation reruns."""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain.backtrack import Backtrack, SourceTrail, backtrack
from agentfootprint.explain.scoring import (
    LexicalScorer,
    RankingConfidence,
    Scorer,
    answer_similarity,
    ranking_confidence,
)

Verdict = Literal["confirmed", "inconclusive", "not-confirmed"]
OutcomeChanged = Callable[[str, str], bool]
Rerun = Callable[[int, Sequence[str]], Awaitable[str]]


class RerunExecutor(Protocol):
    """Runs reruns elsewhere (``agentfootprint.scale`` executors): ``rerunner`` gives ``rerun(seed, ablate)``."""

    def rerunner(self, agent_factory: str, run_input: Mapping[str, Any]) -> Rerun: ...


DEFAULT_SIMILARITY_THRESHOLD = 0.8
PROXY_NOTE = (
    "Scores are proxies (text overlap / similarity) and rank suspects only; only ablation reruns make causal claims."
)


class LocalizeError(AgentFootprintError, ValueError):
    """Localization cannot run (no recorded run, no rerun seam, bad arguments)."""

    code = "ERR_LOCALIZE"


class Suspect(BaseModel):
    """One ablatable source that reached the answer: its proxy score and, after reruns, its verdict."""

    kind: str
    id: str
    score: float
    rank: int
    verdict: Verdict | None = None
    flips: int = 0
    samples: int = 0
    errors: int = 0
    claim: str
    text: str = ""
    trigger: str | None = None


class LocalizationReport(BaseModel):
    """Suspects ranked by proxy score, with ablation verdicts in causal mode; flags say what limits the claims."""

    mode: Literal["causal", "correlational"]
    trigger: str
    answer: str | None
    scorer: str
    samples: int
    baseline_flips: int = 0
    baseline_errors: int = 0
    suspects: list[Suspect] = Field(default_factory=list)
    honesty_flags: list[str] = Field(default_factory=list)
    ranking_confidence: RankingConfidence | None = None
    note: str = PROXY_NOTE

    def suspect(self, source_id: str) -> Suspect | None:
        return next((s for s in self.suspects if s.id == source_id), None)

    @property
    def confirmed(self) -> list[Suspect]:
        return [s for s in self.suspects if s.verdict == "confirmed"]

    def __str__(self) -> str:
        head = [
            f"Localization ({self.mode.upper()}) at {self.trigger}, scorer: {self.scorer}",
            f"answer: {(self.answer or '')[:160]!r}",
        ]
        if self.mode == "causal":
            head.append(f"baseline: {self.baseline_flips}/{self.samples} reruns flipped with no ablation")
        if self.ranking_confidence is not None:
            head.append(f"ranking: {self.ranking_confidence.note}")
        rows = []
        for s in self.suspects:
            verdict = s.verdict.upper() if s.verdict else "—"
            rows.append(f"  #{s.rank} {s.kind} '{s.id}' score {s.score:.3f}  {verdict}  {s.claim}")
        flags = f"honesty flags: {', '.join(self.honesty_flags)}" if self.honesty_flags else "honesty flags: none"
        return "\n".join([*head, "suspects:", *rows, flags, self.note])


def _default_outcome_changed(original: str, rerun: str) -> bool:
    return answer_similarity(original, rerun) < DEFAULT_SIMILARITY_THRESHOLD


def rank_suspects(
    bt: Backtrack, scorer: Scorer, ablatable_ids: set[str] | None = None
) -> list[tuple[SourceTrail, float]]:
    """Ablatable sources (deduplicated by kind and id, texts joined), scored and sorted; ties keep recorded order."""
    merged: dict[tuple[str, str], SourceTrail] = {}
    texts: dict[tuple[str, str], list[str]] = {}
    for s in bt.sources:
        if not s.ablatable or (ablatable_ids is not None and s.id not in ablatable_ids):
            continue
        key = (s.kind, s.id)
        merged.setdefault(key, s)
        texts.setdefault(key, []).append(s.text)
    answer = bt.answer or ""
    scored = [(merged[k], scorer.score("\n".join(texts[k]), answer)) for k in merged]
    scored.sort(key=lambda pair: (-pair[1], pair[0].position))
    return scored


def _verdict(flips: int, samples: int) -> Verdict:
    if flips * 2 > samples:
        return "confirmed"
    return "not-confirmed" if flips == 0 else "inconclusive"


def _claim(kind: str, sid: str, verdict: Verdict, flips: int, samples: int, unstable: bool) -> str:
    tail = f"flipped the outcome in {flips}/{samples} seeded reruns"
    if unstable:
        return (
            f"INCONCLUSIVE: the baseline flipped without any ablation, so ablating {kind} '{sid}' ({tail}) proves "
            "nothing"
        )
    if verdict == "confirmed":
        return f"CAUSAL: ablating {kind} '{sid}' {tail}"
    if verdict == "inconclusive":
        return f"INCONCLUSIVE: ablating {kind} '{sid}' {tail}"
    return f"NOT CONFIRMED: ablating {kind} '{sid}' {tail}"


class _Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self._progress: Any = None
        self._task: Any = None
        if enabled and total:
            from rich.progress import Progress

            self._progress = Progress(transient=True)
            self._progress.start()
            self._task = self._progress.add_task("reruns", total=total)

    def advance(self) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


async def rerun_answer(agent: Any, seed: int, ignore: Sequence[str] = ()) -> str:
    """Re-run the agent's last input on a fresh copy (without ``ignore`` sources), seeded; returns the answer."""
    run_input = agent.last_run_input()
    if run_input is None:
        raise LocalizeError("the agent has no recorded run to rerun; run it first")
    clone = agent.without(*ignore)
    kwargs: dict[str, Any] = {"identity": run_input.get("identity"), "seed": seed}
    if run_input.get("history"):
        kwargs["continue_from"] = {"run_id": "rerun", "history": run_input["history"]}
    result = await clone.run(run_input["message"], **kwargs)
    return str(result.answer or "")


def _executor_rerun(agent: Any, executor: RerunExecutor, agent_factory: str | None) -> Rerun:
    """Reruns handed to ``executor``: the agent is rebuilt from ``agent_factory`` wherever it runs."""
    if not isinstance(agent_factory, str) or not agent_factory:
        raise LocalizeError(
            "an executor reruns the agent elsewhere: pass agent_factory='module:function' (a no-argument function "
            "that builds the same agent)"
        )
    run_input = agent.last_run_input()
    if run_input is None:
        raise LocalizeError("the agent has no recorded run to rerun; run it first")
    if not callable(getattr(executor, "rerunner", None)):
        raise LocalizeError("the executor has no rerunner(); derive it from agentfootprint.scale.ExecutorBase")
    try:
        return executor.rerunner(agent_factory, run_input)
    except (AgentFootprintError, ValueError, TypeError) as exc:
        raise LocalizeError(f"cannot describe the rerun for the executor: {str(exc)[:300]}") from None


async def _sample(
    rerun: Rerun,
    ignore: Sequence[str],
    samples: int,
    original: str,
    changed: OutcomeChanged,
    sem: asyncio.Semaphore,
    progress: _Progress,
) -> tuple[int, int]:
    async def one(seed: int) -> bool | None:
        async with sem:
            try:
                answer = await rerun(seed, ignore)
            except Exception:
                return None
            finally:
                progress.advance()
        return bool(changed(original, answer))

    results = await asyncio.gather(*(one(seed) for seed in range(samples)))
    return sum(1 for r in results if r), sum(1 for r in results if r is None)


async def localize_context_bug(
    agent: Any,
    *,
    samples: int = 3,
    outcome_changed: OutcomeChanged | None = None,
    max_suspects: int = 5,
    concurrency: int = 4,
    scorer: Scorer | None = None,
    progress: bool | None = None,
    executor: RerunExecutor | None = None,
    agent_factory: str | None = None,
) -> LocalizationReport:
    """Rank the ablatable sources behind the last answer; with ``samples > 0`` prove each by ablation reruns.

    With ``executor`` (e.g. ``RayExecutor()``) each rerun is a run spec built from ``agent_factory`` ("module:fn")."""
    if not isinstance(samples, int) or samples < 0:
        raise LocalizeError("samples must be an int >= 0")
    if max_suspects < 1 or concurrency < 1:
        raise LocalizeError("max_suspects and concurrency must be >= 1")
    scorer = scorer or LexicalScorer()
    bt = backtrack(agent)
    if hasattr(agent, "source_ids"):
        known: set[str] | None = set(agent.source_ids())
    else:
        known = set(agent.config.source_ids()) if hasattr(agent, "config") else None
    ranked = rank_suspects(bt, scorer, known)[:max_suspects]
    flags: list[str] = []
    confidence = ranking_confidence([score for _, score in ranked]) if ranked else None
    if not ranked:
        flags.append("no-ablatable-suspects")
    original = bt.answer or ""
    changed = outcome_changed or _default_outcome_changed
    if samples == 0:
        flags.append("correlational-only")
        suspects = [
            Suspect(
                kind=s.kind,
                id=s.id,
                score=score,
                rank=i + 1,
                text=s.text,
                trigger=s.trigger,
                claim=f"CORRELATIONAL: {s.kind} '{s.id}' scored {score:.3f} ({scorer.name} proxy); "
                "nothing was rerun, so this is not a causal claim",
            )
            for i, (s, score) in enumerate(ranked)
        ]
        return LocalizationReport(
            mode="correlational",
            trigger=bt.trigger,
            answer=bt.answer,
            scorer=scorer.name,
            samples=0,
            suspects=suspects,
            honesty_flags=flags,
            ranking_confidence=confidence,
        )
    if not hasattr(agent, "without") or not hasattr(agent, "last_run_input"):
        raise LocalizeError("causal localization reruns the agent: pass the Agent (or use samples=0)")
    rerun: Rerun
    if executor is None:
        rerun = functools.partial(rerun_answer, agent)
    else:
        rerun = _executor_rerun(agent, executor, agent_factory)
    sem = asyncio.Semaphore(concurrency)
    show = sys.stderr.isatty() if progress is None else progress
    bar = _Progress(samples * (1 + len(ranked)), show)
    try:
        baseline = _sample(rerun, (), samples, original, changed, sem, bar)
        ablations = [_sample(rerun, (s.id,), samples, original, changed, sem, bar) for s, _ in ranked]
        results = await asyncio.gather(baseline, *ablations)
    finally:
        bar.close()
    baseline_flips, baseline_errors = results[0]
    unstable = baseline_flips > 0
    if unstable:
        flags.append("baseline-unstable")
    if baseline_errors or any(errs for _, errs in results[1:]):
        flags.append("rerun-errors")
    suspects = []
    for i, ((s, score), (flips, errors)) in enumerate(zip(ranked, results[1:], strict=True)):
        verdict: Verdict = "inconclusive" if unstable else _verdict(flips, samples)
        suspects.append(
            Suspect(
                kind=s.kind,
                id=s.id,
                score=score,
                rank=i + 1,
                verdict=verdict,
                flips=flips,
                samples=samples,
                errors=errors,
                text=s.text,
                trigger=s.trigger,
                claim=_claim(s.kind, s.id, verdict, flips, samples, unstable),
            )
        )
    return LocalizationReport(
        mode="causal",
        trigger=bt.trigger,
        answer=bt.answer,
        scorer=scorer.name,
        samples=samples,
        baseline_flips=baseline_flips,
        baseline_errors=baseline_errors,
        suspects=suspects,
        honesty_flags=flags,
        ranking_confidence=confidence,
    )


def localize_sync(agent: Any, **kwargs: Any) -> LocalizationReport:
    """Blocking twin of :func:`localize_context_bug`."""
    return asyncio.run(localize_context_bug(agent, **kwargs))


class RerunReport(BaseModel):
    """What changed when the named sources were removed, against a no-ablation baseline."""

    ignored: list[str]
    samples: int
    original_answer: str | None
    baseline_flips: int
    flips: int
    verdict: Verdict
    answers: list[str]
    claim: str


async def rerun_without_sources(
    agent: Any, ignore: Sequence[str], *, samples: int = 3, outcome_changed: OutcomeChanged | None = None
) -> RerunReport:
    """Rerun without ``ignore`` ``samples`` times (plus a baseline) and say whether the outcome flips."""
    if samples < 1:
        raise LocalizeError("samples must be >= 1")
    agent.without(*ignore)  # refuse unknown ids before any rerun
    bt = backtrack(agent)
    original = bt.answer or ""
    changed = outcome_changed or _default_outcome_changed
    answers = await asyncio.gather(*(rerun_answer(agent, seed, ignore) for seed in range(samples)))
    baseline = await asyncio.gather(*(rerun_answer(agent, seed) for seed in range(samples)))
    flips = sum(1 for a in answers if changed(original, a))
    baseline_flips = sum(1 for a in baseline if changed(original, a))
    verdict: Verdict = "inconclusive" if baseline_flips else _verdict(flips, samples)
    label = ", ".join(f"'{i}'" for i in ignore)
    return RerunReport(
        ignored=list(ignore),
        samples=samples,
        original_answer=bt.answer,
        baseline_flips=baseline_flips,
        flips=flips,
        verdict=verdict,
        answers=list(answers),
        claim=_claim("sources", label, verdict, flips, samples, baseline_flips > 0),
    )
