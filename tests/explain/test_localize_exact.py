"""localize_context_bug, pinned exactly: the whole printed report, the cost figures and flags of each mode."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from agentfootprint import Agent, define_fact
from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.explain import LocalizationReport, LocalizeError, localize_context_bug, localize_sync
from agentfootprint.explain.localize import Rerun, render_reply, step_reply
from agentfootprint.providers import LLMRequest, mock

FACTS = {
    "alpha": "Alpha note: premium customer.",
    "beta": "Beta note: premium customer too.",
    "gamma": "Gamma note: weather is fine.",
    "delta": "Delta note: be brief.",
}
Rule = Callable[[set[str], int | None], bool | None]
FIGURES = {
    "reruns",
    "model_calls",
    "model_calls_saved",
    "baseline_flips",
    "baseline_samples",
    "baseline_errors",
    "budget_exhausted",
    "honesty_flags",
    "test",
    "confidence",
    "max_samples",
    "samples",
    "search",
    "sources_considered",
}
NOTE = "Scores are proxies (text overlap / similarity) and rank suspects only; only ablation reruns make causal claims."
HEAD = [
    "Localization (CAUSAL) at call-llm#5, scorer: lexical",
    "answer: 'WRONG premium'",
]
RANKING = "ranking: top-2 margin 0.049: proxy scores alone cannot separate them; the ablation test can"


def build(rule: Rule) -> Agent:
    """Four facts; the scripted model answers WRONG when ``rule(facts it received, seed)`` holds, fails on None."""

    def respond(req: LLMRequest) -> Any:
        present = {k for k, v in FACTS.items() if v in req.system_prompt}
        out = rule(present, req.seed)
        if out is None:
            raise RuntimeError("model down")
        return "WRONG premium" if out else "RIGHT standard"

    builder = Agent.create(provider=mock(respond=respond), model="m", name="t")
    for key, text in FACTS.items():
        builder = builder.fact(define_fact(id=key, data=text))
    return builder.build()


def first_word_changed(a: str, b: str) -> bool:
    return a.split()[0] != b.split()[0]


async def localized(rule: Rule, **kwargs: Any) -> LocalizationReport:
    """This file pins the plain rules (§3 majority, §7 fixed ``max_samples``): ``max_samples=None`` unless given;
    the default ``"auto"`` statistics are pinned in test_localize_auto.py."""
    kwargs.setdefault("max_samples", None)
    agent = build(rule)
    await agent.run("premium?")
    return await localize_context_bug(
        agent, outcome_changed=first_word_changed, progress=False, concurrency=1, **kwargs
    )


def figures(report: LocalizationReport) -> dict[str, Any]:
    return report.model_dump(include=FIGURES)


def suspect_rows(report: LocalizationReport) -> list[tuple[Any, ...]]:
    return [
        (s.id, s.kind, s.rank, s.verdict, s.flips, s.samples, s.errors, s.baseline_flips, s.p_value)
        for s in report.suspects
    ]


def redundant(present: set[str], seed: int | None) -> bool:
    return bool(present & {"alpha", "beta"})


def not_confirmed(sid: str, n: int) -> str:
    return f"NOT CONFIRMED: ablating fact '{sid}' flipped the outcome in 0/{n} seeded reruns"


async def test_a_redundant_pair_is_found_by_the_group_search_after_no_single_source_is_confirmed() -> None:
    report = await localized(redundant, samples=2)
    assert str(report).split("\n") == [
        *HEAD,
        "baseline: 0/2 reruns flipped with no ablation",
        "search: auto; rule: majority of 2 paired seeded reruns",
        "cost: 18 reruns, 18 model calls (0 identical calls reused); 4 ablatable sources",
        RANKING,
        "suspects:",
        f"  #1 fact 'alpha' score 0.339  NOT-CONFIRMED  {not_confirmed('alpha', 2)}",
        f"  #2 fact 'beta' score 0.290  NOT-CONFIRMED  {not_confirmed('beta', 2)}",
        f"  #3 fact 'gamma' score 0.000  NOT-CONFIRMED  {not_confirmed('gamma', 2)}",
        f"  #4 fact 'delta' score 0.000  NOT-CONFIRMED  {not_confirmed('delta', 2)}",
        "culprit sets:",
        "  {alpha, beta}  CONFIRMED  CAUSAL: ablating fact 'alpha' and fact 'beta' together flipped the outcome in "
        "2/2 seeded reruns; restoring any one of them alone stops the flip (a 1-minimal culprit set)",
        "honesty flags: none",
        NOTE,
    ]
    assert figures(report) == {
        "reruns": 18,
        "model_calls": 18,
        "model_calls_saved": 0,
        "baseline_flips": 0,
        "baseline_samples": 2,
        "baseline_errors": 0,
        "budget_exhausted": False,
        "honesty_flags": [],
        "test": None,
        "confidence": None,
        "max_samples": None,
        "samples": 2,
        "search": "auto",
        "sources_considered": 4,
    }
    (pair,) = report.culprit_sets
    assert pair.model_dump(exclude={"claim"}) == {
        "ids": ("alpha", "beta"),
        "kinds": ("fact", "fact"),
        "verdict": "confirmed",
        "flips": 2,
        "samples": 2,
        "errors": 0,
        "baseline_flips": 0,
        "p_value": None,
        "minimal": True,
        "restore_checks": [
            {"restored": "alpha", "verdict": "not-confirmed", "flips": 0, "samples": 2},
            {"restored": "beta", "verdict": "not-confirmed", "flips": 0, "samples": 2},
        ],
    }
    assert report.confirmed == [] and report.confirmed_sets == [pair]
    assert [s.text for s in report.suspects] == list(FACTS.values())
    assert [s.trigger for s in report.suspects] == ["always"] * 4


async def test_the_statistical_rule_prints_its_test_and_each_arm_against_the_paired_baseline() -> None:
    report = await localized(redundant, samples=2, max_samples=4)

    def fisher(sid: str) -> str:
        return (
            f"  #{list(FACTS).index(sid) + 1} fact '{sid}' score {dict(alpha=0.339, beta=0.290).get(sid, 0.0):.3f}  "
            f"NOT-CONFIRMED  NOT CONFIRMED: ablating fact '{sid}' flipped the outcome in 0/2 seeded reruns vs 0/2 "
            "for the baseline on the same seeds (one-sided Fisher p=1, needs <= 0.05 and a flip rate above 1/2)"
        )

    assert str(report).split("\n") == [
        *HEAD,
        "baseline: 0/4 reruns flipped with no ablation",
        "search: auto; rule: fisher-exact-one-sided at confidence 0.95, up to 4 samples per arm",
        "cost: 26 reruns, 26 model calls (0 identical calls reused); 4 ablatable sources",
        RANKING,
        "suspects:",
        *(fisher(sid) for sid in FACTS),
        "culprit sets:",
        "  {alpha, beta}  CONFIRMED  CAUSAL: ablating fact 'alpha' and fact 'beta' together flipped the outcome in "
        "4/4 seeded reruns vs 0/4 for the baseline on the same seeds (one-sided Fisher p=0.0143, needs <= 0.05 and "
        "a flip rate above 1/2); restoring any one of them alone stops the flip (a 1-minimal culprit set)",
        "honesty flags: none",
        NOTE,
    ]
    assert figures(report) == {
        "reruns": 26,
        "model_calls": 26,
        "model_calls_saved": 0,
        "baseline_flips": 0,
        "baseline_samples": 4,
        "baseline_errors": 0,
        "budget_exhausted": False,
        "honesty_flags": [],
        "test": "fisher-exact-one-sided",
        "confidence": 0.95,
        "max_samples": 4,
        "samples": 2,
        "search": "auto",
        "sources_considered": 4,
    }
    assert suspect_rows(report) == [
        (sid, "fact", rank, "not-confirmed", 0, 2, 0, 0, 1.0) for rank, sid in enumerate(FACTS, start=1)
    ]
    assert report.culprit_sets[0].p_value == pytest.approx(1 / 70)  # 4/4 vs 0/4: one table of C(8, 4)


async def test_single_search_never_runs_the_group_search() -> None:
    report = await localized(redundant, samples=2, search="single")
    assert report.culprit_sets == [] and report.reruns == 10  # baseline + 4 arms, 2 seeds each
    assert str(report).split("\n")[-4:] == ["culprit sets:", "  none confirmed", "honesty flags: none", NOTE]
    assert str(report).split("\n")[3] == "search: single; rule: majority of 2 paired seeded reruns"


async def test_a_partial_flip_is_inconclusive_and_never_a_culprit() -> None:
    def gamma_matters_for_seed_zero(present: set[str], seed: int | None) -> bool:
        return "gamma" in present or seed != 0

    report = await localized(gamma_matters_for_seed_zero, samples=3, search="single", max_suspects=None)
    assert suspect_rows(report) == [
        ("alpha", "fact", 1, "not-confirmed", 0, 3, 0, 0, None),
        ("beta", "fact", 2, "not-confirmed", 0, 3, 0, 0, None),
        ("gamma", "fact", 3, "inconclusive", 1, 3, 0, 0, None),
        ("delta", "fact", 4, "not-confirmed", 0, 3, 0, 0, None),
    ]
    assert report.suspect("gamma").claim == (  # type: ignore[union-attr]
        "INCONCLUSIVE: ablating fact 'gamma' flipped the outcome in 1/3 seeded reruns"
    )
    assert report.culprit_sets == [] and report.honesty_flags == []


async def test_max_suspects_caps_the_single_arms_but_not_the_sources_considered() -> None:
    report = await localized(redundant, samples=3, search="single", max_suspects=2)
    assert [s.id for s in report.suspects] == ["alpha", "beta"]
    assert report.sources_considered == 4 and report.reruns == 9


async def test_exactly_one_baseline_flip_makes_every_verdict_inconclusive() -> None:
    def baseline_seed_one_flips(present: set[str], seed: int | None) -> bool:
        return not (seed == 1 and present == set(FACTS))

    report = await localized(baseline_seed_one_flips, samples=3, search="single")
    assert report.baseline_flips == 1 and report.honesty_flags == ["baseline-unstable"]
    assert [s.claim for s in report.suspects] == [
        f"INCONCLUSIVE: the baseline flipped without any ablation, so ablating fact '{sid}' (flipped the outcome in "
        "0/3 seeded reruns) proves nothing"
        for sid in FACTS
    ]
    assert {s.verdict for s in report.suspects} == {"inconclusive"}
    assert str(report).split("\n")[2] == "baseline: 1/3 reruns flipped with no ablation"


async def test_an_unstable_baseline_stops_a_confirmed_single_from_becoming_a_culprit_set() -> None:
    def alpha_and_noise(present: set[str], seed: int | None) -> bool:
        return "alpha" in present and not (seed == 2 and present == set(FACTS))

    report = await localized(alpha_and_noise, samples=3)
    alpha = report.suspect("alpha")
    assert alpha is not None and alpha.verdict == "inconclusive" and alpha.flips == 3
    assert report.culprit_sets == [] and report.honesty_flags == ["baseline-unstable"]


async def test_a_stable_baseline_confirms_a_single_source_and_auto_skips_the_group_search() -> None:
    report = await localized(lambda present, seed: "alpha" in present, samples=3)
    assert report.reruns == 15  # baseline + four single arms: no group search after a confirmed single
    (alpha_set,) = report.culprit_sets
    assert alpha_set.ids == ("alpha",) and alpha_set.minimal and alpha_set.restore_checks == []
    assert alpha_set.claim == (
        "CAUSAL: ablating fact 'alpha' flipped the outcome in 3/3 seeded reruns; with it restored (the baseline) "
        "the outcome holds"
    )
    assert report.suspect("alpha").claim == (  # type: ignore[union-attr]
        "CAUSAL: ablating fact 'alpha' flipped the outcome in 3/3 seeded reruns"
    )
    assert [s.id for s in report.confirmed] == ["alpha"]


async def test_failed_reruns_are_counted_per_arm_and_flagged() -> None:
    def gamma_arm_fails_on_seed_one(present: set[str], seed: int | None) -> bool | None:
        return None if "gamma" not in present and seed == 1 else True

    report = await localized(gamma_arm_fails_on_seed_one, samples=3, search="single", max_suspects=None)
    assert [(s.id, s.errors, s.flips, s.samples, s.verdict) for s in report.suspects] == [
        ("alpha", 0, 0, 3, "not-confirmed"),
        ("beta", 0, 0, 3, "not-confirmed"),
        ("gamma", 1, 0, 3, "not-confirmed"),
        ("delta", 0, 0, 3, "not-confirmed"),
    ]
    assert report.honesty_flags == ["rerun-errors"] and report.baseline_errors == 0
    assert (report.reruns, report.model_calls) == (15, 14)  # the failed rerun recorded no applied model call


async def test_failed_reruns_under_the_statistical_rule_are_named_in_the_claim() -> None:
    def gamma_arm_fails_on_seed_one(present: set[str], seed: int | None) -> bool | None:
        return None if "gamma" not in present and seed == 1 else True

    report = await localized(gamma_arm_fails_on_seed_one, samples=2, max_samples=2, search="single")
    assert report.suspect("gamma").claim == (  # type: ignore[union-attr]
        "NOT CONFIRMED: ablating fact 'gamma' flipped the outcome in 0/2 seeded reruns vs 0/2 for the baseline on "
        "the same seeds (one-sided Fisher p=1, needs <= 0.05 and a flip rate above 1/2); 1 rerun(s) failed"
    )


async def test_a_failing_baseline_is_counted() -> None:
    def baseline_fails_on_seed_zero(present: set[str], seed: int | None) -> bool | None:
        return None if present == set(FACTS) and seed == 0 else True

    report = await localized(baseline_fails_on_seed_zero, samples=2, search="single")
    assert (report.baseline_errors, report.baseline_samples, report.baseline_flips) == (1, 2, 0)
    assert report.honesty_flags == ["rerun-errors"]


async def test_a_rerun_budget_leaves_arms_unsettled_and_says_so() -> None:
    report = await localized(lambda present, seed: "alpha" in present, samples=3, max_reruns=4)
    assert report.budget_exhausted and report.reruns == 4
    assert report.honesty_flags == ["rerun-budget-exhausted"]
    assert [(s.id, s.verdict, s.flips, s.samples) for s in report.suspects] == [
        ("alpha", "inconclusive", 1, 1),
        ("beta", "inconclusive", 0, 0),
        ("gamma", "inconclusive", 0, 0),
        ("delta", "inconclusive", 0, 0),
    ]
    assert report.suspect("alpha").claim == (  # type: ignore[union-attr]
        "INCONCLUSIVE: ablating fact 'alpha' flipped the outcome in 1/1 seeded reruns; the rerun budget ran out "
        "before this arm was settled"
    )
    assert report.culprit_sets == []


async def test_nothing_flips_with_everything_ablated_is_flagged() -> None:
    report = await localized(lambda present, seed: True, samples=2, search="group")
    assert report.honesty_flags == ["no-flip-with-everything-ablated"] and report.culprit_sets == []


async def test_correlational_report_is_printed_exactly() -> None:
    report = await localized(redundant, samples=0)
    assert str(report).split("\n") == [
        "Localization (CORRELATIONAL) at call-llm#5, scorer: lexical",
        "answer: 'WRONG premium'",
        RANKING,
        "suspects:",
        *(
            f"  #{rank} fact '{sid}' score {score}  —  CORRELATIONAL: fact '{sid}' scored {score} (lexical proxy); "
            "nothing was rerun, so this is not a causal claim"
            for rank, (sid, score) in enumerate(
                [("alpha", "0.339"), ("beta", "0.290"), ("gamma", "0.000"), ("delta", "0.000")], start=1
            )
        ),
        "honesty flags: correlational-only",
        NOTE,
    ]
    assert (report.mode, report.samples, report.reruns, report.max_samples) == ("correlational", 0, 0, None)


async def test_at_an_earlier_call_localizes_that_calls_reply() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    report = await localize_context_bug(
        agent, samples=2, at="call-llm#5", progress=False, search="single", max_samples=None
    )
    lines = str(report).split("\n")
    assert lines[:5] == [
        "Localization (CAUSAL) at call-llm#5 (step call-llm#5), scorer: lexical",
        'answer: \'\\n-> lookup_order {"orderId": "A-1001"}\'',
        "baseline: 0/2 reruns flipped with no ablation",
        "search: single; rule: majority of 2 paired seeded reruns",
        "cost: 8 reruns, 14 model calls (0 identical calls reused); 3 ablatable sources",
    ]
    assert report.answer == '\n-> lookup_order {"orderId": "A-1001"}' and report.at == "call-llm#5"
    assert [(s.id, s.verdict) for s in report.suspects] == [
        ("lookup_order", "confirmed"),
        ("vip-override-fact", "not-confirmed"),
        ("style-fact", "not-confirmed"),
    ]


async def test_localize_sync_gives_the_same_report() -> None:
    agent = build(redundant)
    await agent.run("premium?")
    kwargs: dict[str, Any] = {"samples": 2, "outcome_changed": first_word_changed, "progress": False}
    expected = await localize_context_bug(agent, **kwargs)

    import asyncio

    sync = await asyncio.to_thread(localize_sync, agent, **kwargs)
    assert sync.model_dump() == expected.model_dump()


async def test_reruns_keep_the_conversation_they_continue() -> None:
    def respond(req: LLMRequest) -> Any:
        earlier = " ".join(m.content for m in req.messages[:-1] if m.role == "user")
        vip = "I am a VIP" in earlier and FACTS["alpha"] in req.system_prompt
        return "WRONG premium" if vip else "RIGHT standard"

    agent = Agent.create(provider=mock(respond=respond), model="m").fact(define_fact(id="alpha", data=FACTS["alpha"]))
    agent = agent.build()
    await agent.run("I am a VIP")
    await agent.follow_up("refund?")
    report = await localize_context_bug(
        agent, samples=2, outcome_changed=first_word_changed, progress=False, max_samples=None
    )
    assert report.answer == "WRONG premium" and report.baseline_flips == 0  # the rerun still saw the first turn
    assert [(s.id, s.verdict, s.flips) for s in report.suspects] == [("alpha", "confirmed", 2)]


class FakeExecutor:
    """Runs each rerun in process, as an executor would elsewhere: the outcome carries its recording."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.calls: list[tuple[str, int, tuple[str, ...]]] = []

    def rerunner(
        self, agent_factory: str, run_input: Mapping[str, Any], *, read: Callable[[Any], str] | None = None
    ) -> Rerun:
        assert read is not None

        async def rerun(seed: int, ablate: Sequence[str]) -> str:
            self.calls.append((agent_factory, seed, tuple(ablate)))
            clone = self.agent.without(*ablate)
            result = await clone.run(run_input["message"], seed=seed)
            snap = clone.last_snapshot()
            assert snap is not None

            return read(SimpleNamespace(answer=result.answer, recording={"snapshot": snap.model_dump(mode="json")}))

        return rerun


async def test_an_executor_reruns_with_the_factory_and_reads_each_recording() -> None:
    agent = build(redundant)
    await agent.run("premium?")
    local = await localize_context_bug(
        agent, samples=2, outcome_changed=first_word_changed, progress=False, search="single", max_samples=None
    )
    executor = FakeExecutor(agent)
    remote = await localize_context_bug(
        agent,
        samples=2,
        outcome_changed=first_word_changed,
        progress=False,
        search="single",
        executor=executor,
        agent_factory="pkg:build",
        max_samples=None,
    )
    assert remote.model_dump() == local.model_dump()
    assert remote.model_calls == 10 and len(executor.calls) == 10
    assert {c[0] for c in executor.calls} == {"pkg:build"}
    at_step = await localize_context_bug(
        agent,
        samples=1,
        outcome_changed=first_word_changed,
        progress=False,
        search="single",
        executor=FakeExecutor(agent),
        agent_factory="pkg:build",
        at="call-llm#5",
        max_samples=None,
    )
    assert at_step.answer == "WRONG premium" and at_step.model_calls == 5


async def test_an_executor_outcome_without_a_recording_counts_no_calls_and_reads_the_answer() -> None:
    agent = build(redundant)
    await agent.run("premium?")

    class Bare:
        def rerunner(self, agent_factory: str, run_input: Mapping[str, Any], *, read: Any = None) -> Rerun:
            async def rerun(seed: int, ablate: Sequence[str]) -> str:
                answer = "RIGHT" if {"alpha", "beta"} <= set(ablate) else "WRONG"
                return str(read(SimpleNamespace(answer=answer, recording={"snapshot": {"not": "a snapshot"}})))

            return rerun

    report = await localize_context_bug(
        agent,
        samples=1,
        outcome_changed=first_word_changed,
        progress=False,
        executor=Bare(),
        agent_factory="m:f",
        max_samples=None,
    )
    assert report.model_calls == 0 and [c.ids for c in report.culprit_sets] == [("alpha", "beta")]


@pytest.mark.parametrize(
    ("factory", "executor", "message"),
    [
        (
            None,
            FakeExecutor,
            "an executor reruns the agent elsewhere: pass agent_factory='module:function' (a no-argument function "
            "that builds the same agent)",
        ),
        (
            "",
            FakeExecutor,
            "an executor reruns the agent elsewhere: pass agent_factory='module:function' (a no-argument function "
            "that builds the same agent)",
        ),
        ("m:f", object, "the executor has no rerunner(); derive it from agentfootprint.scale.ExecutorBase"),
    ],
)
async def test_executor_refusals(factory: Any, executor: Any, message: str) -> None:
    agent = build(redundant)
    await agent.run("premium?")
    made = executor(agent) if executor is FakeExecutor else executor()
    with pytest.raises(LocalizeError) as err:
        await localize_context_bug(
            agent, samples=1, executor=made, agent_factory=factory, progress=False, max_samples=None
        )
    assert str(err.value) == message


async def test_an_executor_that_cannot_describe_the_rerun_is_refused_with_its_reason() -> None:
    agent = build(redundant)
    await agent.run("premium?")

    class Refuses:
        def rerunner(self, agent_factory: str, run_input: Mapping[str, Any], *, read: Any = None) -> Rerun:
            raise ValueError("x" * 400)

    with pytest.raises(LocalizeError) as err:
        await localize_context_bug(
            agent, samples=1, executor=Refuses(), agent_factory="m:f", progress=False, max_samples=None
        )
    assert str(err.value) == "cannot describe the rerun for the executor: " + "x" * 300


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"samples": -1}, "samples must be an int >= 0"),
        ({"samples": True}, "samples must be an int >= 0"),
        ({"samples": 1.0}, "samples must be an int >= 0"),
        ({"max_suspects": 0}, "max_suspects must be an int >= 1, or None for every ablatable source"),
        ({"max_suspects": True}, "max_suspects must be an int >= 1, or None for every ablatable source"),
        ({"concurrency": 0}, "concurrency must be an int >= 1"),
        ({"concurrency": True}, "concurrency must be an int >= 1"),
        ({"search": "both"}, "search must be 'single', 'group' or 'auto'"),
        ({"confidence": 1.0}, "confidence must be a number strictly between 0 and 1"),
        ({"confidence": 0.0}, "confidence must be a number strictly between 0 and 1"),
        ({"confidence": True}, "confidence must be a number strictly between 0 and 1"),
        ({"confidence": "0.9"}, "confidence must be a number strictly between 0 and 1"),
        ({"samples": 3, "max_samples": 2}, "max_samples must be an int >= samples (and >= 1), 'auto' or None"),
        ({"samples": 0, "max_samples": 0}, "max_samples must be an int >= samples (and >= 1), 'auto' or None"),
        ({"max_samples": True}, "max_samples must be an int >= samples (and >= 1), 'auto' or None"),
        ({"max_reruns": 0}, "max_reruns must be an int >= 1, or None for no budget"),
        ({"max_reruns": True}, "max_reruns must be an int >= 1, or None for no budget"),
        ({"at": ""}, "at must be a model call's runtime stage id (a non-empty str), or None"),
        ({"at": 5}, "at must be a model call's runtime stage id (a non-empty str), or None"),
    ],
)
async def test_bad_arguments_are_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    agent = build(redundant)
    await agent.run("premium?")
    with pytest.raises(LocalizeError) as err:
        await localize_context_bug(agent, progress=False, **kwargs)
    assert str(err.value) == message and err.value.code == "ERR_LOCALIZE"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"samples": 3, "max_samples": 3},
        {"samples": 0, "max_samples": 1},
        {"max_suspects": 1, "max_reruns": 1, "concurrency": 1, "confidence": 0.5},
        {"confidence": 0.001, "max_suspects": None},
    ],
)
async def test_boundary_arguments_are_accepted(kwargs: dict[str, Any]) -> None:
    agent = build(redundant)
    await agent.run("premium?")
    report = await localize_context_bug(agent, progress=False, outcome_changed=first_word_changed, **kwargs)
    assert report.trigger == "call-llm#5"


async def test_an_agent_that_never_ran_and_a_record_that_cannot_rerun_are_refused() -> None:
    agent = build(redundant)
    with pytest.raises(LocalizeError) as err:
        await localize_context_bug(agent, progress=False)
    assert str(err.value) == "the agent has no recorded run yet; run it first"
    await agent.run("premium?")
    snap = agent.last_snapshot()
    assert snap is not None
    with pytest.raises(LocalizeError) as err:
        await localize_context_bug(snap, samples=1, progress=False, max_samples=None)
    assert str(err.value) == "causal localization reruns the agent: pass the Agent (or use samples=0)"
    correlational = await localize_context_bug(snap, samples=0)
    assert [s.id for s in correlational.suspects] == ["alpha", "beta", "gamma", "delta"]


def test_render_reply_and_step_reply() -> None:
    assert render_reply(None) == "" and render_reply("text") == ""
    assert render_reply({"content": None}) == ""
    assert render_reply({"content": "ok", "tool_calls": [{"name": "t", "args": {"b": 1, "a": "é"}}]}) == (
        'ok\n-> t {"a": "é", "b": 1}'
    )
    assert render_reply({"tool_calls": [{"name": "t"}]}) == "\n-> t {}"
    assert step_reply(None, "", 0) == "(no model call #1 in this run)"
    assert step_reply(None, "", 2) == "(no model call #3 in this run)"


async def test_rerun_without_sources_reports_flips_against_its_baseline() -> None:
    from agentfootprint.explain import rerun_without_sources

    agent = build(redundant)
    await agent.run("premium?")
    report = await rerun_without_sources(agent, ["alpha", "beta"], samples=2, outcome_changed=first_word_changed)
    assert report.model_dump() == {
        "ignored": ["alpha", "beta"],
        "samples": 2,
        "original_answer": "WRONG premium",
        "baseline_flips": 0,
        "flips": 2,
        "verdict": "confirmed",
        "answers": ["RIGHT standard", "RIGHT standard"],
        "claim": "CAUSAL: ablating sources 'alpha', 'beta' flipped the outcome in 2/2 seeded reruns",
    }
    one = await rerun_without_sources(agent, ["alpha"], samples=1, outcome_changed=first_word_changed)
    assert (one.verdict, one.flips, one.answers) == ("not-confirmed", 0, ["WRONG premium"])
    for bad in (0, True, "1"):
        with pytest.raises(LocalizeError) as err:
            await rerun_without_sources(agent, ["alpha"], samples=bad)
        assert str(err.value) == "samples must be >= 1"


async def test_rerun_without_sources_with_an_unstable_baseline_is_inconclusive() -> None:
    from agentfootprint.explain import rerun_without_sources

    agent = build(lambda present, seed: seed != 1)
    await agent.run("premium?")
    report = await rerun_without_sources(agent, ["gamma"], samples=2, outcome_changed=first_word_changed)
    assert (report.verdict, report.flips, report.baseline_flips) == ("inconclusive", 1, 1)
    assert report.claim == (
        "INCONCLUSIVE: the baseline flipped without any ablation, so ablating sources 'gamma' (flipped the "
        "outcome in 1/2 seeded reruns) proves nothing"
    )


async def test_an_unknown_suspect_is_none() -> None:
    report = await localized(redundant, samples=0)
    assert report.suspect("nobody") is None and report.suspect("alpha") is report.suspects[0]


async def test_rerun_without_sources_shares_one_response_cache_across_its_reruns() -> None:
    """The instruction joins only after the tool returns: each ablated rerun's first call equals the baseline's, so
    two ablated reruns and two baseline reruns ask the model 6 times, not 8."""
    from agentfootprint.explain import rerun_without_sources

    from .test_replay import late_instruction_agent

    agent, provider = late_instruction_agent()
    await agent.run("question")
    before = len(provider.requests)
    report = await rerun_without_sources(agent, ["cite"], samples=2, outcome_changed=first_word_changed)
    assert report.verdict == "confirmed" and len(provider.requests) - before == 6


async def test_group_search_arms_of_one_source_are_listed_by_rank() -> None:
    report = await localized(lambda present, seed: {"alpha", "beta"} <= present, samples=2, search="group")
    assert [(s.id, s.rank, s.verdict) for s in report.suspects if s.samples] == [
        ("alpha", 1, "confirmed"),
        ("beta", 2, "confirmed"),
    ]
    assert [c.ids for c in report.culprit_sets if c.verdict == "confirmed"] == [("alpha",), ("beta",)]


async def test_reruns_do_not_see_what_the_recorded_run_wrote_to_memory() -> None:
    """The recorded run saw an empty memory: its reruns do too, though the run itself stored its turn since."""
    from agentfootprint.context import InMemoryMemoryStore, define_memory
    from agentfootprint.explain.localize import rerun_answer

    def respond(req: LLMRequest) -> str:
        return "seen before" if "lucky number" in req.system_prompt else "new to me"

    store = InMemoryMemoryStore()
    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .memory(define_memory(id="mem", store=store, recall=4))
        .build()
    )
    identity = {"tenant": "t", "principal": "p", "conversation_id": "c"}
    assert (await agent.run("My lucky number is 7.", identity=identity)).answer == "new to me"
    assert await rerun_answer(agent, 0) == "new to me"
    later = await agent.run("My lucky number is 7.", identity=identity)  # a new run does see the stored turn
    assert later.answer == "seen before"


async def test_each_result_of_a_tool_called_twice_is_ranked_under_the_tool() -> None:
    from agentfootprint.explain import backtrack, rank_suspects
    from agentfootprint.explain.scoring import LexicalScorer

    from ._backtrack_scenarios import one_tool_twice

    agent = await one_tool_twice()
    ranked = rank_suspects(backtrack(agent), LexicalScorer())
    assert [(s.id, s.parent, s.result_id, s.position) for s, _ in ranked] == [
        ("look", None, "look#1", 2002),  # the tool as a whole (both results merged under its first)
        ("look#1", "look", "look#1", 2002),
        ("look#2", "look", "look#2", 2003),
    ]
    assert [s.id for s, _ in rank_suspects(backtrack(agent), LexicalScorer(), set(agent.ablatable_ids()))] == [
        "look",
        "look#1",
        "look#2",
    ]
    assert [s.id for s, _ in rank_suspects(backtrack(agent), LexicalScorer(), {"look"})] == ["look"]


def test_the_default_outcome_test_flips_below_four_fifths_similarity_not_at_it() -> None:
    from agentfootprint.explain.localize import DEFAULT_SIMILARITY_THRESHOLD, _default_outcome_changed
    from agentfootprint.explain.scoring import answer_similarity

    assert answer_similarity("abcde", "abcdX") == DEFAULT_SIMILARITY_THRESHOLD == 0.8
    assert _default_outcome_changed("abcde", "abcdX") is False
    assert answer_similarity("abcde", "abcdXY") < 0.8 and _default_outcome_changed("abcde", "abcdXY") is True
    assert _default_outcome_changed("same", "same") is False


async def test_rerun_without_sources_uses_the_default_outcome_test_unless_given_one() -> None:
    from agentfootprint.explain import rerun_without_sources

    agent = build(redundant)
    await agent.run("premium?")
    default = await rerun_without_sources(agent, ["alpha", "beta"], samples=1)
    assert (default.verdict, default.flips, default.answers) == ("confirmed", 1, ["RIGHT standard"])
    never = await rerun_without_sources(agent, ["alpha", "beta"], samples=1, outcome_changed=lambda a, b: False)
    assert (never.verdict, never.flips, never.baseline_flips) == ("not-confirmed", 0, 0)


def test_a_statistical_claim_without_a_p_value_says_so() -> None:
    from agentfootprint.explain._arms import ArmResult
    from agentfootprint.explain.localize import _tail

    arm = ArmResult(frozenset({"a"}), "inconclusive", 0, 0, 0, 0, None, False)
    assert _tail(arm, True, 0.05) == (
        "0/0 seeded reruns vs 0/0 for the baseline on the same seeds (one-sided Fisher p=n/a, needs <= 0.05 and a "
        "flip rate above 1/2); the rerun budget ran out before this arm was settled"
    )


async def test_a_group_search_stopped_by_the_budget_does_not_claim_nothing_flips() -> None:
    report = await localized(lambda present, seed: True, samples=3, search="group", max_reruns=4)
    assert (report.honesty_flags, report.reruns, report.culprit_sets) == (["rerun-budget-exhausted"], 4, [])
    full = await localized(lambda present, seed: True, samples=3, search="group", max_reruns=5)
    assert full.honesty_flags == ["no-flip-with-everything-ablated"]
