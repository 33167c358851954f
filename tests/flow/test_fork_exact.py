"""Forks and selectors, exactly: the branch, mount and join commits with their parents, fork branches and control
links (also inside a mounted chart), what recorders hear, fail-fast and merge conflicts, loop visits of branches."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import ParallelBranchError, ParallelMergeConflictError, flow_chart

from .conftest import Events


def dump(log: list[Any]) -> list[dict[str, Any]]:
    return [c.model_dump(exclude_defaults=True, exclude={"stage_name", "decision", "reads"}) for c in log]


def tree(nodes: list[Any], depth: int = 0) -> list[str]:
    out: list[str] = []
    for n in nodes:
        out.append("  " * depth + n.runtime_stage_id)
        out.extend(tree(n.children, depth + 1))
    return out


def mounted_forks() -> Any:
    leaf = flow_chart("Leaf", lambda s: s.set("lv", 1), id="leaf").build()
    inner = (
        flow_chart("Start", lambda s: s.set("n", 1), id="start")
        .decider("Route", lambda s: "go", id="route")
        .branch("go", "Go", lambda s: None)
        .end()
        .selector("Pick", lambda s: ["p"], id="pick")
        .branch("p", "P", lambda s: s.set("p", 1))
        .branch("q", "Q", lambda s: None)
        .end()
        .parallel([("x", "X", lambda s: s.set("x", 1)), ("m", "M", leaf, None, ["lv"])], id="fan")
        .subflow("deep", leaf)
        .build()
    )
    return flow_chart("R", lambda s: None, id="r").subflow("outer", inner).build()


async def test_a_fork_inside_a_mount_stays_inside_it_in_the_execution_tree() -> None:
    r = await mounted_forks().run()
    assert tree(r.snapshot.execution_tree) == [
        "r#0",
        "outer#1",
        "  outer/start#2",
        "  outer/route#3",
        "  outer/go#4",
        "  outer/pick#5",
        "    outer/p#7",
        "    outer/pick#6",
        "  outer/fan#8",
        "    outer/m#10",
        "      outer/m/leaf#11",
        "    outer/x#9",
        "  outer/deep#13",
        "    outer/deep/leaf#14",
    ]


async def test_a_fail_fast_error_names_the_branch_that_raised_it() -> None:
    import asyncio

    async def boom(s: Any) -> None:
        raise ValueError("x")

    async def slow(s: Any) -> None:
        await asyncio.Event().wait()

    chart = flow_chart("A", lambda s: None, id="a").parallel([("b", "B", boom), ("s", "S", slow)], fail_fast=True)
    with pytest.raises(ValueError) as ei:
        await chart.build().run()
    err: Any = ei.value
    assert (err.stage_id, err.__notes__) == ("b#2", ["(agentfootprint: raised in stage b#2)"])
    assert [(c.runtime_stage_id, c.error) for c in err.snapshot.commit_log] == [
        ("a#0", None),
        ("b#2", "ValueError: x"),
        ("s#3", "CancelledError"),
    ]


async def test_a_branch_error_is_raised_at_the_fork() -> None:
    def boom(s: Any) -> None:
        raise ValueError("x")

    chart = flow_chart("A", lambda s: None, id="a").parallel([("b", "B", boom), ("c", "C", lambda s: None)], id="fan")
    with pytest.raises(ParallelBranchError) as ei:
        await chart.build().run()
    err: Any = ei.value
    assert (str(err), err.stage_id) == ("parallel branch(es) failed: b (ValueError)", "fan#1")
    assert list(err.errors) == ["b"] and isinstance(err.__cause__, ValueError)


async def test_mounted_forks_record_branches_joins_and_links(events: Events) -> None:
    r = await mounted_forks().run(recorders=[events])
    assert r.snapshot.subflow_states["outer"] == {"n": 1, "p": 1, "x": 1, "lv": 1}
    assert dump(r.commit_log) == [
        {"idx": 0, "runtime_stage_id": "r#0", "stage_id": "r"},
        {"idx": 1, "kind": "subflow-enter", "namespace": "outer", "runtime_stage_id": "outer#1", "stage_id": "outer"},
        {
            "idx": 2,
            "namespace": "outer",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer/start#2",
            "stage_id": "start",
            "writes": [{"path": "n", "value": 1, "verb": "set"}],
        },
        {
            "idx": 3,
            "kind": "decider",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer/route#3",
            "stage_id": "route",
        },
        {
            "control_idx": 3,
            "idx": 4,
            "namespace": "outer",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer/go#4",
            "stage_id": "go",
        },
        {
            "idx": 5,
            "kind": "selector",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer/pick#5",
            "stage_id": "pick",
        },
        {
            "control_idx": 5,
            "fork_branch": "p",
            "idx": 6,
            "kind": "branch",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer/pick#5",
            "runtime_stage_id": "outer/p#7",
            "stage_id": "p",
            "writes": [{"path": "p", "value": 1, "verb": "set"}],
        },
        {
            "idx": 7,
            "kind": "join",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer/pick#5",
            "runtime_stage_id": "outer/pick#6",
            "stage_id": "pick",
        },
        {
            "fork_branch": "m",
            "idx": 8,
            "kind": "subflow-enter",
            "namespace": "outer/m",
            "parent_runtime_stage_id": "outer/fan#8",
            "runtime_stage_id": "outer/m#10",
            "stage_id": "m",
        },
        {
            "idx": 9,
            "namespace": "outer/m",
            "parent_runtime_stage_id": "outer/m#10",
            "runtime_stage_id": "outer/m/leaf#11",
            "stage_id": "leaf",
            "writes": [{"path": "lv", "value": 1, "verb": "set"}],
        },
        {
            "idx": 10,
            "kind": "subflow-exit",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer/m#10",
            "runtime_stage_id": "outer/m#12",
            "stage_id": "m",
            "writes": [{"path": "lv", "value": 1, "verb": "set"}],
        },
        {
            "fork_branch": "x",
            "idx": 11,
            "kind": "branch",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer/fan#8",
            "runtime_stage_id": "outer/x#9",
            "stage_id": "x",
            "writes": [{"path": "x", "value": 1, "verb": "set"}],
        },
        {
            "idx": 12,
            "kind": "join",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer/fan#8",
            "stage_id": "fan",
        },
        {
            "idx": 13,
            "kind": "subflow-enter",
            "namespace": "outer/deep",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer/deep#13",
            "stage_id": "deep",
        },
        {
            "idx": 14,
            "namespace": "outer/deep",
            "parent_runtime_stage_id": "outer/deep#13",
            "runtime_stage_id": "outer/deep/leaf#14",
            "stage_id": "leaf",
            "writes": [{"path": "lv", "value": 1, "verb": "set"}],
        },
        {
            "idx": 15,
            "kind": "subflow-exit",
            "namespace": "outer",
            "parent_runtime_stage_id": "outer/deep#13",
            "runtime_stage_id": "outer/deep#15",
            "stage_id": "deep",
        },
        {
            "idx": 16,
            "kind": "subflow-exit",
            "parent_runtime_stage_id": "outer#1",
            "runtime_stage_id": "outer#16",
            "stage_id": "outer",
        },
    ]
    heard = [e if e[0] != "on_decision" else e[:2] for e in events.log if e[0] in ("on_fork", "on_decision")]
    assert heard == [
        ("on_decision", "outer/route#3"),
        ("on_decision", "outer/pick#5"),
        ("on_fork", "outer/pick#5", ["p"]),
        ("on_fork", "outer/fan#8", ["x", "m"]),
    ]


async def test_a_merge_conflict_fails_the_join_with_no_writes() -> None:
    chart = flow_chart("A", lambda s: None, id="a").parallel(
        [("x", "X", lambda s: s.set("t", 1)), ("y", "Y", lambda s: s.set("t", 2) or s.set("u", 3))], id="fan"
    )
    with pytest.raises(ParallelMergeConflictError) as ei:
        await chart.build().run()
    join = ei.value.snapshot.commit_log[-1]  # type: ignore[attr-defined]
    assert join.model_dump(exclude_defaults=True) == {
        "error": "ParallelMergeConflictError: parallel branches x, y all wrote key 't'; pass merge= to combine them",
        "failed": True,
        "idx": 3,
        "kind": "join",
        "runtime_stage_id": "fan#1",
        "stage_id": "fan",
        "stage_name": "Parallel",
    }


async def test_branches_count_their_visits_up_to_the_chart_limit() -> None:
    def count(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 2:
            s.break_("two")

    chart = (
        flow_chart("A", lambda s: None, id="a", max_iterations=2)
        .parallel([("x", "X", lambda s: s.set("x", s.get("x", 0) + 1))], id="fan")
        .then("C", count, id="c")
        .loop_to("fan")
        .build()
    )
    r = await chart.run()
    assert r.state == {"x": 2, "n": 2}
    assert [(c.runtime_stage_id, c.kind, c.visit) for c in r.commit_log] == [
        ("a#0", "stage", 1),
        ("x#2", "branch", 1),
        ("fan#1", "join", 1),
        ("c#3", "stage", 1),
        ("x#5", "branch", 2),
        ("fan#4", "join", 2),
        ("c#6", "stage", 2),
    ]


async def test_a_failed_selected_branch_keeps_its_selector_as_parent_and_control() -> None:
    def boom(s: Any) -> None:
        s["w"] = 1
        raise ValueError("x")

    chart = (
        flow_chart("Top", lambda s: None, id="top")
        .selector("Pick", lambda s: ["p", "q"], id="pick")
        .branch("p", "P", boom)
        .branch("q", "Q", lambda s: s.set("q", 1))
        .end()
        .build()
    )
    with pytest.raises(ParallelBranchError) as ei:
        await chart.run()
    err: Any = ei.value
    assert err.stage_id == "pick#1"
    assert [
        (c.runtime_stage_id, c.kind, c.control_idx, c.parent_runtime_stage_id, c.failed, c.fork_branch)
        for c in err.snapshot.commit_log
    ] == [
        ("top#0", "stage", None, None, False, None),
        ("pick#1", "selector", None, None, False, None),
        ("p#3", "branch", 1, "pick#1", True, "p"),
        ("q#4", "branch", 1, "pick#1", False, "q"),
    ]
