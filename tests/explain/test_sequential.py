"""Group-sequential confirmation: exact error rates of the looks (computed over every outcome path), the combined
p-value, and a confirmation that stops at the first look that settles it."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.explain._arms import Sampler
from agentfootprint.explain._auto import Confirmer
from agentfootprint.explain._pooled import NoiseLog
from agentfootprint.explain._sequential import (
    LOOKS,
    ONE_LOOK,
    SEQUENTIAL_FROM,
    SPEND,
    design,
    look_size,
    rejection_probability,
    rejects,
    sequential_p,
)
from agentfootprint.explain._stats import POWER, fisher_one_sided, plan_samples, tarone_count


def looks_for(n: int, weights: Sequence[float] = SPEND) -> list[int]:
    return [look_size(k, n, len(weights)) for k in range(1, len(weights) + 1)]


def brute_force(looks: list[int], alpha: float, p_base: Fraction, p_arm: Fraction) -> Fraction:
    """Every sequence of outcomes of both arms, in exact arithmetic: the chance that some look confirms."""
    n = looks[-1]
    total = Fraction(0)
    for arm in product((0, 1), repeat=n):
        w_arm = Fraction(1)
        for o in arm:
            w_arm *= p_arm if o else 1 - p_arm
        for base in product((0, 1), repeat=n):
            w = w_arm
            for o in base:
                w *= p_base if o else 1 - p_base
            if any(rejects(sum(arm[:s]), sum(base[:s]), s, alpha, k) for k, s in enumerate(looks, start=1)):
                total += w
    return total


def test_the_shares_sum_to_one_and_grow() -> None:
    assert sum(SPEND) == pytest.approx(1.0)
    assert LOOKS == 4 and list(SPEND) == sorted(SPEND)
    assert design(SEQUENTIAL_FROM - 1) == ONE_LOOK and design(SEQUENTIAL_FROM) == SPEND


def test_look_sizes_are_even_shares_ending_at_the_plan() -> None:
    assert looks_for(12) == [3, 6, 9, 12]
    assert looks_for(10) == [3, 5, 8, 10]
    assert looks_for(5, ONE_LOOK) == [5]
    assert look_size(1, 1) == 1


def test_sequential_p_is_the_least_p_over_share() -> None:
    assert sequential_p([]) == 1.0
    assert sequential_p([0.2, 0.01]) == pytest.approx(0.05)  # 0.01 / 0.2
    assert sequential_p([0.001]) == pytest.approx(0.01)  # 0.001 / 0.1
    assert sequential_p([0.9, 0.9, 0.9, 0.9]) == 1.0
    assert sequential_p([0.03], ONE_LOOK) == pytest.approx(0.03)


def test_more_looks_than_shares_is_refused() -> None:
    with pytest.raises(ValueError):
        sequential_p([0.5] * (LOOKS + 1))
    with pytest.raises(ValueError):
        rejection_probability([3, 3], 0.05, 0.2, 0.2)
    with pytest.raises(ValueError):
        rejection_probability([1, 2, 3, 4, 5], 0.05, 0.2, 0.2)


@settings(max_examples=60, deadline=None)
@given(ps=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=LOOKS))
def test_sequential_p_bounds(ps: list[float]) -> None:
    q = sequential_p(ps)
    assert min(ps) <= q <= 1.0
    assert q == min([1.0] + [p / w for p, w in zip(ps, SPEND, strict=False)])


@pytest.mark.parametrize(("n", "p"), [(4, Fraction(1, 2)), (5, Fraction(1, 5)), (6, Fraction(3, 10))])
def test_the_exact_computation_matches_every_outcome_path(n: int, p: Fraction) -> None:
    looks = looks_for(n)
    for p_arm in (p, Fraction(4, 5), Fraction(1)):
        exact = brute_force(looks, 0.5, p, p_arm)  # a loose alpha, so small designs reject at all
        assert rejection_probability(looks, 0.5, float(p), float(p_arm)) == pytest.approx(float(exact), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(4, 40),
    p=st.floats(0.0, 1.0),
    alpha=st.sampled_from([0.05, 0.025, 0.05 / 3, 0.01]),
)
def test_type_one_error_never_exceeds_alpha(n: int, p: float, alpha: float) -> None:
    """Whatever the common flip rate, a design that may stop at any of its looks confirms at most ``alpha``."""
    assert rejection_probability(looks_for(n), alpha, p, p) <= alpha + 1e-12


@pytest.mark.parametrize("p0", [0.05, 0.1, 0.15, 0.2, 0.25, 0.3])
@pytest.mark.parametrize("alpha", [0.05, 0.025])
def test_the_planned_size_reaches_the_stated_power(p0: float, alpha: float) -> None:
    """Sized for the last look's share alone: the looks before it only add power."""
    n = plan_samples(p0, alpha * SPEND[-1])
    assert n is not None
    fixed = plan_samples(p0, alpha)
    assert fixed is not None
    weights = design(fixed)
    assert rejection_probability(looks_for(n, weights), alpha, p0, 1 - p0, weights) >= POWER


def test_stopping_early_saves_samples_on_a_clear_culprit() -> None:
    """At a 20 % baseline flip rate, the expected samples of the four-look design are well under its plan."""
    p0, alpha = 0.2, 0.05
    n = plan_samples(p0, alpha * SPEND[-1])
    assert n is not None
    looks = looks_for(n)
    stop = [0.0] * len(looks)  # chance of stopping for success at each look, exact
    seen = 0.0
    for k in range(1, len(looks) + 1):
        reached = rejection_probability(looks[:k], alpha, p0, 1 - p0, SPEND[:k])
        stop[k - 1], seen = reached - seen, reached
    expected = sum(s * size for s, size in zip(stop, looks, strict=True)) + (1 - seen) * looks[-1]
    assert expected < 0.8 * n


def _hit(seed: int, tag: str, rate: float) -> bool:
    digest = hashlib.sha256(f"{tag}|{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def _confirmer(noise: float) -> tuple[Confirmer, Sampler]:
    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        if "culprit" in ignore:  # without the culprit the right answer comes back, but for the model's noise
            return "right" if not _hit(seed, "c", noise) else "wrong"
        return "right" if _hit(seed, "b" + ",".join(ignore), noise) else "wrong"

    sampler = Sampler(rerun, "wrong", lambda a, b: a != b, concurrency=4, max_reruns=None, on_rerun=lambda: None)
    log = NoiseLog(base_flips=int(noise * 100), base_samples=100)
    return Confirmer(sampler, 0.05, 3, log), sampler


def test_a_clear_culprit_stops_before_the_planned_samples() -> None:
    confirmer, _ = _confirmer(0.2)
    culprit, decoy = asyncio.run(confirmer.check([frozenset({"culprit"}), frozenset({"decoy"})]))
    assert culprit.weights == SPEND
    assert culprit.verdict == "confirmed" and culprit.early
    assert culprit.samples < culprit.n
    assert culprit.p_value == sequential_p(culprit.looks)
    assert decoy.verdict != "confirmed"


def test_a_clean_model_keeps_one_look() -> None:
    confirmer, sampler = _confirmer(0.0)
    confirmer.noise = NoiseLog()
    (check,) = asyncio.run(confirmer.check([frozenset({"culprit"})]))
    assert check.weights == ONE_LOOK
    assert (check.verdict, check.samples, sampler.reruns) == ("confirmed", 3, 6)
    assert check.p_value == pytest.approx(fisher_one_sided(3, 3, 0, 3))


def test_exact_binomial_helper_agrees_with_fisher_margins() -> None:
    """A single look of the sequential design is the one-sided Fisher test at the look's share."""
    n = 6
    for a in range(n + 1):
        for b in range(n + 1):
            p = fisher_one_sided(a, n, b, n)
            assert rejects(a, b, n, 0.05, 4) == (a * 2 > n and p <= 0.05 * SPEND[3])


def _decoy_confirmer(salt: int, noise: float = 0.3) -> Confirmer:
    """A culprit and a decoy that does nothing: every request's noise is its own (keyed by what it removes), so
    removing the culprit alone or with the decoy flips at one rate and the two differ only by chance."""

    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        tag = f"{salt}|" + ",".join(ignore)
        if "culprit" in ignore:
            return "wrong" if _hit(seed, tag, noise) else "right"
        return "right" if _hit(seed, tag, noise) else "wrong"

    sampler = Sampler(rerun, "wrong", lambda a, b: a != b, concurrency=4, max_reruns=None, on_rerun=lambda: None)
    return Confirmer(sampler, 0.05, 3, NoiseLog(base_flips=30, base_samples=100))


def test_a_non_minimal_set_is_not_confirmed_by_one_lucky_restore_test() -> None:
    """Planted: on these seeds, at the second look, restoring the decoy happens to flip less (p = 0.0489 for "the
    decoy is needed") and the set's arm passes Holm for two arms; a restore test at the uncorrected error rate took
    that as proof and stopped, confirming {culprit, decoy}. Corrected, the set's claim needs p <= 0.025 there, so
    it goes on sampling, and restoring the decoy turns out to flip as often as the set: not 1-minimal."""
    confirmer = _decoy_confirmer(723)
    pair, other = asyncio.run(confirmer.check([frozenset({"culprit", "decoy"}), frozenset({"other"})]))
    at_second_look = sequential_p(pair.needed_looks["decoy"][:2], pair.weights)
    assert 0.025 < at_second_look <= 0.05 and sequential_p(pair.looks[:2], pair.weights) <= 0.025
    restore_decoy = next(r for r in pair.restored if r.ids == frozenset({"culprit"}))
    assert restore_decoy.verdict == "confirmed"  # with the decoy back, the outcome still flips
    assert pair.still_flips == [False, True] and pair.samples == pair.n > 50
    assert pair.claim_p == max([pair.p_value] + [r.p_value or 1.0 for r in pair.restored])
    assert (pair.verdict, pair.minimal, pair.result().verdict) == ("inconclusive", False, "inconclusive")
    assert other.verdict == "not-confirmed"


def test_a_redundant_pair_is_still_confirmed_and_minimal() -> None:
    """Either member misleads on its own: removing both flips, restoring either one brings the wrong answer back."""

    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        fixed = {"a", "b"} <= set(ignore)
        noisy = _hit(seed, ",".join(ignore), 0.1)
        return ("right" if fixed else "wrong") if not noisy else ("wrong" if fixed else "right")

    sampler = Sampler(rerun, "wrong", lambda a, b: a != b, concurrency=4, max_reruns=None, on_rerun=lambda: None)
    confirmer = Confirmer(sampler, 0.05, 3, NoiseLog(base_flips=10, base_samples=100))
    pair, other = asyncio.run(confirmer.check([frozenset({"a", "b"}), frozenset({"c"})]))
    assert (pair.verdict, pair.minimal, pair.corrected) == ("confirmed", True, True)
    # {c} flipped 2 of 9 by noise: no split of its flips reaches 0.05, so it takes no share (Tarone)
    assert (other.flips, other.samples, round(other.floor, 4), confirmer.family()) == (2, 9, 0.3431, 1)
    assert pair.claim_p <= 0.05 and other.verdict == "not-confirmed"


@settings(max_examples=25, deadline=None)
@given(salt=st.integers(0, 10**6))
def test_a_decoy_never_rides_along_when_the_family_corrects_for_it(salt: int) -> None:
    """Whatever the seeds, a set with a decoy is confirmed only if its claim (arm and every restore test) passes
    Holm over the arms judged: never on a restore test that only the uncorrected error rate accepts."""
    confirmer = _decoy_confirmer(salt, 0.2)
    checks = asyncio.run(confirmer.check([frozenset({"culprit", "decoy"}), frozenset({"x"}), frozenset({"y"})]))
    pair = checks[0]
    if pair.verdict == "confirmed":  # Holm's step for the pair, counting the arms that could still reach it
        rest = [c for c in checks if c.claim_p >= pair.claim_p]
        assert pair.claim_p <= 0.05 / tarone_count([c.floor for c in rest], 0.05)
        assert all(c.floor <= c.claim_p for c in checks)
