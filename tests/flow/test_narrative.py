"""Narrative golden text and value summaries."""

from __future__ import annotations

from agentfootprint._text import summarize_value
from agentfootprint.flow import FlowChart, flow_chart

GOLDEN = """Stage 1: The process began with Intake.
  Step 1: Write applicant = "anon"
Stage 2: Next, it moved on to Assess — Assess risk.
  Step 1: Read credit_score = 580
  Step 2: Write risk = "high"
Stage 3: Next, it moved on to Route.
  Step 1: Read risk = "high"
  [Condition]: It evaluated Rule 0 "High risk": risk "high" eq "high" ✓, and chose Reject.
Stage 4: Next, it moved on to Reject.
  Step 1: Write decision = "rejected"
Stage 5: Next, it moved on to Notify.
  Step 1: Read decision = "rejected"
  Step 2: Append log += "sent rejected\""""


async def test_golden_narrative(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 580})
    assert r.narrative_text() == GOLDEN.replace('\\"', '"')
    entries = r.narrative
    assert entries[0].runtime_stage_id == "intake#0" and entries[0].type == "stage"
    assert {e.type for e in entries} >= {"stage", "step", "condition"}


async def test_narrative_is_byte_stable(loan: FlowChart) -> None:
    a = await loan.run({"credit_score": 580})
    b = await loan.run({"credit_score": 580})
    assert a.narrative_text() == b.narrative_text()


async def test_default_fallback_sentence() -> None:
    from agentfootprint.flow import decide

    chart = (
        flow_chart("S", lambda s: None, id="s")
        .decider("D", lambda s: decide(s, [{"when": {"x": {"eq": 1}}, "then": "a", "label": "one"}], "b"), id="d")
        .branch("a", "Alpha", lambda s: None)
        .branch("b", "Beta", lambda s: None)
        .end()
        .build()
    )
    r = await chart.run({"x": 2})
    assert "No rules matched, fell back to default: Beta." in r.narrative_text()


def test_summaries() -> None:
    assert summarize_value("x" * 100) == '"' + "x" * 80 + '..."'
    assert summarize_value([1, 2, 3]) == "(3 items)"
    assert summarize_value([1]) == "(1 item)"
    assert summarize_value({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}) == "{a, b, c, d, ... (5 keys)}"
    assert summarize_value(None) == "null" and summarize_value(True) == "true"


async def test_every_executed_stage_entry_names_the_stage(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 580})
    stage_entries = [e for e in r.narrative if e.type == "stage"]
    names = {c.runtime_stage_id: c.stage_name for c in r.commit_log}
    assert len(stage_entries) == len(r.commit_log)
    for entry in stage_entries:
        assert names[entry.runtime_stage_id or ""] in entry.text
