"""confirm_by_restoration: force a dropped injection active, rerun seeded against a baseline, give a verdict."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, define_fact
from agentfootprint.explain import find_dropped_context
from agentfootprint.explain.dropped import RestorationError, RestorationReport, confirm_by_restoration
from agentfootprint.providers import LLMRequest, mock

QUESTION = "Should order B-7 be refunded? It was bought 45 days ago."
VIP = "Customer holds VIP tier: refunds are approved up to 60 days after purchase."
WEATHER = "It is sunny in Lisbon today."


def refunds_model(req: LLMRequest) -> Any:
    """Answers from what it receives: the VIP fact, when present, flips the decision."""
    return "Refund APPROVED under the VIP 60-day window." if "VIP tier" in req.system_prompt else "Refund DECLINED."


def approved_flipped(a: str, b: str) -> bool:
    return ("APPROVED" in a) != ("APPROVED" in b)


async def dropped_vip_agent(respond: Any = refunds_model) -> Agent:
    """The VIP fact's rule looks for 'vip' in the message, which never comes: the answer is wrongly DECLINED."""
    agent = (
        Agent.create(provider=mock(respond=respond), model="m", max_iterations=2)
        .system("You are a refunds assistant. Refunds within 30 days.")
        .fact(define_fact(id="vip-status", data=VIP, active_when=lambda ctx: "vip" in ctx.user_message.lower()))
        .fact(define_fact(id="weather", data=WEATHER, active_when=lambda ctx: False))
        .fact(define_fact(id="policy-note", data="Be polite."))
        .build()
    )
    result = await agent.run(QUESTION)
    assert result.answer == "Refund DECLINED."
    return agent


async def test_dropped_fact_whose_absence_caused_the_answer_is_confirmed() -> None:
    agent = await dropped_vip_agent()
    dropped = {d.id: d for d in find_dropped_context(agent)}
    assert dropped["vip-status"].reason == "never-triggered"
    report = await confirm_by_restoration(agent, dropped["vip-status"], outcome_changed=approved_flipped)
    assert isinstance(report, RestorationReport)
    assert (report.verdict, report.flips, report.baseline_flips, report.samples) == ("confirmed", 3, 0, 3)
    assert report.kind == "fact" and report.reason == "never-triggered" and report.trigger.startswith("rule")
    assert all("APPROVED" in a for a in report.answers) and report.original_answer == "Refund DECLINED."
    assert report.claim.startswith("CAUSAL: restoring fact 'vip-status'") and "3/3" in report.claim
    assert report.honesty_flags == [] and "CONFIRMED" in str(report)


async def test_irrelevant_dropped_fact_is_not_confirmed() -> None:
    agent = await dropped_vip_agent()
    report = await confirm_by_restoration(agent, "weather", samples=2)  # default outcome test: answer similarity
    assert (report.verdict, report.flips, report.baseline_flips) == ("not-confirmed", 0, 0)
    assert report.answers == ["Refund DECLINED.", "Refund DECLINED."]
    assert report.claim.startswith("NOT CONFIRMED")


async def test_restoration_does_not_change_the_original_agent() -> None:
    agent = await dropped_vip_agent()
    before = agent.config
    await confirm_by_restoration(agent, "vip-status", samples=1, outcome_changed=approved_flipped)
    assert agent.config is before
    assert [d.id for d in find_dropped_context(agent)] == ["vip-status", "weather"]


async def test_unstable_baseline_makes_the_verdict_inconclusive() -> None:
    def flaky(req: LLMRequest) -> Any:
        return "Refund APPROVED (seed 1)." if req.seed == 1 else refunds_model(req)

    agent = await dropped_vip_agent(flaky)
    report = await confirm_by_restoration(agent, "vip-status", samples=3, outcome_changed=approved_flipped)
    assert report.verdict == "inconclusive" and report.baseline_flips == 1
    assert "baseline-unstable" in report.honesty_flags and report.claim.startswith("INCONCLUSIVE")


async def test_refusals_are_typed() -> None:
    agent = await dropped_vip_agent()
    with pytest.raises(RestorationError, match="unknown"):
        await confirm_by_restoration(agent, "no-such-fact")
    with pytest.raises(RestorationError, match="reached the final model call"):
        await confirm_by_restoration(agent, "policy-note")
    with pytest.raises(RestorationError, match="samples"):
        await confirm_by_restoration(agent, "vip-status", samples=0)
    fresh = Agent.create(provider=mock(respond=refunds_model), model="m").fact(
        define_fact(id="x", data="x", active_when=lambda ctx: False)
    )
    with pytest.raises(RestorationError, match="has run"):
        await confirm_by_restoration(fresh.build(), "x")
