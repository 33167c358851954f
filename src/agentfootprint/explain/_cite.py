"""Proven citations: for each sentence (or claim) of an answer, the sources it depends on, each with a causal
verdict, from one shared set of ablation reruns; and the sentences no source supports."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import sqrt
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentfootprint._progress import ProgressBar
from agentfootprint._sync import run_sync
from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._arms import BASELINE, Arm, BudgetExhausted, Judge, Rerun, Sampler
from agentfootprint.explain._auto import CAP, Confirmer, PooledSearch
from agentfootprint.explain._pooled import SEARCH_BASE, SURE_NO_LOG_ODDS, NoiseLog, Oracle
from agentfootprint.explain._replay import ReplayCache, RerunWorld
from agentfootprint.explain._sequential import sequential_p
from agentfootprint.explain._stats import (
    FISHER_TEST,
    HOLM,
    POWER,
    Verdict,
    binomial_upper,
    fisher_one_sided,
    holm,
    plan_samples,
)
from agentfootprint.explain._targets import RecordLike, Rerunnable, explained
from agentfootprint.explain.backtrack import BacktrackError, SourceTrail, backtrack
from agentfootprint.explain.localize import (
    _CallCount,
    _known_ids,
    _local_rerun,
    _Localization,
    _recorded_run_id,
    rank_suspects,
)
from agentfootprint.explain.scoring import LexicalScorer, Scorer

Splitter = Callable[[str], Sequence[str]]
SentenceChanged = Callable[[str, str], bool]
"""``(sentence, rerun answer) -> bool``: whether that rerun's answer no longer says the sentence."""
Status = Literal["supported", "unsupported", "inconclusive"]
MAX_SENTENCES = 200
FOLLOW_BASE = 200_000
"""Sentence ``j``'s own confirmations use seeds from ``FOLLOW_BASE + j * FOLLOW_BLOCK`` (below the search's)."""
FOLLOW_BLOCK = 2_000
LOOKS = (0.2, 0.5, 0.3)
"""Each pair's error-rate shares: its arm's confirmation samples (look 1), then the same seeds extended to the size
the sentence x arm family needs (look 2, only for a pair short of it), and once more when a sentence's own search
grew the family (look 3); weighted Bonferroni over the looks."""
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e inc ltd co corp no fig approx u.s a.m p.m cf al dept est".split()
)
_END = re.compile(r"[.!?]+[\"'”’)\]]*\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
_WORD = re.compile(r"\w+")
_LABEL = {"confirmed": "CONFIRMED", "inconclusive": "INCONCLUSIVE", "not-confirmed": "NOT CONFIRMED"}


class CiteError(AgentFootprintError, ValueError):
    """Citations cannot be computed (no rerunnable run, no answer, bad claims or arguments)."""

    code = "ERR_CITE"


def _spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans: lines (bullets apart), then sentence ends not after an abbreviation, initial or decimal."""
    out: list[tuple[int, int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start, end = pos, pos + len(line)
        pos = end
        bullet = _BULLET.match(line)
        if bullet:
            start += bullet.end()
        cut = start
        for m in _END.finditer(text, start, end):
            word = text[cut : m.start()].rsplit(None, 1)[-1] if text[cut : m.start()].split() else ""
            word = word.lstrip("(\"'“‘").casefold()
            following = text[m.end() : m.end() + 1]
            if word.rstrip(".") in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or following.islower():
                continue
            out.append((cut, m.end()))
            cut = m.end()
        out.append((cut, end))
    spans = []
    for a, b in out:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if _WORD.search(text, a, b):
            spans.append((a, b))
    return spans


def split_sentences(text: str) -> list[str]:
    """The default splitter: sentences and list items, abbreviations ("Dr."), initials and decimals kept whole."""
    return [text[a:b] for a, b in _spans(text)]


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def sentence_changed(sentence: str, rerun_answer: str) -> bool:
    """The default change detector: the sentence's words (case-folded) no longer occur, in order and contiguously,
    in the rerun's answer. A rephrasing counts as a change: pass your own detector for a paraphrasing model."""
    want = _tokens(sentence)
    if not want:
        return False
    return f" {' '.join(want)} " not in f" {' '.join(_tokens(rerun_answer))} "


class Support(BaseModel):
    """One ablation arm judged for one sentence: the sources removed together and whether that changed it."""

    ids: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    verdict: Verdict
    flips: int
    samples: int
    errors: int = 0
    baseline_flips: int = 0
    p_value: float = 1.0
    minimal: bool = True
    """For a set: removing all of it changes the sentence and restoring any one member stops that (1-minimal)."""
    claim: str


class SentenceCitation(BaseModel):
    """One sentence (or claim) of the answer, the sources it depends on (confirmed), and every arm judged for it."""

    index: int
    text: str
    start: int | None = None
    end: int | None = None
    """Where the sentence sits in the answer (None for a claim the answer does not contain verbatim)."""
    status: Status
    sources: list[str] = Field(default_factory=list)
    support: list[Support] = Field(default_factory=list)
    baseline_flips: int = 0
    baseline_samples: int = 0


class Citations(BaseModel):
    """Per-sentence citations of an answer, each source with a causal verdict, and what the reruns cost."""

    trigger: str
    answer: str
    sentences: list[SentenceCitation] = Field(default_factory=list)
    sources_considered: int = 0
    reruns: int = 0
    model_calls: int = 0
    model_calls_saved: int = 0
    test: str = FISHER_TEST
    multiplicity: str = HOLM
    confidence: float = 0.95
    arms_compared: int = 0
    """Sentence x arm pairs in the family Holm's correction covers."""
    samples_per_arm: int | None = None
    noise: float = 0.0
    """The highest per-sentence flip rate the baseline showed (reruns with nothing removed)."""
    budget_exhausted: bool = False
    honesty_flags: list[str] = Field(default_factory=list)

    @property
    def supported(self) -> list[SentenceCitation]:
        return [s for s in self.sentences if s.status == "supported"]

    @property
    def unsupported(self) -> list[SentenceCitation]:
        """Sentences no source is proven to support (``status`` says whether some arm was inconclusive)."""
        return [s for s in self.sentences if s.status != "supported"]

    def sources_of(self, index: int) -> list[str]:
        """The confirmed sources of sentence ``index`` (0-based)."""
        return list(self.sentences[index].sources)

    def __str__(self) -> str:
        lines = [
            f"Citations (CAUSAL) at {self.trigger}: {len(self.sentences)} sentence(s), {len(self.supported)} "
            f"supported, {len(self.unsupported)} without a proven source",
            f"rule: {self.test} with {self.multiplicity} over {self.arms_compared} sentence x source arm(s) at "
            f"confidence {self.confidence}, on seeds the search did not use; up to {self.samples_per_arm or 0} samples "
            f"per arm, sized for power {POWER} at the noise seen ({self.noise:.2f})",
            f"cost: {self.reruns} reruns shared by every sentence, {self.model_calls} model calls "
            f"({self.model_calls_saved} identical calls reused); {self.sources_considered} ablatable sources",
        ]
        for s in self.sentences:
            lines.append(f"[{s.index + 1}] {s.text[:160]!r}")
            shown = [a for a in s.support if a.verdict != "not-confirmed"]
            for a in shown:
                lines.append(f"    <- {a.claim}")
            if s.status == "unsupported":
                lines.append("    UNSUPPORTED: removing no source changed it")
            elif s.status == "inconclusive" and not shown:
                lines.append("    INCONCLUSIVE: no source proven")
        flags = ", ".join(self.honesty_flags) if self.honesty_flags else "none"
        return "\n".join([*lines, f"honesty flags: {flags}"])


class _Answers:
    """Every rerun's answer by (ablated set, sample index): the one set of reruns all sentences read."""

    def __init__(self, rerun: Rerun) -> None:
        self._rerun = rerun
        self.got: dict[tuple[Arm, int], str] = {}
        self.calls = 0

    async def __call__(self, seed: int, ignore: Sequence[str]) -> str:
        key = (frozenset(ignore), seed)
        if key in self.got:  # another sentence's search already ran it
            return self.got[key]
        self.calls += 1
        answer = await self._rerun(seed, ignore)
        self.got[key] = answer
        return answer


class _OffsetSampler(Sampler):
    """A sentence's own sampler: confirmation indices moved to a block of seeds no other confirmation used (its
    search indices stay shared, so its search reuses the reruns the first pass already made)."""

    def __init__(self, offset: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offset = offset

    def seed(self, index: int) -> int:
        return index + self.offset if index < SEARCH_BASE else index


class _Pair:
    """One sentence judged on one arm over a range of sample indices."""

    def __init__(self, sentence: int, arm: Arm, start: int, stop: int) -> None:
        self.sentence, self.arm, self.start, self.stop = sentence, arm, start, stop
        self.flips = self.samples = self.errors = self.base_flips = 0
        self.p_value = 1.0
        self.looks: list[float] = []
        self.needed: list[bool] = []
        self.verdict: Verdict = "not-confirmed"

    @property
    def majority(self) -> bool:
        return self.flips * 2 > self.samples

    @property
    def minimal(self) -> bool:
        return all(self.needed)


class _Judgement:
    """Per-sentence verdicts over the arms the search judged, read from the shared reruns."""

    def __init__(self, answers: _Answers, sentences: list[str], changed: SentenceChanged, alpha: float) -> None:
        self.answers = answers
        self.sentences = sentences
        self.changed = changed
        self.alpha = alpha
        self._memo: dict[tuple[Arm, int, int], bool | None] = {}

    def outcome(self, arm: Arm, index: int, sentence: int) -> bool | None:
        key = (arm, index, sentence)
        if key not in self._memo:
            answer = self.answers.got.get((arm, index))
            if answer is None:
                return None  # not rerun (yet): never remembered, a later look may run it
            self._memo[key] = bool(self.changed(self.sentences[sentence], answer))
        return self._memo[key]

    def measure(self, pair: _Pair) -> None:
        flips = base = errors = k = 0
        rest = [pair.arm - {m} for m in sorted(pair.arm)] if len(pair.arm) > 1 else []
        rest_flips = [0] * len(rest)
        rest_seen = [0] * len(rest)
        for i in range(pair.start, pair.stop):
            o = self.outcome(pair.arm, i, pair.sentence)
            b = self.outcome(BASELINE, i, pair.sentence)
            if o is None or b is None:
                errors += o is None
                continue
            k += 1
            flips += o
            base += b
            for r, arm in enumerate(rest):
                restored = self.outcome(arm, i, pair.sentence)
                rest_seen[r] += restored is not None
                rest_flips[r] += bool(restored)
        pair.flips, pair.samples, pair.errors, pair.base_flips = flips, k, errors, base
        pair.looks.append(fisher_one_sided(flips, k, base, k) if k else 1.0)
        pair.p_value = min(1.0, sequential_p(pair.looks, LOOKS))
        pair.needed = []
        for rf, seen in zip(rest_flips, rest_seen, strict=True):  # restoring it stops the change (on every seed)
            still = rf * 2 > seen > 0 and fisher_one_sided(rf, seen, base, k) <= self.alpha
            pair.needed.append(seen == k > 0 and fisher_one_sided(flips, k, rf, k) <= self.alpha and not still)

    def judge(self, pairs: list[_Pair], void: set[int]) -> None:
        rejected = holm([p.p_value for p in pairs], self.alpha)
        for p, ok in zip(pairs, rejected, strict=True):
            if ok and p.majority and p.minimal and p.sentence not in void:
                p.verdict = "confirmed"
            elif p.flips and (p.majority or p.p_value <= self.alpha):
                p.verdict = "inconclusive"
            else:
                p.verdict = "not-confirmed"


def _check_args(claims: Any, splitter: Any, changed: Any, samples: Any, confidence: Any, max_reruns: Any,
                concurrency: Any) -> None:  # fmt: skip
    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if claims is not None and (isinstance(claims, str | bytes) or not isinstance(claims, Sequence)):
        raise CiteError("claims must be a sequence of strings (the answer's claims), or None to split the answer")
    if claims is not None and splitter is not None:
        raise CiteError("pass claims or a splitter, not both")
    if splitter is not None and not callable(splitter):
        raise CiteError("splitter must be a callable taking the answer and returning its sentences")
    if changed is not None and not callable(changed):
        raise CiteError("sentence_changed must be a callable (sentence, rerun answer) -> bool")
    if not is_int(samples) or samples < 1:
        raise CiteError("samples must be an int >= 1")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 < confidence < 1.0:
        raise CiteError("confidence must be a number strictly between 0 and 1")
    if max_reruns is not None and (not is_int(max_reruns) or max_reruns < 1):
        raise CiteError("max_reruns must be an int >= 1, or None for no budget")
    if not is_int(concurrency) or concurrency < 1:
        raise CiteError("concurrency must be an int >= 1")


def _units(answer: str, claims: Sequence[Any] | None, splitter: Splitter | None) -> tuple[Sequence[Any], str]:
    if claims is not None:
        return claims, "claim"
    if splitter is None:
        return split_sentences(answer), "sentence"
    try:
        parts = splitter(answer)
    except Exception as exc:
        raise CiteError(f"the splitter failed ({type(exc).__name__})") from None
    if isinstance(parts, str | bytes) or not isinstance(parts, Sequence):
        raise CiteError("the splitter must return a sequence of strings")
    return parts, "the splitter's sentence"


def _sentences(
    answer: str, claims: Sequence[Any] | None, splitter: Splitter | None, changed: SentenceChanged
) -> list[tuple[str, int | None, int | None]]:
    """The units to cite with their place in the answer; a unit the answer does not say (per the detector) is
    refused, since every rerun would count it changed."""
    units, what = _units(answer, claims, splitter)
    if len(units) > MAX_SENTENCES:
        raise CiteError(f"at most {MAX_SENTENCES} sentences or claims can be cited at once")
    spans = _spans(answer) if claims is None and splitter is None else None
    out: list[tuple[str, int | None, int | None]] = []
    cursor = 0
    for n, unit in enumerate(units, 1):
        if not isinstance(unit, str) or not _WORD.search(unit):
            raise CiteError(f"{what} #{n} must be a string with at least one word")
        try:
            absent = bool(changed(unit, answer))
        except Exception as exc:
            raise CiteError(f"sentence_changed failed on {what} #{n} ({type(exc).__name__})") from None
        if absent:
            raise CiteError(f"{what} #{n} is not in the answer (the change detector says the answer does not say it)")
        start: int | None
        end: int | None
        if spans is not None:
            start, end = spans[n - 1]
        else:
            found = answer.find(unit, cursor)
            found = found if found >= 0 else answer.find(unit)
            start, end = (found, found + len(unit)) if found >= 0 else (None, None)
            cursor = end if end is not None else cursor
        out.append((unit, start, end))
    return out


def _noise(judgement: _Judgement, count: int, indices: Sequence[int]) -> tuple[float, float]:
    """The highest per-sentence baseline flip rate, and an upper bound on it (one standard error above)."""
    worst, upper = 0.0, 0.0
    for j in range(count):
        seen = [judgement.outcome(BASELINE, i, j) for i in indices]
        got = [o for o in seen if o is not None]
        if not got:
            continue
        rate = sum(got) / len(got)
        worst = max(worst, rate)
        upper = max(upper, min(0.5, rate + sqrt(rate * (1 - rate) / len(got))) if rate else 0.0)
    return worst, upper


async def cite(
    agent: Rerunnable | RecordLike,
    *,
    claims: Sequence[str] | None = None,
    splitter: Splitter | None = None,
    sentence_changed: SentenceChanged | None = None,
    samples: int = 3,
    confidence: float = 0.95,
    max_reruns: int | None = None,
    concurrency: int = 4,
    scorer: Scorer | None = None,
    progress: bool | None = None,
    run: Any = None,
) -> Citations:
    """Cite the last answer sentence by sentence (or the given ``claims``): the sources each depends on, proven by
    ablation reruns shared by every sentence, and the sentences no source supports.

    A pooled search over the ablatable sources proposes arms (those whose removal changes some sentence); each
    sentence x arm pair is judged on seeds the search never used (one-sided Fisher test against the baseline on the
    same seeds, Holm's correction over every pair, sets shown 1-minimal per sentence); pairs short of the corrected
    level are judged once more on fresh seeds with the samples the family needs. ``sentence_changed(sentence,
    rerun_answer)`` overrides the change detector, ``splitter(answer)`` the sentence splitter."""
    _check_args(claims, splitter, sentence_changed, samples, confidence, max_reruns, concurrency)
    changed = sentence_changed or _default_changed
    target = explained(agent, run)
    if not isinstance(target, Rerunnable):
        raise CiteError("citations rerun the agent: pass the Agent (or a RunResult with run= and the agent)")
    try:
        bt = backtrack(target)
    except BacktrackError as exc:
        raise CiteError(str(exc)) from None
    answer = bt.answer or ""
    if not _WORD.search(answer):
        raise CiteError("the run has no answer to cite")
    units = _sentences(answer, claims, splitter, changed)
    if not units:
        raise CiteError("the answer has no sentence to cite")
    texts = [u[0] for u in units]
    ranked_all = rank_suspects(bt, scorer or LexicalScorer(), _known_ids(target))
    trails: dict[str, SourceTrail] = {s.id: s for s, _ in ranked_all}
    flags: list[str] = []
    if not ranked_all:
        flags.append("no-ablatable-sources")

    def any_changed(original: str, rerun_answer: str) -> bool:
        return any(changed(t, rerun_answer) for t in texts)

    world = RerunWorld(ReplayCache(), _recorded_run_id(target))
    counter = _CallCount()
    answers = _Answers(_local_rerun(target, world, None, counter))
    bar = ProgressBar("reruns", None, progress)
    sampler = Sampler(answers, answer, any_changed, concurrency=concurrency, max_reruns=max_reruns,
                      on_rerun=bar.advance)  # fmt: skip
    alpha = 1.0 - float(confidence)
    judge = Judge(sampler, samples, None, alpha)
    localization = _Localization(judge, ranked_all, ranked_all, "auto", flags, concurrency, auto=True)
    judgement = _Judgement(answers, texts, changed, alpha)
    ctx = _Context(answers, judgement, answer, [s.id for s, _ in ranked_all], samples, concurrency, max_reruns,
                   bar.advance, flags)  # fmt: skip
    try:
        await localization.go()
        pairs = await _judge_pairs(localization, ctx)
    finally:
        bar.close()
    if ctx.budget_hit or sampler.budget_hit:
        flags.append("rerun-budget-exhausted")
    base_indices = sorted(i for (arm, i) in answers.got if arm == BASELINE)
    noise, _ = _noise(judgement, len(texts), base_indices)
    sentences = []
    for j, (text, start, end) in enumerate(units):
        mine = [p for p in pairs if p.sentence == j]
        mine.sort(key=lambda p: (p.verdict != "confirmed", p.verdict != "inconclusive", p.p_value, sorted(p.arm)))
        support = [_support(p, trails, alpha, len(pairs)) for p in mine]
        confirmed = sorted(
            {i for p in mine if p.verdict == "confirmed" for i in p.arm}, key=lambda i: trails[i].position
        )
        doubtful = j in ctx.void or any(p.verdict == "inconclusive" for p in mine)
        status: Status = "supported" if confirmed else "inconclusive" if doubtful else "unsupported"
        base = [judgement.outcome(BASELINE, i, j) for i in base_indices]
        sentences.append(
            SentenceCitation(
                index=j, text=text, start=start, end=end, status=status, sources=confirmed, support=support,
                baseline_flips=sum(1 for o in base if o), baseline_samples=sum(1 for o in base if o is not None),
            )
        )  # fmt: skip
    return Citations(
        trigger=bt.trigger,
        answer=answer,
        sentences=sentences,
        sources_considered=len(ranked_all),
        reruns=answers.calls,
        model_calls=counter.calls - world.cache.saved,
        model_calls_saved=world.cache.saved,
        confidence=float(confidence),
        arms_compared=len(pairs),
        samples_per_arm=max((p.samples for p in pairs), default=None),
        noise=round(noise, 4),
        budget_exhausted=ctx.budget_hit or sampler.budget_hit,
        honesty_flags=list(dict.fromkeys(flags)),
    )


def _default_changed(sentence: str, rerun_answer: str) -> bool:
    return sentence_changed(sentence, rerun_answer)


@dataclass
class _Context:
    """What the per-sentence passes share: the reruns, the judgement, and the budget."""

    answers: _Answers
    judgement: _Judgement
    original: str
    population: list[str]
    samples: int
    concurrency: int
    max_reruns: int | None
    on_rerun: Callable[[], None]
    flags: list[str]
    budget_hit: bool = False
    union_noise: float = 0.5
    void: set[int] = field(default_factory=set)
    """Sentences whose own baseline changes more often than not: nothing can be proven about them."""
    """An upper bound on how often the answer changes somewhere with nothing removed (bounds every sentence's)."""

    def base_indices(self) -> list[int]:
        return sorted(i for (arm, i) in self.answers.got if arm == BASELINE)

    def remaining(self) -> int | None:
        return None if self.max_reruns is None else self.max_reruns - self.answers.calls

    def sampler(self, changed: Callable[[str, str], bool], offset: int = 0) -> Sampler:
        left = self.remaining()
        if left is not None and left < 1:
            self.budget_hit = True
            raise BudgetExhausted()
        return _OffsetSampler(offset, self.answers, self.original, changed, concurrency=self.concurrency,
                              max_reruns=left, on_rerun=self.on_rerun)  # fmt: skip


async def _judge_pairs(localization: _Localization, ctx: _Context) -> list[_Pair]:
    """Every sentence x arm pair the confirmations cover, judged with Holm's correction over them all: the first
    pass's arms, then arms a sentence's own search finds when no first-pass arm supports it."""
    confirmer = localization.confirmer
    if confirmer is None:
        return []
    judgement, count = ctx.judgement, len(ctx.judgement.sentences)
    ctx.union_noise = confirmer.noise.upper()
    latest = {c.arm: c for c in confirmer.checks}  # an arm judged more than once stands by its last check
    pairs = [_Pair(j, c.arm, c.start, c.start + c.samples) for c in latest.values() for j in range(count)]
    for p in pairs:
        judgement.measure(p)
    for j in range(count):
        seen = [o for o in (judgement.outcome(BASELINE, i, j) for i in ctx.base_indices()) if o is not None]
        if seen and binomial_upper(sum(seen), len(seen)) <= judgement.alpha:
            ctx.void.add(j)
    if ctx.void:
        ctx.flags.append("sentence-not-reproducible")
    judgement.judge(pairs, ctx.void)
    if localization.judge.sampler.budget_hit:
        return pairs
    await _settle(ctx, pairs)
    try:
        await _follow_up(ctx, pairs)
    except BudgetExhausted:
        ctx.budget_hit = True
    judgement.judge(pairs, ctx.void)
    await _settle(ctx, pairs)
    return pairs


async def _settle(ctx: _Context, pairs: list[_Pair]) -> None:
    """Pairs short of the corrected level only: their arms take a second look, and the family is judged again."""
    alpha = ctx.judgement.alpha
    short = {p.arm for p in pairs if p.verdict != "confirmed" and p.majority and min(p.looks) <= alpha}
    short = {a for a in short if all(len(p.looks) < len(LOOKS) for p in pairs if p.arm == a)}
    if short and not ctx.budget_hit:
        await _next_look(ctx, pairs, short)
        ctx.judgement.judge(pairs, ctx.void)


async def _follow_up(ctx: _Context, pairs: list[_Pair]) -> None:
    """A sentence no first-pass arm supports, whose change when every source is removed the reruns show, gets its
    own search (a redundant pair another sentence's culprit hides from the first pass); its sets join the family."""
    judgement, count = ctx.judgement, len(ctx.judgement.sentences)
    supported = {p.sentence for p in pairs if p.verdict == "confirmed"} | ctx.void
    known = {p.arm for p in pairs}
    everything = frozenset(ctx.population)
    for j in range(count):
        if j in supported or not everything:
            continue
        text = judgement.sentences[j]

        def changed_j(_original: str, rerun: str, text: str = text) -> bool:
            return bool(judgement.changed(text, rerun))

        sampler = ctx.sampler(changed_j, FOLLOW_BASE + j * FOLLOW_BLOCK)
        seen = [o for o in (judgement.outcome(BASELINE, i, j) for i in ctx.base_indices()) if o is not None]
        noise = NoiseLog(base_flips=sum(seen), base_samples=len(seen))  # the first pass's baseline, read for free
        confirmer = Confirmer(sampler, judgement.alpha, ctx.samples, noise)
        if not await Oracle(sampler, confirmer.noise).test(everything, sure_no=SURE_NO_LOG_ODDS):
            continue  # removing every source leaves it as it is: nothing to look for
        outcome = await PooledSearch(sampler, confirmer, ctx.population).run([])
        await confirmer.finish()
        if outcome.budget_stopped or sampler.budget_hit:
            ctx.budget_hit = True
        if outcome.stopped_early:
            ctx.flags.append("search-stopped-early")
        offset = FOLLOW_BASE + j * FOLLOW_BLOCK
        for c in {c.arm: c for c in confirmer.checks}.values():
            if c.arm in known:
                continue
            known.add(c.arm)
            fresh = [_Pair(i, c.arm, c.start + offset, c.start + offset + c.samples) for i in range(count)]
            for p in fresh:
                judgement.measure(p)
            pairs += fresh
        if ctx.budget_hit:
            return


async def _next_look(ctx: _Context, pairs: list[_Pair], short: set[Arm]) -> None:
    """The arms of pairs short of the corrected level take more samples on the same fresh seeds (their next look)."""
    judgement, count = ctx.judgement, len(ctx.judgement.sentences)
    base = sorted(i for (arm, i) in ctx.answers.got if arm == BASELINE)
    upper = min(_noise(judgement, count, base)[1], ctx.union_noise)
    grown = [p for p in pairs if p.arm in short]
    share = min(LOOKS[len(p.looks)] for p in grown)
    n = plan_samples(upper, judgement.alpha * share / len(pairs), cap=CAP)
    if n is None:
        ctx.flags.append("budget-too-small-for-noise")
        n = CAP
    stops = {(p.arm, p.start): max(p.stop + 1, p.start + n) for p in grown}
    jobs = [(BASELINE, p.start, stops[(p.arm, p.start)]) for p in grown]
    jobs += [(p.arm - {m}, p.start, stops[(p.arm, p.start)]) for p in grown if len(p.arm) > 1 for m in p.arm]
    jobs += [(p.arm, p.start, stops[(p.arm, p.start)]) for p in grown]
    try:
        sampler = ctx.sampler(lambda _o, _r: False)
    except BudgetExhausted:
        return
    await asyncio.gather(*(sampler.sample_range(a, start, stop) for a, start, stop in dict.fromkeys(jobs)))
    if sampler.budget_hit:
        ctx.budget_hit = True
    for p in grown:
        p.stop = stops[(p.arm, p.start)]
        judgement.measure(p)


def _support(p: _Pair, trails: dict[str, SourceTrail], alpha: float, family: int) -> Support:
    ids = tuple(sorted(p.arm, key=lambda i: trails[i].position))
    label = " and ".join(f"{trails[i].kind} '{i}'" for i in ids) + (" together" if len(ids) > 1 else "")
    tail = (
        f"removing {label} changed it in {p.flips}/{p.samples} seeded reruns vs {p.base_flips}/{p.samples} for "
        f"the baseline on the same seeds (one-sided Fisher p={p.p_value:.3g} over {len(p.looks)} look(s), "
        f"Holm's correction over {family} pairs at {alpha:.3g})"
    )
    if len(ids) > 1 and p.verdict != "not-confirmed":
        tail += "; restoring any one member stops the change" if p.minimal else "; not shown 1-minimal"
    if p.errors:
        tail += f"; {p.errors} rerun(s) failed"
    return Support(
        ids=ids, kinds=tuple(trails[i].kind for i in ids), verdict=p.verdict, flips=p.flips, samples=p.samples,
        errors=p.errors, baseline_flips=p.base_flips, p_value=p.p_value, minimal=p.minimal,
        claim=f"{_LABEL[p.verdict]}: {tail}",
    )  # fmt: skip


def cite_sync(agent: Rerunnable | RecordLike, **kwargs: Any) -> Citations:
    """Blocking twin of :func:`cite`."""
    return run_sync(cite(agent, **kwargs), "await cite(...)")


__all__ = [
    "Citations",
    "CiteError",
    "SentenceChanged",
    "SentenceCitation",
    "Splitter",
    "Support",
    "cite",
    "cite_sync",
    "sentence_changed",
    "split_sentences",
]
