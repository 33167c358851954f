"""Argument validation, exactly: schema descriptions, paths, and the limits that stop a validation early."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.tools import validation
from agentfootprint.tools.validation import ArgIssue, describe_schema, format_path, validate_json, validate_tool_args


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        (True, "any value"),
        (None, "any value"),
        ({}, "any value"),
        (False, "no value"),
        (42, "any value"),
        ({"const": {"b": 1, "a": [True, None]}}, 'the constant {"a": [true, null], "b": 1}'),
        ({"enum": ["a", 2]}, 'one of ["a", 2]'),
        ({"enum": "not a list", "type": "string"}, "string"),
        ({"type": ["string", "null"]}, "string or null"),
        ({"type": []}, "any value"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "string"}]}, "string or integer"),
        ({"oneOf": [{"const": 1}, {"enum": [2]}]}, "the constant 1 or one of [2]"),
        ({"anyOf": []}, "any value"),
        ({"allOf": [{"type": "number"}]}, "number"),
        ({"allOf": [{"type": "number"}, {"minimum": 1}]}, "any value"),
        ({"properties": {}}, "object"),
        ({"additionalProperties": False}, "object"),
        ({"required": ["a"]}, "object"),
        ({"items": {}}, "array"),
        ({"prefixItems": []}, "array"),
        ({"minimum": 1}, "any value"),
        ({"$ref": "#/$defs/x", "$defs": {"x": {"type": "boolean"}}}, "boolean"),
        ({"$ref": "#/$defs/missing"}, "a value"),
        ({"$ref": "http://elsewhere"}, "a value"),
        ({"$ref": "#/anyOf/1", "anyOf": [{"type": "null"}, {"type": "integer"}]}, "integer"),
        ({"$ref": "#/$defs/a~1b~0c", "$defs": {"a/b~c": {"type": "string"}}}, "string"),
        ({"$ref": "#/anyOf/7", "anyOf": [{"type": "null"}]}, "a value"),
        ({"$ref": "#/anyOf/x", "anyOf": [{"type": "null"}]}, "a value"),
    ],
)
def test_describe_schema(schema: Any, text: str) -> None:
    assert describe_schema(schema) == text


def test_describe_schema_stops_after_four_hops_and_cuts_long_text() -> None:
    chain = {"$defs": {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(6)}}
    chain["$defs"]["d6"] = {"type": "string"}
    assert describe_schema({"$ref": "#/$defs/d3", **chain}) == "string"
    assert describe_schema({"$ref": "#/$defs/d2", **chain}) == "a value"
    assert describe_schema({"$ref": "#", "type": "integer"}) == "integer"
    long = describe_schema({"enum": ["x" * 300]})
    assert len(long) == 207 and long.endswith("…") and long.startswith('one of ["xxx')
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert describe_schema({"const": cyclic}) == "the constant list"


def test_paths() -> None:
    assert format_path(()) == ""
    assert format_path(("order", "items", 2, "qty")) == "order.items[2].qty"
    assert format_path((0, "a")) == "[0].a"
    assert format_path(("odd key", "-x", "_ok")) == '["odd key"]["-x"]._ok'
    assert format_path(("tab\there",)) == '["tab?here"]'
    long = format_path(tuple(["segment"] * 60))
    assert len(long) == 300 and long.startswith("…") and long.endswith(".segment")
    issue = ArgIssue(path="", expected="object", problem="expected object, got integer")
    assert issue.message == str(issue) == "(arguments): expected object, got integer"
    assert str(ArgIssue(path="a.b", expected="x", problem="p")) == "a.b: p"


def test_too_many_steps_and_too_many_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "_MAX_STEPS", 3)
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcd"}}
    issues = validate_tool_args(schema, {"a": 1, "b": 2, "c": 3, "d": 4})
    assert [(i.path, i.expected, i.problem) for i in issues] == [
        ("c", "smaller arguments", "arguments are too complex to validate")
    ]
    monkeypatch.setattr(validation, "MAX_ARG_NODES", 6)  # the object, a, its 3 items, b: 6 values
    assert validate_tool_args({}, {"a": [1, 2, 3], "b": 3}) == []
    too_many = [("", "at most 6 values", "arguments are too large (more than 6 values)")]
    assert [(i.path, i.expected, i.problem) for i in validate_tool_args({}, {"a": [1, 2, 3, 4], "b": 3})] == too_many
    assert [(i.path, i.expected, i.problem) for i in validate_tool_args({}, {str(k): k for k in range(6)})] == too_many
    assert validate_json({}, list(range(5))) == []
    assert validate_json({}, list(range(6))) != []


def test_non_string_keys_are_named_by_type() -> None:
    (issue,) = validate_json({}, {"a": {1: "x"}})
    assert (issue.path, issue.expected, issue.problem) == (
        "a",
        "object with string keys",
        "object has a non-string key (integer)",
    )
    (issue,) = validate_json({"properties": {"a": {}}}, {"a": 1, None: 2})
    assert issue.problem == "object has a non-string key (null)"


def test_numbers_at_the_edge() -> None:
    (issue,) = validate_json({"multipleOf": 1e-308}, 1e308)
    assert issue.problem == "number is not a multiple of 1e-308"
    assert validate_json({"multipleOf": 0.1}, 0.3) == []
    assert validate_json({"multipleOf": 0}, 0.3) == []
    assert [i.problem for i in validate_json({"minimum": 1, "exclusiveMinimum": True}, 1)] == [
        "number is not greater than 1"
    ]
    assert [i.problem for i in validate_json({"maximum": 1, "exclusiveMaximum": True}, 1)] == [
        "number is not less than 1"
    ]
    assert [i.problem for i in validate_json({"exclusiveMinimum": 1, "exclusiveMaximum": 1}, 1)] == [
        "number is not greater than 1",
        "number is not less than 1",
    ]
    assert validate_json({"minimum": 1, "exclusiveMinimum": True}, 1.5) == []
    assert [i.expected for i in validate_json({"minimum": 2}, 1)] == ["number of at least 2"]
    assert [i.expected for i in validate_json({"maximum": 0}, 1)] == ["number of at most 0"]
    assert validate_json({"type": "integer"}, 2.0) == [] and validate_json({"type": "integer"}, float("inf")) != []


def test_cyclic_const_never_matches_and_is_named_by_type() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    (issue,) = validate_json({"const": cyclic}, [1])
    assert issue.problem == "expected the constant list, got a different array"
