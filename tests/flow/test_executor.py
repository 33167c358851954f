"""Executor: ids, outputs, deciders, selectors, loops, break, failures, async stages, run_sync, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint.flow import (
    FlowChart,
    LoopLimitError,
    UnknownBranchError,
    flow_chart,
    select,
)


async def test_loan_rejects_low_score(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 580}, args={"name": "Ann"})
    assert r.state["decision"] == "rejected"
    assert [c.runtime_stage_id for c in r.commit_log] == [
        "intake#0",
        "assess#1",
        "route#2",
        "reject#3",
        "notify#4",
    ]
    assert r.commit_log[3].control_idx == 2
    assert r.commit_log[2].decision is not None and r.commit_log[2].decision["chosen"] == ["reject"]


async def test_loan_approves_high_score(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 720})
    assert r.state["decision"] == "approved"


async def test_output_is_last_stage_return_and_async_stages_work() -> None:
    async def a(s: Any) -> str:
        await asyncio.sleep(0)
        s["x"] = 1
        return "first"

    chart = flow_chart("A", a, id="a").then("B", lambda s: s["x"] + 1, id="b").build()
    r = await chart.run()
    assert r.output == 2


async def test_decider_plain_string_and_default_fallback() -> None:
    chart = (
        flow_chart("S", lambda s: None, id="s")
        .decider("D", lambda s: "nope", id="d")
        .branch("x", "X", lambda s: s.set("took", "x"))
        .default("x")
        .end()
        .build()
    )
    r = await chart.run()
    assert r.state["took"] == "x"
    assert r.commit_log[1].decision["fallback_from"] == "nope"  # type: ignore[index]


async def test_decider_unknown_branch_without_default_fails_recorded() -> None:
    chart = (
        flow_chart("S", lambda s: None, id="s")
        .decider("D", lambda s: "nope", id="d")
        .branch("x", "X", lambda s: None)
        .end()
        .build()
    )
    with pytest.raises(UnknownBranchError, match="'nope'") as ei:
        await chart.run()
    assert ei.value.snapshot.commit_log[-1].failed  # type: ignore[attr-defined]


async def test_decider_bad_return_type() -> None:
    chart = (
        flow_chart("S", lambda s: None, id="s")
        .decider("D", lambda s: 42, id="d")
        .branch("x", "X", lambda s: None)
        .end()
        .build()
    )
    with pytest.raises(TypeError, match="decider 'd' must return"):
        await chart.run()


async def test_selector_runs_chosen_branches_and_joins() -> None:
    def pick(s: Any) -> Any:
        return select(
            s,
            [
                {"when": {"vip": {"eq": True}}, "then": "email", "label": "VIP"},
                {"when": {"phone": {"ne": None}}, "then": "sms", "label": "Has phone"},
                {"when": {"fax": {"eq": True}}, "then": "fax", "label": "Fax"},
            ],
        )

    chart = (
        flow_chart("S", lambda s: None, id="s")
        .selector("Notify", pick, id="notify")
        .branch("email", "Email", lambda s: s.append("sent", "email"))
        .branch("sms", "SMS", lambda s: s.append("sent", "sms"))
        .branch("fax", "Fax", lambda s: s.append("sent", "fax"))
        .end()
        .then("Done", lambda s: len(s["sent"]), id="done")
        .build()
    )
    r = await chart.run({"vip": True, "phone": "555"})
    assert r.output == 2 and r.state["sent"] == ["email", "sms"]
    ids = [c.runtime_stage_id for c in r.commit_log]
    assert len(ids) == len(set(ids))
    text = "\n".join(e.text for e in r.narrative)
    assert "[Selected]: 2 of 3 paths selected: Email, SMS." in text


async def test_selector_unknown_id_fails() -> None:
    chart = (
        flow_chart("S", lambda s: None, id="s")
        .selector("N", lambda s: ["zzz"], id="n")
        .branch("a", "A", lambda s: None)
        .end()
        .build()
    )
    with pytest.raises(UnknownBranchError, match="'zzz'"):
        await chart.run()


async def test_loop_10000_iterations_no_recursion_limit() -> None:
    def body(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] >= 10_000:
            s.break_("done")

    chart = flow_chart("Body", body, id="body", max_iterations=20_000).loop_to("body").build()
    r = await chart.run()
    assert r.state["n"] == 10_000 and r.break_reason == "done"
    assert r.commit_log[-1].runtime_stage_id == "body#9999"


async def test_loop_limit_names_the_node_default_1000() -> None:
    chart = flow_chart("A", lambda s: None, id="a").then("Spin", lambda s: None, id="spin").loop_to("spin").build()
    with pytest.raises(LoopLimitError, match="maximum loop iterations \\(1000\\) exceeded for node 'spin'"):
        await chart.run()


async def test_loop_visits_and_iteration_count_match_body_executions() -> None:
    def body(s: Any) -> None:
        s.append("seen", len(s.get("seen", [])))
        if len(s["seen"]) == 5:
            s.break_()

    chart = flow_chart("Body", body, id="body").loop_to("body").build()
    r = await chart.run()
    assert r.state["seen"] == [0, 1, 2, 3, 4]
    assert [c.visit for c in r.commit_log] == [1, 2, 3, 4, 5]
    assert "Looped back to Body (pass 2)" in r.narrative_text()


async def test_branch_level_loop_to() -> None:
    def route(s: Any) -> str:
        return "again" if s.get("n", 0) < 3 else "done"

    chart = (
        flow_chart("Count", lambda s: s.set("n", s.get("n", 0) + 1), id="count")
        .decider("Route", route, id="route")
        .branch("again", "Again", lambda s: None, loop_to="count")
        .branch("done", "Done", lambda s: s.set("final", s["n"]))
        .end()
        .build()
    )
    r = await chart.run()
    assert r.state["final"] == 3


async def test_break_stops_after_commit() -> None:
    def a(s: Any) -> None:
        s["x"] = 1
        s.break_("enough")

    chart = flow_chart("A", a, id="a").then("B", lambda s: s.set("y", 1), id="b").build()
    r = await chart.run()
    assert r.state == {"x": 1} and r.break_reason == "enough"
    assert "Execution stopped at A: enough." in r.narrative_text()


async def test_failed_stage_recorded_not_applied_and_same_exception_raised() -> None:
    class Boom(Exception):
        pass

    def b(s: Any) -> None:
        s["b"] = 1
        s["b"] = 99
        raise Boom("nope")

    chart = (
        flow_chart("A", lambda s: s.set("a", 1), id="a")
        .then("B", b, id="b")
        .then("C", lambda s: s.set("c", 1), id="c")
        .build()
    )
    with pytest.raises(Boom) as ei:
        await chart.run()
    snap = ei.value.snapshot  # type: ignore[attr-defined]
    last = snap.commit_log[-1]
    assert last.failed and last.runtime_stage_id == "b#1"
    assert [(w.path, w.value) for w in last.writes] == [("b", 99)]
    assert snap.state == {"a": 1}
    assert "Boom: nope" in (last.error or "")
    assert "[Error]: An error occurred at B" in "\n".join(
        e.text for e in __import__("agentfootprint.flow", fromlist=["render_narrative"]).render_narrative(snap)
    )


async def test_chart_reusable_across_event_loops_and_concurrent_runs(loan: FlowChart) -> None:
    results = await asyncio.gather(*(loan.run({"credit_score": 500 + i * 100}) for i in range(4)))
    assert [r.state["decision"] for r in results] == ["rejected", "approved", "approved", "approved"]
    assert len({r.run_id for r in results}) == 4


def test_run_sync_twice_on_one_chart(loan: FlowChart) -> None:
    assert loan.run_sync({"credit_score": 500}).state["decision"] == "rejected"
    assert loan.run_sync({"credit_score": 800}).state["decision"] == "approved"


async def test_run_sync_inside_loop_refused(loan: FlowChart) -> None:
    with pytest.raises(RuntimeError, match="inside a running event loop"):
        loan.run_sync({"credit_score": 1})


async def test_decide_evidence_in_narrative(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 580})
    text = r.narrative_text()
    assert "Stage 3: Next, it moved on to Route." in text
    assert 'Step 1: Read risk = "high"' in text
    assert '[Condition]: It evaluated Rule 0 "High risk": risk "high" eq "high" ✓, and chose Reject.' in text


async def test_state_must_be_a_dict(loan: FlowChart) -> None:
    with pytest.raises(TypeError, match="state must be a dict"):
        await loan.run(["not", "a", "dict"])  # type: ignore[arg-type]
