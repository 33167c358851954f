"""Group-sequential confirmation: an arm is compared with the baseline at a few looks and stops at the first look
that settles it; the error rate is spent over the looks (weighted Bonferroni), so stopping early keeps it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from math import ceil, comb

from agentfootprint.explain._stats import fisher_one_sided

SPEND = (0.1, 0.2, 0.3, 0.4)
"""The share of the error rate each look may spend (they sum to 1): a look ``k`` rejects at ``alpha * SPEND[k-1]``."""
LOOKS = len(SPEND)
ONE_LOOK = (1.0,)
SEQUENTIAL_FROM = 5
"""A design of one look fixed at fewer samples than this is kept as it is: looks would save little there."""


def design(fixed: int) -> tuple[float, ...]:
    """The looks' shares for an arm a one-look test would judge with ``fixed`` samples."""
    return SPEND if fixed >= SEQUENTIAL_FROM else ONE_LOOK


def look_size(look: int, planned: int, looks: int = LOOKS) -> int:
    """Samples per arm at look ``look`` (1..looks) of a design planned for ``planned`` samples: an even share."""
    return max(1, min(planned, ceil(look * planned / looks)))


def sequential_p(p_values: Sequence[float], weights: Sequence[float] = SPEND) -> float:
    """One p-value for an arm judged at looks ``1..len(p_values)``: the least ``p_k / w_k`` (valid whichever look
    the arm stopped at, since the chance that any look falls below its share is at most the sum of the shares)."""
    if len(p_values) > len(weights):
        raise ValueError("more looks than the design has weights for")
    return min([1.0] + [p / w for p, w in zip(p_values, weights, strict=False) if w > 0])


def rejects(flips: int, base_flips: int, n: int, alpha: float, look: int, weights: Sequence[float] = SPEND) -> bool:
    """Whether look ``look`` confirms: a flip rate above 1/2 and the one-sided Fisher p within the look's share."""
    return flips * 2 > n and fisher_one_sided(flips, n, base_flips, n) <= alpha * weights[look - 1]


def _binom(n: int, p: float) -> list[float]:
    return [comb(n, k) * p**k * (1.0 - p) ** (n - k) for k in range(n + 1)]


def rejection_probability(
    looks: Sequence[int], alpha: float, p_base: float, p_arm: float, weights: Sequence[float] = SPEND
) -> float:
    """Exact chance that a design with cumulative look sizes ``looks`` confirms an arm flipping at ``p_arm``
    against a baseline flipping at ``p_base`` (independent samples): the type-I error when both rates are equal,
    the power otherwise. Computed over every outcome path, not simulated."""
    if len(looks) > len(weights) or any(b <= a for a, b in pairwise(looks)):
        raise ValueError("looks must be increasing and no more than the weights")
    live: dict[tuple[int, int], float] = {(0, 0): 1.0}
    done, prev = 0.0, 0
    for look, size in enumerate(looks, start=1):
        step = size - prev
        arm, base = _binom(step, p_arm), _binom(step, p_base)
        nxt: dict[tuple[int, int], float] = {}
        for (a, b), w in live.items():
            for da, pa in enumerate(arm):
                for db, pb in enumerate(base):
                    key = (a + da, b + db)
                    nxt[key] = nxt.get(key, 0.0) + w * pa * pb
        live = {}
        for (a, b), w in nxt.items():
            if rejects(a, b, size, alpha, look, weights):
                done += w
            else:
                live[(a, b)] = w
        prev = size
    return done


__all__ = [
    "LOOKS",
    "ONE_LOOK",
    "SEQUENTIAL_FROM",
    "SPEND",
    "design",
    "look_size",
    "rejection_probability",
    "rejects",
    "sequential_p",
]
