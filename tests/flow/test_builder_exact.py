"""Building charts, exactly: refusal texts, what each builder call records on its nodes, and mounted children of a
fork with their maps and deps."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import ChartBuildError, flow_chart


def noop(s: Any) -> None:
    return None


def test_refusals_name_what_is_wrong() -> None:
    inner = flow_chart("I", noop, id="i").build()
    cases: list[tuple[Any, str]] = [
        (lambda: flow_chart("A", noop, id="a", max_iterations=0).build(), "max_iterations must be >= 1"),
        (
            lambda: flow_chart("A", noop, id="a").decider("D", noop, id="d").branch("x", "X", noop, deps=lambda d: d),
            "branch 'x' deps must be a callable, given with a mounted chart",
        ),
        (
            lambda: flow_chart("A", noop, id="a").decider("D", noop, id="d").branch("x", "X", inner, deps=3),
            "branch 'x' deps must be a callable, given with a mounted chart",
        ),
        (
            lambda: flow_chart("A", noop, id="a").parallel([("x", "X")], id="fan"),
            "parallel child of 'fan' must be (id, name, fn) or (id, name, chart, input_map, output_map[, deps])",
        ),
        (
            lambda: flow_chart("A", noop, id="a").parallel([("x", "X", inner, None, None, 5)]),
            "parallel child 'x' deps must be a callable of the parent's deps",
        ),
        (
            lambda: flow_chart("A", noop, id="a").parallel([("x", "X", 5)]),
            "stage 'x' needs a callable fn(scope), got int",
        ),
        (
            lambda: flow_chart("A", noop, id="a").selector("S", 5, id="pick"),  # type: ignore[arg-type]
            "stage 'pick' needs a callable fn(scope), got int",
        ),
    ]
    for make, message in cases:
        with pytest.raises(ChartBuildError) as ei:
            make()
        assert str(ei.value) == message


def test_a_selector_left_without_branches_is_refused_at_build() -> None:
    builder = flow_chart("A", noop, id="a")
    builder.selector("S", noop, id="pick")
    with pytest.raises(ChartBuildError) as ei:
        builder.build()
    assert str(ei.value) == "selector 'pick' has no branches"


def test_nodes_record_what_each_call_gave() -> None:
    inner = flow_chart("I", noop, id="i").build()
    deps = lambda d: {"child": d}  # noqa: E731
    merge = lambda k, v: 0  # noqa: E731
    chart = (
        flow_chart("A", noop, id="a", description="first")
        .decider("D", noop, id="d")
        .branch("retry", "Retry", noop, loop_to="a")
        .branch("ok", "Ok", noop)
        .end()
        .selector("S", lambda s: ["p"], id="pick", merge=merge, fail_fast=True)
        .branch("p", "P", noop)
        .end()
        .parallel([("x", "X", noop), ("m", "M", inner, ["in"], ["out"], deps)], id="fan")
        .subflow("sub", inner, deps=deps)
        .build()
    )
    n = chart.nodes
    assert n["a"].description == "first"
    assert (n["retry"].next, n["retry"].loop_to, n["ok"].next) == (None, "a", "pick")
    assert n["pick"].fail_fast is True
    assert n["pick"].merge is merge
    assert (n["x"].kind, n["x"].branch_of, n["x"].name) == ("stage", "fan", "X")
    assert (n["m"].kind, n["m"].branch_of, n["m"].input_map, n["m"].output_map) == ("subflow", "fan", ["in"], ["out"])
    assert n["m"].deps_map is deps and n["sub"].deps_map is deps
    assert (n["p"].branch_of, n["p"].name) == ("pick", "P")


async def test_mounted_fork_children_map_in_and_out_and_take_mapped_deps() -> None:
    def leaf(s: Any) -> None:
        s["out"] = [s["in"], s.deps]

    inner = flow_chart("Leaf", leaf, id="leaf").build()
    chart = (
        flow_chart("A", lambda s: s.set("v", 7), id="a")
        .parallel([("m", "M", inner, {"in": "v"}, {"got": "out"}, lambda d: f"child of {d}")], id="fan")
        .subflow("sub", inner, input_map={"in": "v"}, output_map={"again": "out"}, deps=lambda d: f"mount of {d}")
        .build()
    )
    r = await chart.run(deps="root")
    assert r.state == {"v": 7, "got": [7, "child of root"], "again": [7, "mount of root"]}
