"""Group search over a pure outcome function: exact 1-minimal culprit sets, few reruns, a budget that stops it."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.explain._arms import Judge, Sampler
from agentfootprint.explain._group import GroupSearch

WRONG, RIGHT = "wrong", "right"


def changed(a: str, b: str) -> bool:
    return a != b


def oracle(groups: list[frozenset[str]], noise: float = 0.0) -> object:
    """The answer stays wrong while any group is fully present (a group = sources that mislead together)."""

    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        removed = set(ignore)
        wrong = any(not (g & removed) for g in groups)
        if noise:
            h = hashlib.sha256(f"{seed}|{sorted(removed)}".encode()).digest()
            wrong ^= int.from_bytes(h[:4], "big") / 2**32 < noise
        return WRONG if wrong else RIGHT

    return rerun


def expected_sets(groups: list[frozenset[str]]) -> set[frozenset[str]]:
    """Minimal sets whose removal breaks every group: the minimal hitting sets of the groups."""
    from itertools import product

    hits = {frozenset(choice) for choice in product(*[sorted(g) for g in groups])}
    return {h for h in hits if not any(o < h for o in hits)}


async def search(
    population: list[str],
    groups: list[frozenset[str]],
    *,
    samples: int = 3,
    max_samples: int | None = None,
    max_reruns: int | None = None,
    noise: float = 0.0,
) -> tuple[set[frozenset[str]], Sampler, bool]:
    sampler = Sampler(
        oracle(groups, noise),  # type: ignore[arg-type]
        WRONG,
        changed,
        concurrency=4,
        max_reruns=max_reruns,
        on_rerun=lambda: None,
    )
    judge = Judge(sampler, samples, max_samples, 0.05)
    await judge.baseline()
    outcome = await GroupSearch(judge, population, screen=max_samples is None, fanout=4).run()
    found = {c.ids for c in outcome.candidates if c.result.verdict == "confirmed" and c.minimal}
    return found, sampler, outcome.budget_stopped


def ids(n: int) -> list[str]:
    return [f"s{i}" for i in range(n)]


async def test_single_culprit_among_a_hundred_costs_a_fraction_of_one_at_a_time() -> None:
    population = ids(100)
    for culprit in ("s0", "s37", "s99"):
        found, sampler, _ = await search(population, [frozenset([culprit])])
        assert found == {frozenset([culprit])}
        assert sampler.reruns <= 303 // 4  # one at a time: 3 samples x (100 sources + baseline)


async def test_redundant_pair_is_one_minimal_set_and_conjunctive_pair_two() -> None:
    population = ids(20)
    redundant = [frozenset(["s3"]), frozenset(["s15"])]  # either one alone misleads
    found, _, _ = await search(population, redundant)
    assert found == {frozenset(["s3", "s15"])}
    conjunctive = [frozenset(["s3", "s15"])]  # both needed to mislead
    found, _, _ = await search(population, conjunctive)
    assert found == {frozenset(["s3"]), frozenset(["s15"])}


async def test_nothing_flips_when_no_source_matters() -> None:
    found, sampler, _ = await search(ids(30), [frozenset(["not-a-source"])])
    assert found == set() and sampler.reruns <= 3 + 3


async def test_budget_stops_the_search_and_says_so() -> None:
    found, sampler, stopped = await search(ids(100), [frozenset(["s42"])], max_reruns=8)
    assert stopped and sampler.budget_hit and sampler.reruns == 8 and found == set()


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 40),
    data=st.data(),
)
async def test_group_search_finds_exactly_the_minimal_hitting_sets(n: int, data: st.DataObject) -> None:
    population = ids(n)
    shape = data.draw(st.sampled_from(["single", "redundant", "conjunctive", "mixed"]))
    pick = st.sampled_from(population)
    if shape == "single":
        groups = [frozenset([data.draw(pick)])]
    elif shape == "redundant":
        a, b = data.draw(st.lists(pick, min_size=2, max_size=2, unique=True)) if n > 1 else (population[0],) * 2
        groups = [frozenset([a]), frozenset([b])]
    elif shape == "conjunctive":
        groups = [frozenset(data.draw(st.lists(pick, min_size=2, max_size=3, unique=True)))]
    else:
        members = data.draw(st.lists(pick, min_size=3, max_size=3, unique=True)) if n > 2 else population * 3
        groups = [frozenset(members[:2]), frozenset(members[2:])]
    found, _, _ = await search(population, groups)
    assert found == expected_sets(groups)


async def test_noisy_outcomes_under_the_statistical_rule_still_give_the_exact_set() -> None:
    population = ids(24)
    found, _, _ = await search(population, [frozenset(["s5"])], max_samples=20, noise=0.1)
    assert found == {frozenset(["s5"])}


async def test_a_member_whose_restoring_is_inconclusive_is_not_called_minimal() -> None:
    """The true pair {a, b} flips only half the time (a noisy model); {a, b, x} always does. Restoring x leaves an
    inconclusive arm, so {a, b, x} is not claimed 1-minimal: {a, b} is reported, inconclusive."""

    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        removed = set(ignore)
        if {"a", "b", "x"} <= removed:
            return RIGHT
        if {"a", "b"} <= removed:
            return RIGHT if seed % 2 == 0 else WRONG
        return WRONG

    sampler = Sampler(rerun, WRONG, changed, concurrency=4, max_reruns=None, on_rerun=lambda: None)
    judge = Judge(sampler, 3, 10, 0.05)
    await judge.baseline()
    candidate = await GroupSearch(judge, ["a", "b", "x", "y"], screen=False, fanout=2).verify(["a", "b", "x"])
    assert candidate.ids == frozenset(["a", "b"]) and not candidate.minimal
    assert (candidate.result.verdict, candidate.result.flips, candidate.result.samples) == ("inconclusive", 5, 10)
    whole = judge.decided[frozenset(["a", "b", "x"])]
    assert (whole.verdict, whole.flips, whole.samples) == ("confirmed", 9, 9)  # settled early: 9/9 already decides
