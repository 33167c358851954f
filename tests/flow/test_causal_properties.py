"""Causal slices on random diamond and lattice flows, checked against a breadth-first walk over last writers.

Each stage lists every ancestor once, at its shortest distance, with one data edge per key it read from an earlier
stage; limits drop exactly the ancestors past them and say so."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.flow import CausalSlice, FlowSnapshot, causal_chain, decide, flow_chart, slice_for_key

INITIAL = {"i0": 0, "i1": 1}
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def lattices(draw: Any) -> list[tuple[str, list[str]]]:
    """Stage i writes one key (a fresh one or an earlier one again) after reading some earlier keys."""
    n = draw(st.integers(1, 9))
    stages: list[tuple[str, list[str]]] = []
    written: list[str] = []
    for i in range(n):
        readable = sorted({*written, *INITIAL})
        reads = draw(st.lists(st.sampled_from(readable), max_size=4, unique=True))
        key = draw(st.sampled_from(written)) if written and draw(st.booleans()) else f"k{i}"
        stages.append((key, reads))
        if key not in written:
            written.append(key)
    return stages


def chart_for(stages: list[tuple[str, list[str]]]) -> Any:
    def make(key: str, reads: list[str], i: int) -> Any:
        def stage(s: Any) -> None:
            s[key] = [i, *(s[r] for r in reads)]

        return stage

    key, reads = stages[0]
    builder = flow_chart("S0", make(key, reads, 0), id="s0")
    for i, (key, reads) in enumerate(stages[1:], start=1):
        builder = builder.then(f"S{i}", make(key, reads, i), id=f"s{i}")
    return builder.build()


def reference(stages: list[tuple[str, list[str]]]) -> dict[int, list[tuple[int, str]]]:
    """For each stage: (last writer's index, key) per key it read that an earlier stage wrote."""
    last: dict[str, int] = {}
    parents: dict[int, list[tuple[int, str]]] = {}
    for i, (key, reads) in enumerate(stages):
        parents[i] = [(last[r], r) for r in reads if r in last]
        last[key] = i
    return parents


def distances(parents: dict[int, list[tuple[int, str]]], root: int) -> dict[int, int]:
    dist = {root: 0}
    frontier = [root]
    while frontier:
        nxt: list[int] = []
        for node in frontier:
            for p, _ in parents[node]:
                if p not in dist:
                    dist[p] = dist[node] + 1
                    nxt.append(p)
        frontier = nxt
    return dist


@SETTINGS
@given(lattices(), st.data())
def test_slice_is_the_ancestor_set_once_each_at_shortest_depth(stages: Any, data: Any) -> None:
    r = asyncio.run(chart_for(stages).run(dict(INITIAL)))
    root = data.draw(st.integers(0, len(stages) - 1))
    parents = reference(stages)
    dist = distances(parents, root)
    sl = causal_chain(r.snapshot, f"s{root}#{root}")
    ids = sl.runtime_stage_ids
    assert len(ids) == len(set(ids))
    assert ids[0] == f"s{root}#{root}"
    assert {n.idx: n.depth for n in sl.nodes} == dist
    assert [n.depth for n in sl.nodes] == sorted(n.depth for n in sl.nodes)
    assert not sl.truncated and sl.missing is None
    for node in sl.nodes:
        assert [(e.parent_idx, e.key, e.kind) for e in node.edges] == [(p, k, "data") for p, k in parents[node.idx]]
        assert all(e.parent == f"s{e.parent_idx}#{e.parent_idx}" for e in node.edges)
        reads = stages[node.idx][1]
        assert node.initial_keys == [k for k in reads if k in INITIAL and all(k != p for _, p in parents[node.idx])]
        assert node.keys_written == [stages[node.idx][0]]
        assert node.stage_id == f"s{node.idx}" and node.stage_name == f"S{node.idx}"


@SETTINGS
@given(lattices(), st.integers(0, 4), st.integers(0, 6), st.data())
def test_limits_drop_exactly_what_is_past_them(stages: Any, max_depth: int, max_nodes: int, data: Any) -> None:
    r = asyncio.run(chart_for(stages).run(dict(INITIAL)))
    root = data.draw(st.integers(0, len(stages) - 1))
    dist = distances(reference(stages), root)
    sl = causal_chain(r.snapshot, f"s{root}#{root}", max_depth=max_depth, max_nodes=max_nodes)
    kept = {n.idx for n in sl.nodes}
    within = {i for i, d in dist.items() if d <= max_depth}
    assert kept <= within and root in kept
    assert len(kept) == len(sl.nodes) == min(len(within), max(1, max_nodes))
    assert sl.truncated == (kept != set(dist))
    assert all(n.depth == dist[n.idx] for n in sl.nodes)


@SETTINGS
@given(lattices(), st.data())
def test_key_slice_starts_at_the_last_writer_before(stages: Any, data: Any) -> None:
    r = asyncio.run(chart_for(stages).run(dict(INITIAL)))
    before = data.draw(st.one_of(st.none(), st.integers(0, len(stages))))
    key = data.draw(st.sampled_from(sorted({k for k, _ in stages} | set(INITIAL) | {"never"})))
    writers = [i for i, (k, _) in enumerate(stages) if k == key and (before is None or i < before)]
    sl = slice_for_key(r.snapshot, key, before=before)
    assert sl.key == key
    if writers:
        assert sl.root == f"s{writers[-1]}#{writers[-1]}" == sl.runtime_stage_ids[0]
        assert sl.missing is None
    else:
        assert sl.nodes == [] and sl.root is None
        assert sl.missing == ("initial-state" if key in INITIAL else "never-written")


async def test_diamond_lists_the_shared_ancestor_once() -> None:
    chart = (
        flow_chart("A", lambda s: s.set("a", 1), id="a")
        .then("B", lambda s: s.set("b", s["a"]), id="b")
        .then("C", lambda s: s.set("c", s["a"]), id="c")
        .then("D", lambda s: s.set("d", s["b"] + s["c"]), id="d")
        .build()
    )
    r = await chart.run()
    sl = causal_chain(r.snapshot, "d#3")
    assert sl.runtime_stage_ids == ["d#3", "b#1", "c#2", "a#0"]
    assert [n.depth for n in sl.nodes] == [0, 1, 1, 2]
    assert str(sl).splitlines() == [
        "D (d#3) [wrote: d]",
        "  B (b#1) ← via b [wrote: b]",
        "    A (a#0) ← via a [wrote: a]",
        "  C (c#2) ← via c [wrote: c]",
        "    A (a#0) ← via a (see above)",
    ]


async def test_text_labels_for_data_control_and_both() -> None:
    def route(s: Any) -> Any:
        s["why"] = "big"
        return decide(s, [{"when": {"n": {"gt": 1}}, "then": "big", "label": "Big"}], "small")

    chart = (
        flow_chart("Start", lambda s: s.set("n", 2) or s.set("m", 3), id="start")
        .decider("Route", route, id="route")
        .branch("big", "Big", lambda s: s.set("out", [s["why"], s["n"], s["m"]]))
        .branch("small", "Small", lambda s: s.set("out", []))
        .default("small")
        .end()
        .build()
    )
    r = await chart.run()
    assert str(causal_chain(r.snapshot, "big#2")).splitlines() == [
        "Big (big#2) [wrote: out]",
        "  Route (route#1) ← via why and chose this branch [wrote: why]",
        "    Start (start#0) ← via n [wrote: n, m]",
        "  Start (start#0) ← via n, m (see above)",
    ]


async def test_absence_and_empty_texts() -> None:
    r = await flow_chart("A", lambda s: s.set("a", s.get("seed")), id="a").build().run({"seed": 1})
    unknown = causal_chain(r.snapshot, "ghost#9")
    assert (unknown.root, unknown.missing, unknown.nodes) == ("ghost#9", "unknown-stage", [])
    assert str(unknown) == "No causal slice for stage 'ghost#9': unknown-stage."
    never = slice_for_key(r.snapshot, "nope")
    assert (never.root, never.key) == (None, "nope")
    assert str(never) == "No causal slice for key 'nope': never-written."
    assert str(slice_for_key(r.snapshot, "seed")) == "No causal slice for key 'seed': initial-state."
    empty = r.snapshot.model_copy(update={"commit_log": []})
    assert causal_chain(empty, "a#0").model_dump() == CausalSlice(root="a#0", missing="empty-log").model_dump()
    assert slice_for_key(empty, "a").model_dump() == CausalSlice(root=None, key="a", missing="empty-log").model_dump()
    assert str(CausalSlice(root="a#0")) == "(empty slice)"
    sl = causal_chain(r.snapshot, "a#0")
    assert sl.node("nope") is None and sl.node("a#0") is sl.nodes[0]
    assert str(sl).splitlines() == ["A (a#0) [wrote: a]", "  (initial state) ← via seed"]


async def test_default_limits_are_depth_20_and_100_nodes() -> None:
    def writer(n: int) -> Any:
        return lambda s: s.set(f"k{n}", n)

    wide = flow_chart("W0", writer(0), id="w0")
    for i in range(1, 120):
        wide = wide.then(f"W{i}", writer(i), id=f"w{i}")
    wide = wide.then("Sum", lambda s: s.set("total", sum(s[f"k{i}"] for i in range(120))), id="sum")
    r = await wide.build().run()
    sl = causal_chain(r.snapshot, "sum#120")
    assert (len(sl.nodes), sl.truncated) == (100, True)
    assert str(sl).endswith("\n⚠ slice truncated (depth or node limit)")
    assert len(slice_for_key(r.snapshot, "total").nodes) == 100

    def body(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 30:
            s.break_()

    r = await flow_chart("Body", body, id="body").loop_to("body").build().run()
    assert [len(causal_chain(r.snapshot, "body#29").nodes), len(slice_for_key(r.snapshot, "n").nodes)] == [21, 21]


async def test_a_recording_whose_reads_point_at_itself_or_later_gets_no_such_edge() -> None:
    r = await (
        flow_chart("A", lambda s: s.set("a", 1), id="a").then("B", lambda s: s.set("b", s["a"]), id="b").build().run()
    )
    data = r.snapshot.model_dump(mode="json")
    data["commit_log"][1]["reads"] = {"a": 0, "self": 1, "later": 5, "negative": -1}
    forged = FlowSnapshot.model_validate(data)
    sl = causal_chain(forged, "b#1")
    assert [(e.parent_idx, e.key) for e in sl.nodes[0].edges] == [(0, "a")]


async def test_text_label_for_a_control_edge_alone() -> None:
    chart = (
        flow_chart("Start", lambda s: s.set("n", 2), id="start")
        .decider("Route", lambda s: decide(s, [{"when": {"n": {"gt": 1}}, "then": "big"}], "small"), id="route")
        .branch("big", "Big", lambda s: s.set("out", 1))
        .branch("small", "Small", lambda s: s.set("out", 0))
        .default("small")
        .end()
        .build()
    )
    r = await chart.run()
    assert str(causal_chain(r.snapshot, "big#2")).splitlines() == [
        "Big (big#2) [wrote: out]",
        "  Route (route#1) ← chose this branch",
        "    Start (start#0) ← via n [wrote: n]",
    ]
