"""Subflow mounts: own namespace, input/output maps, runtime ids, one log across the mount, nesting."""

from __future__ import annotations

from typing import Any

from agentfootprint.flow import flow_chart, slice_for_key


def payment_chart() -> Any:
    return (
        flow_chart("Validate", lambda s: s.set("ok", s["amount"] < 100), id="validate")
        .then("Charge", lambda s: s.set("charged", s["amount"]), id="charge")
        .build()
    )


async def test_subflow_ids_maps_and_isolation() -> None:
    chart = (
        flow_chart("Seed", lambda s: s.set("amt", 50) or s.set("secret_parent", 1), id="seed")
        .subflow("pay", payment_chart(), input_map={"amount": "amt"}, output_map={"paid": "charged"})
        .then("Ship", lambda s: s["paid"], id="ship")
        .build()
    )
    r = await chart.run()
    assert [c.runtime_stage_id for c in r.commit_log] == [
        "seed#0",
        "pay#1",
        "pay/validate#2",
        "pay/charge#3",
        "pay#4",
        "ship#5",
    ]
    assert r.output == 50
    assert "ok" not in r.state and "charged" not in r.state
    assert r.snapshot.subflow_states["pay"] == {"amount": 50, "ok": True, "charged": 50}
    inner = r.commit_log[2]
    assert inner.namespace == "pay" and inner.parent_runtime_stage_id == "pay#1"


async def test_subflow_cannot_see_unmapped_parent_keys() -> None:
    seen: dict[str, Any] = {}
    sub = flow_chart("Peek", lambda s: seen.update(v=s.get("hidden", "absent")), id="peek").build()
    chart = flow_chart("Seed", lambda s: s.set("hidden", 1), id="seed").subflow("sub", sub).build()
    await chart.run()
    assert seen == {"v": "absent"}


async def test_slice_crosses_mount_both_ways() -> None:
    chart = (
        flow_chart("Seed", lambda s: s.set("amt", 50), id="seed")
        .subflow("pay", payment_chart(), input_map={"amount": "amt"}, output_map={"paid": "charged"})
        .build()
    )
    r = await chart.run()
    sl = slice_for_key(r.snapshot, "paid")
    assert sl.runtime_stage_ids[:2] == ["pay#4", "pay/charge#3"]
    assert "seed#0" in sl.runtime_stage_ids


async def test_nested_subflows_prefix_ids() -> None:
    inner = flow_chart("Leaf", lambda s: s.set("leaf", s["x"] * 2), id="leaf").build()
    middle = (
        flow_chart("Mid", lambda s: None, id="mid").subflow("in", inner, input_map=["x"], output_map=["leaf"]).build()
    )
    chart = (
        flow_chart("Top", lambda s: s.set("x", 4), id="top")
        .subflow("out", middle, input_map=["x"], output_map=["leaf"])
        .build()
    )
    r = await chart.run()
    assert r.state["leaf"] == 8
    assert "out/in/leaf#4" in [c.runtime_stage_id for c in r.commit_log]
    assert any(e.depth == 2 and "Leaf" in e.text for e in r.narrative)


async def test_subflow_break_stays_inside_unless_propagated() -> None:
    sub = (
        flow_chart("Stop", lambda s: s.break_("inner"), id="stop")
        .then("Never", lambda s: s.set("n", 1), id="never")
        .build()
    )
    chart = (
        flow_chart("A", lambda s: None, id="a")
        .subflow("sub", sub)
        .then("After", lambda s: s.set("after", 1), id="after")
        .build()
    )
    r = await chart.run()
    assert r.state == {"after": 1} and r.break_reason is None
    chart2 = (
        flow_chart("A", lambda s: None, id="a")
        .subflow("sub", sub, propagate_break=True)
        .then("After", lambda s: s.set("after", 1), id="after")
        .build()
    )
    r2 = await chart2.run()
    assert r2.state == {} and r2.break_reason == "inner"


async def test_subflow_as_decider_branch_and_in_loop() -> None:
    sub = flow_chart("Inc", lambda s: s.set("v", s["v"] + 1), id="inc").build()

    def route(s: Any) -> str:
        return "more" if s.get("v", 0) < 3 else "stop"

    chart = (
        flow_chart("Start", lambda s: s.set("v", s.get("v", 0)), id="start")
        .decider("Route", route, id="route")
        .branch("more", "More", sub, input_map=["v"], output_map=["v"], loop_to="start")
        .branch("stop", "Stop", lambda s: None)
        .end()
        .build()
    )
    r = await chart.run()
    assert r.state["v"] == 3
    assert r.snapshot.state_at(len(r.commit_log) - 1) == {"v": 3}
