"""Ablation arms: seeded, paired reruns memoized per (ablated set, seed), a rerun budget, and each arm's verdict."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agentfootprint.explain._stats import Decision, Verdict, fisher_decision, majority_decision

Arm = frozenset[str]
BASELINE: Arm = frozenset()
Rerun = Callable[[int, Sequence[str]], Awaitable[str]]
OutcomeChanged = Callable[[str, str], bool]


class BudgetExhausted(Exception):
    """The rerun budget ran out before an arm was settled (internal: stops a search)."""


@dataclass(frozen=True)
class ArmResult:
    """One arm's standing: flips over its samples, the baseline's flips over the same seeds, and its verdict."""

    ids: Arm
    verdict: Verdict
    flips: int
    samples: int
    errors: int
    baseline_flips: int
    p_value: float | None
    settled: bool


class Sampler:
    """Runs reruns for arms under one semaphore; sample ``i`` of every arm uses seed ``i`` (paired arms)."""

    def __init__(
        self,
        rerun: Rerun,
        original: str,
        changed: OutcomeChanged,
        *,
        concurrency: int,
        max_reruns: int | None,
        on_rerun: Callable[[], None],
    ) -> None:
        self._rerun = rerun
        self._original = original
        self._changed = changed
        self._sem = asyncio.Semaphore(concurrency)
        self._max_reruns = max_reruns
        self._on_rerun = on_rerun
        self._outcomes: dict[tuple[Arm, int], bool | None] = {}
        self._tasks: dict[tuple[Arm, int], asyncio.Task[bool | None]] = {}
        self.reruns = 0
        self.budget_hit = False

    def seed(self, index: int) -> int:
        return index

    async def _one(self, arm: Arm, index: int) -> bool | None:
        async with self._sem:
            try:
                answer = await self._rerun(self.seed(index), sorted(arm))
            except Exception:
                return None
            finally:
                self._on_rerun()
        return bool(self._changed(self._original, answer))

    async def sample(self, arm: Arm, count: int) -> list[bool | None]:
        """Outcomes for seeds ``0..count-1`` (memoized); a shorter list when the rerun budget ran out."""
        return await self.sample_range(arm, 0, count)

    async def sample_range(self, arm: Arm, start: int, stop: int) -> list[bool | None]:
        """Outcomes for sample indices ``start..stop-1`` (memoized); shorter when the rerun budget ran out."""
        waits: list[asyncio.Task[bool | None]] = []
        for i in range(start, stop):
            key = (arm, i)
            if key in self._outcomes:
                continue
            task = self._tasks.get(key)
            if task is None:
                if self._max_reruns is not None and self.reruns >= self._max_reruns:
                    self.budget_hit = True
                    break
                self.reruns += 1
                task = asyncio.ensure_future(self._one(arm, i))
                self._tasks[key] = task
            waits.append(task)
        if waits:
            await asyncio.gather(*waits)
        for (a, i), task in list(self._tasks.items()):
            if a == arm and task.done():
                self._outcomes[(a, i)] = task.result()
                del self._tasks[(a, i)]
        out: list[bool | None] = []
        for i in range(start, stop):
            if (arm, i) not in self._outcomes:
                break
            out.append(self._outcomes[(arm, i)])
        return out

    def taken(self, arm: Arm) -> list[bool | None]:
        out: list[bool | None] = []
        while (arm, len(out)) in self._outcomes:
            out.append(self._outcomes[(arm, len(out))])
        return out


def _flips(outcomes: Sequence[bool | None]) -> int:
    return sum(1 for o in outcomes if o)


def _errors(outcomes: Sequence[bool | None]) -> int:
    return sum(1 for o in outcomes if o is None)


class Judge:
    """Decides arms: the majority of ``samples`` (``max_samples=None``) or the curtailed Fisher rule up to
    ``max_samples`` at ``alpha``; decided arms are kept so a set tested twice is judged once."""

    def __init__(self, sampler: Sampler, samples: int, max_samples: int | None, alpha: float) -> None:
        self.sampler = sampler
        self.samples = samples
        self.max_samples = max_samples
        self.alpha = alpha
        self.decided: dict[Arm, ArmResult] = {}
        self._early: dict[Arm, ArmResult] = {}
        self._locks: dict[Arm, asyncio.Lock] = {}

    @property
    def statistical(self) -> bool:
        return self.max_samples is not None

    def known(self, arm: Arm) -> ArmResult | None:
        """The arm's verdict so far: decided in full, or settled early by a majority arm (``decide(full=False)``)."""
        return self.decided.get(arm) or self._early.get(arm)

    def _result(self, arm: Arm, outcomes: list[bool | None], decision: Decision) -> ArmResult:
        base = self.sampler.taken(BASELINE)[: len(outcomes)]
        return ArmResult(
            ids=arm,
            verdict=decision.verdict,
            flips=_flips(outcomes),
            samples=len(outcomes),
            errors=_errors(outcomes),
            baseline_flips=_flips(base),
            p_value=decision.p_value,
            settled=decision.settled,
        )

    async def baseline(self) -> ArmResult:
        outcomes = await self.sampler.sample(BASELINE, self.samples)
        flips = _flips(outcomes)
        verdict: Verdict = "not-confirmed" if flips == 0 else "inconclusive"
        return ArmResult(BASELINE, verdict, flips, len(outcomes), _errors(outcomes), flips, None, True)

    async def screen(self, arm: Arm) -> bool | None:
        """One rerun (seed 0): whether ablating the set flipped it — a lead for a search, never a verdict.

        None when the rerun budget ran out."""
        outcomes = await self.sampler.sample(arm, 1)
        return bool(outcomes[0]) if outcomes else None

    async def decide(self, arm: Arm, *, full: bool = True) -> ArmResult:
        """The arm's verdict; ``full=False`` lets a majority arm stop once its samples already decide it."""
        done = self.decided.get(arm)
        if done is not None:
            return done
        lock = self._locks.setdefault(arm, asyncio.Lock())
        async with lock:
            done = self.decided.get(arm)
            if done is not None:
                return done
            if not full and arm in self._early:
                return self._early[arm]
            result = await (self._fisher(arm) if self.statistical else self._majority(arm, full))
            if full or self.statistical:
                self.decided[arm] = result
            else:
                self._early[arm] = result
            return result

    async def _majority(self, arm: Arm, full: bool) -> ArmResult:
        planned = self.samples
        first = planned if full else min(planned, planned // 2 + 1)
        outcomes = await self.sampler.sample(arm, first)
        decision = majority_decision(_flips(outcomes), len(outcomes), planned)
        if full or not decision.settled:
            outcomes = await self.sampler.sample(arm, planned)
            decision = majority_decision(_flips(outcomes), len(outcomes), planned)
        return self._result(arm, outcomes, decision)

    async def _fisher(self, arm: Arm) -> ArmResult:
        assert self.max_samples is not None
        planned = self.max_samples
        count = min(self.samples, planned)
        while True:
            outcomes, base = await asyncio.gather(self.sampler.sample(arm, count), self.sampler.sample(BASELINE, count))
            base = self.sampler.taken(BASELINE)[:planned]
            taken = min(len(outcomes), len(base))
            outcomes = outcomes[:taken]
            decision = fisher_decision(
                _flips(outcomes),
                taken,
                _flips(base[:taken]),
                _flips(base),
                len(base),
                planned,
                self.alpha,
            )
            if decision.settled or taken < count or count >= planned:
                return self._result(arm, outcomes, decision)
            count = min(planned, count + max(self.samples, count // 2))
