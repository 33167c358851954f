"""The flat-schema shortcut of ``validate_tool_args`` answers only "valid", and only when the full validator agrees;
everything else (and every invalid call) gets the full validator's exact issues."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.tools.validation import MAX_ARG_NODES, _flat_args_valid, validate_json, validate_tool_args

TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object", "bogus", 3, ["string"]])
PROP = st.one_of(
    st.fixed_dictionaries({}, optional={"type": TYPES, "description": st.just("d"), "minLength": st.just(2)}),
    st.booleans(),
    st.none(),
)
NAMES = st.sampled_from(["a", "b", "c", "d"])
SCHEMA = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["object", "string", ["object"]]),
        "properties": st.dictionaries(NAMES, PROP, max_size=3),
        "required": st.lists(st.one_of(NAMES, st.just(5)), max_size=3),
        "additionalProperties": st.one_of(st.booleans(), st.just({}), st.just({"type": "string"})),
        "title": st.just("T"),
        "enum": st.just([{"a": 1}]),
    },
)
SCALAR = st.one_of(
    st.text(max_size=3), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none()
)
ARGS = st.dictionaries(NAMES, st.one_of(SCALAR, st.lists(st.integers(), max_size=2)), max_size=4)


@settings(max_examples=400, deadline=None)
@given(SCHEMA, ARGS)
def test_the_shortcut_never_disagrees_with_the_full_validator(schema: dict[str, Any], args: dict[str, Any]) -> None:
    full = validate_json(schema, args)
    if _flat_args_valid(schema, args):
        assert full == []
    assert validate_tool_args(schema, args) == full


WEATHER = {"type": "object", "properties": {"city": {"type": "string", "description": "c"}}, "required": ["city"]}


@pytest.mark.parametrize(
    ("schema", "args", "shortcut"),
    [
        (WEATHER, {"city": "Paris"}, True),
        (WEATHER, {"city": "Paris", "extra": 1}, True),
        ({**WEATHER, "additionalProperties": False}, {"city": "Paris", "extra": 1}, False),
        (WEATHER, {}, False),
        (WEATHER, {"city": 3}, False),
        (WEATHER, {"city": ["x"]}, False),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 2.0}, True),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": True}, False),
        ({"type": "object", "properties": {"n": {"type": "number"}}}, {"n": math.nan}, True),
        ({"type": "object", "properties": {"n": {"type": "string", "pattern": "^a"}}}, {"n": "b"}, False),
        ({"type": "object", "$ref": "#/x"}, {}, False),
        ({}, {"k": "v"}, True),
        ({"type": "object", "properties": {"n": None}}, {"n": 1}, False),
    ],
)
def test_exact_cases(schema: dict[str, Any], args: dict[str, Any], shortcut: bool) -> None:
    assert _flat_args_valid(schema, args) is shortcut
    assert validate_tool_args(schema, args) == validate_json(schema, args)


def test_hostile_arguments_go_to_the_full_validator() -> None:
    too_many = {f"k{i}": 1 for i in range(MAX_ARG_NODES)}
    assert _flat_args_valid({}, too_many) is False
    assert [i.problem for i in validate_tool_args({}, too_many)] == [
        f"arguments are too large (more than {MAX_ARG_NODES} values)"
    ]
    assert _flat_args_valid({}, {1: "x"}) is False
    assert validate_tool_args({}, {1: "x"}) == validate_json({}, {1: "x"})
    assert validate_tool_args(WEATHER, "Paris")[0].problem == "expected object, got string"


def test_the_shortcut_keeps_within_the_walks_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentfootprint.tools import validation

    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcd"}}
    args = {"a": 1, "b": 2, "c": 3, "d": 4}
    for budget in (1, 2, 3, 4, 5, 6):
        monkeypatch.setattr(validation, "_MAX_STEPS", budget)
        assert validate_tool_args(schema, args) == validate_json(schema, args)
    monkeypatch.setattr(validation, "_MAX_STEPS", 1_000_000)
    for frames in (0, 1, 2):
        monkeypatch.setattr(validation, "_MAX_FRAMES", frames)
        assert validate_tool_args(schema, args) == validate_json(schema, args)
