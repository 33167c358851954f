"""Receipt digests encode through the C encoder directly: the same text as ``json.dumps`` with the canonical options."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.extensions.receipts import canonical_json, digest


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(JSONISH)
def test_canonical_json_is_json_dumps_with_the_canonical_options(value: Any) -> None:
    assert canonical_json(value) == _dumps(value)
    assert digest(value) == hashlib.sha256(_dumps(value).encode()).hexdigest()


def test_exact_text_for_sorted_keys_unicode_specials_and_unknown_values() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd"

    value = {"b": [1, 2.5, None, True], "a": "é\n", "c": {"z": Odd(), "y": math.inf}}
    assert canonical_json(value) == '{"a":"é\\n","b":[1,2.5,null,true],"c":{"y":Infinity,"z":"odd"}}'
    assert canonical_json("plain") == '"plain"'
    assert canonical_json(7) == "7"


def test_a_cycle_is_refused_as_json_dumps_refuses_it() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        canonical_json(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        canonical_json(loop)  # a fresh marker table each call: the first refusal leaves nothing behind


def test_a_cycle_inside_a_value_is_refused_and_later_values_encode_as_before() -> None:
    inner: dict[str, Any] = {"k": 1}
    inner["self"] = {"back": inner}
    with pytest.raises(ValueError, match="Circular reference detected"):
        canonical_json({"a": [inner]})
    assert canonical_json({"a": [{"k": 1}]}) == _dumps({"a": [{"k": 1}]})


def test_a_value_nested_too_deep_is_refused_as_json_dumps_refuses_it() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        _dumps(deep)
    with pytest.raises(RecursionError):
        canonical_json(deep)


def test_an_object_shown_through_str_is_encoded_once_per_call() -> None:
    calls: list[int] = []

    class Counted:
        def __str__(self) -> str:
            calls.append(1)
            return "c"

    assert canonical_json({"x": Counted(), "y": [Counted()]}) == '{"x":"c","y":["c"]}'
    assert len(calls) == 2
