"""Narrative golden text and value summaries."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint._text import summarize_value
from agentfootprint.flow import FlowChart, ParallelMergeConflictError, decide, flow_chart
from agentfootprint.flow.narrative import render_narrative

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


def _entries(entries: Any) -> list[tuple[Any, ...]]:
    return [(e.type, e.depth, e.runtime_stage_id, e.stage_id, e.text) for e in entries]


async def test_golden_entries_for_every_kind_of_step() -> None:
    def route(s: Any) -> Any:
        rules = [
            {"when": lambda sc: sc["n"] > 5 and sc["m"] < 3, "then": "big", "label": "Big one"},
            {"when": {"n": {"gt": 1}}, "then": "mid"},
        ]
        return decide(s, rules, "small")

    def leaf(s: Any) -> None:
        s.emit("tick", {"k": 1})
        s["leafv"] = 1
        s.break_("enough")

    chart = (
        flow_chart("Start", lambda s: s.set("n", 7) or s.set("m", 1), id="start")
        .decider("Route", route, id="route")
        .branch("big", "Big", lambda s: s.append("xs", 1))
        .branch("mid", "Mid", lambda s: None)
        .branch("small", "Small", lambda s: None)
        .end()
        .selector("Pick", lambda s: ["p", "q"], id="pick")
        .branch("p", "P", lambda s: s.set("p", 1))
        .branch("q", "Q", lambda s: s.set("q", 2))
        .end()
        .parallel(
            [("x", "X", lambda s: s.set("t", 1)), ("y", "Y", lambda s: s.set("t", 2))],
            merge=lambda k, v: sum(v.values()),
            id="fan",
        )
        .subflow("sub", flow_chart("Leaf", leaf, id="leaf").build(), propagate_break=True, output_map=["leafv"])
        .then("Never", lambda s: None, id="never")
        .build()
    )
    r = await chart.run()
    assert _entries(r.narrative) == [
        ("stage", 0, "start#0", "start", "Stage 1: The process began with Start."),
        ("step", 1, "start#0", "start", "Step 1: Write n = 7"),
        ("step", 1, "start#0", "start", "Step 2: Write m = 1"),
        ("stage", 0, "route#1", "route", "Stage 2: Next, it moved on to Route."),
        ("step", 1, "route#1", "route", "Step 1: Read n = 7"),
        ("step", 1, "route#1", "route", "Step 2: Read m = 1"),
        ("condition", 1, "route#1", "route", '[Condition]: It evaluated "Big one": n=7, m=1 ✓, and chose Big.'),
        ("stage", 0, "big#2", "big", "Stage 3: Next, it moved on to Big."),
        ("step", 1, "big#2", "big", "Step 1: Append xs += 1"),
        ("stage", 0, "pick#3", "pick", "Stage 4: Next, it moved on to Pick."),
        ("selected", 1, "pick#3", "pick", "[Selected]: 2 of 2 paths selected: P, Q."),
        ("stage", 0, "p#5", "p", "Stage 5: Next, it moved on to P."),
        ("step", 1, "p#5", "p", "Step 1: Write p = 1"),
        ("stage", 0, "q#6", "q", "Stage 6: Next, it moved on to Q."),
        ("step", 1, "q#6", "q", "Step 1: Write q = 2"),
        ("fork", 0, "x#8", "x", "[Parallel]: Forking into 2 parallel paths: X, Y."),
        ("stage", 0, "x#8", "x", "Stage 7: Next, it moved on to X."),
        ("step", 1, "x#8", "x", "Step 1: Write t = 1"),
        ("stage", 0, "y#9", "y", "Stage 8: Next, it moved on to Y."),
        ("step", 1, "y#9", "y", "Step 1: Write t = 2"),
        ("join", 0, "fan#7", "fan", "[Join]: Merged t from the parallel paths of Parallel."),
        ("subflow", 0, "sub#10", "sub", "Entering the Leaf subflow."),
        ("stage", 1, "sub/leaf#11", "leaf", "Stage 1: The process began with Leaf."),
        ("step", 2, "sub/leaf#11", "leaf", "Step 1: Write leafv = 1"),
        ("emit", 2, "sub/leaf#11", "leaf", "[emit] tick: {k}"),
        ("break", 1, "sub/leaf#11", "leaf", "Execution stopped at Leaf: enough."),
        ("subflow", 0, "sub#12", "sub", "Exiting the Leaf subflow."),
        ("step", 1, "sub#12", "sub", "Step 1: Output from leafv = 1"),
        ("step", 1, "sub#12", "sub", "Step 2: Write leafv = 1"),
    ]


async def test_golden_entries_for_a_failed_join() -> None:
    chart = (
        flow_chart("Start", lambda s: None, id="start")
        .parallel([("x", "X", lambda s: s.set("t", 1)), ("y", "Y", lambda s: s.set("t", 2))], id="fan")
        .build()
    )
    with pytest.raises(ParallelMergeConflictError) as ei:
        await chart.run()
    assert _entries(render_narrative(ei.value.snapshot)) == [  # type: ignore[attr-defined]
        ("stage", 0, "start#0", "start", "Stage 1: The process began with Start."),
        ("fork", 0, "x#2", "x", "[Parallel]: Forking into 2 parallel paths: X, Y."),
        ("stage", 0, "x#2", "x", "Stage 2: Next, it moved on to X."),
        ("step", 1, "x#2", "x", "Step 1: Write t = 1"),
        ("stage", 0, "y#3", "y", "Stage 3: Next, it moved on to Y."),
        ("step", 1, "y#3", "y", "Step 1: Write t = 2"),
        (
            "error",
            0,
            "fan#1",
            "fan",
            "[Error]: An error occurred at the join of Parallel: ParallelMergeConflictError: "
            "parallel branches x, y all wrote key 't'; pass merge= to combine them.",
        ),
    ]
