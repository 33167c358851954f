"""localize_context_bug: baseline first, ablation verdicts, honesty flags, determinism, falsification."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
from agentfootprint.explain import (
    CharFrequencyEmbedder,
    LocalizeError,
    SemanticScorer,
    find_dropped_context,
    localize_context_bug,
    rerun_without_sources,
)
from agentfootprint.providers import LLMRequest, mock


async def flagship() -> Agent:
    agent = refunds_agent()
    await agent.run(QUESTION)
    return agent


async def test_flagship_causal_localization() -> None:
    agent = await flagship()
    report = await localize_context_bug(agent, samples=3, outcome_changed=approved_flipped, progress=False)
    assert report.mode == "causal" and report.baseline_flips == 0
    assert {(s.kind, s.id) for s in report.suspects} == {
        ("fact", "vip-override-fact"),
        ("fact", "style-fact"),
        ("tool", "lookup_order"),
    }
    assert report.suspects[0].id == "vip-override-fact"
    vip = report.suspect("vip-override-fact")
    # the default statistics compare three arms with the baseline: Holm needs p <= 0.05/3, so 4 clean samples each
    assert vip is not None and vip.verdict == "confirmed" and vip.flips == 4 and vip.claim.startswith("CAUSAL")
    assert (report.multiplicity, report.arms_compared, report.samples_per_arm) == ("holm", 3, 4)
    for other in ("style-fact", "lookup_order"):
        s = report.suspect(other)
        assert s is not None and s.verdict == "not-confirmed" and s.flips == 0
    assert len(report.confirmed) == 1
    assert "only ablation reruns make causal claims" in str(report)


async def test_reruns_pass_seed_in_request() -> None:
    seeds: list[int | None] = []
    from agentfootprint._flagship import scripted_model

    def spy(req: LLMRequest) -> Any:
        seeds.append(req.seed)
        return scripted_model(req)

    agent = refunds_agent(mock(respond=spy))
    await agent.run(QUESTION)
    seeds.clear()
    await localize_context_bug(
        agent, samples=2, outcome_changed=approved_flipped, max_suspects=1, progress=False, max_samples=None
    )
    assert sorted(set(seeds)) == [0, 1]


async def test_ablating_the_tool_rebuilds_the_agent() -> None:
    agent = await flagship()
    report = await rerun_without_sources(agent, ["lookup_order"], samples=2, outcome_changed=approved_flipped)
    assert report.flips == 0 and all("APPROVED" in a for a in report.answers)
    clone = agent.without("lookup_order")
    r = await clone.run(QUESTION)
    assert r.iterations == 1  # one model call: the tool is gone, not a transcript edit


async def test_determinism_same_ranking_twice() -> None:
    agent = await flagship()
    a = await localize_context_bug(agent, samples=0)
    b = await localize_context_bug(agent, samples=0)
    assert [(s.id, s.score, s.rank) for s in a.suspects] == [(s.id, s.score, s.rank) for s in b.suspects]


async def test_correlational_mode() -> None:
    agent = await flagship()
    report = await localize_context_bug(agent, samples=0)
    assert report.mode == "correlational" and "correlational-only" in report.honesty_flags
    assert all(s.verdict is None and s.claim.startswith("CORRELATIONAL") for s in report.suspects)


async def test_unstable_baseline_makes_everything_inconclusive() -> None:
    flip = {"n": 0}
    from agentfootprint._flagship import scripted_model

    def flaky(req: LLMRequest) -> Any:
        out = scripted_model(req)
        if isinstance(out, str):
            flip["n"] += 1
            return out if flip["n"] % 2 else "Refund DECLINED (random)."
        return out

    agent = refunds_agent(mock(respond=flaky))
    await agent.run(QUESTION)
    report = await localize_context_bug(
        agent, samples=4, outcome_changed=approved_flipped, concurrency=1, progress=False, max_samples=None
    )
    assert report.baseline_flips > 0 and "baseline-unstable" in report.honesty_flags
    assert all(s.verdict == "inconclusive" for s in report.suspects)


async def test_tool_result_culprit_is_confirmed() -> None:
    def respond(req: LLMRequest) -> Any:
        last = req.messages[-1]
        if last.role != "tool" and any(t.name == "crm_lookup" for t in req.tools):
            return {"tool_calls": [{"id": "c1", "name": "crm_lookup", "args": {"customer": "dana"}}]}
        tool_text = " ".join(m.content for m in req.messages if m.role == "tool")
        return "Refund APPROVED (lifetime warranty)." if "lifetime warranty" in tool_text else "Refund DECLINED."

    crm = define_tool(
        name="crm_lookup",
        description="CRM lookup",
        input_schema={"type": "object"},
        execute=lambda a, c: "Customer dana: plan=lifetime warranty (stale record)",
    )

    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .tool(crm)
        .fact(define_fact(id="tone", data="Be polite."))
        .build()
    )
    await agent.run("refund for dana?")
    report = await localize_context_bug(agent, samples=3, outcome_changed=approved_flipped, progress=False)
    crm_s = report.suspect("crm_lookup")
    assert crm_s is not None and crm_s.kind == "tool" and crm_s.verdict == "confirmed"
    assert report.suspect("tone").verdict == "not-confirmed"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("fact_id", "phrase"),
    [
        ("vip-override-fact", "VIP tier override"),
        ("legacy-policy-fact", "legacy 90-day policy"),
        ("goodwill-credit-fact", "goodwill credit pre-authorized"),
    ],
)
async def test_falsification_over_planted_variants(fact_id: str, phrase: str) -> None:
    """Top ablatable suspect flips the outcome; the bottom one does not — for every planted variant."""

    def respond(req: LLMRequest) -> Any:
        last = req.messages[-1]
        if last.role != "tool" and any(t.name == "lookup_order" for t in req.tools):
            return {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1001"}}]}
        if phrase in req.system_prompt:
            return f"Refund APPROVED because of the {phrase}."
        return "Refund DECLINED: outside the 30-day window."

    from agentfootprint._flagship import STYLE, SYSTEM, lookup_order_tool

    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .system(SYSTEM)
        .tool(lookup_order_tool())
        .fact(define_fact(id=fact_id, data=f"Customer note: {phrase} applies to this customer."))
        .fact(define_fact(id="style-fact", data=STYLE))
        .build()
    )
    await agent.run(QUESTION)
    report = await localize_context_bug(agent, samples=2, outcome_changed=approved_flipped, progress=False)
    assert report.suspects[0].id == fact_id and report.suspects[0].verdict == "confirmed"
    assert report.suspects[-1].verdict == "not-confirmed"


async def test_semantic_scorer_pluggable() -> None:
    agent = await flagship()
    report = await localize_context_bug(agent, samples=0, scorer=SemanticScorer(CharFrequencyEmbedder()))
    assert report.scorer == "semantic" and all(0.0 <= s.score <= 1.0 for s in report.suspects)


async def test_redacted_value_never_reaches_a_scorer_or_report() -> None:
    secret = "SSN-987-65-4321"
    texts: list[str] = []

    class Spy:
        name = "spy"

        def score(self, source: str, answer: str) -> float:
            texts.extend([source, answer])
            return 0.5

    t = define_tool(
        name="profile",
        description="p",
        input_schema={"type": "object"},
        execute=lambda a, c: {"name": "Ann", "ssn": secret},
    )
    provider = mock(replies=[{"tool_calls": [{"id": "p1", "name": "profile", "args": {}}]}, "Done for Ann."] * 1)
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(t)
        .redact(keys=["ssn"])
        .fact(define_fact(id="f", data="Ann is a customer."))
        .build()
    )
    await agent.run("who?")
    report = await localize_context_bug(agent, samples=0, scorer=Spy())
    assert texts and not any(secret in x for x in texts)
    assert secret not in str(report) and secret not in report.model_dump_json()


async def test_localize_refusals() -> None:
    agent = await flagship()
    with pytest.raises(LocalizeError):
        await localize_context_bug(agent, samples=-1)
    with pytest.raises(LocalizeError):
        await localize_context_bug(agent, max_suspects=0)


async def test_find_dropped_context() -> None:
    provider = mock(replies=["Plain answer."])
    agent = (
        Agent.create(provider=provider, model="m")
        .fact(define_fact(id="never", data="x", active_when=lambda ctx: False))
        .fact(define_fact(id="always", data="y"))
        .build()
    )
    await agent.run("hi")
    dropped = find_dropped_context(agent)
    assert [(d.id, d.reason) for d in dropped] == [("never", "never-triggered")]


async def test_find_dropped_context_reports_windowed_out_turns() -> None:
    replies = ["first answer", "second answer", "third answer"]
    agent = Agent.create(provider=mock(replies=replies), model="m").window(max_turns=1).build()
    await agent.run("one")
    await agent.follow_up("two")
    await agent.follow_up("three")
    dropped = find_dropped_context(agent)
    windowed = [d for d in dropped if d.reason == "windowed-out"]
    assert windowed and all(d.kind == "message" for d in windowed)
