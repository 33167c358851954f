"""freeze and thaw copy plain dicts and lists whole and patch only the nested items: the same result, types and
sharing as the comprehension they replace, for every container kind."""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frozen import _ATOMIC, FrozenDict, FrozenList, freeze, thaw
from tests._typed import typed_shape

Point = namedtuple("Point", "x y")


def _reference_freeze(value: Any, depth: int = 0) -> Any:
    """What freeze did with one comprehension per container (the spec the copy-and-patch path must meet)."""
    if depth > 200:
        raise ValueError("value is nested more than 200 levels deep")
    if type(value) in _ATOMIC:
        return value
    if isinstance(value, dict):
        return FrozenDict({k: _reference_freeze(v, depth + 1) for k, v in value.items()})
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return FrozenList([_reference_freeze(v, depth + 1) for v in value])
    return value


def _reference_thaw(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reference_thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reference_thaw(v) for v in value]
    return value


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3))
CONTAINERS = st.recursive(
    LEAVES | st.builds(Point, st.integers(), st.integers()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.lists(inner, max_size=3).map(FrozenList),
        st.dictionaries(st.text(max_size=2), inner, max_size=3),
        st.dictionaries(st.text(max_size=2), inner, max_size=3).map(FrozenDict),
        st.dictionaries(st.text(max_size=2), inner, max_size=3).map(OrderedDict),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(CONTAINERS)
def test_freeze_and_thaw_match_the_comprehension_they_replace(value: Any) -> None:
    frozen = freeze(value)
    assert typed_shape(frozen) == typed_shape(_reference_freeze(value))
    assert typed_shape(thaw(frozen)) == typed_shape(_reference_thaw(frozen))
    assert typed_shape(thaw(value)) == typed_shape(_reference_thaw(value))


def test_nothing_mutable_is_shared_and_other_values_are_kept_by_reference() -> None:
    marker = object()
    point = Point(1, 2)
    source = {"a": [1, {"b": marker}], "p": point, "t": (1, [2])}
    frozen = freeze(source)
    assert frozen["a"] is not source["a"] and frozen["a"][1] is not source["a"][1]
    assert frozen["a"][1]["b"] is marker and frozen["p"] is point
    assert type(frozen["t"]) is FrozenList and type(frozen["t"][1]) is FrozenList
    plain = thaw(frozen)
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is dict
    assert plain["a"][1]["b"] is marker
    plain["a"][1]["b"] = 0
    assert frozen["a"][1]["b"] is marker


def test_the_depth_limit_still_counts_every_level() -> None:
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    assert thaw(freeze(deep)) == deep
    with pytest.raises(ValueError, match="nested more than 200 levels deep"):
        freeze([deep])
    with pytest.raises(ValueError, match="nested more than 200 levels deep"):
        freeze({"k": deep})


def _mutable_ids(value: Any) -> set[int]:
    if isinstance(value, dict):
        return {id(value)}.union(*(_mutable_ids(v) for v in value.values()))
    if isinstance(value, list):
        return {id(value)}.union(*(_mutable_ids(v) for v in value))
    return set()


async def test_a_run_hands_back_a_plain_state_and_keeps_the_committed_one_in_its_snapshot() -> None:
    def stage(s: Any) -> None:
        s["a"] = {"b": [1, {"c": 2}]}

    r = await flow_chart("S", stage, id="s").build().run({"x": [1]})
    assert r.state == r.snapshot.state == {"x": [1], "a": {"b": [1, {"c": 2}]}}
    assert not _mutable_ids(r.state) & _mutable_ids(r.snapshot.state)
    assert type(r.snapshot.state["a"]) is FrozenDict and type(r.snapshot.state["a"]["b"]) is FrozenList
    assert r.snapshot.state["a"] is r.committed_state()["a"]  # the record holds the committed values: no copy
    with pytest.raises(TypeError):
        r.snapshot.state["a"]["b"].append(3)
    r.state["a"]["b"].append(3)
    assert r.snapshot.state["a"]["b"] == [1, {"c": 2}] and r.raw_state()["a"]["b"] == [1, {"c": 2}]
