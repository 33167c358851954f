"""Noisy adaptive group testing: every search rerun updates a posterior over where a culprit set starts.

The search orders the sources and asks, one rerun at a time, whether ablating a prefix flips the outcome. Each
answer re-weights every hypothesis "the first flipping prefix ends at source j" by its likelihood under the noise
the reruns show (probabilistic bisection), so no rerun is wasted on one source only. Search reruns use their own
sample indices (from ``SEARCH_BASE``): what they pick is confirmed on seeds they never used."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import log, sqrt

from agentfootprint.explain._arms import Arm, BudgetExhausted, Sampler

SEARCH_BASE = 1_000_000
"""Sample indices at and above this are the search's; confirmations use the indices below it."""
NOISE_FLOOR = 0.005
"""The smallest flip-noise rate the search assumes (a clean model still gets one chance to be wrong)."""
STOP_POSTERIOR = 0.8
SPRT_LOG_ODDS = log(19.0)
SURE_NO_LOG_ODDS = log(99.0)
"""The partner check's bound for "ablating the rest does not flip": a wrong "no" would end the search."""
MAX_TEST_SAMPLES = 12
MASKS = 8


@dataclass
class NoiseLog:
    """What the reruns say about noise: the baseline's flips, and search answers that contradict the best guess
    (of each bisection, the fewest any of its hypotheses needs)."""

    base_flips: int = 0
    base_samples: int = 0
    mismatches: int = 0
    answers: int = 0
    bisections: list[Transition] = field(default_factory=list)

    def rate(self) -> float:
        mism = self.mismatches + sum(min(t.mismatch) for t in self.bisections)
        total = self.base_samples + self.answers + sum(t.queries for t in self.bisections)
        return (self.base_flips + mism) / total if total else 0.0

    def upper(self) -> float:
        """An upper bound on the noise (one standard error above the rate seen), once any noise has shown: the
        rate seen early is often below the model's, and samples sized to it fall short of the stated power."""
        mism = self.mismatches + sum(min(t.mismatch) for t in self.bisections)
        total = self.base_samples + self.answers + sum(t.queries for t in self.bisections)
        rate = self.rate()
        return min(0.5, rate + sqrt(rate * (1 - rate) / total)) if total and mism + self.base_flips else rate

    def working(self) -> float:
        """The noise rate the search assumes (never below ``NOISE_FLOOR``)."""
        return min(0.45, max(NOISE_FLOOR, self.rate()))


@dataclass
class Oracle:
    """One search rerun per question; every arm's answers so far are kept (and reused by a later question)."""

    sampler: Sampler
    noise: NoiseLog
    answers: dict[Arm, list[bool]] = field(default_factory=dict)
    errors: int = 0

    async def one(self, arm: Arm) -> bool:
        """One more sample of ``arm`` at its next search index; a failed rerun is retried once on the next index."""
        for _ in range(2):
            seen = self.answers.setdefault(arm, [])
            index = SEARCH_BASE + len(seen) + self.errors
            out = await self.sampler.sample_range(arm, index, index + 1)
            if not out:
                raise BudgetExhausted()
            if out[0] is None:
                self.errors += 1
                continue
            seen.append(bool(out[0]))
            return bool(out[0])
        return False

    async def test(self, arm: Arm, prior: float = 0.5, *, sure_no: float = SPRT_LOG_ODDS) -> bool:
        """Whether ablating ``arm`` flips: a sequential probability ratio test under the working noise; "no" needs
        log-odds below ``-sure_no`` (a stricter bound where a wrong "no" ends the search)."""
        p = self.noise.working()
        step = log((1 - p) / p)
        odds = log(prior / (1 - prior))
        answers = list(self.answers.get(arm, []))
        odds += sum(step if a else -step for a in answers)
        taken = 0
        while -sure_no < odds < SPRT_LOG_ODDS and taken < MAX_TEST_SAMPLES:
            odds += step if await self.one(arm) else -step
            taken += 1
        flipped = odds > 0
        mine = self.answers.get(arm, [])
        self.noise.mismatches += sum(1 for a in mine[len(answers) :] if a != flipped)
        self.noise.answers += len(mine) - len(answers)
        return flipped


class Transition:
    """Probabilistic bisection for the first prefix of ``order`` that flips when ablated with ``background``.

    Hypothesis ``j`` (0..k) says the prefix of length ``j`` is the shortest that flips; ``k + 1`` says none does."""

    def __init__(self, oracle: Oracle, background: Arm, order: Sequence[str], *, p_empty: float, p_none: float):
        self.oracle = oracle
        self.background = background
        self.order = list(order)
        k = len(self.order)
        rest = max(0.0, 1.0 - p_empty - p_none)
        self.prior = [p_empty] + [rest / k] * k + [p_none] if k else [p_empty, 1.0 - p_empty]
        self.mismatch = [0] * len(self.prior)
        self.queries = 0
        oracle.noise.bisections.append(self)

    def posterior(self) -> list[float]:
        p = self.oracle.noise.working()
        ratio = p / (1 - p)
        weights = [w * ratio**m for w, m in zip(self.prior, self.mismatch, strict=True)]
        total = sum(weights) or 1.0
        return [w / total for w in weights]

    def best(self) -> int:
        post = self.posterior()
        return max(range(len(post)), key=lambda j: (post[j], -j))

    def _median(self, post: list[float]) -> int:
        """The prefix whose answer splits the posterior closest to even (the question worth the most)."""
        best, gap, acc = 0, 2.0, 0.0
        for t, w in enumerate(post[:-1]):
            acc += w
            if abs(acc - 0.5) < gap:
                best, gap = t, abs(acc - 0.5)
        return best

    async def run(self, budget: int, stop: float = STOP_POSTERIOR) -> int:
        """The most probable hypothesis once it holds ``stop`` (or once ``budget`` questions were asked in all)."""
        while True:
            post = self.posterior()
            best = max(range(len(post)), key=lambda j: (post[j], -j))
            if post[best] >= stop or self.queries >= budget:
                return best
            await self.ask(self._median(post))

    async def ask(self, t: int) -> None:
        """One rerun of the prefix of length ``t``; every hypothesis it contradicts counts one mismatch more."""
        flipped = await self.oracle.one(self.background | frozenset(self.order[:t]))
        self.queries += 1
        for j in range(len(self.mismatch)):
            if (j <= t) != flipped:
                self.mismatch[j] += 1


def question_budget(n: int, noise: float) -> int:
    """Questions a bisection may ask: a generous multiple of the noisy information bound for ``n`` hypotheses."""
    p = min(0.45, max(noise, 0.01))
    capacity = 1 + p * log(p, 2) + (1 - p) * log(1 - p, 2)
    return int(4 * (log(n + 2, 2) + 2) / max(capacity, 0.05)) + 4


async def flipping_mask(oracle: Oracle, population: Sequence[str], seed: int, tries: int = MASKS) -> Arm | None:
    """A subset whose ablation flips, looked for with random half masks and their complements (when ablating
    everything does not flip, a removable source may be carrying the right answer)."""
    rng = random.Random(seed)
    items = list(population)
    for _ in range(tries):
        mask = frozenset(s for s in items if rng.random() < 0.5)
        for arm in (mask, frozenset(items) - mask):
            if arm and await oracle.test(arm, prior=0.25):
                return arm
    return None


def ordered(ids: Arm, rank: Callable[[str], int]) -> list[str]:
    return sorted(ids, key=rank)
