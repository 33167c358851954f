"""FlowSnapshot read-outs: the execution tree (subflows and forks nest), state and values per namespace and step."""

from __future__ import annotations

from typing import Any

from agentfootprint.flow import FlowSnapshot, flow_chart


def tree(nodes: list[Any], depth: int = 0) -> list[str]:
    out: list[str] = []
    for n in nodes:
        out.append(f"{'  ' * depth}{n.runtime_stage_id} {n.stage_id} {n.stage_name} {n.kind} {n.idx} {n.failed}")
        out.extend(tree(n.children, depth + 1))
    return out


async def run_mounted() -> Any:
    sub = (
        flow_chart("In", lambda s: s.set("y", s["x"] * 2), id="in")
        .then("Grow", lambda s: s.append("ys", s["y"]), id="grow")
        .build()
    )
    chart = (
        flow_chart("Seed", lambda s: s.set("x", 3), id="seed")
        .subflow("sub", sub, input_map=["x"], output_map=["y"])
        .subflow("sub2", sub, input_map={"x": "y"}, output_map={"z": "y"})
        .parallel([("p", "P", lambda s: s.set("p", 1)), ("q", "Q", lambda s: s.set("q", 2))], id="fork")
        .build()
    )
    return await chart.run()


async def test_execution_tree_nests_subflow_steps_and_fork_branches() -> None:
    r = await run_mounted()
    assert tree(r.snapshot.execution_tree) == [
        "seed#0 seed Seed stage 0 False",
        "sub#1 sub In subflow-enter 1 False",
        "  sub/in#2 in In stage 2 False",
        "  sub/grow#3 grow Grow stage 3 False",
        "sub2#5 sub2 In subflow-enter 5 False",
        "  sub2/in#6 in In stage 6 False",
        "  sub2/grow#7 grow Grow stage 7 False",
        "fork#9 fork Parallel join 11 False",
        "  p#10 p P branch 9 False",
        "  q#11 q Q branch 10 False",
    ]


async def test_a_forged_log_whose_parents_loop_still_gives_a_finite_tree() -> None:
    r = await run_mounted()
    data = r.snapshot.model_dump(mode="json")
    data["commit_log"][0]["parent_runtime_stage_id"] = "sub/in#2"
    data["commit_log"][1]["parent_runtime_stage_id"] = "seed#0"
    forged = FlowSnapshot.model_validate(data)
    lines = tree(forged.execution_tree)
    assert lines[:4] == [
        "sub#1 sub In subflow-enter 1 False",
        "  sub/in#2 in In stage 2 False",
        "    seed#0 seed Seed stage 0 False",
        "  sub/grow#3 grow Grow stage 3 False",
    ]
    assert len(lines) == len({line.split()[0] for line in lines}) == 10


async def test_state_and_value_per_namespace() -> None:
    r = await run_mounted()
    snap = r.snapshot
    assert snap.state_at(3, "sub") == {"x": 3, "y": 6, "ys": [6]}
    assert snap.state_at(7, "sub2") == {"x": 6, "y": 12, "ys": [12]}  # a second mount starts from its own input
    assert snap.state_at(4) == {"x": 3, "y": 6}
    assert snap.value_at("ys", 3, "sub") == [6]
    assert snap.value_at("ys", 7, "sub2") == [12]
    assert snap.value_at("ys", 6, "sub2", default="none") == "none"  # not yet appended in this mount
    assert snap.value_at("y", 8) == 6 and snap.value_at("z", 8) == 12
    assert snap.value_at("x", 0) == 3 and snap.value_at("x", 0, "sub", default=0) == 0
    assert snap.commit("nope#1") is None and snap.commit("q#11").idx == 10  # type: ignore[union-attr]
    assert snap.replay() == r.state


async def test_value_at_folds_appends_and_merges_from_the_last_set_or_delete() -> None:
    def one(s: Any) -> None:
        s.append("xs", 1)
        s.merge("d", {"a": 1})

    def two(s: Any) -> None:
        s["xs"] = [9]
        s.merge("d", {"b": 2})

    def three(s: Any) -> None:
        s.append("xs", 10)
        del s["d"]

    r = (
        await flow_chart("1", one, id="one")
        .then("2", two, id="two")
        .then("3", three, id="three")
        .build()
        .run({"xs": [0], "d": {"z": 0}})
    )
    snap = r.snapshot
    assert [snap.value_at("xs", i) for i in range(3)] == [[0, 1], [9], [9, 10]]
    assert [snap.value_at("d", i, default="gone") for i in range(3)] == [
        {"z": 0, "a": 1},
        {"z": 0, "a": 1, "b": 2},
        "gone",
    ]
    assert snap.value_at("xs", -1) == [0]


async def test_replay_of_an_empty_log_is_the_initial_state() -> None:
    r = await flow_chart("A", lambda s: None, id="a").build().run({"k": [1]})
    empty = r.snapshot.model_copy(update={"commit_log": []})
    assert empty.replay() == {"k": [1]} and empty.execution_tree == []
