"""Ablation arms pinned exactly: the majority rule's early stop, and one verdict per arm under concurrent asks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.explain._arms import ArmResult, Judge, Sampler

ARM = frozenset({"a"})


def judge_of(flips: Sequence[bool], samples: int) -> tuple[Judge, Sampler, list[int]]:
    """A majority judge whose rerun with seed ``i`` flips when ``flips[i]``; records the seeds it ran."""
    seeds: list[int] = []

    async def rerun(seed: int, ignore: Sequence[str]) -> str:
        seeds.append(seed)
        await asyncio.sleep(0)
        return "right" if flips[seed] else "wrong"

    sampler = Sampler(rerun, "wrong", lambda a, b: a != b, concurrency=1, max_reruns=None, on_rerun=lambda: None)
    return Judge(sampler, samples, None, 0.05), sampler, seeds


async def test_an_early_majority_arm_stops_once_its_first_samples_decide_it() -> None:
    judge, sampler, seeds = judge_of([True, True, True], 3)
    early = await judge.decide(ARM, full=False)
    assert early == ArmResult(ARM, "confirmed", 2, 2, 0, 0, None, True)
    assert (sampler.reruns, seeds, judge.known(ARM), judge.decided) == (2, [0, 1], early, {})


async def test_an_early_majority_arm_takes_every_sample_when_its_first_ones_do_not_decide_it() -> None:
    judge, sampler, seeds = judge_of([True, False, True], 3)
    late = await judge.decide(ARM, full=False)
    assert late == ArmResult(ARM, "confirmed", 2, 3, 0, 0, None, True)
    assert (sampler.reruns, sorted(seeds)) == (3, [0, 1, 2])


async def test_an_early_ask_waiting_on_a_full_verdict_gets_that_verdict() -> None:
    judge, sampler, _ = judge_of([True, True, True, False, False], 5)
    full, early = await asyncio.gather(judge.decide(ARM), judge.decide(ARM, full=False))
    assert full == ArmResult(ARM, "confirmed", 3, 5, 0, 0, None, True)  # on its own the early ask stops at 3/3
    assert early is full and judge.decided == {ARM: full} and sampler.reruns == 5


@given(st.lists(st.booleans(), min_size=1, max_size=7))
def test_an_early_verdict_never_contradicts_the_full_one_on_confirmation(flips: list[bool]) -> None:
    async def both() -> tuple[ArmResult, ArmResult]:
        early_judge, _, _ = judge_of(flips, len(flips))
        full_judge, _, _ = judge_of(flips, len(flips))
        return await early_judge.decide(ARM, full=False), await full_judge.decide(ARM)

    early, full = asyncio.run(both())
    assert (early.verdict == "confirmed") == (full.verdict == "confirmed")
    assert full.samples == len(flips) and early.samples <= len(flips) and early.settled
