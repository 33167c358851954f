"""Group search step by step: the exact sets it screens and judges (its cost), how it verifies, and how it stops."""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

import pytest

from agentfootprint.explain._arms import Arm, ArmResult, BudgetExhausted, Judge, Sampler
from agentfootprint.explain._group import MAX_CULPRIT_SETS, Candidate, GroupSearch


def arm(ids: str) -> Arm:
    return frozenset(ids)


class ScriptedJudge:
    """Ablating a set flips the outcome when it hits every group; logs each screen, early and full decision."""

    def __init__(
        self,
        groups: Iterable[str],
        *,
        lies: Iterable[str] = (),
        unsettled: Iterable[str] = (),
        budget_hit: bool = False,
    ) -> None:
        self.groups = [arm(g) for g in groups]
        self.lies = set(lies)
        self.unsettled = set(unsettled)
        self.sampler = SimpleNamespace(budget_hit=budget_hit)
        self.log: list[tuple[str, str]] = []
        self.decided: dict[Arm, ArmResult] = {}

    def _flips(self, ids: Arm) -> bool:
        return all(g & ids for g in self.groups)

    async def screen(self, ids: Arm) -> bool | None:
        name = "".join(sorted(ids))
        self.log.append(("screen", name))
        return self._flips(ids) or name in self.lies

    async def decide(self, ids: Arm, *, full: bool = True) -> ArmResult:
        name = "".join(sorted(ids))
        self.log.append(("decide" if full else "early", name))
        flipped = self._flips(ids)
        result = ArmResult(
            ids,
            "confirmed" if flipped else "not-confirmed",
            3 if flipped else 0,
            3,
            0,
            0,
            None,
            name not in self.unsettled,
        )
        if full:
            self.decided[ids] = result
        return result

    def known(self, ids: Arm) -> ArmResult | None:
        return self.decided.get(ids)


def found(candidates: list[Candidate]) -> list[tuple[str, bool, list[str]]]:
    return [("".join(sorted(c.ids)), c.minimal, ["".join(sorted(r.ids)) for r in c.restored]) for c in candidates]


async def search(
    population: str, judge: ScriptedJudge, *, screen: bool, fanout: int, max_sets: int = MAX_CULPRIT_SETS
) -> list[tuple[str, bool, list[str]]]:
    outcome = await GroupSearch(judge, list(population), screen=screen, fanout=fanout, max_sets=max_sets).run()  # type: ignore[arg-type]
    return found(outcome.candidates)


async def test_screening_splits_into_fanout_parts_and_judges_only_what_it_reports() -> None:
    judge = ScriptedJudge(["e"])
    assert await search("abcdefgh", judge, screen=True, fanout=4) == [("e", True, [])]
    assert judge.log == [
        ("screen", "abcdefgh"),
        *(("screen", part) for part in ("ab", "cd", "ef", "gh")),
        ("screen", "e"),
        ("screen", "f"),
        ("decide", "e"),
        ("early", "abcdfgh"),  # the tree's next check, alongside the verification
        ("early", "abcdfgh"),
    ]


async def test_without_screening_every_step_is_an_early_judgement_in_halves() -> None:
    judge = ScriptedJudge(["e"])
    assert await search("abcdefgh", judge, screen=False, fanout=4) == [("e", True, [])]
    assert [step for _, step in judge.log] == [
        "abcdefgh",
        "abcd",
        "efgh",
        "ef",
        "gh",
        "e",
        "f",
        "e",
        "abcdfgh",
        "abcdfgh",
    ]
    assert [kind for kind, _ in judge.log].count("decide") == 1


async def test_a_redundant_pair_is_verified_by_restoring_each_member_in_rank_order() -> None:
    judge = ScriptedJudge(["a", "c"])  # either of a and c alone keeps the outcome
    assert await search("dcba", judge, screen=True, fanout=2) == [("ac", True, ["a", "c"])]  # c restored first
    assert judge.log == [
        ("screen", "abcd"),
        ("screen", "cd"),
        ("screen", "ab"),
        ("screen", "ab"),
        ("screen", "abd"),
        ("screen", "abc"),
        ("screen", "bc"),
        ("screen", "ac"),
        ("decide", "ac"),
        ("early", "abd"),
        ("early", "bcd"),
        ("decide", "a"),
        ("decide", "c"),
        ("early", "abd"),
        ("early", "bcd"),
    ]


async def test_a_conjunctive_pair_gives_two_one_member_sets_through_the_hitting_set_tree() -> None:
    judge = ScriptedJudge(["ac"])  # a and c mislead only together: removing either one flips
    assert await search("dcba", judge, screen=True, fanout=3) == [("c", True, []), ("a", True, [])]
    assert judge.log == [
        ("screen", "abcd"),
        ("screen", "cd"),
        ("screen", "b"),
        ("screen", "a"),
        ("screen", "d"),
        ("screen", "c"),
        ("decide", "c"),
        ("early", "abd"),
        ("early", "abd"),
        ("screen", "d"),
        ("screen", "b"),
        ("screen", "a"),
        ("decide", "a"),
        ("early", "bd"),
        ("early", "bd"),
    ]


async def test_two_groups_give_every_minimal_hitting_set() -> None:
    judge = ScriptedJudge(["ab", "e"])
    assert await search("abcdef", judge, screen=False, fanout=2) == [("ae", True, ["e", "a"]), ("be", True, ["e", "b"])]
    assert len(judge.log) == 34


async def test_max_sets_stops_the_tree() -> None:
    judge = ScriptedJudge(["ab", "e"])
    assert await search("abcdef", judge, screen=False, fanout=2, max_sets=1) == [("ae", True, ["e", "a"])]


async def test_a_misleading_screen_is_caught_by_the_full_judgement_and_searched_again_in_full() -> None:
    judge = ScriptedJudge(["c"], lies=["ab", "a"])
    assert await search("abcd", judge, screen=True, fanout=2) == [("c", True, [])]
    assert judge.log == [
        ("screen", "abcd"),
        ("screen", "ab"),
        ("screen", "cd"),
        ("screen", "a"),
        ("screen", "b"),
        ("decide", "a"),  # the screened lead does not hold up
        ("early", "bcd"),
        ("early", "ab"),  # so the set is searched again with judged verdicts
        ("early", "cd"),
        ("early", "c"),
        ("early", "d"),
        ("decide", "c"),
        ("early", "abd"),
    ]


async def test_nothing_flips_with_everything_ablated_ends_the_search_at_once() -> None:
    judge = ScriptedJudge(["z"])
    outcome = await GroupSearch(judge, list("abc"), screen=False, fanout=2).run()  # type: ignore[arg-type]
    assert outcome.candidates == [] and judge.log == [("early", "abc")] and not outcome.budget_stopped
    screened = ScriptedJudge(["z"])
    await GroupSearch(screened, list("abc"), screen=True, fanout=2).run()  # type: ignore[arg-type]
    assert screened.log == [("screen", "abc"), ("early", "abc")]  # a screen's no is confirmed by a judgement


async def test_an_empty_population_searches_nothing() -> None:
    judge = ScriptedJudge(["a"])
    outcome = await GroupSearch(judge, [], screen=True, fanout=2).run()  # type: ignore[arg-type]
    assert (outcome.candidates, outcome.everything, judge.log) == ([], None, [])


async def test_a_settled_verdict_counts_even_when_the_budget_ran_out() -> None:
    judge = ScriptedJudge(["a"], budget_hit=True)
    search_ = GroupSearch(judge, list("ab"), screen=False, fanout=2)  # type: ignore[arg-type]
    assert await search_.judged(arm("a")) is True and await search_.judged(arm("b")) is False


async def test_an_unsettled_verdict_stops_the_search_only_when_the_budget_ran_out() -> None:
    judge = ScriptedJudge(["a"], unsettled=["a"])
    search_ = GroupSearch(judge, list("ab"), screen=False, fanout=2)  # type: ignore[arg-type]
    assert await search_.judged(arm("a")) is True
    judge.sampler.budget_hit = True
    with pytest.raises(BudgetExhausted):
        await search_.judged(arm("a"))


async def test_verify_keeps_an_unsettled_set_as_a_lead_not_a_culprit() -> None:
    judge = ScriptedJudge(["a"], unsettled=["ab"])
    candidate = await GroupSearch(judge, list("ab"), screen=False, fanout=2).verify(["b", "a"])  # type: ignore[arg-type]
    assert (candidate.ids, candidate.minimal, candidate.restored) == (arm("ab"), False, [])
    assert judge.log == [("decide", "ab")]


async def test_verify_drops_a_member_whose_restoring_still_flips() -> None:
    judge = ScriptedJudge(["a"])
    candidate = await GroupSearch(judge, list("ab"), screen=False, fanout=2).verify(["a", "b"])  # type: ignore[arg-type]
    assert (candidate.ids, candidate.minimal) == (arm("a"), True)
    assert judge.log == [("decide", "ab"), ("decide", "b"), ("decide", "a"), ("decide", "a")]


async def test_verify_with_an_unsettled_restore_is_not_minimal() -> None:
    judge = ScriptedJudge(["a", "b"], unsettled=["a"])
    candidate = await GroupSearch(judge, list("ab"), screen=False, fanout=2).verify(["a", "b"])  # type: ignore[arg-type]
    assert (candidate.ids, candidate.minimal) == (arm("ab"), False)
    assert [r.settled for r in candidate.restored] == [True, False]


def test_split_spreads_the_remainder_over_the_first_parts() -> None:
    search_ = GroupSearch(ScriptedJudge([]), [], screen=True, fanout=1)  # type: ignore[arg-type]
    assert search_.fanout == 2
    assert search_._split(list("abcdefg"), 3) == [["a", "b", "c"], ["d", "e"], ["f", "g"]]
    assert search_._split(list("ab"), 5) == [["a"], ["b"]]
    ordered = GroupSearch(ScriptedJudge([]), ["z", "y", "x"], screen=True, fanout=2)  # type: ignore[arg-type]
    assert ordered._sorted(frozenset("xzqy")) == ["z", "y", "x", "q"]


async def _real(samples: int, max_samples: int | None, max_reruns: int | None, culprit: str) -> object:
    async def rerun(seed: int, ignore: object) -> str:
        return "right" if culprit in set(ignore) else "wrong"  # type: ignore[arg-type]

    sampler = Sampler(rerun, "wrong", lambda a, b: a != b, concurrency=2, max_reruns=max_reruns, on_rerun=lambda: None)
    judge = Judge(sampler, samples, max_samples, 0.05)
    await judge.baseline()
    search_ = GroupSearch(judge, ["a", "b", "c", "d"], screen=max_samples is None, fanout=2)
    return SimpleNamespace(outcome=await search_.run(), judge=judge)


async def test_the_outcome_carries_the_verdict_of_everything_ablated() -> None:
    done = await _real(2, 4, None, "c")
    everything = done.judge.decided[arm("abcd")]  # type: ignore[attr-defined]
    assert done.outcome.everything is everything and everything.verdict == "confirmed"  # type: ignore[attr-defined]
    quiet = await _real(2, None, None, "z")
    assert quiet.outcome.everything is not None and quiet.outcome.everything.verdict == "not-confirmed"  # type: ignore[attr-defined]
    assert quiet.outcome.everything is quiet.judge.known(arm("abcd"))  # type: ignore[attr-defined]


async def test_a_budget_stop_keeps_what_is_known_of_everything() -> None:
    stopped = await _real(2, 4, 9, "c")
    outcome = stopped.outcome  # type: ignore[attr-defined]
    assert outcome.budget_stopped and outcome.candidates == []
    assert outcome.everything is stopped.judge.known(arm("abcd"))  # type: ignore[attr-defined]
    assert outcome.everything is not None and outcome.everything.verdict == "confirmed"


async def test_the_baseline_arm_is_judged_on_its_own_flips() -> None:
    outcomes = iter(["wrong", "right", "wrong"])

    async def rerun(seed: int, ignore: object) -> str:
        return next(outcomes)

    sampler = Sampler(rerun, "wrong", lambda a, b: a != b, concurrency=1, max_reruns=None, on_rerun=lambda: None)
    judge = Judge(sampler, 3, None, 0.05)
    assert await judge.baseline() == ArmResult(frozenset(), "inconclusive", 1, 3, 0, 1, None, True)
    quiet = Judge(
        Sampler(rerun, "x", lambda a, b: False, concurrency=1, max_reruns=None, on_rerun=lambda: None), 0, None, 0.05
    )
    assert await quiet.baseline() == ArmResult(frozenset(), "not-confirmed", 0, 0, 0, 0, None, True)
    first = await judge.decide(arm("a"))
    assert await judge.decide(arm("a")) is first and judge.known(arm("a")) is first


async def test_a_set_already_found_labels_every_path_it_misses_without_a_new_search() -> None:
    judge = ScriptedJudge(["ab", "cd", "e"])
    assert await search("abcdef", judge, screen=False, fanout=2) == [
        ("ade", True, ["de", "ae", "ad"]),
        ("bce", True, ["ce", "be", "bc"]),
        ("bde", True, ["de", "be", "bd"]),
        ("ace", True, ["ce", "ae", "ac"]),
    ]
    assert len(judge.log) == 73
