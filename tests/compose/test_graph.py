"""Graph (R003-16): conditional edges, cycles under a mandatory budget, pause/resume in any node, backtrack via."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Graph, Sequence, Workflow
from agentfootprint.compose import END, CompositionBuildError, GraphBudgetError
from agentfootprint.explain import backtrack
from agentfootprint.flow import pause
from tests.compose._support import asker, echo, witness


def counter_graph(budget: int, *, on_exhausted: Any = "finish") -> Graph:
    return (
        Graph.create("count")
        .node("inc", lambda v: (v.get("inc") or 0) + 1, inputs=["inc"])
        .edge("inc", "inc", when=lambda n: n < 3, label="below three")
        .max_steps(budget, on_exhausted=on_exhausted)
        .build()
    )


async def test_R003_16_graph_follows_conditional_edges_through_a_cycle() -> None:
    """R003-16: Graph exists; conditional edges pick the next node, a cycle runs until its condition fails."""
    routed: list[tuple[Any, Any]] = []
    g = (
        Graph.create("g")
        .node("a", echo("A"))
        .node("b", echo("B"))
        .node("c", echo("C"))
        .edge("a", "b")
        .edge("b", "a", when=lambda out: out.count("B(") < 2, label="not enough B")
        .edge("b", "c", label="enough")
        .max_steps(10)
        .build()
    )
    g.on("composition.route_decided", lambda e: routed.append((e.payload["from"], e.payload["chosen"])))
    result = await g.run("x")
    assert result.answer == "C(B(A(B(A(x)))))" and result.stopped_early is None
    assert g.last_path() == ["a", "b", "a", "b", "c"]
    assert routed == [(None, "a"), ("a", "b"), ("b", "a"), ("a", "b"), ("b", "c"), ("c", END)]
    text = "\n".join(e.text for e in g.last_narrative())
    assert '"not enough B"' in text and '"enough"' in text


async def test_R003_16_route_evidence_names_the_output_each_edge_read() -> None:
    """R003-16: each route decision records every edge's evaluation and the output it read."""
    g = Graph.create("g").node("a", echo("A")).node("b", echo("B")).edge("a", "b", when=lambda o: "x" in o).build()
    await g.run("x")
    snap = g.last_snapshot()
    assert snap is not None
    routes = [c for c in snap.commit_log if c.stage_id == "route" and not c.namespace]
    assert [c.decision["chosen"] for c in routes] == [["a"], ["b"], ["final"]]  # type: ignore[index]
    rule = routes[1].decision["rules"][0]  # type: ignore[index]
    assert rule["matched"] is True and rule["inputs"][0]["key"] == "out:a"


async def test_R003_16_budget_is_mandatory_for_a_cycle_and_ends_the_run_honestly() -> None:
    """R003-16: cycles run under a mandatory budget; spending it is recorded and reported, never silent."""
    with pytest.raises(CompositionBuildError, match=r"has a cycle and needs a budget: \.max_steps\(n\)"):
        Graph.create("g").node("a", echo("A")).edge("a", "a").build()
    g = counter_graph(2)
    result = await g.run("go")
    assert result.output == 2 and g.last_path() == ["inc", "inc"]
    assert result.stopped_early is not None
    assert (result.stopped_early.reason, result.stopped_early.iteration) == ("max-steps", 2)
    snap = g.last_snapshot()
    assert snap is not None
    last_route = [c for c in snap.commit_log if c.stage_id == "route" and not c.namespace][-1]
    labels = [(r["label"], r["matched"]) for r in last_route.decision["rules"]]  # type: ignore[index]
    assert labels == [("below three", True), ("budget of 2 steps spent", True)]
    assert last_route.decision["chosen"] == ["final"]  # type: ignore[index]
    roomy = await counter_graph(10).run("go")
    assert roomy.output == 3 and roomy.stopped_early is None


async def test_budget_can_raise_instead() -> None:
    g = counter_graph(2, on_exhausted="raise")
    with pytest.raises(GraphBudgetError) as info:
        await g.run("go")
    assert info.value.code == "ERR_GRAPH_BUDGET_SPENT" and (info.value.steps, info.value.node) == (2, "inc")
    assert g.last_snapshot() is not None  # the record of the run that spent it is kept


async def test_acyclic_graph_needs_no_budget_and_no_edge_ends_the_run() -> None:
    g = Graph.create("g").node("a", echo("A")).node("b", echo("B")).edge("a", "b").build()
    assert g.max_steps == 2
    result = await g.run("x")
    assert result.answer == "B(A(x))" and g.last_path() == ["a", "b"]
    ends = (
        Graph.create("g")
        .node("a", echo("A"))
        .node("b", echo("B"))
        .edge("a", END, when=lambda out: out.startswith("A"))
        .edge("a", "b")
        .build()
    )
    assert (await ends.run("x")).answer == "A(x)"


async def test_nodes_read_declared_outputs_present_so_far() -> None:
    g = (
        Graph.create("g")
        .node("start", echo("S"))
        .node("left", echo("L"))
        .node("right", echo("R"))
        .node("join", lambda v: sorted(v), inputs=["input", "left", "right"])
        .edge("start", "left", when=lambda o: True)
        .edge("left", "join")
        .edge("start", "right")
        .edge("right", "join")
        .build()
    )
    result = await g.run("x")
    assert result.output == ["input", "left"] and g.last_path() == ["start", "left", "join"]


def test_build_refuses_broken_shapes_by_name() -> None:
    def base() -> Any:
        return Graph.create("g").node("a", echo("A")).node("b", echo("B"))

    with pytest.raises(CompositionBuildError, match="edge a -> ghost names no node"):
        base().edge("a", "ghost").build()
    with pytest.raises(CompositionBuildError, match="edge ghost -> END names no node"):
        base().edge("ghost", END).build()
    with pytest.raises(CompositionBuildError, match="a -> b has no condition and comes first"):
        base().edge("a", "b").edge("a", END).build()
    with pytest.raises(CompositionBuildError, match="node 'b' is unreachable from 'a'"):
        base().build()
    with pytest.raises(CompositionBuildError, match="start names no node"):
        base().edge("a", "b").start("ghost").build()
    with pytest.raises(CompositionBuildError, match="reads 'ghost', which is not a node"):
        Graph.create("g").node("a", echo("A"), inputs=["ghost"]).build()
    with pytest.raises(CompositionBuildError, match="reserved"):
        Graph.create("g").node("END", echo("A"))
    with pytest.raises(CompositionBuildError, match="two nodes named 'a'"):
        base().node("a", echo("C"))
    with pytest.raises(CompositionBuildError, match="when must be a function"):
        base().edge("a", "b", when="yes")  # type: ignore[arg-type]
    with pytest.raises(CompositionBuildError, match="at least one node"):
        Graph.create("g").build()
    for bad in (0, 501, True, "3", 2.5):
        with pytest.raises(CompositionBuildError, match=r"max_steps\(\) must be an int in 1\.\.500"):
            base().max_steps(bad)  # type: ignore[arg-type]
    with pytest.raises(CompositionBuildError, match="on_exhausted must be"):
        base().max_steps(3, on_exhausted="explode")  # type: ignore[arg-type]


async def test_a_raising_edge_condition_is_recorded_and_the_edge_not_taken() -> None:
    def broken(out: str) -> bool:
        raise ValueError("boom")

    g = Graph.create("g").node("a", echo("A")).node("b", echo("B")).edge("a", "b", when=broken).build()
    result = await g.run("x")
    assert result.answer == "A(x)"
    snap = g.last_snapshot()
    assert snap is not None
    rule = [c for c in snap.commit_log if c.stage_id == "route" and not c.namespace][1].decision["rules"][0]  # type: ignore[index]
    assert rule["matched"] is False and rule["error"] == "ValueError: boom"


async def test_R003_16_pause_inside_a_node_on_a_later_lap_resumes_the_cycle() -> None:
    """R003-16: resumable after a pause inside any node — an agent node and a function node, on any lap."""

    def gate(values: dict[str, Any]) -> str:
        return str(pause({"question": f"go on after {values['ask']}?"}))

    def build() -> Graph:
        return (
            Graph.create("g")
            .node("a", echo("A"))
            .node("ask", asker())
            .node("gate", gate, inputs=["ask"])
            .edge("a", "ask")
            .edge("ask", "gate")
            .edge("gate", "a", when=lambda out: out == "again")
            .max_steps(10)
            .build()
        )

    first = await build().run("x", identity={"tenant": "acme"})
    assert first.status == "paused" and first.question == "Which order?"
    answers = ["A-1", "again", "A-2", "stop"]
    questions = []
    paused = first
    for answer in answers:
        fresh = build()
        paused = await fresh.resume(json.loads(json.dumps(paused.checkpoint)), answer)
        questions.append(paused.question if paused.status == "paused" else None)
    assert questions == ["go on after order A-1?", "Which order?", "go on after order A-2?", None]
    assert paused.answer == "stop" and paused.run_id == first.run_id
    assert fresh.last_path() == ["a", "ask", "gate", "a", "ask", "gate"]


async def test_R003_16_members_serve_the_graph_run_across_a_resume() -> None:
    """R003-16 with R003-01/02/11: every lap's member sees the outermost run id and identity, resumed leg too."""
    seen: list[tuple[str, Any]] = []

    def build() -> Graph:
        return (
            Graph.create("g")
            .node("w", witness("w", seen))
            .node("ask", asker())
            .edge("w", "ask")
            .edge("ask", "w", when=lambda out: out.endswith("again"))
            .max_steps(4)
            .build()
        )

    paused = await build().run("x", identity={"tenant": "acme", "principal": "dana"})
    again = await build().resume(paused.checkpoint or {}, "again")
    done = await build().resume(again.checkpoint or {}, "stop")
    assert done.status == "completed" and len(seen) == 2
    assert {(r, i.tenant, i.principal) for r, i in seen} == {(paused.run_id, "acme", "dana")}


async def test_R003_16_backtrack_crosses_nodes_with_via_hops() -> None:
    """R003-16: explainable across nodes — a fact of the first node reaches the last node's answer via hops."""
    g = (
        Graph.create("g")
        .node("research", echo("R", fact="planted"))
        .node("check", lambda v: v["research"].upper())
        .node("write", echo("W", fact="tone"))
        .edge("research", "check")
        .edge("check", "write")
        .build()
    )
    await g.run("q")
    bt = backtrack(g)
    assert bt.trigger.startswith("write/call-llm")
    planted = bt.source("planted")
    assert planted is not None
    assert [h.detail for h in planted.hops if h.kind == "via"] == ["out:check made by check from research's answer"]
    assert bt.source("tone") is not None


async def test_graphs_nest_both_ways() -> None:
    inner = Graph.create("inner").node("a", echo("A")).node("b", echo("B")).edge("a", "b").build()
    outer = Sequence.create("outer").step("g", inner).step("z", echo("Z")).build()
    assert (await outer.run("x")).answer == "Z(B(A(x)))"
    wf = Workflow.create("wf").step("w", echo("W")).build()
    holder = Graph.create("holder").node("wf", wf).node("tail", lambda v: v["wf"] + "!").edge("wf", "tail").build()
    assert (await holder.run("x")).answer == "W(x)!"


async def test_without_rebuilds_the_same_graph() -> None:
    g = counter_graph(5)
    g2 = Graph.create("g").node("a", echo("A", fact="f1")).node("b", echo("B")).edge("a", "b").build()
    clone = g2.without("f1")
    assert isinstance(clone, Graph) and clone.nodes == ["a", "b"] and clone.source_ids() == {}
    assert [(e.source, e.target) for e in clone.edges] == [("a", "b")]
    assert (await g.run("x")).output == 3


@given(
    st.integers(min_value=1, max_value=5),
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 3)), max_size=12),
    st.integers(min_value=1, max_value=12),
)
@settings(max_examples=40, deadline=None)
def test_any_graph_follows_its_edges_within_budget(n: int, raw_edges: list[Any], budget: int) -> None:
    """Property: the visited path starts at the start node, follows a holding edge each step, never exceeds budget."""
    names = [f"n{i}" for i in range(n)]
    builder = Graph.create("p")
    for name in names:
        builder = builder.node(name, lambda v, name=name: f"{name}:{len(v)}", inputs=["input"])
    edges: list[tuple[str, str, int]] = []
    for s, t, k in raw_edges:
        if s < n and t < n:
            edges.append((names[s], names[t], k))
    for s, t, k in edges:
        builder = builder.edge(s, t, when=lambda out, k=k: len(out) % 4 != k)
    for i in range(n - 1):  # a fallback chain n0 -> n1 -> ... keeps every node reachable
        builder = builder.edge(names[i], names[i + 1], when=lambda out: True, label="chain")
    g = builder.max_steps(budget).build()
    result = g.run_sync("x")
    path = g.last_path()
    assert path[0] == "n0" and 1 <= len(path) <= budget
    for here, there in itertools.pairwise(path):
        out = f"{here}:1"
        holding = [t for s, t, k in edges if s == here and len(out) % 4 != k]
        chain = [names[names.index(here) + 1]] if names.index(here) < n - 1 else []
        assert there == (holding + chain)[0]
    assert result.output == f"{path[-1]}:1"
    assert g.last_path() == (g.run_sync("x") and g.last_path())  # deterministic
