"""Causal slices: data and control edges, key slices, absence explained, limits flagged, untracked inputs."""

from __future__ import annotations

from typing import Any

from agentfootprint.flow import FlowChart, causal_chain, flow_chart, slice_for_key


async def test_slice_from_notify_walks_data_and_control(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 580})
    sl = causal_chain(r.snapshot, "notify#4")
    assert sl.runtime_stage_ids == ["notify#4", "reject#3", "route#2", "assess#1"]
    reject = sl.node("reject#3")
    assert reject is not None and reject.edges[0].kind == "control"
    assess = sl.node("assess#1")
    assert assess is not None and assess.initial_keys == ["credit_score"]
    text = str(sl)
    assert "Reject (reject#3) ← via decision" in text and "chose this branch" in text


async def test_unrelated_stage_not_in_slice() -> None:
    chart = (
        flow_chart("A", lambda s: s.set("a", 1), id="a")
        .then("B", lambda s: s.set("b", 2), id="b")
        .then("C", lambda s: s.set("c", s["a"] + 1), id="c")
        .build()
    )
    r = await chart.run()
    assert causal_chain(r.snapshot, "c#2").runtime_stage_ids == ["c#2", "a#0"]


async def test_slice_for_key_and_absence(loan: FlowChart) -> None:
    r = await loan.run({"credit_score": 580})
    assert slice_for_key(r.snapshot, "decision").runtime_stage_ids[0] == "reject#3"
    assert slice_for_key(r.snapshot, "credit_score").missing == "initial-state"
    assert slice_for_key(r.snapshot, "nope").missing == "never-written"
    assert causal_chain(r.snapshot, "ghost#9").missing == "unknown-stage"


async def test_slice_before_idx_finds_earlier_version() -> None:
    def body(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 3:
            s.break_()

    r = await flow_chart("Body", body, id="body").loop_to("body").build().run()
    assert slice_for_key(r.snapshot, "n").runtime_stage_ids == ["body#2", "body#1", "body#0"]
    assert slice_for_key(r.snapshot, "n", before=2).runtime_stage_ids == ["body#1", "body#0"]


async def test_limits_flag_truncation() -> None:
    def body(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 50:
            s.break_()

    r = await flow_chart("Body", body, id="body").loop_to("body").build().run()
    sl = slice_for_key(r.snapshot, "n", max_depth=5)
    assert sl.truncated and len(sl.nodes) == 6
    assert "truncated" in str(sl)


async def test_args_use_flags_incomplete() -> None:
    r = await flow_chart("A", lambda s: s.set("x", s.args["v"]), id="a").build().run(args={"v": 1})
    sl = slice_for_key(r.snapshot, "x")
    assert sl.nodes[0].incomplete_sources == ["args"] and "may be incomplete" in str(sl)
