"""Verdict rules: the one-sided Fisher exact test, the majority rule, and curtailment that never changes a verdict."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.explain._stats import (
    FISHER_TEST,
    fisher_decision,
    fisher_one_sided,
    majority_decision,
    majority_verdict,
)


def exact_tail(flips: int, n: int, base: int, m: int) -> Fraction:
    total, flipped = n + m, flips + base
    return sum(
        (Fraction(comb(flipped, k) * comb(total - flipped, n - k), comb(total, n)) for k in range(flips, n + 1)),
        Fraction(0),
    )


def test_fisher_known_values() -> None:
    assert fisher_one_sided(3, 3, 0, 3) == pytest.approx(0.05)  # 1 / C(6, 3)
    assert fisher_one_sided(6, 6, 0, 6) == pytest.approx(1 / 924)
    assert fisher_one_sided(0, 5, 0, 5) == 1.0
    assert fisher_one_sided(2, 3, 0, 3) == pytest.approx(4 / 20)  # C(2,2)·C(4,1) / C(6,3)
    assert FISHER_TEST == "fisher-exact-one-sided"


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 25), m=st.integers(1, 25), data=st.data())
def test_fisher_matches_the_exact_hypergeometric_tail(n: int, m: int, data: st.DataObject) -> None:
    flips = data.draw(st.integers(0, n))
    base = data.draw(st.integers(0, m))
    p = fisher_one_sided(flips, n, base, m)
    assert 0.0 <= p <= 1.0
    assert p == pytest.approx(float(exact_tail(flips, n, base, m)), rel=1e-9, abs=1e-12)
    if flips < n:
        assert fisher_one_sided(flips + 1, n, base, m) <= p  # more arm flips: stronger evidence
    if base < m:
        assert fisher_one_sided(flips, n, base + 1, m) >= p  # a noisier baseline: weaker evidence


def test_majority_rule_is_the_documented_one() -> None:
    assert [majority_verdict(f, 3) for f in range(4)] == ["not-confirmed", "inconclusive", "confirmed", "confirmed"]
    assert majority_decision(2, 2, 3).settled and majority_decision(2, 2, 3).verdict == "confirmed"
    assert majority_decision(0, 2, 3).settled and majority_decision(0, 2, 3).verdict == "not-confirmed"
    assert not majority_decision(1, 2, 3).settled


def _final_confirms(flips: int, base: int, n: int, alpha: float) -> bool:
    return flips * 2 > n and fisher_one_sided(flips, n, base, n) <= alpha


@settings(max_examples=300, deadline=None)
@given(planned=st.integers(2, 24), data=st.data())
def test_curtailment_never_settles_against_the_full_sample_verdict(planned: int, data: st.DataObject) -> None:
    """Stopping early is only allowed when every way the unseen samples could come out gives the same answer."""
    arm = data.draw(st.lists(st.booleans(), min_size=planned, max_size=planned))
    base = data.draw(st.lists(st.booleans(), min_size=planned, max_size=planned))
    taken = data.draw(st.integers(1, planned))
    base_taken = data.draw(st.integers(taken, planned))
    decision = fisher_decision(
        sum(arm[:taken]), taken, sum(base[:taken]), sum(base[:base_taken]), base_taken, planned, 0.05
    )
    if decision.settled:
        assert (decision.verdict == "confirmed") == _final_confirms(sum(arm), sum(base), planned, 0.05)
    if taken == planned:
        assert decision.settled


def test_fisher_without_samples_on_either_side_is_one() -> None:
    assert fisher_one_sided(0, 0, 0, 0) == 1.0
    assert fisher_one_sided(1, 0, 0, 3) == 1.0
    assert fisher_one_sided(1, 3, 0, 0) == 1.0


@pytest.mark.parametrize(
    ("args", "settled", "verdict", "p"),
    [
        ((0, 2, 0, 0, 2, 4, 0.05), True, "not-confirmed", 1.0),  # even all-flips later cannot reach a majority
        ((1, 1, 0, 0, 1, 4, 0.05), False, "inconclusive", 0.5),  # a lone flip so far: a lead, not settled
        ((1, 3, 0, 0, 3, 6, 0.05), False, "not-confirmed", 0.5),  # under half flipped and p above alpha
        ((4, 4, 0, 0, 4, 4, 0.05), True, "confirmed", 1 / 70),
        ((2, 4, 0, 0, 4, 4, 0.25), True, "inconclusive", 15 / 70),  # half is not a majority, p within alpha
        ((2, 4, 0, 0, 4, 4, 0.2), True, "not-confirmed", 15 / 70),
        ((2, 4, 0, 0, 4, 6, 0.05), False, "not-confirmed", 15 / 70),  # two unseen samples could still confirm it
        ((2, 4, 2, 2, 4, 6, 0.05), True, "not-confirmed", 53 / 70),  # with a noisy baseline they cannot
    ],
)
def test_fisher_decisions_at_their_boundaries(
    args: tuple[int, int, int, int, int, int, float], settled: bool, verdict: str, p: float
) -> None:
    decision = fisher_decision(*args)
    assert (decision.settled, decision.verdict) == (settled, verdict)
    assert decision.p_value == pytest.approx(p, rel=1e-12)


def test_a_partial_flip_at_exactly_alpha_is_inconclusive() -> None:
    alpha = fisher_one_sided(3, 6, 0, 6)  # 84 / 924: three of six flipped, none of the baseline
    assert alpha == pytest.approx(84 / 924)
    assert fisher_decision(3, 6, 0, 0, 6, 6, alpha).verdict == "inconclusive"
    assert fisher_decision(3, 6, 0, 0, 6, 6, alpha * 0.999).verdict == "not-confirmed"


def test_no_samples_taken_yet_has_p_one() -> None:
    decision = fisher_decision(0, 0, 0, 0, 0, 4, 0.05)
    assert (decision.settled, decision.verdict, decision.p_value) == (False, "not-confirmed", 1.0)


def test_majority_decision_at_every_point_of_three() -> None:
    table = {
        (f, t): (d.settled, d.verdict) for t in range(4) for f in range(t + 1) for d in [majority_decision(f, t, 3)]
    }
    assert table == {
        (0, 0): (False, "not-confirmed"),
        (0, 1): (False, "not-confirmed"),
        (1, 1): (False, "confirmed"),  # the verdict so far, not settled
        (0, 2): (True, "not-confirmed"),
        (1, 2): (False, "inconclusive"),
        (2, 2): (True, "confirmed"),
        (0, 3): (True, "not-confirmed"),
        (1, 3): (True, "inconclusive"),
        (2, 3): (True, "confirmed"),
        (3, 3): (True, "confirmed"),
    }
    assert [majority_verdict(f, 4) for f in range(5)] == [
        "not-confirmed",
        "inconclusive",
        "inconclusive",
        "confirmed",
        "confirmed",
    ]
    assert (majority_decision(2, 2, 4).settled, majority_decision(2, 2, 4).verdict) == (False, "confirmed")
    assert (majority_decision(2, 4, 4).settled, majority_decision(2, 4, 4).verdict) == (True, "inconclusive")


def test_a_majority_arm_settles_once_the_rest_cannot_reach_more_than_half() -> None:
    # planned 4, two taken, none flipped: even two more flips give 2 of 4, not a majority
    assert (majority_decision(0, 2, 4).settled, majority_decision(0, 2, 4).verdict) == (True, "not-confirmed")
    assert (majority_decision(1, 2, 4).settled, majority_decision(1, 2, 4).verdict) == (False, "inconclusive")
    assert (majority_decision(1, 3, 4).settled, majority_decision(1, 3, 4).verdict) == (True, "inconclusive")
