"""The default localization (``max_samples="auto"``): a pooled search proposes culprit sets, and each proposal is
confirmed on fresh seeds against the baseline, with as many samples as the observed noise needs (at up to four looks,
stopping at the first that settles it), Holm's correction over every arm compared with the baseline, and each member
restored in turn (the 1-minimal check)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentfootprint.explain._arms import BASELINE, Arm, ArmResult, BudgetExhausted, Sampler
from agentfootprint.explain._hitting import hitting_sets
from agentfootprint.explain._pooled import (
    SEARCH_BASE,
    STOP_POSTERIOR,
    SURE_NO_LOG_ODDS,
    NoiseLog,
    Oracle,
    Transition,
    flipping_mask,
    question_budget,
)
from agentfootprint.explain._sequential import design, look_size, sequential_p
from agentfootprint.explain._stats import (
    Verdict,
    fisher_decision,
    fisher_floor,
    fisher_one_sided,
    holm_tarone,
    plan_samples,
    tarone_count,
)

CAP = 100
"""The most samples per arm the automatic size grows to."""
MAX_SETS = 8
MAX_ATTEMPTS = 6
RECHECK_POSTERIOR = 0.97
RECHECK_NONE = 2
INSIST = 2
MASK_ROUNDS = 3


@dataclass
class Check:
    """One arm judged against the baseline on indices it never used, with its members restored in turn."""

    arm: Arm
    start: int
    n: int
    flips: int = 0
    samples: int = 0
    errors: int = 0
    base_flips: int = 0
    p_value: float = 1.0
    restored: list[ArmResult] = field(default_factory=list)
    needed: list[bool] = field(default_factory=list)
    still_flips: list[bool] = field(default_factory=list)
    verdict: Verdict = "inconclusive"
    settled: bool = True
    early: bool = False
    weights: tuple[float, ...] = (1.0,)
    looks: list[float] = field(default_factory=list)
    floors: list[float] = field(default_factory=list)
    """The least p-value each look's flips allowed (however they had fallen between the arm and the baseline)."""
    needed_looks: dict[str, list[float]] = field(default_factory=dict)
    shown_needed: dict[str, ArmResult] = field(default_factory=dict)
    corrected: bool = True
    """Whether the 1-minimal check passes Holm's correction over the family (a one-member arm has nothing to pass)."""

    @property
    def floor(self) -> float:
        """The least claim p-value the flips seen allow: a check that cannot reach a level takes no share of it."""
        if not self.floors:
            return 0.0
        return min([1.0] + [f / w for f, w in zip(self.floors, self.weights, strict=False) if w > 0])

    @property
    def majority(self) -> bool:
        return self.flips * 2 > self.samples

    @property
    def each_needed(self) -> bool:
        """Every member's restore test passes on its own (before the family's correction)."""
        return all(self.needed) and len(self.needed) == len(self.arm) - (1 if len(self.arm) == 1 else 0)

    @property
    def minimal(self) -> bool:
        return self.each_needed and self.corrected

    @property
    def claim_p(self) -> float:
        """One p-value for the claim "a culprit set, 1-minimal": the largest of the arm's and of every member's
        restore test (an intersection-union test: the claim holds only if each of its parts does)."""
        if len(self.arm) == 1:
            return self.p_value
        if len(self.restored) < len(self.arm):
            return 1.0
        return max([self.p_value] + [r.p_value if r.p_value is not None else 1.0 for r in self.restored])

    def result(self) -> ArmResult:
        """The arm's standing; a set that flips but is not shown 1-minimal is only ``inconclusive``."""
        verdict: Verdict = "inconclusive" if self.verdict == "confirmed" and not self.minimal else self.verdict
        return ArmResult(
            self.arm, verdict, self.flips, self.samples, self.errors, self.base_flips, self.p_value, self.settled
        )


def _count(outcomes: Sequence[bool | None]) -> tuple[int, int]:
    return sum(1 for o in outcomes if o), sum(1 for o in outcomes if o is None)


class Confirmer:
    """Judges proposed arms against the baseline on sample indices each arm never used before (the search's own
    indices are apart); keeps every judged arm, the family Holm's correction covers."""

    def __init__(self, sampler: Sampler, alpha: float, samples: int, noise: NoiseLog) -> None:
        self.sampler = sampler
        self.alpha = alpha
        self.samples = max(1, samples)
        self.noise = noise
        self.checks: list[Check] = []
        self.short = False
        self._next: dict[Arm, int] = {}
        self._base_seen: set[int] = set()

    def plan(self, family: int, weights: tuple[float, ...] | None = None) -> tuple[int, tuple[float, ...]]:
        """Samples per arm that reach the stated power at ``alpha / family`` under the noise seen so far, and the
        looks' shares of the error rate (the last look's share alone reaches the power: earlier looks only add)."""
        noise, alpha = self.noise.upper(), self.alpha / max(1, family)
        if weights is None:
            fixed = plan_samples(noise, alpha, cap=CAP)
            weights = design(CAP if fixed is None else fixed)
        n = plan_samples(noise, alpha * weights[-1], cap=CAP)
        if n is None:
            self.short = True
            n = CAP
        return max(n, self.samples), weights

    def family(self) -> int:
        """How many judged arms the correction divides the error rate among: those whose flips could still reach
        it (Tarone's count; an arm not yet sampled counts)."""
        return tarone_count([c.floor for c in self.checks], self.alpha)

    async def baseline(self, start: int, stop: int) -> list[bool | None]:
        out = await self.sampler.sample_range(BASELINE, start, stop)
        for i, o in enumerate(out, start):
            if i not in self._base_seen and o is not None:
                self._base_seen.add(i)
                self.noise.base_samples += 1
                self.noise.base_flips += bool(o)
        return out

    async def check(self, arms: list[Arm]) -> list[Check]:
        """Judge ``arms`` (and each member restored) in step with the baseline, each on indices it never used, at
        up to ``LOOKS`` looks; an arm stops at the first look that settles it (group-sequential)."""
        checks = [Check(arm, self._next.get(arm, 0), 0) for arm in arms]
        self.checks += checks
        n, weights = self.plan(self.family())  # the design (its looks' shares) is fixed before any sample
        looks = len(weights)
        taken = 0
        live = list(checks)
        for c in checks:
            c.weights = weights
        for look in range(1, looks + 1):
            if not live:
                break
            taken = max(taken + 1, look_size(look, n, looks) if look < looks else n)
            await self._sample(live, taken, n, look)
            if look < looks:  # the baseline grew in step: re-plan the size with what it shows
                n = max(n, self.plan(self.family(), weights)[0])
            for c in live:
                c.n = max(n, c.samples)
            live = [c for c in live if not c.settled and c.samples >= taken]
        for c in checks:
            self._next[c.arm] = c.start + c.samples
            # whether or not the arm truly flips, the rarer of its two outcomes was noise
            self.noise.mismatches += min(c.flips, c.samples - c.flips)
            self.noise.answers += c.samples
        self.judge()
        return checks

    async def _sample(self, checks: list[Check], taken: int, n: int, look: int) -> None:
        spans = sorted({c.start for c in checks})
        bases = dict(zip(spans, await asyncio.gather(*(self.baseline(s, s + taken) for s in spans)), strict=True))
        arms = [(c, c.arm) for c in checks]
        # a member already shown needed is settled: its restored arm takes no more samples
        arms += [(c, c.arm - {m}) for c in checks if len(c.arm) > 1 for m in sorted(c.arm) if m not in c.shown_needed]
        outs = await asyncio.gather(*(self.sampler.sample_range(a, c.start, c.start + taken) for c, a in arms))
        table = {(id(c), a): o for (c, a), o in zip(arms, outs, strict=True)}
        for c in checks:
            base, own = bases[c.start], table[(id(c), c.arm)]
            k = min(len(base), len(own))
            c.n, c.samples = n, k
            c.flips, c.errors = _count(own[:k])
            c.base_flips = _count(base[:k])[0]
            c.floors.append(fisher_floor(c.flips + c.base_flips, k) if k else 1.0)
        family = self.family()
        for c in checks:
            k = c.samples
            # each look spends its share of the error rate: the arm's p-value is the least p / share over its looks
            c.looks.append(fisher_one_sided(c.flips, k, c.base_flips, k) if k else 1.0)
            c.p_value = sequential_p(c.looks, c.weights)
            c.restored, c.needed, c.still_flips = [], [], []
            for m in sorted(c.arm) if len(c.arm) > 1 else []:
                if m in c.shown_needed:
                    c.needed.append(True)
                    c.still_flips.append(False)
                    c.restored.append(c.shown_needed[m])
                    continue
                r = table[(id(c), c.arm - {m})][:k]
                rf, re = _count(r)
                mine = c.needed_looks.setdefault(m, [])
                mine.append(fisher_one_sided(c.flips, k, rf, k) if k else 1.0)
                p_needed = sequential_p(mine, c.weights)
                p_flips = fisher_one_sided(rf, k, c.base_flips, k) if k else 1.0
                still = rf * 2 > len(r) > 0 and p_flips <= self.alpha
                c.needed.append(p_needed <= self.alpha and not still and len(r) >= k)
                c.still_flips.append(still)
                verdict: Verdict = "confirmed" if still else ("not-confirmed" if c.needed[-1] else "inconclusive")
                c.restored.append(ArmResult(c.arm - {m}, verdict, rf, len(r), re, c.base_flips, p_needed, True))
                if c.needed[-1] and p_needed <= self.alpha / family:  # shown at the strictest correction: settled
                    c.shown_needed[m] = c.restored[-1]
            # stopped early once confirmed at the strictest correction the family now needs (for a set, its members'
            # restore tests too), or once no outcome still to come could confirm it (curtailed for futility)
            hopeless = fisher_decision(c.flips, k, c.base_flips, c.base_flips, k, n, self.alpha)
            c.corrected = c.claim_p <= self.alpha / family
            proven = c.majority and c.minimal
            c.early = (hopeless.settled and hopeless.verdict != "confirmed") or proven
            c.settled = k >= n or c.early or (look >= len(c.weights) and k >= taken)
        self.judge()

    def judge(self) -> None:
        """Verdicts over the whole family: Holm over every arm compared with the baseline (with Tarone's count for
        discrete tests), a flip rate above 1/2; a set's claim is tested as a whole (its arm and each member's restore
        test), so 1-minimality is corrected for the family's size too."""
        rejected = holm_tarone([c.claim_p for c in self.checks], [c.floor for c in self.checks], self.alpha)
        for c, ok in zip(self.checks, rejected, strict=True):
            c.corrected = ok
            if ok and c.majority and c.settled:
                c.verdict = "confirmed"
            elif (c.flips and (c.majority or c.p_value <= self.alpha)) or not c.settled:
                c.verdict = "inconclusive"
            else:
                c.verdict = "not-confirmed"

    def void(self) -> None:
        """The baseline turned out to flip more than half of the time: no arm is confirmed against it."""
        for c in self.checks:
            if c.verdict == "confirmed":
                c.verdict = "inconclusive"

    async def finish(self) -> None:
        """Once the family is complete: an arm that would be confirmed but for the correction Holm needs for the
        final family size is judged once more, on indices it never used, with the samples that family needs."""
        self.judge()
        latest = {c.arm: c for c in self.checks}  # an arm judged more than once stands by its last check
        short = [
            c.arm
            for c in latest.values()
            if c.verdict != "confirmed" and c.majority and c.claim_p <= self.alpha and c.each_needed
        ]
        if short:
            await self.check(short)


@dataclass
class Proposal:
    """What the search found: the checks it ran, flags it raised, and whether it stopped before it was done."""

    flags: list[str] = field(default_factory=list)
    stopped_early: bool = False
    budget_stopped: bool = False


class PooledSearch:
    """Culprit sets by noisy adaptive group testing, each one confirmed on fresh seeds; a hitting-set tree over the
    confirmed sets looks for the others (a conjunctive partner included) until none remains."""

    def __init__(
        self,
        sampler: Sampler,
        confirmer: Confirmer,
        population: list[str],
        *,
        seed: int = 0,
        max_sets: int = MAX_SETS,
    ) -> None:
        self.sampler = sampler
        self.confirmer = confirmer
        self.population = list(population)
        self.rank: Callable[[str], int] = {sid: i for i, sid in enumerate(self.population)}.__getitem__
        self.oracle = Oracle(sampler, confirmer.noise)
        self.seed = seed
        self.max_sets = max_sets
        self.out = Proposal()

    def _ordered(self, ids: Arm) -> list[str]:
        return sorted(ids, key=self.rank)

    async def run(self, found: list[Arm]) -> Proposal:
        """Look for every culprit set, starting from those already confirmed (``found``)."""
        everything = frozenset(self.population)
        try:
            await self._tree(everything, list(found))
        except BudgetExhausted:
            self.out.budget_stopped = True
        return self.out

    async def _tree(self, everything: Arm, found: list[Arm]) -> None:
        async def locate(path: Arm) -> Arm | None:
            check = await self.locate(everything - path, first=not path)
            return check.arm if check is not None and check.verdict == "confirmed" and check.minimal else None

        async def flips(rest: Arm) -> bool:
            return await self.oracle.test(rest, sure_no=SURE_NO_LOG_ODDS)

        if await hitting_sets(
            everything, found, max_sets=self.max_sets, flips=flips, locate=locate, order=self._ordered
        ):
            self.out.stopped_early = True

    async def _bisect(self, background: Arm, order: list[str], p_empty: float, p_none: float) -> Transition:
        t = Transition(self.oracle, background, order, p_empty=p_empty, p_none=p_none)
        await self._resume(t, STOP_POSTERIOR)
        return t

    async def _resume(self, t: Transition, stop: float) -> int:
        budget = question_budget(len(t.order), self.oracle.noise.working()) + t.queries
        h = await t.run(budget, stop)
        if t.queries >= budget:
            self.out.stopped_early = True
        return h

    async def _recheck_none(self, t: Transition) -> int:
        """The bisection's pick; "nothing flips" is concluded only after the whole order was asked again twice (a
        clean-looking baseline makes the search trust single answers, and one noisy answer must not end it)."""
        h = t.best()
        if h > len(t.order) and t.order:
            for _ in range(RECHECK_NONE):
                await t.ask(len(t.order))
            h = await self._resume(t, RECHECK_POSTERIOR)
        return h

    async def _masked(self, order: list[str]) -> tuple[Transition, int] | None:
        """When ablating everything does not flip: a flipping subset found with random masks, then bisected."""
        for flag in ("no-flip-with-everything-ablated", "removable-source-may-carry-right-answer"):
            if flag not in self.out.flags:
                self.out.flags.append(flag)
        for _ in range(MASK_ROUNDS):  # a mask that flipped by noise is tested again with what it showed since
            mask = await flipping_mask(self.oracle, order, self.seed)
            if mask is None:
                return None
            t = await self._bisect(frozenset(), self._ordered(mask), 0.0, 0.02)
            h = await self._recheck_none(t)
            if h <= len(t.order):
                return t, h
        return None

    async def _screened_out(self, candidate: list[str], prior: float = 0.5) -> bool:
        """On a model that has shown noise, a proposed set is first tested with search reruns (seeds the confirmation
        never uses), so a member of a redundant pair or a vote is not proposed alone, nor a set the bisection picked
        by noise: a proposal that fails would enlarge the family Holm's correction covers for every later one."""
        if self.oracle.noise.rate() <= 0:
            return False
        return not await self.oracle.test(frozenset(candidate), prior=prior)

    async def _trimmed(self, candidate: list[str]) -> list[str]:
        """On a model that has shown noise, an older member of a proposed set of three or more is dropped when the
        search's own reruns say the set flips without it (a pick made by noise rode along)."""
        if self.oracle.noise.rate() <= 0:
            return candidate
        for m in candidate[:-1]:
            if len(candidate) > 2 and await self.oracle.test(frozenset(candidate) - {m}):
                candidate = [x for x in candidate if x != m]
        return candidate

    async def locate(self, rest: Arm, *, first: bool) -> Check | None:
        """A confirmed, 1-minimal culprit set within ``rest`` (or the last check that failed, or None)."""
        t = await self._bisect(frozenset(), self._ordered(rest), 0.0, 0.2)
        h = await self._recheck_none(t)
        masked, whole = 0, t.order
        if h > len(t.order):
            found = await self._masked(t.order) if first else None
            if found is None:
                return None
            (t, h), masked = found, 1
        members: list[str] = []
        last: Check | None = None
        fixed: list[str] | None = None  # a set to judge as it is (a member the search misjudged was dropped)
        first_t, first_h = t, h
        insist = 0
        for _ in range(MAX_ATTEMPTS):
            if h > len(t.order) and t is not first_t:  # no further member: the first pick was noise after all
                t, members = first_t, []
                for _ in range(2):
                    await t.ask(first_h)
                    await t.ask(first_h - 1)
                h = await self._resume(t, RECHECK_POSTERIOR)
                first_h = h
            if h > len(t.order) and first and masked < MASK_ROUNDS:  # the prefixes stopped flipping when re-asked
                found = await self._masked(whole)
                if found is None:
                    return last
                (t, h), masked, members, fixed = found, masked + 1, [], None
                first_t, first_h = t, h
            if h > len(t.order):
                return last
            candidate = fixed if fixed is not None else members + ([t.order[h - 1]] if h >= 1 else [])
            if not candidate:
                return last
            # a single the bisection picked starts its screen from the bisection's belief in it (at most the stop
            # level: a larger set also ends the first flipping prefix there)
            single = len(candidate) == 1 and fixed is None
            if fixed is None:
                candidate = await self._trimmed(candidate)
            prior = max(0.5, min(STOP_POSTERIOR, t.posterior()[h])) if single else 0.5
            if await self._screened_out(candidate, prior):
                pass  # the search's own reruns say this source alone does not flip: never judged, never counted
            else:
                (last,) = await self.confirmer.check([frozenset(candidate)])
                if last.verdict == "confirmed" and last.minimal:
                    return last
                if last.majority and any(last.still_flips):  # a member the search misjudged: drop it, judge again
                    fixed = [m for m, s in zip(sorted(last.arm), last.still_flips, strict=True) if not s]
                    continue
                if last.majority:
                    continue  # it flipped, not enough to prove it: judge it again on fresh seeds
                if fixed is not None:
                    return last
            # noise, or a set that needs one more member? ask the two prefixes that decide it again
            await t.ask(h)
            await t.ask(h - 1 if h >= 1 else min(1, len(t.order)))
            again = await self._resume(t, RECHECK_POSTERIOR)
            if again != h:
                h = again
                continue
            if h == 0:
                return last
            members, prefix = candidate, t.order[: h - 1]
            if not prefix and last is not None and last.arm == frozenset(candidate) and insist < INSIST:
                insist += 1  # the search insists on a set that has no further member: judge it again, larger
                members = []
                continue
            if not prefix:
                return last
            t = await self._bisect(frozenset(members), prefix, 0.01, 0.05)
            h = t.best()
        self.out.stopped_early = True
        return last


__all__ = ["SEARCH_BASE", "Check", "Confirmer", "PooledSearch", "Proposal"]
