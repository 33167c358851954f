"""Read-only committed containers pinned exactly: refusals, copies, the depth limit, equality and list tails."""

from __future__ import annotations

import copy
import math
import pickle
from collections import namedtuple
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.flow._frozen import (
    EMPTY_DICT,
    EMPTY_LIST,
    FrozenDict,
    FrozenList,
    deep_equal,
    extend_in_place,
    freeze,
    freeze_over,
    list_tail_if_extended,
    thaw,
)

READ_ONLY = (
    "committed state is read-only: write a new value back with scope[key] = ..., "
    "scope.append(key, item) or scope.merge(key, {...})"
)
TOO_DEEP = "value is nested more than 200 levels deep"


def _nest(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.__setitem__("a", 2),
        lambda d: d.__delitem__("a"),
        lambda d: d.clear(),
        lambda d: d.pop("a"),
        lambda d: d.popitem(),
        lambda d: d.setdefault("b", 1),
        lambda d: d.update(b=1),
        lambda d: d.__ior__({"b": 1}),
    ],
)
def test_a_frozen_dict_refuses_every_mutation_with_the_same_message(mutate: Any) -> None:
    frozen = freeze({"a": 1})
    with pytest.raises(TypeError) as caught:
        mutate(frozen)
    assert str(caught.value) == READ_ONLY
    assert frozen == {"a": 1}


@pytest.mark.parametrize(
    "mutate",
    [
        lambda v: v.__setitem__(0, 9),
        lambda v: v.__delitem__(0),
        lambda v: v.__iadd__([3]),
        lambda v: v.__imul__(2),
        lambda v: v.append(3),
        lambda v: v.extend([3]),
        lambda v: v.insert(0, 3),
        lambda v: v.pop(),
        lambda v: v.remove(1),
        lambda v: v.clear(),
        lambda v: v.sort(),
        lambda v: v.reverse(),
    ],
)
def test_a_frozen_list_refuses_every_mutation_with_the_same_message(mutate: Any) -> None:
    frozen = freeze([2, 1])
    with pytest.raises(TypeError) as caught:
        mutate(frozen)
    assert str(caught.value) == READ_ONLY
    assert frozen == [2, 1]


def test_copies_and_pickles_of_frozen_values_are_plain_and_mutable() -> None:
    frozen = freeze({"a": [1, {"b": 2}]})
    shallow = copy.copy(frozen)
    assert type(shallow) is dict and shallow == {"a": [1, {"b": 2}]}
    assert shallow["a"] is frozen["a"]
    deep = copy.deepcopy(frozen)
    assert type(deep) is dict and type(deep["a"]) is list and type(deep["a"][1]) is dict
    deep["a"][1]["b"] = 3
    assert frozen["a"][1]["b"] == 2
    assert pickle.loads(pickle.dumps(frozen)) == {"a": [1, {"b": 2}]}
    assert type(pickle.loads(pickle.dumps(frozen))) is dict
    assert frozen.__reduce__() == (dict, ({"a": frozen["a"]},))

    items = freeze([1, [2]])
    assert type(copy.copy(items)) is list and copy.copy(items) == [1, [2]]
    assert type(copy.deepcopy(items)[1]) is list
    assert type(pickle.loads(pickle.dumps(items))) is list
    assert items.__reduce__() == (list, ([1, items[1]],))


def test_extend_in_place_grows_a_frozen_list_without_copying_it() -> None:
    items = freeze([1])
    extend_in_place(items, [2, 3])
    assert items == [1, 2, 3] and type(items) is FrozenList


def test_freeze_accepts_200_levels_and_refuses_201() -> None:
    assert thaw(freeze(_nest(200, 1))) == _nest(200, 1)
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze(_nest(201, 1))
    # An empty container one level further holds nothing to refuse.
    assert thaw(freeze(_nest(200, []))) == _nest(200, [])
    assert thaw(freeze(_nest(200, {}))) == _nest(200, {})
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze(_nest(200, [1]))
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze(_nest(200, {"k": 1}))
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze(_nest(201, []))
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze(1, 201)
    assert freeze(1, 200) == 1


def test_freeze_turns_tuples_into_frozen_lists_and_keeps_named_tuples_and_other_values() -> None:
    assert type(freeze((1, 2))) is FrozenList and freeze((1, 2)) == [1, 2]
    point = namedtuple("point", "x y")(1, 2)
    assert freeze(point) is point
    marker = object()
    assert freeze(marker) is marker
    frozen = freeze({"t": (1, [2])})
    assert type(frozen) is FrozenDict and type(frozen["t"]) is FrozenList and type(frozen["t"][1]) is FrozenList


def test_freeze_over_keeps_committed_items_by_identity_and_freezes_the_rest() -> None:
    committed = freeze([{"a": 1}, {"b": 2}])
    written = [committed[0], {"b": 2}, {"c": [3]}]
    result = freeze_over(written, committed)
    assert type(result) is FrozenList and result == [{"a": 1}, {"b": 2}, {"c": [3]}]
    assert result[0] is committed[0]
    assert result[1] is not committed[1] and type(result[1]) is FrozenDict
    assert type(result[2]["c"]) is FrozenList


def test_thaw_returns_plain_fresh_containers() -> None:
    frozen = freeze({"a": [1, {"b": (2,)}]})
    plain = thaw(frozen)
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is dict
    assert plain == {"a": [1, {"b": [2]}]}
    assert thaw(7) == 7


class _Raises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparison")

    __hash__ = object.__hash__


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (True, 1, False),
        (1, True, False),
        (True, True, True),
        (False, 0, False),
        (1, 1.0, True),
        (math.nan, math.nan, True),
        (math.nan, 1.0, False),
        ({"a": 1}, {"a": 1}, True),
        ({"a": 1}, {"b": 1}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": True}, {"a": 1}, False),
        ({"a": 1}, [("a", 1)], False),
        ([1, 2], [1, 2], True),
        ([1, 2], [1, 2, 3], False),
        ([1, True], [1, 1], False),
        ([1], {"0": 1}, False),
        ("x", ["x"], False),
        ("x", {"x": 1}, False),
        (_Raises(), 1, False),
        ("a", "a", True),
        (None, None, True),
        (None, 0, False),
    ],
)
def test_deep_equal_cases(a: Any, b: Any, equal: bool) -> None:
    assert deep_equal(a, b) is equal


def test_deep_equal_is_true_for_the_same_object_without_comparing() -> None:
    odd = _Raises()
    assert deep_equal(odd, odd) is True


def test_list_tail_if_extended() -> None:
    base = [{"a": 1}, 2]
    assert list_tail_if_extended(base, [{"a": 1}, 2, 3, 4]) == [3, 4]
    assert list_tail_if_extended(base, [{"a": 1}, 2]) == []
    assert list_tail_if_extended(base, [{"a": 1}]) is None
    assert list_tail_if_extended(base, [{"a": 2}, 2, 3]) is None
    assert list_tail_if_extended(base, [{"a": 1}, True, 3]) is None
    assert list_tail_if_extended([], [1]) == [1]
    new = [*base, 5]
    tail = list_tail_if_extended(base, new)
    assert tail == [5] and type(tail) is list
    assert tail is not new
    frozen_new = freeze([1, 2])
    assert type(list_tail_if_extended([1], frozen_new)) is list


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=12,
)


@given(json_values)
def test_freeze_then_thaw_round_trips_and_deep_equal_agrees(value: Any) -> None:
    frozen = freeze(value)
    assert deep_equal(frozen, value) and deep_equal(thaw(frozen), value)
    assert thaw(frozen) == value


@given(st.lists(json_values, max_size=4), st.lists(json_values, max_size=3))
def test_list_tail_of_a_grown_list_is_what_was_added(base: list[Any], added: list[Any]) -> None:
    assert list_tail_if_extended(base, [*base, *added]) == added
    if base:
        assert list_tail_if_extended(base, base[:-1]) is None


def test_the_depth_limit_counts_through_dicts_and_written_list_items() -> None:
    def nest_dicts(depth: int) -> Any:
        value: Any = 1
        for _ in range(depth):
            value = {"k": value}
        return value

    assert thaw(freeze(nest_dicts(200))) == nest_dicts(200)
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze(nest_dicts(201))
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze({"a": _nest(200, 1)})
    # A written list's items sit one level below the list itself.
    assert thaw(freeze_over([_nest(199, 1)], [])) == [_nest(199, 1)]
    with pytest.raises(ValueError, match=f"^{TOO_DEEP}$"):
        freeze_over([_nest(200, 1)], [])


def test_a_deep_copy_never_aliases_the_shared_empties_across_fields() -> None:
    """Commits point many fields at the one shared empty; a deep copy (``model_copy(deep=True)``) must not turn them
    into one plain list that an edit of one field would change in all."""
    holder = {"writes": freeze([]), "paths": freeze([]), "meta": freeze({}), "more": freeze({}), "full": freeze([1])}
    assert holder["writes"] is holder["paths"] is EMPTY_LIST and holder["meta"] is holder["more"] is EMPTY_DICT
    deep = copy.deepcopy(holder)
    assert deep["writes"] is EMPTY_LIST and deep["meta"] is EMPTY_DICT
    with pytest.raises(TypeError):
        deep["paths"].append("x")
    assert deep["writes"] == [] and holder["writes"] == []
    deep["full"].append(2)
    assert type(deep["full"]) is list and holder["full"] == [1]
