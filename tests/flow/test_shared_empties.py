"""freeze makes every empty list, tuple or dict the one shared immutable empty: the same values and types as a fresh
empty, never grown in place by the engine (two keys that start empty stay independent), thawed to fresh copies."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frozen import EMPTY_DICT, EMPTY_LIST, FrozenDict, FrozenList, extend_in_place, freeze, thaw
from tests._typed import typed_shape


@pytest.mark.parametrize("empty", [[], (), FrozenList(), {}, FrozenDict()])
def test_every_empty_freezes_to_the_shared_one_of_its_kind(empty: Any) -> None:
    shared = EMPTY_DICT if isinstance(empty, dict) else EMPTY_LIST
    assert freeze(empty) is shared
    assert freeze({"a": empty, "b": [empty]})["b"][0] is shared
    assert typed_shape(freeze(empty)) == typed_shape(FrozenDict() if isinstance(empty, dict) else FrozenList())
    first, second = thaw(shared), thaw(shared)
    assert first == second and first is not second and type(first) is (dict if isinstance(empty, dict) else list)
    first.append(1) if isinstance(first, list) else first.update(x=1)  # hostile: edit the plain copy
    assert shared == (FrozenDict() if isinstance(empty, dict) else FrozenList()) and not shared


def test_the_shared_empties_refuse_every_mutation_and_are_never_grown_in_place() -> None:
    with pytest.raises(TypeError, match="read-only"):
        EMPTY_LIST.append(1)
    with pytest.raises(TypeError, match="read-only"):
        EMPTY_DICT["k"] = 1
    with pytest.raises(TypeError, match="never grown in place"):
        extend_in_place(EMPTY_LIST, [1])
    assert EMPTY_LIST == [] and EMPTY_DICT == {}


def _run(steps: list[list[tuple[str, str, Any]]], initial: dict[str, Any] | None = None) -> Any:
    """One stage per step; each applies its (verb, key, value) operations through the scope."""

    def stage_for(ops: list[tuple[str, str, Any]]) -> Any:
        def stage(s: Any) -> None:
            for verb, key, value in ops:
                if verb == "set":
                    s[key] = value
                elif verb == "append":
                    s.append(key, value)
                else:
                    s.merge(key, value)

        return stage

    builder = flow_chart("S0", stage_for(steps[0]), id="s0")
    for i, ops in enumerate(steps[1:], start=1):
        builder = builder.then(f"S{i}", stage_for(ops), id=f"s{i}")
    return asyncio.run(builder.build().run(initial))


def test_two_keys_that_start_empty_stay_independent() -> None:
    result = _run(
        [
            [("set", "a", []), ("set", "b", []), ("set", "c", {}), ("set", "d", {})],
            [("append", "a", 1), ("merge", "c", {"x": 1})],
            [("append", "a", 2), ("append", "b", 3)],
        ],
        initial={"e": [], "f": []},
    )
    assert result.state == {"e": [], "f": [], "a": [1, 2], "b": [3], "c": {"x": 1}, "d": {}}
    assert result.committed_state()["d"] is EMPTY_DICT
    assert EMPTY_LIST == [] and EMPTY_DICT == {}
    again = _run([[("append", "e", 9)]], initial={"e": [], "f": []})
    assert again.state == {"e": [9], "f": []}
    assert EMPTY_LIST == []


KEYS = st.sampled_from(["a", "b", "c"])
OPS = st.one_of(
    st.tuples(st.just("set"), KEYS, st.sampled_from([[], (), {}, [0], {"z": 0}])),
    st.tuples(st.just("append"), KEYS, st.integers(0, 9) | st.just([])),
    st.tuples(st.just("merge"), KEYS, st.dictionaries(st.sampled_from(["x", "y"]), st.just([]), max_size=2)),
)


@settings(max_examples=120, deadline=None)
@given(steps=st.lists(st.lists(OPS, max_size=4), min_size=1, max_size=5))
def test_property_state_matches_plain_python_and_the_empties_stay_empty(
    steps: list[list[tuple[str, str, Any]]],
) -> None:
    model: dict[str, Any] = {}
    valid: list[list[tuple[str, str, Any]]] = []
    for ops in steps:  # keep only operations a plain dict model accepts (appending to a dict is refused)
        kept = []
        for verb, key, value in ops:
            current = model.get(key)
            if verb == "set":
                model[key] = thaw(freeze(value))
            elif verb == "append" and (current is None or isinstance(current, list)):
                model[key] = [*(current or []), thaw(freeze(value))]
            elif verb == "merge" and (current is None or isinstance(current, dict)):
                model[key] = {**(current or {}), **thaw(freeze(value))}
            else:
                continue
            kept.append((verb, key, value))
        valid.append(kept)
    result = _run(valid)
    assert result.state == model
    assert EMPTY_LIST == [] and EMPTY_DICT == {}
