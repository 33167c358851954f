"""The default statistics (``max_samples="auto"``): a pooled search, confirmations on fresh seeds with Holm's
correction, sample sizes that follow the baseline's noise, and honest flags when they cannot."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_fact
from agentfootprint.explain import LocalizationReport, localize_context_bug
from agentfootprint.explain._arms import Sampler
from agentfootprint.explain._pooled import SEARCH_BASE, SURE_NO_LOG_ODDS, NoiseLog, Oracle
from agentfootprint.explain._stats import binomial_upper, fisher_power, holm, plan_samples
from agentfootprint.providers import LLMRequest, mock

Rule = Callable[[set[str]], bool]


def noisy(seed: int | None, text: str, rate: float) -> bool:
    digest = hashlib.sha256(f"{seed}|{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def build(n: int, rule: Rule, noise: float = 0.0, seeds: list[int | None] | None = None) -> Agent:
    """``n`` facts ``f0..``; the model answers WRONG when ``rule(present fact ids)`` holds, flipped at ``noise``."""
    texts = {f"f{i}": f"Note {i}: item {i * 7 % 11}." for i in range(n)}

    def respond(req: LLMRequest) -> Any:
        if seeds is not None:
            seeds.append(req.seed)
        present = {k for k, v in texts.items() if v in req.system_prompt}
        wrong = rule(present) ^ noisy(req.seed, req.system_prompt, noise)
        return "WRONG answer" if wrong else "RIGHT answer"

    builder = Agent.create(provider=mock(respond=respond), model="m", name="t")
    for key, text in texts.items():
        builder = builder.fact(define_fact(id=key, data=text))
    return builder.build()


def changed(a: str, b: str) -> bool:
    return a.split()[0] != b.split()[0]


async def localized(agent: Agent, **kwargs: Any) -> LocalizationReport:
    for seed in range(500, 700):  # the run the user saw answered wrongly
        if "WRONG" in str((await agent.run("q?", seed=seed)).answer):
            break
    return await localize_context_bug(agent, outcome_changed=changed, progress=False, max_suspects=None, **kwargs)


def confirmed(report: LocalizationReport) -> set[tuple[str, ...]]:
    return {c.ids for c in report.culprit_sets if c.verdict == "confirmed"}


async def test_one_culprit_among_forty_without_noise_costs_a_handful_of_reruns() -> None:
    report = await localized(build(40, lambda p: "f17" in p))
    assert confirmed(report) == {("f17",)} and report.max_samples == "auto"
    assert report.test == "fisher-exact-one-sided" and report.multiplicity == "holm"
    assert report.reruns <= 3 + 6 + 3 + 1  # baseline, bisection of 41 hypotheses, confirmation, partner check
    assert report.honesty_flags == []


async def test_a_conjunctive_pair_is_two_sets_auto_does_not_stop_at_the_first() -> None:
    report = await localized(build(30, lambda p: {"f3", "f21"} <= p))
    assert confirmed(report) == {("f3",), ("f21",)}
    ps = sorted(c.p_value or 1.0 for c in report.culprit_sets if c.verdict == "confirmed")
    assert ps[0] <= 0.05 / 2 and ps[1] <= 0.05  # Holm's step-down over the two arms compared


async def test_a_redundant_pair_is_one_minimal_set() -> None:
    report = await localized(build(30, lambda p: bool({"f4", "f9"} & p)))
    (pair,) = [c for c in report.culprit_sets if c.verdict == "confirmed"]
    assert pair.ids == ("f4", "f9") and pair.minimal
    assert [r.verdict for r in pair.restore_checks] == ["not-confirmed", "not-confirmed"]


async def test_a_noisy_model_gets_a_culprit_with_samples_sized_to_its_noise() -> None:
    report = await localized(build(30, lambda p: "f12" in p, noise=0.2))
    assert confirmed(report) == {("f12",)}
    assert report.noise is not None and report.noise > 0.05
    assert report.samples_per_arm is not None and report.samples_per_arm > 3
    (culprit,) = [c for c in report.culprit_sets if c.verdict == "confirmed"]
    if culprit.baseline_flips:  # never "the outcome holds" when the baseline flipped
        assert "holds" not in culprit.claim and "flipped only" in culprit.claim


async def test_a_removable_source_carrying_the_right_answer_does_not_hide_the_culprit() -> None:
    """f0 is a policy that keeps the answer right: ablating everything removes it too, so nothing flips; removing
    the culprit f7 alone fixes the answer. The search looks further and says why."""
    report = await localized(build(24, lambda p: "f7" in p or "f0" not in p))
    assert confirmed(report) == {("f7",)}
    assert "removable-source-may-carry-right-answer" in report.honesty_flags


@pytest.mark.parametrize("noise", [0.0, 0.1])
async def test_no_culprit_is_reported_clean(noise: float) -> None:
    """The wrong answer was noise (a rare wrong answer of a model that is right most of the time)."""
    report = await localized(build(20, lambda p: False, noise=noise))
    assert confirmed(report) == set()
    if noise:  # the baseline mostly gives the other answer: nothing is judged, and the report says why
        assert "answer-not-reproducible" in report.honesty_flags and report.reruns == 6


def scripted(n: int, rule: Rule, hide: Callable[[int | None, int], bool]) -> Agent:
    """Like ``build``, but the noise is scripted: ``hide(seed, facts present)`` flips the answer."""
    texts = {f"f{i}": f"Note {i}: item {i * 7 % 11}." for i in range(n)}

    def respond(req: LLMRequest) -> Any:
        present = {k for k, v in texts.items() if v in req.system_prompt}
        wrong = rule(present) ^ hide(req.seed, len(present))
        return "WRONG answer" if wrong else "RIGHT answer"

    builder = Agent.create(provider=mock(respond=respond), model="m", name="t")
    for key, text in texts.items():
        builder = builder.fact(define_fact(id=key, data=text))
    return builder.build()


async def test_a_baseline_that_flips_four_of_six_by_chance_grows_before_calling_the_answer_unreproducible() -> None:
    """Seeds 0, 1, 3 and 4 flip the baseline (noise): 4 of 6 is no evidence of a rate above 1/2, so the baseline
    grows and the culprit is still judged."""
    report = await localized(scripted(8, lambda p: "f2" in p, lambda seed, n: seed in (0, 1, 3, 4) and n == 8))
    assert "answer-not-reproducible" not in report.honesty_flags
    assert confirmed(report) == {("f2",)}


async def test_one_noisy_answer_at_the_start_of_the_search_does_not_end_it() -> None:
    """Every arm's first search rerun hides the flip: the search asks again before concluding nothing flips."""
    report = await localized(scripted(30, lambda p: "f9" in p, lambda seed, n: seed == SEARCH_BASE and n < 30))
    assert confirmed(report) == {("f9",)}
    assert "no-flip-with-everything-ablated" not in report.honesty_flags


async def test_a_grown_baseline_that_flips_above_half_voids_every_confirmation() -> None:
    """The first three baseline samples keep the wrong answer, the later ones mostly do not: the answer examined
    was the model's rare one after all, and nothing is confirmed against it."""

    def hide(seed: int | None, n: int) -> bool:
        if seed is None or seed < 3:
            return False
        if seed >= SEARCH_BASE:  # a noisy search: the samples per arm grow, the baseline with them
            return noisy(seed * 31 + n, "s", 0.25)
        return n == 10 and noisy(seed, "late", 0.8)  # only the baseline (all ten facts) turns

    report = await localized(scripted(10, lambda p: "f4" in p, hide))
    assert "answer-not-reproducible" in report.honesty_flags
    assert confirmed(report) == set()
    (culprit,) = [c for c in report.culprit_sets if c.ids == ("f4",)]
    assert culprit.verdict == "inconclusive" and culprit.flips == culprit.samples  # it beat the baseline: voided


async def test_a_redundant_pair_on_a_noisy_model_is_not_proposed_one_member_at_a_time() -> None:
    def hide(seed: int | None, n: int) -> bool:  # the noise shows in the search from its first answers
        return seed is not None and seed >= SEARCH_BASE and noisy(seed * 31 + n, "s", 0.15)

    report = await localized(scripted(30, lambda p: bool({"f4", "f9"} & p), hide))
    assert confirmed(report) == {("f4", "f9")}
    judged = {c.ids for c in report.culprit_sets}
    assert ("f4",) not in judged and ("f9",) not in judged  # no member judged alone (and counted by Holm)


class Scripted:
    """A sampler whose search answers are scripted, in order."""

    def __init__(self, answers: list[bool]) -> None:
        self.answers = answers

    async def sample_range(self, arm: frozenset[str], start: int, stop: int) -> list[bool | None]:
        return [self.answers.pop(0) for _ in range(start, stop)]


async def test_the_partner_check_needs_stronger_evidence_to_say_nothing_flips() -> None:
    answers = [False, False, True, True, True, True]  # at 10 % noise two answers settle an ordinary test
    oracle = Oracle(cast(Sampler, Scripted(list(answers))), NoiseLog(base_flips=1, base_samples=10))
    assert await oracle.test(frozenset({"a"})) is False
    oracle = Oracle(cast(Sampler, Scripted(list(answers))), NoiseLog(base_flips=1, base_samples=10))
    assert await oracle.test(frozenset({"a"}), sure_no=SURE_NO_LOG_ODDS) is True


async def test_a_screen_that_starts_from_the_bisections_belief_passes_a_true_pick_on_fewer_reruns() -> None:
    """At 10 % noise a neutral screen needs two agreeing answers; one from the bisection's 0.8 belief needs one. A
    pick that does not flip alone (a pair's member) is still screened out on the two answers a neutral screen takes."""
    noise = NoiseLog(base_flips=1, base_samples=10)
    flips = Scripted([True, True, True])
    assert await Oracle(cast(Sampler, flips), noise).test(frozenset({"a"})) is True
    assert len(flips.answers) == 1
    flips = Scripted([True, True, True])
    assert await Oracle(cast(Sampler, flips), noise).test(frozenset({"a"}), prior=0.8) is True
    assert len(flips.answers) == 2
    alone = Scripted([False, False, False])
    assert await Oracle(cast(Sampler, alone), noise).test(frozenset({"a"}), prior=0.8) is False
    assert len(alone.answers) == 1


async def test_a_pair_member_screened_from_the_bisections_belief_is_still_not_confirmed_alone() -> None:
    def hide(seed: int | None, n: int) -> bool:
        return seed is not None and seed >= SEARCH_BASE and noisy(seed * 17 + n, "t", 0.1)

    for members in ({"f3", "f12"}, {"f0", "f21"}, {"f8", "f9"}):
        report = await localized(scripted(30, lambda p, m=members: bool(m & p), hide))
        assert confirmed(report) == {tuple(sorted(members))}
        assert not any(len(c.ids) == 1 and c.verdict == "confirmed" for c in report.culprit_sets)


def test_the_noise_bound_for_sample_sizes_sits_above_the_rate_seen_once_noise_showed() -> None:
    assert NoiseLog(base_samples=10).upper() == 0.0
    assert NoiseLog(base_flips=1, base_samples=10).upper() == pytest.approx(0.1 + 0.3 / 10**0.5)


async def test_a_noisy_pick_before_a_removable_policy_falls_back_to_the_masked_search() -> None:
    """f0 keeps the answer right, f7 is the culprit; the first answers of mid-sized prefixes flip by noise, so the
    search picks a decoy. Once its prefixes stop flipping, it looks for a flipping subset and finds f7."""
    report = await localized(
        scripted(24, lambda p: "f7" in p or "f0" not in p, lambda seed, n: seed == SEARCH_BASE and 5 < n < 20)
    )
    assert confirmed(report) == {("f7",)}
    assert "removable-source-may-carry-right-answer" in report.honesty_flags


def test_binomial_upper_tail() -> None:
    assert binomial_upper(0, 6) == 1.0 and binomial_upper(7, 6) == 0.0
    assert binomial_upper(6, 6) == pytest.approx(1 / 64) and binomial_upper(4, 6) == pytest.approx(22 / 64)
    assert binomial_upper(1, 0) == 1.0


@given(st.integers(0, 30), st.integers(1, 30))
def test_binomial_upper_falls_as_more_flips_are_asked(k: int, n: int) -> None:
    assert binomial_upper(k + 1, n) <= binomial_upper(k, n) <= 1.0


async def test_search_reruns_use_their_own_seeds_and_confirmations_seeds_they_never_used() -> None:
    seeds: list[int | None] = []
    agent = build(20, lambda p: "f5" in p, seeds=seeds)
    for seed in range(500, 700):
        if "WRONG" in str((await agent.run("q?", seed=seed)).answer):
            break
    seeds.clear()
    report = await localize_context_bug(agent, outcome_changed=changed, progress=False, max_suspects=None)
    assert confirmed(report) == {("f5",)}
    search = [s for s in seeds if s is not None and s >= SEARCH_BASE]
    confirm = [s for s in seeds if s is not None and s < SEARCH_BASE]
    assert search and sorted(set(confirm)) == [0, 1, 2]


async def test_a_budget_too_small_for_the_noise_says_so() -> None:
    report = await localized(build(20, lambda p: "f5" in p, noise=0.3), max_reruns=20)
    assert "rerun-budget-exhausted" in report.honesty_flags and "budget-too-small-for-noise" in report.honesty_flags
    assert confirmed(report) == set() and report.reruns == 20


async def test_single_search_tests_every_arm_with_holm() -> None:
    report = await localized(build(5, lambda p: "f2" in p), search="single")
    assert [(s.id, s.verdict) for s in report.suspects if s.verdict == "confirmed"] == [("f2", "confirmed")]
    # five arms planned at 0.05 / 5; once the four others never flipped they could not reach any level and take no
    # share (Tarone): f2's 4 of 4 against 0 of 4 (p = 1/70, over the third look's share 0.3) is within 0.05
    assert report.arms_compared == 5 and report.samples_per_arm == 4


def test_holm_rejects_step_down() -> None:
    assert holm([0.01, 0.04, 0.03], 0.05) == [True, False, False]
    assert holm([0.01, 0.02, 0.04], 0.05) == [True, True, True]
    assert holm([], 0.05) == []


@settings(max_examples=40, deadline=None)
@given(p0=st.floats(0.0, 0.3), m=st.integers(1, 6))
def test_planned_sizes_reach_the_stated_power(p0: float, m: int) -> None:
    n = plan_samples(p0, 0.05 / m)
    assert n is not None and fisher_power(n, round(p0, 3), 1 - round(p0, 3), 0.05 / m) >= 0.9


def test_no_size_reaches_power_when_the_baseline_flips_half_the_time() -> None:
    assert plan_samples(0.5, 0.05) is None and plan_samples(0.0, 0.05) == 3
