"""Localize a context bug: rank the sources that reached a model call, then prove culprits by ablation reruns —
one source at a time, or sets of sources bisected to 1-minimal culprit sets, with paired seeds and a test."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from agentfootprint._progress import ProgressBar
from agentfootprint._sync import run_sync
from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._arms import BASELINE, ArmResult, Judge, Rerun, Sampler
from agentfootprint.explain._auto import CAP, Confirmer, PooledSearch
from agentfootprint.explain._group import Candidate, GroupSearch
from agentfootprint.explain._pooled import NoiseLog
from agentfootprint.explain._replay import ReplayCache, RerunWorld, rerun_agent
from agentfootprint.explain._stats import FISHER_TEST, HOLM, POWER, Verdict, binomial_upper, majority_verdict
from agentfootprint.explain._targets import RecordLike, Rerunnable, explained
from agentfootprint.explain.backtrack import Backtrack, BacktrackError, SourceTrail, backtrack
from agentfootprint.explain.scoring import (
    LexicalScorer,
    RankingConfidence,
    Scorer,
    answer_similarity,
    ranking_confidence,
)
from agentfootprint.flow import FlowSnapshot

OutcomeChanged = Callable[[str, str], bool]
Search = Literal["single", "group", "auto"]
DEFAULT_SIMILARITY_THRESHOLD = 0.8
PROXY_NOTE = (
    "Scores are proxies (text overlap / similarity) and rank suspects only; only ablation reruns make causal claims."
)
READ_SKILL = "read_skill"
AUTO_SINGLES = 5
"""``search="auto"`` judges every source alone first when there are at most this many (else the pooled search)."""
_LABEL = {"confirmed": "CAUSAL", "inconclusive": "INCONCLUSIVE", "not-confirmed": "NOT CONFIRMED"}


class LocalizeError(AgentFootprintError, ValueError):
    """Localization cannot run (no recorded run, no rerun seam, bad arguments)."""

    code = "ERR_LOCALIZE"


class Suspect(BaseModel):
    """One ablatable source that reached the call: its proxy score and, after reruns, its verdict."""

    kind: str
    id: str
    score: float
    rank: int
    verdict: Verdict | None = None
    flips: int = 0
    samples: int = 0
    errors: int = 0
    baseline_flips: int = 0
    p_value: float | None = None
    claim: str
    text: str = ""
    trigger: str | None = None


class RestoreCheck(BaseModel):
    """One member of a culprit set put back while the others stay ablated: a 1-minimal set stops flipping."""

    restored: str
    verdict: Verdict
    flips: int
    samples: int


class CulpritSet(BaseModel):
    """Sources ablated together. Confirmed: removing them flips the outcome, and restoring any one member stops
    the flip (1-minimal, checked by reruns); a source confirmed on its own is a one-member set."""

    ids: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    verdict: Verdict
    flips: int
    samples: int
    errors: int = 0
    baseline_flips: int = 0
    p_value: float | None = None
    minimal: bool = False
    restore_checks: list[RestoreCheck] = Field(default_factory=list)
    claim: str


class LocalizationReport(BaseModel):
    """Suspects ranked by proxy score, verdicts and culprit sets in causal mode, what it cost, and honesty flags."""

    mode: Literal["causal", "correlational"]
    trigger: str
    answer: str | None
    scorer: str
    samples: int
    search: Search = "auto"
    at: str | None = None
    baseline_flips: int = 0
    baseline_samples: int = 0
    baseline_errors: int = 0
    suspects: list[Suspect] = Field(default_factory=list)
    culprit_sets: list[CulpritSet] = Field(default_factory=list)
    reruns: int = 0
    model_calls: int = 0
    model_calls_saved: int = 0
    sources_considered: int = 0
    not_ablatable: list[str] = Field(default_factory=list)
    """Ids of sources that reached the call but no rerun can remove (e.g. the built-in ``read_skill``)."""
    test: str | None = None
    confidence: float | None = None
    max_samples: int | Literal["auto"] | None = None
    samples_per_arm: int | None = None
    """Under ``max_samples="auto"``: the most samples any arm took (sized to the baseline's noise)."""
    multiplicity: str | None = None
    """The correction over the arms compared with the baseline (``"holm"`` under ``max_samples="auto"``)."""
    arms_compared: int = 0
    noise: float | None = None
    """The flip rate the reruns showed without a real cause (the baseline's, and the search's contradictions)."""
    budget_exhausted: bool = False
    honesty_flags: list[str] = Field(default_factory=list)
    ranking_confidence: RankingConfidence | None = None
    note: str = PROXY_NOTE

    def suspect(self, source_id: str) -> Suspect | None:
        return next((s for s in self.suspects if s.id == source_id), None)

    @property
    def confirmed(self) -> list[Suspect]:
        return [s for s in self.suspects if s.verdict == "confirmed"]

    @property
    def confirmed_sets(self) -> list[CulpritSet]:
        return [c for c in self.culprit_sets if c.verdict == "confirmed"]

    def __str__(self) -> str:
        where = f" (step {self.at})" if self.at else ""
        head = [
            f"Localization ({self.mode.upper()}) at {self.trigger}{where}, scorer: {self.scorer}",
            f"answer: {(self.answer or '')[:160]!r}",
        ]
        if self.mode == "causal":
            base = self.baseline_samples or self.samples
            head.append(f"baseline: {self.baseline_flips}/{base} reruns flipped with no ablation")
            rule = (
                f"{self.test} at confidence {self.confidence}, up to {self.max_samples} samples per arm"
                if self.test and self.max_samples != "auto"
                else f"{self.test} with {self.multiplicity} over {self.arms_compared} arm(s) at confidence "
                f"{self.confidence}, on seeds the search did not use; {self.samples_per_arm} samples per arm, sized "
                f"for power {POWER} at the noise seen ({self.noise:.2f})"
                if self.test
                else f"majority of {self.samples} paired seeded reruns"
            )
            head.append(f"search: {self.search}; rule: {rule}")
            head.append(
                f"cost: {self.reruns} reruns, {self.model_calls} model calls "
                f"({self.model_calls_saved} identical calls reused); {self.sources_considered} ablatable sources"
            )
        if self.ranking_confidence is not None:
            head.append(f"ranking: {self.ranking_confidence.note}")
        rows = []
        for s in self.suspects:
            verdict = s.verdict.upper() if s.verdict else "—"
            rows.append(f"  #{s.rank} {s.kind} '{s.id}' score {s.score:.3f}  {verdict}  {s.claim}")
        sets = [f"  {{{', '.join(c.ids)}}}  {c.verdict.upper()}  {c.claim}" for c in self.culprit_sets]
        flags = f"honesty flags: {', '.join(self.honesty_flags)}" if self.honesty_flags else "honesty flags: none"
        body = [*head, "suspects:", *rows]
        if self.mode == "causal":
            body += ["culprit sets:", *(sets or ["  none confirmed"])]
        if self.not_ablatable:
            body.append(f"not ablatable (reached the call, no rerun removes them): {', '.join(self.not_ablatable)}")
        return "\n".join([*body, flags, self.note])


def _default_outcome_changed(original: str, rerun: str) -> bool:
    return answer_similarity(original, rerun) < DEFAULT_SIMILARITY_THRESHOLD


def _verdict(flips: int, samples: int) -> Verdict:
    return majority_verdict(flips, samples)


def _ablatable_trails(bt: Backtrack, ablatable_ids: set[str] | None) -> tuple[list[SourceTrail], list[str]]:
    """Trails that can be ablated, and the ids of trails that reached the call but cannot be ablated.

    A retrieval or memory whose chunks or entries are ablatable is ablated through them (not as a whole); a tool
    whose results reached the call more than once is also ablatable one result at a time (``tool#n``)."""
    kept: list[SourceTrail] = []
    skipped: list[str] = []
    for s in bt.sources:
        if not s.ablatable:
            continue
        if ablatable_ids is not None and s.id not in ablatable_ids:
            skipped.append(s.id)
            continue
        kept.append(s)
    split = {s.parent for s in kept if s.parent is not None}
    kept = [s for s in kept if s.parent is not None or s.id not in split]
    calls: dict[str, list[SourceTrail]] = {}
    for s in kept:
        if s.kind == "tool" and s.result_id and (ablatable_ids is None or s.result_id in ablatable_ids):
            calls.setdefault(s.id, []).append(s)
    for results in calls.values():
        if len({r.result_id for r in results}) > 1:
            kept += [r.model_copy(update={"id": r.result_id, "parent": r.id}) for r in results]
    return kept, list(dict.fromkeys(skipped))


def rank_suspects(
    bt: Backtrack, scorer: Scorer, ablatable_ids: set[str] | None = None
) -> list[tuple[SourceTrail, float]]:
    """Ablatable sources (deduplicated by kind and id, texts joined), scored and sorted; ties keep recorded order."""
    merged: dict[tuple[str, str], SourceTrail] = {}
    texts: dict[tuple[str, str], list[str]] = {}
    for s in _ablatable_trails(bt, ablatable_ids)[0]:
        key = (s.kind, s.id)
        merged.setdefault(key, s)
        texts.setdefault(key, []).append(s.text)
    answer = bt.answer or ""
    scored = [(merged[k], scorer.score("\n".join(texts[k]), answer)) for k in merged]
    scored.sort(key=lambda pair: (-pair[1], pair[0].position))
    return scored


def _tail(r: ArmResult, statistical: bool, alpha: float) -> str:
    tail = f"{r.flips}/{r.samples} seeded reruns"
    if statistical:
        p = f"{r.p_value:.3g}" if r.p_value is not None else "n/a"
        tail += f" vs {r.baseline_flips}/{r.samples} for the baseline on the same seeds (one-sided Fisher p={p}"
        tail += f", needs <= {alpha:.3g} and a flip rate above 1/2)"
    if r.errors:
        tail += f"; {r.errors} rerun(s) failed"
    if not r.settled:
        tail += "; the rerun budget ran out before this arm was settled"
    return tail


def _claim(label: str, verdict: Verdict, flips: int, samples: int, unstable: bool) -> str:
    tail = f"flipped the outcome in {flips}/{samples} seeded reruns"
    if unstable:
        return f"INCONCLUSIVE: the baseline flipped without any ablation, so ablating {label} ({tail}) proves nothing"
    return f"{_LABEL[verdict]}: ablating {label} {tail}"


def _arm_claim(label: str, r: ArmResult, verdict: Verdict, unstable: bool, statistical: bool, alpha: float) -> str:
    tail = f"flipped the outcome in {_tail(r, statistical, alpha)}"
    if unstable:
        return f"INCONCLUSIVE: the baseline flipped without any ablation, so ablating {label} ({tail}) proves nothing"
    return f"{_LABEL[verdict]}: ablating {label} {tail}"


def _set_claim(c: Candidate, labels: list[str], statistical: bool, alpha: float) -> str:
    together = labels[0] if len(labels) == 1 else " and ".join([", ".join(labels[:-1]), labels[-1]]) + " together"
    text = _arm_claim(together, c.result, c.result.verdict, False, statistical, alpha)
    if c.result.verdict != "confirmed":
        return text
    if len(labels) == 1:
        if c.result.baseline_flips:
            rate = f"{c.result.baseline_flips}/{c.result.samples}"
            return text + f"; with it restored (the baseline) the outcome flipped only {rate} times"
        return text + "; with it restored (the baseline) the outcome holds"
    return text + "; restoring any one of them alone stops the flip (a 1-minimal culprit set)"


def render_reply(response: Any) -> str:
    """A model call's reply as one string: its text, then one ``-> tool {args}`` line per tool call."""
    if not isinstance(response, dict):
        return ""
    lines = [str(response.get("content") or "")]
    for call in response.get("tool_calls") or []:
        args = json.dumps(call.get("args", {}), sort_keys=True, ensure_ascii=False, default=str)
        lines.append(f"-> {call.get('name')} {args}")
    return "\n".join(lines)


def _calls_in(snap: FlowSnapshot, namespace: str) -> list[Any]:
    return [c for c in snap.commit_log if c.stage_id == "call-llm" and c.applied and c.namespace == namespace]


def step_reply(snap: FlowSnapshot | None, namespace: str, ordinal: int) -> str:
    """The reply of the ``ordinal``-th model call (0-based) of a run; a marker when the run made fewer calls."""
    calls = _calls_in(snap, namespace) if snap is not None else []
    if ordinal >= len(calls):
        return f"(no model call #{ordinal + 1} in this run)"
    call = calls[ordinal]
    return render_reply(snap.value_at("last_response", call.idx, call.namespace, default={}) if snap else {})


class _Step:
    """Where ``at=`` points: the model call's namespace and its position among that namespace's calls."""

    def __init__(self, snap: FlowSnapshot, trigger: str) -> None:
        commit = next(c for c in snap.commit_log if c.runtime_stage_id == trigger)
        self.namespace = commit.namespace
        self.ordinal = [c.idx for c in _calls_in(snap, commit.namespace)].index(commit.idx)

    def reply(self, snap: FlowSnapshot | None) -> str:
        return step_reply(snap, self.namespace, self.ordinal)


def _rerun_kwargs(run_input: dict[str, Any], seed: int) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"identity": run_input.get("identity"), "seed": seed}
    if run_input.get("history"):
        kwargs["continue_from"] = {"run_id": "rerun", "history": run_input["history"]}
    return kwargs


def _run_input(agent: Any) -> dict[str, Any]:
    run_input = agent.last_run_input()
    if run_input is None:
        raise LocalizeError("the agent has no recorded run to rerun; run it first")
    return dict(run_input)


def _recorded_run_id(agent: Any) -> str | None:
    snap = agent.last_snapshot() if hasattr(agent, "last_snapshot") else None
    return snap.run_id if isinstance(snap, FlowSnapshot) else None


async def rerun_answer(agent: Any, seed: int, ignore: Sequence[str] = (), world: RerunWorld | None = None) -> str:
    """Re-run the agent's last input on a fresh copy (without ``ignore`` sources), seeded; returns the answer.

    Reruns read memory as it stood for the recorded run and write nothing to it."""
    run_input = _run_input(agent)
    world = world or RerunWorld(ReplayCache(), _recorded_run_id(agent))
    clone = rerun_agent(agent, ignore, world)
    result = await clone.run(run_input["message"], **_rerun_kwargs(run_input, seed))
    return str(result.answer or "")


class _CallCount:
    """Model calls of the reruns, counted from their recordings (calls answered from a recorded response included)."""

    def __init__(self) -> None:
        self.calls = 0

    def add(self, snap: FlowSnapshot | None) -> None:
        if snap is not None:
            self.calls += sum(1 for c in snap.commit_log if c.stage_id == "call-llm" and c.applied)


def _local_rerun(agent: Any, world: RerunWorld, step: _Step | None, counter: _CallCount) -> Rerun:
    run_input = _run_input(agent)

    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        clone = rerun_agent(agent, ignore, world)
        result = await clone.run(run_input["message"], **_rerun_kwargs(run_input, seed))
        snap = clone.last_snapshot() if hasattr(clone, "last_snapshot") else None
        counter.add(snap if isinstance(snap, FlowSnapshot) else None)
        if step is not None and not getattr(clone, "replays_one_step", False):  # an imported step answers itself
            return step.reply(snap)
        return str(result.answer or "")

    return rerun


class RerunExecutor(Protocol):
    """Runs reruns elsewhere (``agentfootprint.scale`` executors): ``rerunner`` gives ``rerun(seed, ablate)``;
    with ``read``, each rerun returns ``read(outcome)`` instead of the answer."""

    def rerunner(
        self, agent_factory: str, run_input: Mapping[str, Any], *, read: Callable[[Any], str] | None = None
    ) -> Rerun: ...


def _executor_rerun(
    agent: Any, executor: RerunExecutor, agent_factory: str | None, step: _Step | None, counter: _CallCount
) -> Rerun:
    """Reruns handed to ``executor``: the agent is rebuilt from ``agent_factory`` wherever it runs; each outcome's
    recording gives the model calls made (and, with ``at=``, the step's reply)."""
    if not isinstance(agent_factory, str) or not agent_factory:
        raise LocalizeError(
            "an executor reruns the agent elsewhere: pass agent_factory='module:function' (a no-argument function "
            "that builds the same agent)"
        )
    run_input = _run_input(agent)
    if not callable(getattr(executor, "rerunner", None)):
        raise LocalizeError("the executor has no rerunner(); derive it from agentfootprint.scale.ExecutorBase")

    def read(outcome: Any) -> str:
        snap = _recording_snapshot(getattr(outcome, "recording", None))
        counter.add(snap)
        if step is not None:
            return step.reply(snap)
        return str(getattr(outcome, "answer", None) or "")

    try:
        return executor.rerunner(agent_factory, run_input, read=read)
    except (AgentFootprintError, ValueError, TypeError) as exc:
        raise LocalizeError(f"cannot describe the rerun for the executor: {str(exc)[:300]}") from None


def _recording_snapshot(recording: Any) -> FlowSnapshot | None:
    if not isinstance(recording, dict):
        return None
    try:
        return FlowSnapshot.model_validate(recording.get("snapshot", recording))
    except ValueError:
        return None


def _check_args(
    samples: Any,
    max_suspects: Any,
    concurrency: Any,
    search: Any,
    confidence: Any,
    max_samples: Any,
    max_reruns: Any,
    at: Any,
) -> None:
    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if not is_int(samples) or samples < 0:
        raise LocalizeError("samples must be an int >= 0")
    if max_suspects is not None and (not is_int(max_suspects) or max_suspects < 1):
        raise LocalizeError("max_suspects must be an int >= 1, or None for every ablatable source")
    if not is_int(concurrency) or concurrency < 1:
        raise LocalizeError("concurrency must be an int >= 1")
    if search not in ("single", "group", "auto"):
        raise LocalizeError("search must be 'single', 'group' or 'auto'")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 < confidence < 1.0:
        raise LocalizeError("confidence must be a number strictly between 0 and 1")
    if max_samples not in (None, "auto") and (not is_int(max_samples) or max_samples < max(1, samples)):
        raise LocalizeError("max_samples must be an int >= samples (and >= 1), 'auto' or None")
    if max_reruns is not None and (not is_int(max_reruns) or max_reruns < 1):
        raise LocalizeError("max_reruns must be an int >= 1, or None for no budget")
    if at is not None and (not isinstance(at, str) or not at):
        raise LocalizeError("at must be a model call's runtime stage id (a non-empty str), or None")


def _known_ids(agent: object) -> set[str] | None:
    """What a rerun can remove: every id ``without()`` takes (chunks, memory entries and ``tool#n`` included)."""
    if not isinstance(agent, Rerunnable):
        return None
    ablatable = getattr(agent, "ablatable_ids", None)
    return set(ablatable() if callable(ablatable) else agent.source_ids())


STEP_LOCALIZERS: list[Callable[..., Awaitable[LocalizationReport] | None]] = []
"""How a package above explain proves at one step of a recording it made by re-sending that step on ``provider``
(``agentfootprint.interop`` registers one on import); each returns None for a recording it did not make."""


async def localize_context_bug(
    agent: Rerunnable | RecordLike,
    *,
    samples: int = 3,
    outcome_changed: OutcomeChanged | None = None,
    max_suspects: int | None = 5,
    search: Search = "auto",
    confidence: float = 0.95,
    max_samples: int | Literal["auto"] | None = "auto",
    max_reruns: int | None = None,
    at: str | None = None,
    concurrency: int = 4,
    scorer: Scorer | None = None,
    progress: bool | None = None,
    executor: RerunExecutor | None = None,
    agent_factory: str | None = None,
    run: Any = None,
    provider: Any = None,
) -> LocalizationReport:
    """Rank the ablatable sources behind the last answer (or the model call ``at``); with ``samples > 0`` prove
    culprits by ablation reruns: one source per arm (``search="single"``), sets bisected to 1-minimal culprit sets
    (``"group"``), or single first and group when nothing single is confirmed (``"auto"``).

    ``max_samples`` switches to the statistical rule (paired seeds, one-sided Fisher exact test at ``confidence``,
    arms sampled further until settled); ``max_reruns`` caps the reruns. With ``executor`` each rerun is a run spec
    built from ``agent_factory`` ("module:fn"). ``run``: the ``RunResult`` to explain (default: the agent's latest
    finished run; a ``RunResult`` passed as ``agent`` explains itself). ``provider``: re-send step ``at`` of an
    imported trace's recording on it (see ``agentfootprint.interop``)."""
    _check_args(samples, max_suspects, concurrency, search, confidence, max_samples, max_reruns, at)
    agent = explained(agent, run)
    if provider is not None:
        options = {"samples": samples, "outcome_changed": outcome_changed, "max_suspects": max_suspects,
                   "search": search, "confidence": confidence, "max_samples": max_samples, "max_reruns": max_reruns,
                   "concurrency": concurrency, "scorer": scorer, "progress": progress}  # fmt: skip
        for step_localizer in STEP_LOCALIZERS:
            pending = step_localizer(agent, at=at, provider=provider, agent_factory=agent_factory, **options)
            if pending is not None:
                return await pending
        raise LocalizeError("provider= re-sends one step of an imported trace: import agentfootprint.interop")
    scorer = scorer or LexicalScorer()
    try:
        bt = backtrack(agent, at=at)
    except BacktrackError as exc:
        raise LocalizeError(str(exc)) from None
    snap = agent.last_snapshot() if hasattr(agent, "last_snapshot") else None
    step = _Step(snap, bt.trigger) if at is not None and isinstance(snap, FlowSnapshot) else None
    original = step.reply(snap) if step is not None else (bt.answer or "")
    known = _known_ids(agent)
    ranked_all = rank_suspects(bt.model_copy(update={"answer": original}), scorer, known)
    ranked = ranked_all if max_suspects is None else ranked_all[:max_suspects]
    flags: list[str] = []
    skipped = _ablatable_trails(bt, known)[1]
    if READ_SKILL in skipped:
        flags.append("read-skill-not-ablated")
    if any(i != READ_SKILL for i in skipped):
        flags.append("sources-not-ablatable")
    confidence_of_ranking = ranking_confidence([score for _, score in ranked]) if ranked else None
    if not ranked_all:
        flags.append("no-ablatable-suspects")
    common = {
        "trigger": bt.trigger,
        "answer": original if step is not None else bt.answer,
        "scorer": scorer.name,
        "search": search,
        "at": at,
        "sources_considered": len(ranked_all),
        "not_ablatable": skipped,
        "ranking_confidence": confidence_of_ranking,
    }
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
        return LocalizationReport(mode="correlational", samples=0, suspects=suspects, honesty_flags=flags, **common)
    if not isinstance(agent, Rerunnable):
        raise LocalizeError("causal localization reruns the agent: pass the Agent (or use samples=0)")
    world = RerunWorld(ReplayCache(), _recorded_run_id(agent))
    counter = _CallCount()
    rerun = (
        _local_rerun(agent, world, step, counter)
        if executor is None
        else _executor_rerun(agent, executor, agent_factory, step, counter)
    )
    bar = ProgressBar("reruns", None, progress)
    sampler = Sampler(
        rerun, original, outcome_changed or _default_outcome_changed,
        concurrency=concurrency, max_reruns=max_reruns, on_rerun=bar.advance,
    )  # fmt: skip
    judge = Judge(sampler, samples, None if max_samples == "auto" else max_samples, 1.0 - float(confidence))
    try:
        localization = _Localization(judge, ranked_all, ranked, search, flags, concurrency, auto=max_samples == "auto")
        await localization.go()
    finally:
        bar.close()
    return localization.report(
        common,
        reruns=sampler.reruns,
        model_calls=counter.calls - world.cache.saved,
        saved=world.cache.saved,
        confidence=float(confidence),
        max_samples=max_samples,
        samples=samples,
    )


class _Localization:
    """One causal localization: the baseline, single-source arms, the group search, and the report."""

    def __init__(
        self,
        judge: Judge,
        ranked_all: list[tuple[SourceTrail, float]],
        ranked: list[tuple[SourceTrail, float]],
        search: Search,
        flags: list[str],
        concurrency: int,
        *,
        auto: bool = False,
    ) -> None:
        self.judge = judge
        self.auto = auto
        self.statistical = judge.statistical or auto
        self.confirmer: Confirmer | None = None
        self.concurrency = concurrency
        self.ranked_all = ranked_all
        self.search = search
        self.flags = flags
        # every arm judged is made of these ids (single arms and the group search both draw from ranked_all)
        self.trails = {s.id: (s, score, rank + 1) for rank, (s, score) in enumerate(ranked_all)}
        self.base: ArmResult | None = None
        self.singles = [s.id for s, _ in ranked] if search != "group" else []  # the sources judged one at a time
        self.candidates: list[Candidate] = []
        self.budget_stopped = False

    @property
    def unstable(self) -> bool:
        """Under the majority rule any baseline flip ends the analysis (every verdict inconclusive)."""
        return self.base is not None and self.base.flips > 0 and not self.statistical

    async def _go_auto(self) -> None:
        """Baseline, then single arms (``single``, or ``auto`` when every source fits ``max_suspects``) and the
        pooled search; every proposal is confirmed on fresh seeds with Holm's correction over the arms."""
        judge = self.judge
        confirmer = Confirmer(judge.sampler, judge.alpha, judge.samples, NoiseLog())
        self.confirmer = confirmer
        base = await confirmer.baseline(0, max(1, judge.samples))
        flips = sum(1 for o in base if o)
        self.base = ArmResult(BASELINE, "inconclusive", flips, len(base), sum(1 for o in base if o is None), flips,
                              None, True)  # fmt: skip
        size = max(1, judge.samples)
        if base and all(o is None for o in base):  # not one rerun came back: no arm can be judged against it
            self.flags.append("baseline-reruns-failed")
            return
        # the wrong answer may be the model's rare one: once the baseline flips more than half of the time, it
        # grows (by half) until a binomial test says its flip rate is above 1/2 (nothing judged) or below it
        doubt = flips * 2 > len(base)
        while doubt and binomial_upper(len(base) - flips, len(base)) > judge.alpha:
            if binomial_upper(flips, len(base)) <= judge.alpha or (size >= CAP and flips * 2 > len(base)):
                self.flags.append("answer-not-reproducible")
                return
            if size >= CAP:
                break
            size = min(CAP, size + max(judge.samples, size // 2))  # grown by half: each step may settle it
            base = await confirmer.baseline(0, size)
            flips = sum(1 for o in base if o)
            self.base = ArmResult(BASELINE, "inconclusive", flips, len(base), 0, flips, None, True)
        population = [s.id for s, _ in self.ranked_all]
        found: list[frozenset[str]] = []
        whole = self.search == "auto" and 0 < len(population) <= min(len(self.singles), AUTO_SINGLES)
        if self.search == "single" or whole:
            checks = await confirmer.check([frozenset([i]) for i in self.singles])
            found = [c.arm for c in checks if c.verdict == "confirmed"]
        else:
            self.singles = []
        if self.search != "single" and population and not judge.sampler.budget_hit:
            pooled = PooledSearch(judge.sampler, confirmer, population)
            outcome = await pooled.run(found)
            self.flags += outcome.flags
            if outcome.stopped_early:
                self.flags.append("search-stopped-early")
            self.budget_stopped = outcome.budget_stopped
        await confirmer.finish()
        noise = confirmer.noise
        if binomial_upper(noise.base_flips, noise.base_samples) <= judge.alpha:  # grown, it flips above 1/2
            self.flags.append("answer-not-reproducible")
            confirmer.void()
        if confirmer.short or (judge.sampler.budget_hit and confirmer.noise.rate() > 0):
            self.flags.append("budget-too-small-for-noise")
        if judge.sampler.budget_hit:
            self.flags.append("search-stopped-early")
        latest = {c.arm: c for c in confirmer.checks}
        for arm, c in latest.items():
            if len(arm) == 1:
                judge.decided[arm] = c.result()
        self.candidates = [
            Candidate(c.arm, c.result(), list(c.restored), minimal=c.minimal and c.settled)
            for c in latest.values()
            if not (len(c.arm) == 1 and next(iter(c.arm)) in self.singles)
        ]

    async def go(self) -> None:
        if self.auto:
            await self._go_auto()
            if self.base is not None and self.base.flips > 0:
                self.flags.insert(0, "baseline-unstable")
            return
        singles = self.singles
        everything = frozenset(s.id for s, _ in self.ranked_all)
        screening = not self.judge.statistical
        jobs: list[Awaitable[Any]] = [self.judge.baseline(), *(self.judge.decide(frozenset([i])) for i in singles)]
        if self.search == "group" and screening and everything:
            jobs.append(self.judge.screen(everything))  # the search's first look, alongside the baseline
        results = await asyncio.gather(*jobs)
        self.base = results[0]
        if self.base.flips > 0:
            self.flags.append("baseline-unstable")
        if self.unstable or self.search == "single":
            return
        if self.search == "auto" and any(r.verdict == "confirmed" for r in results[1 : 1 + len(singles)]):
            return
        if self.judge.sampler.budget_hit:
            return
        search = GroupSearch(
            self.judge,
            [s.id for s, _ in self.ranked_all],
            screen=screening,
            fanout=self.concurrency,
        )
        outcome = await search.run()
        self.candidates = outcome.candidates
        self.budget_stopped = outcome.budget_stopped
        if outcome.everything is not None and outcome.everything.verdict != "confirmed" and not self.budget_stopped:
            self.flags.append("no-flip-with-everything-ablated")

    def _label(self, sid: str) -> str:
        return f"{self.trails[sid][0].kind} '{sid}'"

    def _suspects(self) -> list[Suspect]:
        statistical, alpha = self.statistical, self.judge.alpha
        arms: dict[str, ArmResult] = {}
        for arm, result in self.judge.decided.items():
            if len(arm) == 1:
                arms[next(iter(arm))] = result
        order = [i for i in self.singles if i in arms] + sorted(
            (i for i in arms if i not in self.singles), key=lambda i: self.trails[i][2]
        )
        out: list[Suspect] = []
        for sid in order:
            r = arms[sid]
            trail, score, rank = self.trails[sid]
            verdict: Verdict = "inconclusive" if self.unstable or not r.settled else r.verdict
            out.append(
                Suspect(
                    kind=trail.kind,
                    id=sid,
                    score=score,
                    rank=rank,
                    verdict=verdict,
                    flips=r.flips,
                    samples=r.samples,
                    errors=r.errors,
                    baseline_flips=r.baseline_flips,
                    p_value=r.p_value,
                    text=trail.text,
                    trigger=trail.trigger,
                    claim=_arm_claim(self._label(sid), r, verdict, self.unstable, statistical, alpha)
                    if statistical or not r.settled
                    else _claim(self._label(sid), verdict, r.flips, r.samples, self.unstable),
                )
            )
        return out

    def _culprit_sets(self) -> list[CulpritSet]:
        statistical, alpha = self.statistical, self.judge.alpha
        sets: list[Candidate] = []
        if not self.unstable:
            for sid in self.singles:
                r = self.judge.decided.get(frozenset([sid]))
                if r is not None and r.verdict == "confirmed" and r.settled:
                    sets.append(Candidate(r.ids, r, minimal=True))
        known = {c.ids for c in sets}
        sets += [c for c in self.candidates if c.ids not in known]
        out: list[CulpritSet] = []
        for c in sets:
            ids = tuple(sorted(c.ids))
            labels = [self._label(i) for i in ids]
            verdict: Verdict = c.result.verdict if c.result.settled else "inconclusive"
            out.append(
                CulpritSet(
                    ids=ids,
                    kinds=tuple(self.trails[i][0].kind for i in ids),
                    verdict=verdict,
                    flips=c.result.flips,
                    samples=c.result.samples,
                    errors=c.result.errors,
                    baseline_flips=c.result.baseline_flips,
                    p_value=c.result.p_value,
                    minimal=c.minimal,
                    restore_checks=[
                        RestoreCheck(
                            restored=next(iter(c.ids - r.ids)), verdict=r.verdict, flips=r.flips, samples=r.samples
                        )
                        for r in c.restored
                    ],
                    claim=_set_claim(c, labels, statistical, alpha),
                )
            )
        out.sort(key=lambda c: (c.verdict != "confirmed", len(c.ids), min(self._rank(i) for i in c.ids)))
        return out

    def _rank(self, sid: str) -> int:
        return self.trails[sid][2]

    def report(
        self,
        common: dict[str, Any],
        *,
        reruns: int,
        model_calls: int,
        saved: int,
        confidence: float,
        max_samples: int | Literal["auto"] | None,
        samples: int,
    ) -> LocalizationReport:
        base = self.base
        assert base is not None
        sampler = self.judge.sampler
        if sampler.budget_hit:
            self.flags.append("rerun-budget-exhausted")
        errors = base.errors + sum(r.errors for r in self.judge.decided.values())
        if errors:
            self.flags.append("rerun-errors")
        statistical = self.statistical
        decided_by_test = statistical and bool(self.judge.decided or self.candidates)
        base_all = sampler.taken(BASELINE)
        auto: dict[str, Any] = {}
        if self.confirmer is not None:
            noise = self.confirmer.noise
            base_all = [None] * sum(1 for o in sampler.taken(BASELINE) if o is None)
            base_all += [True] * noise.base_flips + [False] * (noise.base_samples - noise.base_flips)
            checks = self.confirmer.checks
            auto = {
                "samples_per_arm": max((c.samples for c in checks), default=None),
                "multiplicity": HOLM,
                "arms_compared": len(checks),
                "noise": round(noise.rate(), 4),
            }
        return LocalizationReport(
            mode="causal",
            samples=samples,
            baseline_flips=sum(1 for o in base_all if o),
            baseline_samples=len(base_all),
            baseline_errors=sum(1 for o in base_all if o is None),
            suspects=self._suspects(),
            culprit_sets=self._culprit_sets(),
            reruns=reruns,
            model_calls=model_calls,
            model_calls_saved=saved,
            test=FISHER_TEST if decided_by_test else None,
            confidence=confidence if statistical else None,
            max_samples=max_samples,
            budget_exhausted=sampler.budget_hit,
            honesty_flags=list(dict.fromkeys(self.flags)),
            **auto,
            **common,
        )


def localize_sync(agent: Rerunnable | RecordLike, **kwargs: Any) -> LocalizationReport:
    """Blocking twin of :func:`localize_context_bug`."""
    return run_sync(localize_context_bug(agent, **kwargs), "await localize_context_bug(...)")


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
    agent: Rerunnable, ignore: Sequence[str], *, samples: int = 3, outcome_changed: OutcomeChanged | None = None
) -> RerunReport:
    """Rerun without ``ignore`` ``samples`` times (plus a baseline) and say whether the outcome flips."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise LocalizeError("samples must be >= 1")
    agent.without(*ignore)  # refuse unknown ids before any rerun
    bt = backtrack(agent)
    original = bt.answer or ""
    changed = outcome_changed or _default_outcome_changed
    world = RerunWorld(ReplayCache(), _recorded_run_id(agent))
    answers = await asyncio.gather(*(rerun_answer(agent, seed, ignore, world) for seed in range(samples)))
    baseline = await asyncio.gather(*(rerun_answer(agent, seed, (), world) for seed in range(samples)))
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
        claim=_claim(f"sources {label}", verdict, flips, samples, baseline_flips > 0),
    )
