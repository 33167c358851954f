"""Holm's correction with Tarone's count for discrete tests: an arm whose flips can no longer reach a level takes
no share of the error rate, and the family-wise error rate still holds (checked exactly, over every outcome)."""

from __future__ import annotations

from itertools import product
from math import comb
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.explain._arms import Arm, Sampler
from agentfootprint.explain._auto import Confirmer, PooledSearch
from agentfootprint.explain._pooled import NoiseLog
from agentfootprint.explain._stats import fisher_floor, fisher_one_sided, holm, holm_tarone, tarone_count


def test_the_floor_is_the_p_value_of_every_flip_on_the_arms_side() -> None:
    assert fisher_floor(3, 3) == pytest.approx(1 / 20)
    assert fisher_floor(1, 3) == pytest.approx(0.5)
    assert fisher_floor(2, 3) == pytest.approx(0.2)
    assert fisher_floor(0, 4) == 1.0
    assert fisher_floor(8, 5) == pytest.approx(comb(8, 5) / comb(10, 5))  # five flips on the arm, three on the base


@given(st.integers(1, 12), st.data())
def test_no_split_of_the_flips_goes_below_the_floor(n: int, data: st.DataObject) -> None:
    flipped = data.draw(st.integers(0, 2 * n))
    arm = data.draw(st.integers(max(0, flipped - n), min(n, flipped)))
    assert fisher_one_sided(arm, n, flipped - arm, n) >= fisher_floor(flipped, n) - 1e-12


def test_tarone_counts_only_what_could_reach_the_level() -> None:
    assert tarone_count([0.0, 0.5, 0.5], 0.05) == 1
    assert tarone_count([0.0, 0.0, 0.0], 0.05) == 3
    assert tarone_count([0.05, 0.001], 0.05) == 2  # at m = 1 both could reach 0.05: at 0.025 only one can
    assert tarone_count([0.02, 0.02, 0.9], 0.05) == 2
    assert tarone_count([], 0.05) == 1


def test_a_hopeless_arm_takes_no_share_where_holm_would_give_it_one() -> None:
    assert holm([0.04, 0.5], 0.05) == [False, False]
    assert holm_tarone([0.04, 0.5], [0.04, 0.5], 0.05) == [True, False]
    assert holm_tarone([0.01, 0.04, 0.03], [0.0, 0.0, 0.0], 0.05) == [True, False, False]


@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), max_size=8), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_tarone_rejects_all_holm_does_and_equals_it_without_floors(
    pairs: list[tuple[float, float]], alpha: float
) -> None:
    ps = [max(p, f) for p, f in pairs]  # a p-value never lies below its floor
    floors = [min(p, f) for p, f in pairs]
    plain, tarone = holm(ps, alpha), holm_tarone(ps, floors, alpha)
    assert all(t or not h for h, t in zip(plain, tarone, strict=True))
    assert holm_tarone(ps, [0.0] * len(ps), alpha) == plain


def _binom(n: int, p: float) -> list[float]:
    return [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(2, 5), min_size=1, max_size=3),
    st.lists(st.sampled_from([0.05, 0.2, 0.5, 0.8]), min_size=3, max_size=3),
    st.sampled_from([0.05, 0.1]),
)
def test_the_family_wise_error_rate_holds_exactly_under_the_null(
    sizes: list[int], rates: list[float], alpha: float
) -> None:
    """Every arm flips as often as its baseline (rates differ between arms): the chance that any is rejected,
    summed over every outcome of every test, stays within ``alpha``."""
    outcomes = []
    for n, p in zip(sizes, rates, strict=False):
        dist = _binom(n, p)
        outcomes.append(
            [
                (dist[a] * dist[b], fisher_one_sided(a, n, b, n), fisher_floor(a + b, n))
                for a in range(n + 1)
                for b in range(n + 1)
            ]
        )
    wrong = 0.0
    for combo in product(*outcomes):
        if any(holm_tarone([c[1] for c in combo], [c[2] for c in combo], alpha)):
            prob = 1.0
            for c in combo:
                prob *= c[0]
            wrong += prob
    assert wrong <= alpha + 1e-12


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 3), st.sampled_from([0.05, 0.2, 0.5, 0.8]), st.sampled_from([0.05, 0.1]))
def test_the_family_wise_error_rate_holds_exactly_with_one_shared_baseline(
    n: int, arms: int, rate: float, alpha: float
) -> None:
    """As judged here: every arm compared with the same baseline samples, all flipping at one rate."""
    dist = _binom(n, rate)
    wrong = 0.0
    for b in range(n + 1):
        for flips in product(range(n + 1), repeat=arms):
            ps = [fisher_one_sided(a, n, b, n) for a in flips]
            if any(holm_tarone(ps, [fisher_floor(a + b, n) for a in flips], alpha)):
                prob = dist[b]
                for a in flips:
                    prob *= dist[a]
                wrong += prob
    assert wrong <= alpha + 1e-12


class ByArm:
    """A confirmation sampler: each arm's first outcomes, then ``True`` for the culprit and ``False`` for the rest
    (the baseline never flips)."""

    def __init__(self, first: dict[Arm, list[bool]]) -> None:
        self.first = first

    async def sample_range(self, arm: Arm, start: int, stop: int) -> list[bool | None]:
        seq = self.first.get(arm, [])
        return [seq[i] if i < len(seq) else arm == frozenset({"c"}) for i in range(start, stop)]


async def test_a_decoy_that_could_never_be_confirmed_does_not_enlarge_the_family() -> None:
    decoy, culprit = frozenset({"d"}), frozenset({"c"})
    confirmer = Confirmer(cast(Sampler, ByArm({decoy: [True, False, False]})), 0.05, 3, NoiseLog())
    (d,) = await confirmer.check([decoy])
    assert d.floor == pytest.approx(0.5) and confirmer.family() == 1
    (c,) = await confirmer.check([culprit])
    assert len(confirmer.checks) == 2 and confirmer.family() == 1
    assert (d.verdict, c.verdict) == ("not-confirmed", "confirmed")


async def test_a_decoy_that_could_have_been_confirmed_still_counts() -> None:
    decoy = frozenset({"d"})
    confirmer = Confirmer(cast(Sampler, ByArm({decoy: [True, True, True]})), 0.05, 3, NoiseLog())
    (d,) = await confirmer.check([decoy])  # three of three at a clean baseline: p = 0.05, the floor itself
    assert d.floor == pytest.approx(0.05) and d.verdict == "confirmed"
    await confirmer.check([frozenset({"c"})])
    assert confirmer.family() == 2


class Flips:
    """A search sampler: an arm flips exactly when it ablates both ``a`` and ``b``."""

    def __init__(self) -> None:
        self.asked: list[Arm] = []

    async def sample_range(self, arm: Arm, start: int, stop: int) -> list[bool | None]:
        self.asked.append(arm)
        return [{"a", "b"} <= arm] * (stop - start)


async def test_an_older_member_that_rode_along_is_trimmed_before_the_set_is_judged() -> None:
    sampler = Flips()
    noise = NoiseLog(base_flips=1, base_samples=10)
    search = PooledSearch(cast(Sampler, sampler), Confirmer(cast(Sampler, sampler), 0.05, 3, noise), ["d", "b", "a"])
    assert await search._trimmed(["d", "b", "a"]) == ["b", "a"]
    assert frozenset({"b", "a"}) in sampler.asked and frozenset({"d", "a"}) not in sampler.asked
    assert await search._trimmed(["a", "b", "x", "y"]) == ["a", "b", "y"]  # the newest pick is never trimmed


async def test_a_clean_model_never_trims() -> None:
    sampler = Flips()
    search = PooledSearch(
        cast(Sampler, sampler), Confirmer(cast(Sampler, sampler), 0.05, 3, NoiseLog()), ["d", "b", "a"]
    )
    assert await search._trimmed(["d", "b", "a"]) == ["d", "b", "a"] and sampler.asked == []
