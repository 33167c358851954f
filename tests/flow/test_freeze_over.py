"""Writing a grown copy of a committed list: the same record as before, committed items reused, nothing shared."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frozen import FrozenDict, FrozenList, freeze, freeze_over


def _grow(s: Any) -> None:
    s["rows"] = [*s.get("rows", ()), {"n": len(s.get("rows", ()))}]


async def test_rewriting_a_grown_list_records_an_append_of_the_new_item() -> None:
    chart = flow_chart("A", _grow, id="a").then("B", _grow, id="b").then("C", _grow, id="c").build()
    result = await chart.run()
    assert result.state["rows"] == [{"n": 0}, {"n": 1}, {"n": 2}]
    log = result.commit_log
    assert [(w.path, w.verb, w.value) for w in log[0].writes] == [("rows", "set", [{"n": 0}])]
    assert [(w.path, w.verb, w.value) for w in log[1].writes] == [("rows", "append", [{"n": 1}])]
    assert [(w.path, w.verb, w.value) for w in log[2].writes] == [("rows", "append", [{"n": 2}])]
    assert log[2].reads == {"rows": 1}


async def test_a_committed_list_put_inside_a_rewrite_is_copied_not_shared() -> None:
    def first(s: Any) -> None:
        s["log"] = ["a"]
        s["box"] = [{"k": 1}]

    def nest(s: Any) -> None:
        s["box"] = [*s["box"], s["log"]]  # the committed list "log" becomes an item of "box"

    def grow(s: Any) -> None:
        s.append("log", "b")

    chart = flow_chart("F", first, id="f").then("N", nest, id="n").then("G", grow, id="g").build()
    result = await chart.run()
    assert result.state == {"log": ["a", "b"], "box": [{"k": 1}, ["a"]]}
    assert [(w.path, w.verb, w.value) for w in result.commit_log[1].writes] == [("box", "append", [["a"]])]


def test_a_mutated_input_item_is_frozen_afresh() -> None:
    committed = freeze([{"a": 1}, [2]])
    item: dict[str, Any] = {"a": 1}
    out = freeze_over([committed[0], item, [3]], committed)
    assert out == [{"a": 1}, {"a": 1}, [3]]
    assert out[0] is committed[0]
    assert type(out[1]) is FrozenDict and out[1] is not item
    assert type(out[2]) is FrozenList
    item["a"] = 9
    assert out[1] == {"a": 1}
    with pytest.raises(TypeError):
        out[1]["a"] = 2


def test_an_item_moved_to_another_position_is_frozen_again() -> None:
    committed = freeze([{"a": 1}, {"b": 2}])
    out = freeze_over([committed[1], committed[0]], committed)
    assert out == [{"b": 2}, {"a": 1}]
    assert out[0] is not committed[1] and out[1] is not committed[0]


def test_too_deep_a_new_item_is_still_refused() -> None:
    deep: Any = 1
    for _ in range(250):
        deep = [deep]
    with pytest.raises(ValueError, match="nested more than 200 levels"):
        freeze_over([deep], freeze([]))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_json, max_size=5), st.lists(_json, max_size=3), st.integers(0, 5))
def test_freeze_over_equals_freeze(old: list[Any], new: list[Any], keep: int) -> None:
    committed = freeze(old)
    value = [*committed[:keep], *new]
    out = freeze_over(value, committed)
    assert out == freeze(value)
    assert type(out) is FrozenList
    for i, item in enumerate(out):
        if i < min(keep, len(committed)):
            assert item is committed[i]
