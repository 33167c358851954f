"""Properties: log replay equals final state, delta replay equals full replay, net-change commits, recorder
isolation, and pause-anywhere-then-resume equals an uninterrupted run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.flow import flow_chart, pause
from agentfootprint.flow._frozen import deep_equal, thaw
from agentfootprint.flow.snapshot import FlowSnapshot

KEYS = st.sampled_from(["a", "b", "c", "xs"])
SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), st.text(max_size=3), st.none())
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, SCALARS),
        st.tuples(st.just("set_list"), st.just("xs"), st.lists(SCALARS, max_size=3)),
        st.tuples(st.just("append"), st.just("xs"), SCALARS),
        st.tuples(st.just("extend_by_set"), st.just("xs"), SCALARS),
        st.tuples(st.just("merge"), st.just("d"), st.dictionaries(st.sampled_from("pq"), SCALARS, max_size=2)),
        st.tuples(st.just("delete"), KEYS, st.none()),
    ),
    max_size=6,
)
STAGES = st.lists(OPS, min_size=1, max_size=6)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def apply_op(s: Any, op: tuple[str, str, Any]) -> None:
    kind, key, value = op
    if kind == "set":
        s[key] = value
    elif kind == "set_list":
        s[key] = value
    elif kind == "append":
        if isinstance(s.get(key), list) or key not in s:
            s.append(key, value)
    elif kind == "extend_by_set":
        cur = s.get(key)
        if isinstance(cur, list):
            s[key] = [*cur, value]
    elif kind == "merge":
        if isinstance(s.get(key), dict) or key not in s:
            s.merge(key, value)
    elif key in s:
        del s[key]


def model_apply(state: dict[str, Any], op: tuple[str, str, Any]) -> None:
    kind, key, value = op
    if kind in ("set", "set_list"):
        state[key] = value if not isinstance(value, list) else list(value)
    elif kind == "append":
        if isinstance(state.get(key), list) or key not in state:
            state[key] = [*state.get(key, []), value]
    elif kind == "extend_by_set":
        if isinstance(state.get(key), list):
            state[key] = [*state[key], value]
    elif kind == "merge":
        if isinstance(state.get(key), dict) or key not in state:
            state[key] = {**state.get(key, {}), **value}
    else:
        state.pop(key, None)


def chart_for(stages: list[list[Any]], pause_at: int | None = None) -> Any:
    def make(ops: list[Any], i: int) -> Any:
        def stage(s: Any) -> None:
            if i == pause_at:
                s["answer"] = pause("q")
            for op in ops:
                apply_op(s, op)

        return stage

    builder = flow_chart("S0", make(stages[0], 0), id="s0")
    for i, ops in enumerate(stages[1:], start=1):
        builder = builder.then(f"S{i}", make(ops, i), id=f"s{i}")
    return builder.build()


@FAST
@given(STAGES)
def test_replay_of_log_equals_final_state_and_model(stages: list[list[Any]]) -> None:
    r = asyncio.run(chart_for(stages).run())
    model: dict[str, Any] = {}
    for ops in stages:
        for op in ops:
            model_apply(model, op)
    assert r.state == model
    assert r.snapshot.replay() == r.state


@FAST
@given(STAGES)
def test_delta_replay_equals_full_replay_at_every_step(stages: list[list[Any]]) -> None:
    r = asyncio.run(chart_for(stages).run())
    model: dict[str, Any] = {}
    for i, ops in enumerate(stages):
        for op in ops:
            model_apply(model, op)
        assert r.snapshot.state_at(i) == model


@FAST
@given(STAGES)
def test_commits_are_net_change_only(stages: list[list[Any]]) -> None:
    r = asyncio.run(chart_for(stages).run())
    for c in r.commit_log:
        before = r.snapshot.state_at(c.idx - 1) if c.idx else {}
        after = r.snapshot.state_at(c.idx)
        for w in c.writes:
            assert not deep_equal(before.get(w.path, "<missing>"), after.get(w.path, "<missing>"))
        assert len({w.path for w in c.writes}) == len(c.writes)


@FAST
@given(STAGES)
def test_snapshot_json_roundtrip_replays_identically(stages: list[list[Any]]) -> None:
    r = asyncio.run(chart_for(stages).run())
    again = FlowSnapshot.model_validate_json(r.snapshot.model_dump_json())
    assert again.replay() == r.state


@FAST
@given(STAGES, st.data())
def test_pause_anywhere_then_resume_equals_uninterrupted(stages: list[list[Any]], data: Any) -> None:
    at = data.draw(st.integers(0, len(stages) - 1))
    uninterrupted = asyncio.run(chart_for(stages, pause_at=-1).run())
    paused = asyncio.run(chart_for(stages, pause_at=at).run())
    assert paused.paused
    cp = json.loads(json.dumps(paused.checkpoint))
    resumed = asyncio.run(chart_for(stages, pause_at=at).resume(cp, "ans"))
    expected = dict(uninterrupted.state)
    if "answer" not in expected:
        expected_model: dict[str, Any] = {}
        for i, ops in enumerate(stages):
            if i == at:
                expected_model["answer"] = "ans"
            for op in ops:
                model_apply(expected_model, op)
        expected = expected_model
    assert resumed.state == expected
    ids = [c.runtime_stage_id for c in resumed.commit_log]
    assert len(ids) == len(set(ids))


class Chaos:
    def __init__(self, hooks: list[str]) -> None:
        for h in hooks:
            setattr(self, h, self._boom)

    def _boom(self, *args: Any) -> None:
        raise RuntimeError("chaos")


@FAST
@given(
    STAGES,
    st.lists(
        st.sampled_from(["on_stage_start", "on_read", "on_write", "on_commit", "on_run_end", "on_run_start"]),
        max_size=6,
    ),
)
def test_recorders_cannot_break_a_run(stages: list[list[Any]], hooks: list[str]) -> None:
    plain = asyncio.run(chart_for(stages).run())
    chaotic = asyncio.run(chart_for(stages).run(recorders=[Chaos(hooks)]))
    assert chaotic.state == plain.state
    assert thaw(chaotic.snapshot.state) == plain.snapshot.state


@FAST
@given(STAGES)
def test_value_at_equals_state_at_for_every_key_and_step(stages: list[list[Any]]) -> None:
    r = asyncio.run(chart_for(stages).run())
    for c in r.commit_log:
        state = r.snapshot.state_at(c.idx)
        for key in ("a", "b", "c", "xs", "d"):
            assert r.snapshot.value_at(key, c.idx, default="<absent>") == state.get(key, "<absent>")
