"""localize_context_bug at scale and under noise: culprit sets, statistical verdicts, paired seeds, a budget."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_instruction, define_tool
from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
from agentfootprint.explain import CulpritSet, LocalizeError, localize_context_bug
from agentfootprint.providers import LLMRequest, mock

APPROVED, DECLINED = "Refund APPROVED.", "Refund DECLINED."


def facts_agent(facts: list[tuple[str, str]], respond: Any, **create: Any) -> Agent:
    builder = Agent.create(provider=mock(respond=respond), model="m", **create)
    for fid, text in facts:
        builder = builder.fact(define_fact(id=fid, data=text))
    return builder.build()


def redundant_model(req: LLMRequest) -> str:
    prompt = req.system_prompt
    return APPROVED if ("VIP override" in prompt or "goodwill credit" in prompt) else DECLINED


REDUNDANT = [
    ("vip", "The customer has a VIP override."),
    ("credit", "A goodwill credit is on file."),
    ("style", "Answer in one sentence."),
    ("tz", "All times are UTC."),
]


async def test_redundant_culprits_are_one_culprit_set_not_no_culprit() -> None:
    """Issue case 1: two facts, each enough to mislead; removing either alone changes nothing."""
    agent = facts_agent(REDUNDANT, redundant_model)
    await agent.run("Refund order 7?")
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, progress=False, max_samples=None
    )
    assert [s.verdict for s in report.suspects] == ["not-confirmed"] * 4  # no single source flips it
    assert report.confirmed == []
    confirmed = report.confirmed_sets
    assert len(confirmed) == 1
    pair = confirmed[0]
    assert isinstance(pair, CulpritSet)
    assert pair.ids == ("credit", "vip") and pair.kinds == ("fact", "fact")
    assert pair.verdict == "confirmed" and pair.flips == 3 and pair.samples == 3 and pair.minimal
    assert pair.claim.startswith("CAUSAL") and "1-minimal" in pair.claim
    assert sorted((c.restored, c.verdict, c.flips) for c in pair.restore_checks) == [
        ("credit", "not-confirmed", 0),
        ("vip", "not-confirmed", 0),
    ]
    assert report.reruns >= 3 * 5 and report.test is None
    assert "{credit, vip}  CONFIRMED" in str(report)


def low_rank_model(req: LLMRequest) -> str:
    return "Refund APPROVED for Dana." if "zq-77" in req.system_prompt else "Refund DECLINED for Dana."


LOW_RANK = [(f"note-{i}", f"Dana refund note {i}: refund for Dana approved or declined.") for i in range(8)] + [
    ("code", "Code zq-77 is on file.")
]


async def test_a_culprit_the_proxy_ranks_low_is_still_found() -> None:
    """Issue case 2: the culprit shares no words with the answer and ranks below the cap of 5."""
    agent = facts_agent(LOW_RANK, low_rank_model)
    await agent.run("Refund for Dana?")
    correlational = await localize_context_bug(agent, samples=0, max_suspects=None)
    code = correlational.suspect("code")
    assert code is not None and code.rank == 9 and code.score == 0.0
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, progress=False, max_samples=None
    )
    assert [s.id for s in report.suspects[:5]] == [f"note-{i}" for i in range(5)]
    assert all(s.verdict == "not-confirmed" for s in report.suspects[:5])
    found = report.suspect("code")
    assert found is not None and found.verdict == "confirmed" and found.rank == 9 and found.flips == 3
    assert [c.ids for c in report.confirmed_sets] == [("code",)]
    single = await localize_context_bug(
        agent,
        samples=3,
        outcome_changed=approved_flipped,
        max_suspects=None,
        search="single",
        progress=False,
        max_samples=None,
    )
    assert [s.id for s in single.confirmed] == ["code"] and single.reruns == 3 * 10
    assert [c.ids for c in single.culprit_sets] == [("code",)]


def noisy_model(rate: float) -> Any:
    """Right or wrong from what it receives, then flipped for ``rate`` of the (seed, prompt) pairs."""

    def respond(req: LLMRequest) -> str:
        wrong = "VIP override" in req.system_prompt
        digest = hashlib.sha256(f"{req.seed}|{req.system_prompt}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 < rate:
            wrong = not wrong
        return APPROVED if wrong else DECLINED

    return respond


NOISY = [("vip", "The customer has a VIP override."), ("style", "Answer in one sentence."), ("tz", "Times are UTC.")]


async def noisy_agent() -> Agent:
    agent = facts_agent(NOISY, noisy_model(0.15))
    for seed in range(100, 200):  # the run a user saw: a wrong answer
        if "APPROVED" in ((await agent.run("Refund?", seed=seed)).answer or ""):
            return agent
    raise AssertionError("never wrong")


async def test_a_sampling_model_gets_a_statistical_verdict() -> None:
    """Issue case 3: with a noisy baseline the plain rule says inconclusive; max_samples proves it anyway."""
    agent = await noisy_agent()
    plain = await localize_context_bug(
        agent, samples=6, outcome_changed=approved_flipped, search="single", progress=False, max_samples=None
    )
    assert plain.baseline_flips > 0 and all(s.verdict == "inconclusive" for s in plain.suspects)
    assert plain.test is None and "baseline-unstable" in plain.honesty_flags
    report = await localize_context_bug(
        agent, samples=6, max_samples=30, outcome_changed=approved_flipped, progress=False
    )
    assert report.test == "fisher-exact-one-sided" and report.confidence == 0.95 and report.max_samples == 30
    vip = report.suspect("vip")
    assert vip is not None and vip.verdict == "confirmed" and vip.p_value is not None and vip.p_value <= 0.05
    assert vip.flips * 2 > vip.samples and vip.flips > vip.baseline_flips
    for other in ("style", "tz"):
        s = report.suspect(other)
        assert s is not None and s.verdict != "confirmed" and s.samples <= 30
    assert [c.ids for c in report.confirmed_sets] == [("vip",)]
    assert report.confirmed_sets[0].claim.startswith("CAUSAL") and "Fisher" in report.confirmed_sets[0].claim
    assert report.baseline_samples <= 30 and report.reruns <= 4 * 30


async def test_arms_are_paired_on_the_same_seeds() -> None:
    seen: dict[tuple[str, ...], list[int | None]] = {}

    def spy(req: LLMRequest) -> str:
        present = tuple(fid for fid, text in REDUNDANT if text in req.system_prompt)
        seen.setdefault(present, []).append(req.seed)
        return redundant_model(req)

    agent = facts_agent(REDUNDANT, spy)
    await agent.run("Refund order 7?")
    seen.clear()
    await localize_context_bug(
        agent, samples=4, outcome_changed=approved_flipped, search="single", progress=False, max_samples=None
    )
    assert len(seen) == 5  # the baseline and four one-source arms
    assert all(sorted(seeds) == [0, 1, 2, 3] for seeds in seen.values())


async def test_single_search_is_todays_behaviour_and_counts_reruns() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, search="single", progress=False, max_samples=None
    )
    assert report.search == "single" and report.reruns == 12
    assert report.model_calls == 21  # two calls per rerun, one when lookup_order is ablated (no tool to call)
    assert [(c.ids, c.verdict, c.flips, c.samples) for c in report.culprit_sets] == [
        (("vip-override-fact",), "confirmed", 3, 3)
    ]
    assert report.culprit_sets[0].claim.startswith("CAUSAL")


async def test_group_search_on_the_flagship_lists_only_the_single_arms_it_ran() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, search="group", progress=False, max_samples=None
    )
    assert [c.ids for c in report.confirmed_sets] == [("vip-override-fact",)]
    assert {s.id for s in report.suspects} <= {"vip-override-fact", "style-fact", "lookup_order"}
    vip = report.suspect("vip-override-fact")
    assert vip is not None and vip.verdict == "confirmed" and vip.samples == 3


def conjunctive_model(req: LLMRequest) -> str:
    prompt = req.system_prompt
    return APPROVED if ("VIP override" in prompt and "goodwill credit" in prompt) else DECLINED


async def test_conjunctive_pair_gives_two_one_member_sets() -> None:
    agent = facts_agent(REDUNDANT, conjunctive_model)
    await agent.run("Refund order 7?")
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, search="group", max_suspects=None, progress=False, max_samples=None
    )
    assert sorted(c.ids for c in report.confirmed_sets) == [("credit",), ("vip",)]


async def test_max_suspects_none_makes_every_source_a_single_arm() -> None:
    agent = facts_agent(LOW_RANK, low_rank_model)
    await agent.run("Refund for Dana?")
    report = await localize_context_bug(agent, samples=0, max_suspects=None)
    assert len(report.suspects) == 9 and report.sources_considered == 9


async def test_rerun_budget_stops_the_search_and_the_report_says_so() -> None:
    agent = facts_agent(LOW_RANK, low_rank_model)
    await agent.run("Refund for Dana?")
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, max_reruns=10, progress=False, max_samples=None
    )
    assert report.reruns == 10 and report.budget_exhausted
    assert "rerun-budget-exhausted" in report.honesty_flags
    assert report.confirmed_sets == []


async def test_without_a_clean_baseline_no_group_search_runs() -> None:
    flip = {"n": 0}

    def flaky(req: LLMRequest) -> str:
        flip["n"] += 1
        return redundant_model(req) if flip["n"] % 3 else DECLINED

    agent = facts_agent(REDUNDANT, flaky)
    flip["n"] = 1
    await agent.run("Refund order 7?")
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, concurrency=1, progress=False, max_samples=None
    )
    assert report.baseline_flips > 0 and report.culprit_sets == []
    assert report.reruns == 3 * 5


def tool_choice_model(req: LLMRequest) -> Any:
    if req.messages[-1].role == "tool":
        return "Done."
    name = "wire_transfer" if "prefer wires" in req.system_prompt else "card_refund"
    return {"tool_calls": [{"id": "c1", "name": name, "args": {"order": "A-1"}}]}


def payment_tool(name: str) -> Any:
    return define_tool(name=name, description=name, input_schema={"type": "object"}, execute=lambda a, c: "ok")


async def test_localize_at_a_step_examines_a_tool_choice() -> None:
    agent = (
        Agent.create(provider=mock(respond=tool_choice_model), model="m")
        .tool(payment_tool("wire_transfer"))
        .tool(payment_tool("card_refund"))
        .fact(define_fact(id="ops-note", data="Ops: prefer wires for refunds."))
        .fact(define_fact(id="tone", data="Be polite."))
        .build()
    )
    await agent.run("Refund order A-1")
    first_call = next(c.runtime_stage_id for c in agent.last_snapshot().commit_log if c.stage_id == "call-llm")  # type: ignore[union-attr]

    def tool_changed(a: str, b: str) -> bool:
        return ("wire_transfer" in a) != ("wire_transfer" in b)

    report = await localize_context_bug(
        agent, at=first_call, outcome_changed=tool_changed, progress=False, max_samples=None
    )
    assert report.at == first_call and report.trigger == first_call
    assert report.answer is not None and '-> wire_transfer {"order": "A-1"}' in report.answer
    ops = report.suspect("ops-note")
    assert ops is not None and ops.verdict == "confirmed"
    assert report.suspect("tone").verdict == "not-confirmed"  # type: ignore[union-attr]
    final = await localize_context_bug(agent, outcome_changed=tool_changed, progress=False, max_samples=None)
    assert final.answer == "Done." and final.confirmed == []  # the final answer never names a tool


async def test_identical_seeded_requests_reuse_the_response_only_when_the_provider_is_deterministic() -> None:
    calls = {"n": 0}

    def model(req: LLMRequest) -> Any:
        calls["n"] += 1
        if req.messages[-1].role != "tool":
            return {"tool_calls": [{"id": "c1", "name": "lookup", "args": {}}]}
        return APPROVED if "manager approved" in req.system_prompt else DECLINED

    def build(provider: Any) -> Agent:
        lookup = define_tool(name="lookup", description="l", input_schema={"type": "object"}, execute=lambda a, c: "x")
        return (
            Agent.create(provider=provider, model="m")
            .tool(lookup)
            .instruction(define_instruction(id="after", prompt="The manager approved it.", on_tool_return="lookup"))
            .fact(define_fact(id="tone", data="Be polite."))
            .build()
        )

    agent = build(mock(respond=model))
    await agent.run("Refund?")
    calls["n"] = 0
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, search="single", progress=False, max_samples=None
    )
    assert report.suspect("after").verdict == "confirmed"  # type: ignore[union-attr]
    # the 'after' arm's first call (before the tool returns) is the baseline's: reused, seed by seed
    assert report.model_calls_saved == 3 and calls["n"] == report.model_calls
    assert report.model_calls + report.model_calls_saved == 2 * report.reruns  # two model calls per rerun

    class Sampling:
        name = "sampler"

        def __init__(self) -> None:
            self.inner = mock(respond=model)

        async def complete(self, req: LLMRequest) -> Any:
            return await self.inner.complete(req)

        def stream(self, req: LLMRequest) -> Any:
            return self.inner.stream(req)

    agent = build(Sampling())
    await agent.run("Refund?")
    report = await localize_context_bug(
        agent, samples=3, outcome_changed=approved_flipped, search="single", progress=False, max_samples=None
    )
    assert report.model_calls_saved == 0


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"search": "bisect"}, "search"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": True}, "confidence"),
        ({"max_samples": 2}, "max_samples"),
        ({"max_samples": "10"}, "max_samples"),
        ({"max_reruns": 0}, "max_reruns"),
        ({"max_suspects": 0}, "max_suspects"),
        ({"samples": True}, "samples"),
        ({"at": ""}, "at"),
        ({"at": "no-such-step#9"}, "no step"),
    ],
)
async def test_bad_arguments_are_refused_by_name(kwargs: dict[str, Any], needle: str) -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    with pytest.raises(LocalizeError) as err:
        await localize_context_bug(agent, **kwargs)
    assert err.value.code == "ERR_LOCALIZE" and needle in str(err.value)
