"""The JSON-Schema validator: each keyword, paths, messages that never quote values, never raising."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.tools import ArgIssue, validate_json, validate_tool_args
from agentfootprint.tools.validation import describe_schema, format_issues

SECRET = "hunter2-SECRET"


def paths(schema: Any, value: Any) -> list[str]:
    return [i.path for i in validate_json(schema, value)]


def only(schema: Any, value: Any) -> ArgIssue:
    issues = validate_json(schema, value)
    assert len(issues) == 1, issues
    return issues[0]


@pytest.mark.parametrize(
    ("type_", "good", "bad"),
    [
        ("string", ["", "x"], [1, None, True, [], {}]),
        ("integer", [0, -5, 10**30, 2.0], [1.5, True, False, "1", None]),
        ("number", [0, 1.5, -2, 10**30], [True, "1.0", None, []]),
        ("boolean", [True, False], [0, 1, "true", None]),
        ("null", [None], [0, "", False, []]),
        ("array", [[], [1, "a"], (1,)], [{}, "[]", None]),
        ("object", [{}, {"a": 1}], [[], "x", None]),
    ],
)
def test_type_keyword(type_: str, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert validate_json({"type": type_}, value) == [], value
    for value in bad:
        issue = only({"type": type_}, value)
        assert issue.expected == type_
        assert issue.problem.startswith(f"expected {type_}, got ")


def test_bool_is_not_an_integer_and_message_names_boolean() -> None:
    issue = only({"type": "integer"}, True)
    assert issue.problem == "expected integer, got boolean"


def test_type_arrays() -> None:
    schema = {"type": ["string", "null"]}
    assert validate_json(schema, None) == []
    assert validate_json(schema, "x") == []
    issue = only(schema, 3)
    assert issue.expected == "string or null"
    assert issue.problem == "expected string or null, got integer"


def test_required_and_properties_with_paths() -> None:
    schema = {
        "type": "object",
        "properties": {
            "order": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"qty": {"type": "integer"}},
                            "required": ["qty"],
                        },
                    }
                },
                "required": ["items"],
            }
        },
        "required": ["order"],
    }
    value = {"order": {"items": [{"qty": 1}, {"qty": 2}, {"qty": "three"}, {}]}}
    issues = validate_json(schema, value)
    assert [(i.path, i.expected) for i in issues] == [
        ("order.items[2].qty", "integer"),
        ("order.items[3].qty", "integer"),
    ]
    assert issues[0].message == "order.items[2].qty: expected integer, got string"
    assert issues[1].problem == "required property is missing (expected integer)"
    missing = only(schema, {})
    assert missing.path == "order" and missing.expected == "object"


def test_additional_properties_false_and_schema() -> None:
    closed = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert validate_json(closed, {"a": 1}) == []
    issue = only(closed, {"a": 1, "b": SECRET})
    assert issue.path == "b" and "unexpected property" in issue.problem
    typed = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert paths(typed, {"x": 1, "y": "no"}) == ["y"]


def test_additional_properties_default_is_open() -> None:
    assert validate_json({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": "x", "z": 1}) == []


def test_pattern_properties_and_property_names() -> None:
    schema = {"type": "object", "patternProperties": {"^n_": {"type": "number"}}, "additionalProperties": False}
    assert validate_json(schema, {"n_a": 1.5}) == []
    assert paths(schema, {"n_a": "x", "other": 1}) == ["n_a", "other"]
    names = {"type": "object", "propertyNames": {"maxLength": 3}}
    assert paths(names, {"abcd": 1, "ab": 2}) == ["abcd"]


def test_enum_and_const_echo_only_the_schema() -> None:
    issue = only({"enum": ["a", "b", 3]}, SECRET)
    assert issue.expected == 'one of ["a", "b", 3]'
    assert SECRET not in issue.message
    assert validate_json({"enum": [1, "a"]}, 1.0) == []
    assert validate_json({"enum": [1]}, True) != []  # JSON: true is not 1
    assert validate_json({"enum": [[1, {"a": None}]]}, [1, {"a": None}]) == []
    issue = only({"const": "fixed"}, "other")
    assert issue.expected == 'the constant "fixed"' and "other" not in issue.message


@pytest.mark.parametrize(
    ("schema", "good", "bad", "words"),
    [
        ({"minLength": 2}, "ab", "a", "shorter than 2"),
        ({"maxLength": 2}, "ab", "abc", "longer than 2"),
        ({"pattern": "^[A-Z]-\\d+$"}, "A-1001", "a-1001", "does not match"),
        ({"minimum": 1}, 1, 0, "below the minimum 1"),
        ({"maximum": 1}, 1, 2, "above the maximum 1"),
        ({"exclusiveMinimum": 1}, 1.5, 1, "not greater than 1"),
        ({"exclusiveMaximum": 1}, 0, 1, "not less than 1"),
        ({"minimum": 1, "exclusiveMinimum": True}, 2, 1, "not greater than 1"),
        ({"maximum": 1, "exclusiveMaximum": True}, 0, 1, "not less than 1"),
        ({"multipleOf": 0.5}, 1.5, 1.2, "multiple of 0.5"),
        ({"minItems": 1}, [1], [], "fewer than 1"),
        ({"maxItems": 1}, [1], [1, 2], "more than 1"),
        ({"uniqueItems": True}, [1, 2], [1, 1.0], "duplicate"),
        ({"minProperties": 1}, {"a": 1}, {}, "fewer than 1"),
        ({"maxProperties": 1}, {"a": 1}, {"a": 1, "b": 2}, "more than 1"),
    ],
)
def test_value_keywords(schema: dict[str, Any], good: Any, bad: Any, words: str) -> None:
    assert validate_json(schema, good) == []
    issue = only(schema, bad)
    assert words in issue.problem


def test_unique_items_distinguishes_bool_and_int() -> None:
    assert validate_json({"uniqueItems": True}, [1, True]) == []


def test_prefix_items_and_tuple_items() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}
    assert validate_json(schema, ["a", 1]) == []
    assert paths(schema, ["a", "b"]) == ["[1]"]
    assert paths(schema, ["a", 1, 2]) == ["[2]"]
    old = {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}
    assert paths(old, ["a", 1, "x"]) == ["[2]"]


def test_any_of_reports_the_union_when_no_branch_fits_the_type() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert validate_json(schema, None) == []
    issue = only(schema, 5)
    assert issue.expected == "string or null"
    assert issue.problem == "expected string or null, got integer"


def test_any_of_digs_into_the_branch_whose_type_matched() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]},
            {"type": "null"},
        ]
    }
    issue = only(schema, {"qty": "x"})
    assert issue.path == "qty" and issue.expected == "integer"


def test_one_of_exactly_one() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}]}
    assert validate_json(schema, 1.5) == []
    issue = only(schema, 1)
    assert "more than one" in issue.problem
    assert only(schema, "x").expected == "integer or number"


def test_all_of_and_not() -> None:
    schema = {"allOf": [{"type": "string"}, {"minLength": 2}]}
    assert validate_json(schema, "ab") == []
    assert "shorter" in only(schema, "a").problem
    negated = {"not": {"type": "string"}}
    assert validate_json(negated, 1) == []
    assert "not allowed" in only(negated, "x").problem


def test_refs_to_defs_and_definitions() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/definitions/B"}},
        "$defs": {"A": {"type": "integer"}},
        "definitions": {"B": {"type": "string"}},
    }
    assert validate_json(schema, {"a": 1, "b": "x"}) == []
    assert paths(schema, {"a": "x", "b": 1}) == ["a", "b"]


def test_recursive_ref_schema_terminates() -> None:
    tree = {
        "$defs": {
            "Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
        },
        "$ref": "#/$defs/Node",
    }
    value: dict[str, Any] = {"kids": [{"kids": [{"kids": "bad"}]}]}
    assert paths(tree, value) == ["kids[0].kids[0].kids"]


def test_self_referencing_schema_without_progress_does_not_hang() -> None:
    loop = {"$ref": "#"}
    issues = validate_json(loop, {"a": 1})
    assert len(issues) == 1 and "too deep" in issues[0].problem
    mutual = {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}
    assert len(validate_json(mutual, 1)) == 1


@pytest.mark.parametrize(
    "schema",
    [
        True,
        {},
        None,
        "garbage",
        42,
        {"type": "mystery"},
        {"type": 7},
        {"properties": "nope"},
        {"required": "nope"},
        {"items": "nope"},
        {"enum": "nope"},
        {"pattern": "(unclosed"},
        {"minLength": "3"},
        {"$ref": "http://elsewhere/schema"},
        {"$ref": "#/$defs/Missing"},
        {"anyOf": []},
        {"anyOf": "x"},
        {"multipleOf": 0},
        {"format": "email"},
    ],
)
def test_malformed_or_unsupported_schemas_never_raise(schema: Any) -> None:
    assert validate_json(schema, {"a": ["x", 1, None]}) == []


def test_false_schema_rejects() -> None:
    assert only(False, 1).problem == "no value is allowed here"


def test_tool_args_must_be_an_object() -> None:
    for value, name in [(None, "null"), ([], "array"), ("x", "string"), (3, "integer"), (b"x", "bytes")]:
        issues = validate_tool_args({"type": "object"}, value)
        assert [(i.path, i.problem) for i in issues] == [("", f"expected object, got {name}")]
        assert issues[0].message == f"(arguments): expected object, got {name}"


def test_odd_keys_are_quoted_in_paths() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert paths(schema, {"has space": "x"}) == ['["has space"]']
    assert paths(schema, {"a.b": "x"}) == ['["a.b"]']


def test_issue_count_is_capped() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    assert len(validate_json(schema, ["x"] * 1000)) == 20
    assert len(validate_json(schema, ["x"] * 1000, max_issues=3)) == 3


def test_format_issues() -> None:
    text = format_issues("lookup", [ArgIssue(path="a", expected="integer", problem="expected integer, got string")])
    assert text.splitlines() == [
        "Error: invalid arguments for tool lookup:",
        "- a: expected integer, got string",
        "Fix the arguments and call the tool again.",
    ]


def test_describe_schema() -> None:
    assert describe_schema({"type": "string"}) == "string"
    assert describe_schema({}) == "any value"
    assert describe_schema({"properties": {}}) == "object"
    assert describe_schema({"items": {}}) == "array"
    assert describe_schema({"anyOf": [{"type": "string"}, {"type": "string"}]}) == "string"
    assert describe_schema({"allOf": [{"type": "integer"}]}) == "integer"


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, SECRET),
        ({"type": "string", "minLength": 100}, SECRET),
        ({"type": "string", "pattern": "^x$"}, SECRET),
        ({"enum": ["a"]}, SECRET),
        ({"const": "a"}, SECRET),
        ({"type": "object", "additionalProperties": False}, {"k": SECRET}),
        ({"type": "array", "items": {"type": "integer"}}, [SECRET]),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, SECRET),
        ({"oneOf": [{"type": "string"}, {"minLength": 1}]}, SECRET),
        ({"not": {"type": "string"}}, SECRET),
        ({"type": "string", "maxLength": 3}, SECRET),
        ({"uniqueItems": True}, [SECRET, SECRET]),
    ],
)
def test_messages_never_contain_the_value(schema: Any, value: Any) -> None:
    issues = validate_json(schema, value)
    assert issues
    for issue in issues:
        assert SECRET not in issue.message and SECRET not in issue.expected and SECRET not in repr(issue)


def test_a_refused_property_name_says_what_names_are_allowed() -> None:
    issue = only({"type": "object", "propertyNames": {"maxLength": 3}}, {"abcd": 1})
    assert (issue.path, issue.expected, issue.problem) == ("abcd", "any value", "property name is not allowed")
    typed = only({"type": "object", "propertyNames": {"type": "string", "pattern": "^a"}}, {"b": 1})
    assert (typed.path, typed.expected, typed.problem) == ("b", "string", "property name is not allowed")


def test_a_schema_nested_too_deeply_is_refused_by_name() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(300):
        schema = {"allOf": [schema]}
    issue = only(schema, {})
    assert (issue.path, issue.expected, issue.problem) == (
        "",
        "a shallower value",
        "schema nesting is too deep to validate",
    )


def test_any_of_stops_at_the_first_branch_that_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Later anyOf branches are not tried once one fits, so they spend none of the step budget."""
    from agentfootprint.tools import validation as validation_module

    heavy = {"allOf": [{"minimum": 0}] * 20}
    schema = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "integer"}, heavy]}, "b": {"type": "string"}},
    }
    monkeypatch.setattr(validation_module, "_MAX_STEPS", 12)
    assert [(i.path, i.problem) for i in validate_json(schema, {"a": 1, "b": 5})] == [
        ("b", "expected string, got integer")
    ]


def test_arguments_that_are_not_an_object_are_one_issue() -> None:
    issues = validate_tool_args({"type": "object"}, ["a"])
    assert [(i.path, i.expected, i.problem) for i in issues] == [("", "object", "expected object, got array")]


def test_a_required_property_the_schema_does_not_describe_expects_any_value() -> None:
    issue = only({"type": "object", "required": ["x"]}, {})
    assert (issue.path, issue.expected, issue.problem) == (
        "x",
        "any value",
        "required property is missing (expected any value)",
    )


def test_schema_nesting_is_validated_up_to_200_levels() -> None:
    def chain(levels: int) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object"}
        for _ in range(levels - 1):
            schema = {"allOf": [schema]}
        return schema

    assert validate_json(chain(200), {}) == []
    assert validate_json(chain(200), 1)[0].problem == "expected object, got integer"
    assert [i.problem for i in validate_json(chain(201), {})] == ["schema nesting is too deep to validate"]


def test_at_most_max_issues_are_reported() -> None:
    schema = {"type": "object", "properties": {k: {"type": "string"} for k in "abc"}}
    value = {"a": 1, "b": 2, "c": 3}
    assert [i.path for i in validate_json(schema, value, max_issues=2)] == ["a", "b"]
    assert [i.path for i in validate_json(schema, value, max_issues=3)] == ["a", "b", "c"]
    assert [i.path for i in validate_json(schema, value, max_issues=0)] == ["a"]


def test_a_property_name_schema_resolves_references_against_the_whole_schema() -> None:
    schema = {
        "type": "object",
        "$defs": {"short": {"type": "string", "maxLength": 2}},
        "propertyNames": {"$ref": "#/$defs/short"},
    }
    issue = only(schema, {"abc": 1})
    assert (issue.path, issue.expected, issue.problem) == ("abc", "string", "property name is not allowed")


def test_the_issue_cap_holds_within_one_schema_keyword() -> None:
    schema = {"type": "object", "required": ["a", "b", "c"]}
    assert [i.path for i in validate_json(schema, {}, max_issues=2)] == ["a", "b"]
    text = {"type": "string", "minLength": 5, "pattern": "^x"}
    assert [i.problem for i in validate_json(text, "ab", max_issues=1)] == ["string is shorter than 5 characters"]
