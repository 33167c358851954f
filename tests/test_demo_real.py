"""``demo --real``: the closing line says what the run proved and what it did not, for each possible outcome."""

from __future__ import annotations

import io

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


def test_gemma_is_shown_the_door_code_story_and_smollm2_the_refunds_story() -> None:
    from agentfootprint._demo_real import DOOR_PATTERN, story_for

    door, refunds = story_for("gemma3-270m"), story_for("smollm2-135m")
    assert (door.key, door.pattern, door.tool_rounds) == ("door-code", DOOR_PATTERN, None)
    assert (refunds.key, refunds.pattern, refunds.tool_rounds) == ("refunds", ANSWER_PATTERN, 1)
    assert door.changed("DOOR CODE: 4417", "DOOR CODE: 5802") and not door.changed("DOOR CODE: 5802", "DOOR CODE: 1")


def test_the_archived_memo_confirmed_alone_is_proved() -> None:
    from agentfootprint._demo_real import door_closing_line

    line = door_closing_line("DOOR CODE: 4417", report(("fact", "old-memo", 2), ("fact", "wifi", 0)))
    assert line.startswith("Proved: removing 'old-memo' turned the archived code 4417 into another in 2/2 seeded")
    assert "at temperature 0 the reruns of one request are one model call" in line


def test_the_memo_is_not_called_the_cause_when_another_note_flips_it_too() -> None:
    from agentfootprint._demo_real import door_closing_line

    line = door_closing_line("DOOR CODE: 4417", report(("fact", "old-memo", 2), ("fact", "door-code", 2)))
    assert line.startswith("Not proved: that the memo 'old-memo' alone caused the wrong answer (2/2 reruns")
    assert "Removing fact 'door-code' (2/2) flipped it too" in line


def test_a_current_code_is_not_dressed_up_as_a_finding() -> None:
    from agentfootprint._demo_real import door_closing_line

    line = door_closing_line("DOOR CODE: 5802", report(("fact", "old-memo", 0)))
    assert line.startswith("Proved: the model gave a code other than the archived 4417")


def test_the_door_agent_answers_from_its_notes_on_a_scripted_model() -> None:
    from agentfootprint._demo_real import OLD_CODE, CallTicker, door_agent
    from agentfootprint.providers import LLMRequest, mock

    def respond(req: LLMRequest) -> str:
        return f"DOOR CODE: {OLD_CODE}" if "Archived memo" in req.system_prompt else "DOOR CODE: 5802"

    from rich.console import Console

    ticker = CallTicker(mock(respond=respond), Console(file=io.StringIO()), greedy=True)
    agent = door_agent(ticker)
    assert agent.run_sync("What is the door code for the office?", seed=0).answer == "DOOR CODE: 4417"
    assert agent.run_sync("What is the door code for the office?", seed=1).answer == "DOOR CODE: 4417"
    assert (ticker.calls, ticker.reused) == (1, 1)
    assert sorted(agent.ablatable_ids()) == ["door-code", "old-memo", "parking", "wifi"]
