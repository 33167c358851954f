"""``demo --real``: the closing line says what the run proved and what it did not, for each possible outcome."""

from __future__ import annotations

from agentfootprint._demo_real import ANSWER_PATTERN, closing_line
from agentfootprint.explain import LocalizationReport
from agentfootprint.explain.localize import Suspect


def report(*suspects: tuple[str, str, int]) -> LocalizationReport:
    return LocalizationReport(
        mode="causal",
        trigger="call-llm#12",
        answer="APPROVED: x",
        scorer="lexical",
        samples=2,
        suspects=[
            Suspect(
                kind=kind,
                id=sid,
                score=0.5,
                rank=i + 1,
                verdict="confirmed" if flips else "not-confirmed",
                flips=flips,
                samples=2,
                claim="",
            )
            for i, (kind, sid, flips) in enumerate(suspects)
        ],
    )


def test_a_confirmed_planted_fact_is_proved() -> None:
    line = closing_line("APPROVED: VIP", report(("fact", "vip-override-fact", 2), ("fact", "style-fact", 0)))
    assert line.startswith("Proved: removing 'vip-override-fact' turned APPROVED into DECLINED in 2/2 seeded reruns")
    assert "Not proved: that it would at another temperature or seed." in line


def test_an_unconfirmed_fact_is_said_plainly_and_other_flips_are_not_called_culprits() -> None:
    line = closing_line("APPROVED: ok", report(("tool", "lookup_order", 2), ("fact", "vip-override-fact", 0)))
    assert line.startswith("Not proved: that the planted fact 'vip-override-fact' caused the wrong answer.")
    assert "Removing it changed nothing (0/2 reruns flipped)" in line
    assert "Removing tool 'lookup_order' (2/2) did flip it" in line and "does not make it the culprit" in line


def test_a_right_answer_is_not_dressed_up_as_a_finding() -> None:
    line = closing_line("DECLINED: too old", report(("fact", "vip-override-fact", 0)))
    assert line.startswith("Proved: the model answered DECLINED, as the 30-day policy says")


def test_the_answer_pattern_is_anchored_for_the_grammar_engine() -> None:
    assert ANSWER_PATTERN.startswith("^(APPROVED|DECLINED): ") and ANSWER_PATTERN.endswith("$")
