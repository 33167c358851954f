"""Folding the log back: ``state_at``, ``value_at`` and ``replay`` agree with each other and with the engine on random
runs (sets, deletes, appends, merges, a mount entered twice that starts empty each time, paused legs)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.flow import FlowSnapshot, flow_chart, pause

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = ("a", "xs", "d", "seed")

ops = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(("a", "seed")), st.integers(0, 9)),
        st.tuples(st.just("delete"), st.sampled_from(KEYS), st.none()),
        st.tuples(st.just("append"), st.just("xs"), st.integers(0, 9)),
        st.tuples(st.just("merge"), st.just("d"), st.dictionaries(st.sampled_from("pq"), st.integers(0, 9))),
        st.tuples(st.just("reset"), st.sampled_from(("xs", "d")), st.none()),
    ),
    max_size=4,
)


def stage_of(program: list[tuple[str, str, Any]]) -> Any:
    def stage(s: Any) -> None:
        for verb, key, value in program:
            if verb == "set":
                s[key] = value
            elif verb == "delete":
                del s[key]
            elif verb == "append":
                s.append(key, value)
            elif verb == "merge":
                s.merge(key, value)
            else:
                s[key] = [] if key == "xs" else {}

    return stage


def check(snap: FlowSnapshot, namespaces: list[str]) -> None:
    for c in snap.commit_log:
        for ns in namespaces:
            state = snap.state_at(c.idx, ns)
            for key in KEYS:
                assert snap.value_at(key, c.idx, ns, default="?") == state.get(key, "?"), (key, c.idx, ns)


@SETTINGS
@given(st.lists(ops, min_size=1, max_size=3), st.lists(ops, min_size=1, max_size=2), st.booleans())
def test_the_log_folds_back_to_the_engines_states(root: list[Any], inner: list[Any], seeded: bool) -> None:
    sub = flow_chart("In0", stage_of(inner[0]), id="i0")
    for i, program in enumerate(inner[1:], 1):
        sub = sub.then(f"In{i}", stage_of(program), id=f"i{i}")

    def count(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        if s["n"] == 2:
            s.break_("twice")

    chart = flow_chart("R0", stage_of(root[0]), id="r0")
    for i, program in enumerate(root[1:], 1):
        chart = chart.then(f"R{i}", stage_of(program), id=f"r{i}")
    built = chart.subflow("m", sub.build()).then("Count", count, id="count").loop_to("m").build()
    r = asyncio.run(built.run({"seed": 5, "xs": [1]} if seeded else None))
    snap = r.snapshot
    assert snap.replay() == r.state
    assert snap.state_at(len(snap.commit_log) - 1, "m") == snap.subflow_states["m"]
    check(snap, ["", "m"])


async def test_a_paused_leg_changes_nothing_and_an_empty_log_replays_the_initial_state() -> None:
    def ask(s: Any) -> None:
        s["a"] = 99
        s["b"] = pause("q")

    chart = flow_chart("Seed", lambda s: s.set("a", 1), id="seed").then("Ask", ask, id="ask").build()
    r = await chart.run({"z": 0})
    done = await chart.resume(r.checkpoint or {}, 2)
    snap = done.snapshot
    assert [c.paused for c in snap.commit_log] == [False, True, False]
    assert snap.state_at(1) == {"z": 0, "a": 1} and snap.value_at("a", 1) == 1
    assert snap.replay() == done.state == {"z": 0, "a": 99, "b": 2}
    check(snap, [""])
    empty = snap.model_copy(update={"commit_log": []})
    assert empty.replay() == {"z": 0} and empty.value_at("z", 0) == 0
