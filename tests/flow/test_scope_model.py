"""Scope against a reference model: random sets, deletes, appends and merges on any key, in any order, per stage.

Reads inside a stage see the stage's own writes; a verb on the wrong kind of value raises ``TypeError`` exactly when
the model says so; each commit holds a write for a key exactly when the stage changed that key's value."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frozen import thaw

KEYS = ("a", "b", "c")
ABSENT = "<absent>"
LEAF = st.one_of(st.integers(-2, 2), st.booleans(), st.sampled_from(["", "x"]), st.none(), st.just(1.0))
VALUE = st.one_of(
    LEAF,
    st.lists(LEAF, max_size=3),
    st.dictionaries(st.sampled_from("pq"), LEAF, max_size=2),
)
KEY = st.sampled_from(KEYS)
OP = st.one_of(
    st.tuples(st.just("set"), KEY, VALUE),
    st.tuples(st.just("delete"), KEY, st.none()),
    st.tuples(st.just("append"), KEY, st.lists(LEAF, max_size=2)),
    st.tuples(st.just("merge"), KEY, st.dictionaries(st.sampled_from("pq"), LEAF, max_size=2)),
    st.tuples(st.just("read"), KEY, st.none()),
)
INITIAL = st.dictionaries(KEY, VALUE, max_size=3)
STAGES = st.lists(st.lists(OP, max_size=7), min_size=1, max_size=4)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same(a: Any, b: Any) -> bool:
    """Equality that tells True from 1 and a list from a dict, at any depth (independent of the engine's own)."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


def model_step(state: dict[str, Any], op: tuple[str, str, Any]) -> str | None:
    """Apply ``op`` to the model; return ``"TypeError"`` when the engine must refuse it, else None."""
    verb, key, value = op
    base = state.get(key, ABSENT)
    if verb == "set":
        state[key] = value
    elif verb == "delete":
        state.pop(key, None)
    elif verb == "append":
        if base is not ABSENT and not isinstance(base, list):
            return "TypeError"
        state[key] = [*(base if base is not ABSENT else []), *value]
    elif verb == "merge":
        if base is not ABSENT and not isinstance(base, dict):
            return "TypeError"
        state[key] = {**(base if base is not ABSENT else {}), **value}
    return None


def engine_step(s: Any, op: tuple[str, str, Any]) -> str | None:
    verb, key, value = op
    try:
        if verb == "set":
            s[key] = value
        elif verb == "delete":
            del s[key]
        elif verb == "append":
            s.append(key, *value)
        elif verb == "merge":
            s.merge(key, value)
    except TypeError:
        return "TypeError"
    return None


def chart_for(stages: list[list[Any]], observed: list[Any]) -> Any:
    def make(ops: list[Any]) -> Any:
        def stage(s: Any) -> None:
            for op in ops:
                outcome = engine_step(s, op)
                observed.append((op, outcome, {k: thaw(s.get(k, ABSENT)) for k in KEYS}))

        return stage

    builder = flow_chart("S0", make(stages[0]), id="s0")
    for i, ops in enumerate(stages[1:], start=1):
        builder = builder.then(f"S{i}", make(ops), id=f"s{i}")
    return builder.build()


@SETTINGS
@given(INITIAL, STAGES)
def test_every_verb_sequence_matches_the_model(initial: dict[str, Any], stages: list[list[Any]]) -> None:
    observed: list[Any] = []
    r = asyncio.run(chart_for(stages, observed).run(initial))
    model = dict(initial)
    steps = iter(observed)
    for i, ops in enumerate(stages):
        before = dict(model)
        for op in ops:
            got_op, outcome, seen = next(steps)
            assert got_op == op
            assert outcome == model_step(model, op), op
            assert all(same(seen[k], model.get(k, ABSENT)) for k in KEYS), (op, seen, model)
        commit = r.commit_log[i]
        written = {w.path for w in commit.writes}
        changed = {k for k in KEYS if not same(before.get(k, ABSENT), model.get(k, ABSENT))}
        assert written == changed, (commit.writes, before, model)
        assert len(written) == len(commit.writes)
        assert all(same(r.snapshot.state_at(i).get(k, ABSENT), model.get(k, ABSENT)) for k in KEYS)
    assert same(r.state, model)


@pytest.mark.parametrize(
    ("prelude", "expected"),
    [
        (lambda s: s.delete("k"), {"a": 1}),
        (lambda s: s.set("k", {"y": 2}), {"y": 2, "a": 1}),
        (lambda s: (s.merge("k", {"z": 0}), s.delete("k")), {"a": 1}),
        (lambda s: (s.delete("k"), s.merge("k", {"b": 0})), {"b": 0, "a": 1}),
    ],
    ids=["after-delete", "after-set", "merge-delete-merge", "delete-merge-merge"],
)
async def test_merge_after_delete_or_set_in_the_same_stage(prelude: Any, expected: dict[str, Any]) -> None:
    seen: dict[str, Any] = {}

    def stage(s: Any) -> None:
        prelude(s)
        s.merge("k", {"a": 1})
        seen["k"] = s["k"]

    r = await flow_chart("S", stage, id="s").build().run({"k": {"x": 1}})
    assert seen["k"] == expected and r.state["k"] == expected
    assert [(w.verb, w.value) for w in r.commit_log[0].writes] == [("set", expected)]


async def test_append_after_delete_or_set_in_the_same_stage() -> None:
    def stage(s: Any) -> None:
        s.delete("xs")
        s.append("xs", 1)
        s.append("xs", 2)
        s.set("ys", [7])
        s.append("ys", 8)

    r = await flow_chart("S", stage, id="s").build().run({"xs": [0], "ys": [7]})
    assert r.state == {"xs": [1, 2], "ys": [7, 8]}
    assert [(w.path, w.verb, w.value) for w in r.commit_log[0].writes] == [
        ("xs", "set", [1, 2]),
        ("ys", "append", [8]),
    ]


async def test_appending_nothing_to_a_missing_key_creates_the_empty_list_it_read_back() -> None:
    seen: dict[str, Any] = {}

    def stage(s: Any) -> None:
        s.append("xs")
        seen["xs"] = s["xs"]

    r = await flow_chart("S", stage, id="s").build().run()
    assert seen["xs"] == [] and r.state == {"xs": []}
    assert [(w.verb, w.value) for w in r.commit_log[0].writes] == [("append", [])]


async def test_wrong_kind_refused_after_staging() -> None:
    def stage(s: Any) -> None:
        s.set("k", [1])
        with pytest.raises(TypeError, match="cannot merge into state key 'k': it holds a non-dict value"):
            s.merge("k", {"a": 1})
        s.merge("d", {"a": 1})
        with pytest.raises(TypeError, match="cannot append to state key 'd': it holds a non-list value"):
            s.append("d", 1)
        with pytest.raises(TypeError, match="cannot merge into state key 'n': it holds int"):
            s.merge("n", {"a": 1})
        with pytest.raises(TypeError, match="merge into 'd' needs a dict, got list"):
            s.merge("d", [("a", 1)])  # type: ignore[arg-type]

    r = await flow_chart("S", stage, id="s").build().run({"n": 3})
    assert r.state == {"n": 3, "k": [1], "d": {"a": 1}}


class Writes:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str, Any]] = []

    def on_write(self, frame: Any, key: str, verb: str, value: Any) -> None:
        self.seen.append((frame.runtime_stage_id, key, verb, value))

    def on_emit(self, frame: Any, name: str, payload: Any) -> None:
        self.seen.append((frame.runtime_stage_id, name, "emit", payload))


async def test_recorders_see_every_staged_verb_with_its_key_and_delta() -> None:
    def stage(s: Any) -> None:
        s["a"] = {"x": [1]}
        s.merge("a", {"y": 2})
        s.append("xs", 1, 2)
        del s["gone"]
        s.update("n", lambda v: v + 1, 0)
        s.emit("tick", {"n": 1})

    rec = Writes()
    await flow_chart("S", stage, id="s").build().run({"gone": 1}, recorders=[rec])
    assert rec.seen == [
        ("s#0", "a", "set", {"x": [1]}),
        ("s#0", "a", "merge", {"y": 2}),
        ("s#0", "xs", "append", [1, 2]),
        ("s#0", "gone", "delete", None),
        ("s#0", "n", "set", 1),
        ("s#0", "tick", "emit", {"n": 1}),
    ]


async def test_refusal_texts_name_the_key_cut_at_100_characters() -> None:
    long = "k" * 150

    def stage(s: Any) -> None:
        with pytest.raises(TypeError) as info:
            s.append(long, 1)
        assert str(info.value) == f"cannot append to state key '{'k' * 100}': it holds int"
        with pytest.raises(TypeError) as info:
            s.merge(long, {"a": 1})
        assert str(info.value) == f"cannot merge into state key '{'k' * 100}': it holds int"
        with pytest.raises(TypeError) as info:
            s.emit("")
        assert str(info.value) == "emit name must be a non-empty str"
        with pytest.raises(TypeError):
            s.emit(3)

    await flow_chart("S", stage, id="s").build().run({long: 5})


async def test_key_length_refusal_text() -> None:
    from agentfootprint.flow import InvalidStateKeyError

    def stage(s: Any) -> None:
        s["k" * 513] = 1

    with pytest.raises(InvalidStateKeyError) as info:
        await flow_chart("S", stage, id="s").build().run()
    assert "state key length must be 1..512, got 513" in str(info.value)


def test_a_scope_outside_a_run_records_emits_and_calls_no_recorder() -> None:
    from agentfootprint.flow import Scope
    from agentfootprint.flow._namespace import Namespace

    s = Scope(Namespace("", {"a": 1}))
    s.emit("n" * 250, {"p": [1]})
    assert s._emits == [{"name": "n" * 200, "payload": {"p": [1]}}]
    assert (s.runtime_stage_id, s.run_id, s["a"]) == (None, None, 1)
