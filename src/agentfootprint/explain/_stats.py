"""Verdict rules for ablation arms: the majority rule and the one-sided Fisher exact test with curtailment."""

from __future__ import annotations

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
