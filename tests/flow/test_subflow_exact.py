"""Mounted charts, exactly: the enter/exit commits (maps, deps, control and parent links, breaks, failures) and
what recorders see."""

from __future__ import annotations

import types
from typing import Any

import pytest

from agentfootprint.flow import FlowChart, decide, flow_chart

from .conftest import Events


def dump(log: list[Any]) -> list[dict[str, Any]]:
    return [c.model_dump(exclude_defaults=True, exclude={"stage_name", "decision"}) for c in log]


def pay_chart() -> FlowChart:
    def charge(s: Any) -> None:
        s["paid"] = s["amount"] * 2
        s.emit("deps", s.deps)

    inner = flow_chart("Charge", charge, id="charge").build()
    return (
        flow_chart("Seed", lambda s: s.set("amt", 5) or s.set("other", 1), id="seed")
        .decider("Route", lambda s: decide(s, [{"when": {"amt": {"gt": 1}}, "then": "pay"}], "skip"), id="route")
        .branch("pay", "Pay", inner, input_map={"amount": "amt"}, output_map=["paid"], deps=lambda d: {"inner": d})
        .branch("skip", "Skip", lambda s: None)
        .end()
        .then("After", lambda s: s.set("done", s["paid"]), id="after")
        .build()
    )


async def test_a_mounted_branch_records_its_maps_deps_and_links(events: Events) -> None:
    r = await pay_chart().run(recorders=[events], deps="outer", run_id="r1")
    assert r.state == {"amt": 5, "other": 1, "paid": 10, "done": 10}
    assert dump(r.commit_log) == [
        {
            "idx": 0,
            "runtime_stage_id": "seed#0",
            "stage_id": "seed",
            "writes": [{"path": "amt", "value": 5, "verb": "set"}, {"path": "other", "value": 1, "verb": "set"}],
        },
        {"idx": 1, "kind": "decider", "reads": {"amt": 0}, "runtime_stage_id": "route#1", "stage_id": "route"},
        {
            "control_idx": 1,
            "idx": 2,
            "kind": "subflow-enter",
            "namespace": "pay",
            "reads": {"amt": 0},
            "runtime_stage_id": "pay#2",
            "stage_id": "pay",
            "writes": [{"path": "amount", "value": 5, "verb": "set"}],
        },
        {
            "emits": [{"name": "deps", "payload": {"inner": "outer"}}],
            "idx": 3,
            "namespace": "pay",
            "parent_runtime_stage_id": "pay#2",
            "reads": {"amount": 2},
            "runtime_stage_id": "pay/charge#3",
            "stage_id": "charge",
            "writes": [{"path": "paid", "value": 10, "verb": "set"}],
        },
        {
            "idx": 4,
            "kind": "subflow-exit",
            "parent_runtime_stage_id": "pay#2",
            "reads": {"paid": 3},
            "runtime_stage_id": "pay#4",
            "stage_id": "pay",
            "writes": [{"path": "paid", "value": 10, "verb": "set"}],
        },
        {
            "idx": 5,
            "reads": {"paid": 4},
            "runtime_stage_id": "after#5",
            "stage_id": "after",
            "writes": [{"path": "done", "value": 10, "verb": "set"}],
        },
    ]
    mount = [e for e in events.log if e[0] in ("on_subflow", "on_read", "on_write") and e[1].startswith("pay#")]
    assert mount == [
        ("on_read", "pay#2@-:1", "amt", 5),  # `key in source`, then the value
        ("on_read", "pay#2@-:1", "amt", 5),
        ("on_subflow", "pay#2@-:1", "enter", "Charge"),
        ("on_read", "pay#4@-:1", "paid", 10),
        ("on_read", "pay#4@-:1", "paid", 10),
        ("on_write", "pay#4@-:1", "paid", "set", 10),
        ("on_subflow", "pay#4@-:1", "exit", "Charge"),
    ]


async def test_a_break_inside_nested_mounts_stops_where_the_mount_says(events: Events) -> None:
    leaf = flow_chart("Leaf", lambda s: s.break_("halt"), id="leaf").then("Never", lambda s: s.set("x", 1), id="never")
    mid = (
        flow_chart("Mid", lambda s: None, id="mid")
        .subflow("in", leaf.build(), propagate_break=True)
        .then("MidAfter", lambda s: s.set("y", 1), id="ma")
        .build()
    )
    top = (
        flow_chart("Top", lambda s: None, id="top")
        .subflow("out", mid, output_map=lambda s: types.MappingProxyType({"got": s.get("y")}))
        .then("End", lambda s: s.set("end", 1), id="end")
        .build()
    )
    r = await top.run(recorders=[events])
    assert (r.break_reason, r.state) == (None, {"got": None, "end": 1})  # "out" does not propagate the break
    assert dump(r.commit_log) == [
        {"idx": 0, "runtime_stage_id": "top#0", "stage_id": "top"},
        {"idx": 1, "kind": "subflow-enter", "namespace": "out", "runtime_stage_id": "out#1", "stage_id": "out"},
        {
            "idx": 2,
            "namespace": "out",
            "parent_runtime_stage_id": "out#1",
            "runtime_stage_id": "out/mid#2",
            "stage_id": "mid",
        },
        {
            "idx": 3,
            "kind": "subflow-enter",
            "namespace": "out/in",
            "parent_runtime_stage_id": "out#1",
            "runtime_stage_id": "out/in#3",
            "stage_id": "in",
        },
        {
            "break_reason": "halt",
            "idx": 4,
            "namespace": "out/in",
            "parent_runtime_stage_id": "out/in#3",
            "runtime_stage_id": "out/in/leaf#4",
            "stage_id": "leaf",
        },
        {
            "break_reason": "halt",
            "idx": 5,
            "kind": "subflow-exit",
            "namespace": "out",
            "parent_runtime_stage_id": "out/in#3",
            "runtime_stage_id": "out/in#5",
            "stage_id": "in",
        },
        {
            "break_reason": "halt",
            "idx": 6,
            "kind": "subflow-exit",
            "parent_runtime_stage_id": "out#1",
            "reads": {"y": None},
            "runtime_stage_id": "out#6",
            "stage_id": "out",
            "writes": [{"path": "got", "verb": "set"}],
        },
        {
            "idx": 7,
            "runtime_stage_id": "end#7",
            "stage_id": "end",
            "writes": [{"path": "end", "value": 1, "verb": "set"}],
        },
    ]
    assert [e for e in events.log if e[0] in ("on_subflow", "on_break")] == [
        ("on_subflow", "out#1@-:1", "enter", "Mid"),
        ("on_subflow", "out/in#3@out:1", "enter", "Leaf"),
        ("on_break", "out/in/leaf#4@out/in:1", "halt"),
        ("on_subflow", "out/in#5@out:1", "exit", "Leaf"),
        ("on_subflow", "out#6@-:1", "exit", "Mid"),
    ]


async def test_a_failing_input_map_leaves_a_failed_enter_under_its_decision() -> None:
    def boom(s: Any) -> None:
        raise ValueError("no map")

    inner = flow_chart("I", lambda s: None, id="i").build()
    chart = (
        flow_chart("Top", lambda s: s.set("a", 1), id="top")
        .decider("R", lambda s: "go", id="r")
        .branch("go", "Go", inner, input_map=boom)
        .end()
        .build()
    )
    with pytest.raises(ValueError) as ei:
        await chart.run()
    assert (str(ei.value), ei.value.__notes__) == ("no map", ["(agentfootprint: raised in stage go#2)"])
    failed = ei.value.snapshot.commit_log[-1]  # type: ignore[attr-defined]
    assert failed.model_dump(exclude_defaults=True, exclude={"namespace"}) == {
        "control_idx": 1,
        "error": "ValueError: no map",
        "failed": True,
        "idx": 2,
        "kind": "subflow-enter",
        "runtime_stage_id": "go#2",
        "stage_id": "go",
        "stage_name": "Go",
    }


async def test_an_output_map_that_returns_no_dict_is_refused_by_name() -> None:
    inner = flow_chart("I", lambda s: s.set("q", 1), id="i").build()
    chart = flow_chart("Top", lambda s: None, id="top").subflow("sub", inner, output_map=lambda s: s["q"]).build()
    with pytest.raises(TypeError) as ei:
        await chart.run()
    assert str(ei.value) == "output_map of subflow 'sub' must return a dict, got int"
    failed = ei.value.snapshot.commit_log[-1]  # type: ignore[attr-defined]
    assert failed.model_dump(exclude_defaults=True) == {
        "error": "TypeError: output_map of subflow 'sub' must return a dict, got int",
        "failed": True,
        "idx": 3,
        "kind": "subflow-exit",
        "parent_runtime_stage_id": "sub#1",
        "reads": {"q": 2},
        "runtime_stage_id": "sub#3",
        "stage_id": "sub",
        "stage_name": "I",
    }


async def test_an_input_map_callable_seeds_the_mount_and_names_a_bad_return() -> None:
    inner = flow_chart("I", lambda s: s.set("seen", s["x"]), id="i").build()
    ok = flow_chart("Top", lambda s: s.set("a", 3), id="top").subflow("m", inner, input_map=lambda s: {"x": s["a"]})
    r = await ok.build().run()
    assert r.snapshot.subflow_states["m"] == {"x": 3, "seen": 3}
    bad = flow_chart("Top", lambda s: None, id="top").subflow("m", inner, input_map=lambda s: [1]).build()
    with pytest.raises(TypeError) as ei:
        await bad.run()
    assert str(ei.value) == "input_map of subflow 'm' must return a dict, got list"
