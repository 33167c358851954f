"""Draft 2020-12 keywords the validator once ignored: contains/minContains/maxContains, dependentRequired,
dependentSchemas, if/then/else, unevaluatedProperties and unevaluatedItems. ``jsonschema``'s Draft202012Validator
(installed with ``mcp``) is the reference: for generated schemas and values our verdict equals its verdict."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.tools import ArgIssue, validate_json
from agentfootprint.tools.validation import MAX_ISSUES

jsonschema = pytest.importorskip("jsonschema")


def _issues(schema: Any, value: Any) -> list[tuple[str, str]]:
    return [(i.path, i.problem) for i in validate_json(schema, value)]


# -- contains / minContains / maxContains -------------------------------------------------------------------------
CONTAINS = {"type": "array", "contains": {"type": "integer", "minimum": 10}}


def test_contains_needs_one_matching_item() -> None:
    assert _issues(CONTAINS, [1, 12]) == []
    assert _issues(CONTAINS, [1, "x"]) == [("", "array has no item matching integer")]
    assert _issues(CONTAINS, []) == [("", "array has no item matching integer")]


def test_min_and_max_contains_count_the_matching_items() -> None:
    schema = {**CONTAINS, "minContains": 2, "maxContains": 3}
    assert _issues(schema, [10, 11, 1]) == []
    assert _issues(schema, [10, 1]) == [("", "array has fewer than 2 items matching integer")]
    assert _issues(schema, [10, 11, 12, 13]) == [("", "array has more than 3 items matching integer")]
    assert _issues({**CONTAINS, "minContains": 0}, []) == []
    assert _issues({"type": "array", "minContains": 5}, [1]) == []  # minContains alone constrains nothing


# -- dependentRequired / dependentSchemas --------------------------------------------------------------------------
def test_dependent_required_names_the_missing_property_and_its_trigger() -> None:
    schema = {"type": "object", "dependentRequired": {"card": ["billing_address", "cvv"]}}
    assert _issues(schema, {"name": "x"}) == []
    assert _issues(schema, {"card": "4111", "cvv": "1"}) == [
        ("billing_address", 'required property is missing (required when "card" is present)')
    ]


def test_dependent_schemas_apply_to_the_whole_object_when_the_property_is_present() -> None:
    schema = {
        "type": "object",
        "dependentSchemas": {"card": {"required": ["cvv"], "properties": {"cvv": {"type": "string"}}}},
    }
    assert _issues(schema, {"cvv": 3}) == []
    assert _issues(schema, {"card": "4111"}) == [("cvv", "required property is missing (expected string)")]
    assert _issues(schema, {"card": "4111", "cvv": 3}) == [("cvv", "expected string, got integer")]


# -- if / then / else ------------------------------------------------------------------------------------------------
COUNTRY = {
    "type": "object",
    "if": {"properties": {"country": {"const": "US"}}},
    "then": {"properties": {"zip": {"pattern": "^[0-9]{5}$"}}},
    "else": {"properties": {"zip": {"pattern": "^[A-Z0-9 ]{3,8}$"}}},
}


def test_if_then_else_picks_the_branch_by_the_condition() -> None:
    assert _issues(COUNTRY, {"country": "US", "zip": "12345"}) == []
    assert _issues(COUNTRY, {"country": "US", "zip": "K1A 0B1"}) == [
        ("zip", "string does not match the pattern ^[0-9]{5}$")
    ]
    assert _issues(COUNTRY, {"country": "CA", "zip": "K1A 0B1"}) == []
    assert _issues(COUNTRY, {"country": "CA", "zip": "k"}) == [
        ("zip", "string does not match the pattern ^[A-Z0-9 ]{3,8}$")
    ]


def test_then_and_else_without_if_constrain_nothing() -> None:
    assert _issues({"then": False, "else": False}, 1) == []
    assert _issues({"if": True}, 1) == []


# -- unevaluatedProperties / unevaluatedItems ------------------------------------------------------------------------
BASE = {
    "type": "object",
    "allOf": [{"properties": {"a": {"type": "integer"}}}],
    "anyOf": [{"properties": {"b": {"type": "string"}}, "required": ["b"]}, {"required": ["c"]}],
    "unevaluatedProperties": False,
}


def test_unevaluated_properties_sees_through_applicators() -> None:
    assert _issues(BASE, {"a": 1, "b": "x"}) == []
    assert _issues(BASE, {"a": 1, "c": 2}) == [("c", "unexpected property (not evaluated by the schema)")]
    assert _issues(BASE, {"b": "x", "d": 1}) == [("d", "unexpected property (not evaluated by the schema)")]


def test_unevaluated_properties_ignores_annotations_of_a_failed_branch_and_of_not() -> None:
    schema = {
        "anyOf": [{"properties": {"x": {"type": "string"}}}, {"properties": {"y": True}}],
        "not": {"properties": {"z": True}, "required": ["q"]},
        "unevaluatedProperties": False,
    }
    assert _issues(schema, {"y": 1}) == []
    assert _issues(schema, {"x": 1, "y": 1}) == [("x", "unexpected property (not evaluated by the schema)")]
    assert _issues(schema, {"z": 1}) == [("z", "unexpected property (not evaluated by the schema)")]


def test_unevaluated_properties_as_a_schema_and_with_if_then_and_refs() -> None:
    schema = {
        "$defs": {"named": {"properties": {"name": {"type": "string"}}}},
        "$ref": "#/$defs/named",
        "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        "then": {"properties": {"extra_a": True}},
        "unevaluatedProperties": {"type": "integer"},
    }
    assert _issues(schema, {"name": "n", "kind": "a", "extra_a": "s"}) == []
    assert _issues(schema, {"name": "n", "kind": "b", "extra_a": "s"}) == [  # a failed if evaluates nothing
        ("kind", "expected integer, got string"),
        ("extra_a", "expected integer, got string"),
    ]


def test_unevaluated_items_after_prefix_items_and_contains() -> None:
    schema = {"prefixItems": [{"type": "string"}], "contains": {"const": 7}, "unevaluatedItems": False}
    assert _issues(schema, ["s", 7, 7]) == []
    assert _issues(schema, ["s", 7, 8]) == [("[2]", "unexpected item (not evaluated by the schema)")]
    nested = {"allOf": [{"prefixItems": [True, True]}], "unevaluatedItems": {"type": "boolean"}}
    assert _issues(nested, [1, 2, True]) == []
    assert _issues(nested, [1, 2, 3]) == [("[2]", "expected boolean, got integer")]


def test_issues_never_quote_the_value() -> None:
    secret = "sk-live-SECRET-0123"
    schemas = [CONTAINS, BASE, COUNTRY, {"dependentRequired": {secret[:2]: ["z"]}}]
    for schema in schemas:
        for issue in validate_json(schema, {"sk": secret, "x": [secret], "country": secret}) + validate_json(
            schema, [secret]
        ):
            assert isinstance(issue, ArgIssue) and secret not in issue.message and secret not in issue.expected


def test_a_self_referencing_schema_with_unevaluated_properties_terminates() -> None:
    schema = {"properties": {"n": {"$ref": "#"}}, "unevaluatedProperties": False}
    value: Any = {}
    for _ in range(40):
        value = {"n": value}
    assert _issues(schema, value) == []
    assert _issues({"$ref": "#", "unevaluatedProperties": False}, {"a": 1}) != []


# -- the reference: jsonschema's Draft202012Validator ---------------------------------------------------------------
NAMES = st.sampled_from(["a", "b", "c"])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from(["", "a", "US", "xyz"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)
LEAVES = st.sampled_from(
    [
        True,
        False,
        {"type": "integer"},
        {"type": "string"},
        {"minimum": 5},
        {"const": "US"},
        {"type": ["array", "object"]},
        {"required": ["a"]},
        {"minItems": 2},
    ]
)


def _schema(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    lists = st.lists(children, min_size=1, max_size=3)
    return st.one_of(
        st.builds(lambda c: {"contains": c}, children),
        st.builds(
            lambda c, lo, hi: {"contains": c, "minContains": lo, "maxContains": hi},
            children,
            st.integers(0, 2),
            st.integers(0, 3),
        ),
        st.dictionaries(NAMES, st.lists(NAMES, max_size=2, unique=True), max_size=2).map(
            lambda d: {"dependentRequired": d}
        ),
        st.dictionaries(NAMES, children, max_size=2).map(lambda d: {"dependentSchemas": d}),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, children, children, children),
        st.builds(lambda i, t: {"if": i, "then": t}, children, children),
        st.dictionaries(NAMES, children, max_size=2).map(lambda d: {"properties": d}),
        st.builds(
            lambda p, u: {**p, "unevaluatedProperties": u}, children.filter(lambda c: isinstance(c, dict)), children
        ),
        st.builds(lambda p, u: {"prefixItems": p, "unevaluatedItems": u}, lists, children),
        st.builds(lambda c, u: {"contains": c, "unevaluatedItems": u}, children, children),
        lists.map(lambda b: {"allOf": b}),
        lists.map(lambda b: {"anyOf": b}),
        lists.map(lambda b: {"oneOf": b}),
        st.builds(lambda c: {"not": c}, children),
        st.builds(lambda p, c: {"patternProperties": {"^[ab]$": p}, "additionalProperties": c}, children, children),
        st.builds(lambda c, u: {"items": c, "unevaluatedItems": u}, children, children),
    )


SCHEMAS = st.recursive(LEAVES, _schema, max_leaves=10)


@settings(max_examples=400, deadline=None)
@given(schema=SCHEMAS, value=VALUES)
def test_our_verdict_equals_the_draft_2020_12_reference(schema: Any, value: Any) -> None:
    reference = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert (validate_json(schema, value) == []) is reference


def test_multiple_of_on_floats_stays_ours_where_the_reference_is_wrong() -> None:
    schema = {"type": "number", "multipleOf": 0.1}
    assert jsonschema.Draft202012Validator(schema).is_valid(0.3) is False  # 0.3 / 0.1 == 2.9999999999999996
    assert validate_json(schema, 0.3) == []
    assert _issues(schema, 0.35) == [("", "number is not a multiple of 0.1")]


def test_a_validation_stopped_inside_a_branch_is_never_read_as_valid() -> None:
    endless = {"anyOf": [{"$ref": "#"}, {"properties": {"a": True}}], "unevaluatedProperties": False}
    assert _issues(endless, {"a": 1, "b": 2}) == [("", "schema nesting is too deep to validate")]
    looping_if = {"if": {"$ref": "#"}, "then": True, "else": False}
    assert _issues(looping_if, 1) == [("", "schema nesting is too deep to validate")]


def test_contains_and_unevaluated_items_on_a_large_array_report_at_most_max_issues() -> None:
    schema = {"contains": {"anyOf": [{"type": "string"}, {"allOf": [{"minimum": 5}, {"maximum": 7}]}]}}
    issues = validate_json({**schema, "unevaluatedItems": False, "minContains": 4}, list(range(20_000)))
    assert len(issues) == MAX_ISSUES
    assert issues[0].problem == "array has fewer than 4 items matching string or any value"
    assert [i.path for i in issues[1:4]] == ["[0]", "[1]", "[2]"]
    assert {i.problem for i in issues[1:]} == {"unexpected item (not evaluated by the schema)"}


async def test_an_agent_refuses_a_call_that_only_a_2020_12_keyword_forbids_and_runs_the_fixed_one() -> None:
    from agentfootprint import Agent
    from agentfootprint.providers import mock
    from agentfootprint.tools import Tool, ToolContext

    ran: list[dict[str, Any]] = []

    async def pay(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args)
        return "paid"

    schema = {
        "type": "object",
        "properties": {"card": {"type": "string"}, "cvv": {"type": "string"}},
        "dependentRequired": {"card": ["cvv"]},
        "unevaluatedProperties": False,
    }
    calls = [{"card": "4111"}, {"card": "4111", "cvv": "123", "note": "x"}, {"card": "4111", "cvv": "123"}]
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "pay", "args": a}]} for i, a in enumerate(calls)]
    tool = Tool(name="pay", description="Pay by card.", input_schema=schema, execute=pay)
    agent = Agent.create(provider=mock(replies=[*replies, "done"])).tool(tool).build()
    assert (await agent.run("pay")).answer == "done"
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [r.get("error_code") for r in results] == ["ERR_INVALID_TOOL_ARGS", "ERR_INVALID_TOOL_ARGS", None]
    assert '- cvv: required property is missing (required when "card" is present)' in results[0]["content"]
    assert "- note: unexpected property (not evaluated by the schema)" in results[1]["content"]
    assert ran == [calls[2]] and "4111" not in results[0]["content"] + results[1]["content"]
