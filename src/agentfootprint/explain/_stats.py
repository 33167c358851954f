"""Verdict rules for ablation arms: the majority rule and the one-sided Fisher exact test with curtailment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb
from typing import Literal

Verdict = Literal["confirmed", "inconclusive", "not-confirmed"]
FISHER_TEST = "fisher-exact-one-sided"


def fisher_one_sided(flips: int, samples: int, base_flips: int, base_samples: int) -> float:
    """P(an arm flips at least ``flips`` times | both arms share one flip rate): hypergeometric upper tail."""
    if samples <= 0 or base_samples <= 0:
        return 1.0
    total = samples + base_samples
    flipped = flips + base_flips
    denom = comb(total, samples)
    upper = min(samples, flipped)
    tail = sum(comb(flipped, k) * comb(total - flipped, samples - k) for k in range(flips, upper + 1))
    return min(1.0, tail / denom)


def binomial_upper(k: int, n: int, p: float = 0.5) -> float:
    """P(at least ``k`` of ``n`` independent samples flip when each flips with probability ``p``)."""
    return sum(comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(max(0, k), n + 1)) if n > 0 else 1.0


def majority_verdict(flips: int, samples: int) -> Verdict:
    """The plain rule: confirmed when more than half flipped, not-confirmed when none did, else inconclusive."""
    if flips * 2 > samples:
        return "confirmed"
    return "not-confirmed" if flips == 0 else "inconclusive"


@dataclass(frozen=True)
class Decision:
    """Where an arm stands: ``settled`` once more samples cannot change whether it is confirmed."""

    settled: bool
    verdict: Verdict
    p_value: float | None = None


def majority_decision(flips: int, taken: int, planned: int) -> Decision:
    """Majority of ``planned`` samples; settled early once ``taken`` samples already decide confirmation."""
    if flips * 2 > planned:
        return Decision(True, "confirmed")
    if (flips + planned - taken) * 2 <= planned:
        return Decision(True, majority_verdict(flips, taken))
    return Decision(taken >= planned, majority_verdict(flips, taken))


def _fisher_confirms(flips: int, base_flips: int, n: int, alpha: float) -> bool:
    return flips * 2 > n and fisher_one_sided(flips, n, base_flips, n) <= alpha


def fisher_decision(
    flips: int, taken: int, paired_base_flips: int, base_flips: int, base_taken: int, planned: int, alpha: float
) -> Decision:
    """The statistical rule at ``planned`` samples per arm, settled early (curtailed) once no outcome of the samples
    not yet taken, the arm's or the baseline's, could change whether the arm is confirmed.

    ``flips`` and ``paired_base_flips`` count the arm's ``taken`` sample indices in both arms (paired seeds);
    ``base_flips`` counts the ``base_taken >= taken`` indices the baseline already has."""
    p_now = fisher_one_sided(flips, taken, paired_base_flips, taken) if taken else 1.0
    unseen_base = planned - base_taken
    worst = _fisher_confirms(flips, base_flips + unseen_base, planned, alpha)
    best = _fisher_confirms(flips + planned - taken, base_flips, planned, alpha)
    if worst:
        return Decision(True, "confirmed", p_now)
    partial = flips > 0 and (flips * 2 > taken or p_now <= alpha)
    label: Verdict = "inconclusive" if partial else "not-confirmed"
    return Decision(not best, label, p_now)


HOLM = "holm"
POWER = 0.9
"""The power the automatic sample size aims for: a culprit whose ablation flips the outcome as often as the baseline
keeps it is confirmed with this probability."""


def holm(p_values: list[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected with the family-wise error rate kept at ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    m = len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (m - rank):
            break
        rejected[i] = True
    return rejected


def fisher_floor(flipped: int, samples: int) -> float:
    """The least one-sided Fisher p-value two arms of ``samples`` each can give when ``flipped`` of their samples
    flipped (as many of the flips on the arm's side as fit)."""
    top = min(flipped, samples)
    return fisher_one_sided(top, samples, flipped - top, samples)


def tarone_count(floors: Sequence[float], alpha: float) -> int:
    """What a Bonferroni step divides ``alpha`` by for discrete tests (Tarone 1990): the least ``m`` such that at
    most ``m`` of the hypotheses could reach ``alpha / m`` at all (``floors``: their least attainable p-values)."""
    for m in range(1, len(floors) + 1):
        if sum(1 for f in floors if f <= alpha / m) <= m:
            return m
    return 1


def holm_tarone(p_values: Sequence[float], floors: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure with Tarone's count at every step (Hommel and Krummenauer 1998): a hypothesis
    whose least attainable p-value cannot reach a step's level takes no share of ``alpha`` there."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / tarone_count([floors[j] for j in order[rank:]], alpha):
            break
        rejected[i] = True
    return rejected


def _binom(n: int, p: float) -> list[float]:
    return [comb(n, k) * p**k * (1.0 - p) ** (n - k) for k in range(n + 1)]


def fisher_power(n: int, p0: float, p1: float, alpha: float) -> float:
    """Probability that an arm flipping at rate ``p1`` is confirmed against a baseline flipping at ``p0`` with ``n``
    paired samples each (flip rate above 1/2 and one-sided Fisher p <= ``alpha``)."""
    arm, base = _binom(n, p1), _binom(n, p0)
    tail = [sum(arm[a:]) for a in range(n + 2)]
    power, need = 0.0, n // 2 + 1
    for b in range(n + 1):
        a = max(need, 0)
        while a <= n and fisher_one_sided(a, n, b, n) > alpha:
            a += 1
        need = a  # a noisier baseline never needs fewer arm flips
        power += base[b] * tail[min(a, n + 1)]
    return power


_PLANS: dict[tuple[float, float, float, int], int | None] = {}


def plan_samples(p0: float, alpha: float, *, power: float = POWER, cap: int = 200) -> int | None:
    """The fewest samples per arm (and baseline) that confirm a culprit with ``power`` when the baseline flips at
    ``p0`` and the culprit's arm keeps the wrong answer at that rate (flips at ``1 - p0``); None above ``cap``."""
    p0 = round(min(max(p0, 0.0), 1.0), 3)
    key = (p0, round(alpha, 6), power, cap)
    if key in _PLANS:
        return _PLANS[key]
    p1 = 1.0 - p0
    found: int | None = None
    if p1 > 0.5:
        lo, hi = 1, 1
        while hi <= cap and fisher_power(hi, p0, p1, alpha) < power:
            lo, hi = hi + 1, hi * 2
        if hi > cap and fisher_power(cap, p0, p1, alpha) < power:
            found = None
        else:
            hi = min(hi, cap)
            for n in range(lo, hi + 1):  # power is not monotone in n for exact tests: the first n that reaches it
                if fisher_power(n, p0, p1, alpha) >= power:
                    found = n
                    break
    _PLANS[key] = found
    return found
