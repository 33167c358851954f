"""Schema ``pattern`` safety: catastrophic patterns are refused (at definition or at match), never run unbounded."""

from __future__ import annotations

import re
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from agentfootprint.tools import Tool, ToolContext, UnsafeSchemaPatternError, define_tool, tool, validate_json
from agentfootprint.tools._codes import ERR_INVALID_TOOL_ARGS
from agentfootprint.tools._patterns import MAX_PATTERN_LENGTH, MAX_PATTERN_SUBJECT, check_pattern
from agentfootprint.tools.errors import InvalidToolDefinitionError
from agentfootprint.tools.execute import execute_tool

HOSTILE = {
    r"(a+)+$": "nested_quantifier",
    r"(a|aa)*b": "alternation_in_repeat",
    r"((a*)*)*c": "nested_quantifier",
    r"^(\w+\s?)*$": "nested_quantifier",
    r"(x+x+)+y": "nested_quantifier",
    r"(a|a?)+$": "alternation_in_repeat",
    r"((a+)?)+$": "nested_quantifier",
    r"(ab|cd){20}": "alternation_in_repeat",
    r"^(a)\1+$": "backreference",
    r"(a)?(?(1)a|b)": "backreference",
    r"a*a*a*a*a*a*a*a*b": "too_many_quantifiers",
    r"(a*){30}b": "too_many_quantifiers",
}
# each would take far longer than any test run on this subject if it were matched with plain `re`
ATTACK = "a" * 40 + "!"


def _schema(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}


def _noop(args: dict[str, Any], ctx: ToolContext) -> str:
    return "ran"


@pytest.mark.parametrize(("pattern", "reason"), sorted(HOSTILE.items()))
def test_define_tool_refuses_a_catastrophic_pattern(pattern: str, reason: str) -> None:
    with pytest.raises(UnsafeSchemaPatternError) as caught:
        define_tool(name="t", description="d", input_schema=_schema(pattern), execute=_noop)
    err = caught.value
    assert (err.code, err.field, err.reason, err.tool) == (
        "ERR_UNSAFE_SCHEMA_PATTERN",
        "properties.s.pattern",
        reason,
        "t",
    )
    assert isinstance(err, InvalidToolDefinitionError)
    assert pattern not in str(err)


def test_refusal_names_a_nested_field_and_pattern_properties() -> None:
    deep = {"type": "object", "properties": {"o": {"type": "array", "items": [{"type": "string", "pattern": "(a+)+"}]}}}
    with pytest.raises(UnsafeSchemaPatternError) as caught:
        define_tool(name="t", description="d", input_schema=deep, execute=_noop)
    assert caught.value.field == "properties.o.items[0].pattern"
    props = {"type": "object", "patternProperties": {"^ok$": {}, "(a|aa)*$": {}}}
    with pytest.raises(UnsafeSchemaPatternError) as caught:
        define_tool(name="t", description="d", input_schema=props, execute=_noop)
    assert (caught.value.field, caught.value.reason) == ("patternProperties[1]", "alternation_in_repeat")


def test_an_overlong_pattern_is_refused() -> None:
    with pytest.raises(UnsafeSchemaPatternError) as caught:
        define_tool(name="t", description="d", input_schema=_schema("a" * (MAX_PATTERN_LENGTH + 1)), execute=_noop)
    assert caught.value.reason == "pattern_too_long"


def test_decorated_tool_with_a_catastrophic_field_pattern_is_refused() -> None:
    with pytest.raises(UnsafeSchemaPatternError) as caught:

        @tool
        def lookup(code: Annotated[str, Field(pattern=r"^(a|aa)*$")]) -> str:
            """Look a code up."""
            return code

    assert caught.value.field == "properties.code.pattern"


@pytest.mark.parametrize("pattern", sorted(HOSTILE))
def test_unregistered_schema_with_a_catastrophic_pattern_is_an_issue_not_a_match(pattern: str) -> None:
    # a Tool built directly (as an MCP client does) skips define_tool: validation still never runs the pattern
    issues = validate_json(_schema(pattern), {"s": ATTACK * 1000})
    assert [i.path for i in issues] == ["s"]
    assert "cannot be checked safely" in issues[0].problem
    assert pattern not in issues[0].message


def test_unregistered_pattern_properties_are_an_issue_not_a_match() -> None:
    issues = validate_json({"type": "object", "patternProperties": {"(a+)+$": {}}}, {ATTACK * 100: 1})
    assert [i.problem for i in issues] == ["property name cannot be checked safely"]


async def test_a_directly_built_tool_refuses_the_call_with_invalid_args() -> None:
    hostile = Tool(name="mcp_tool", description="", input_schema=_schema(r"(a+)+$"), execute=_noop)
    outcome = await execute_tool(hostile, "mcp_tool", {"s": ATTACK}, ToolContext())
    assert outcome.error_code == ERR_INVALID_TOOL_ARGS
    assert "(a+)+" not in outcome.content


def test_polynomial_pattern_has_its_subject_capped() -> None:
    vetted = check_pattern(r"a*a*a*b")
    assert vetted.refusal is None and 64 <= vetted.max_subject < MAX_PATTERN_SUBJECT
    too_long = validate_json(_schema(r"a*a*a*b"), {"s": "a" * (vetted.max_subject + 1)})
    assert [i.expected for i in too_long] == [f"string of at most {vetted.max_subject} characters"]
    assert validate_json(_schema(r"a*a*a*b"), {"s": "a" * vetted.max_subject}) != []  # matched (no b): fails
    assert validate_json(_schema(r"a*a*a*b"), {"s": "a" * 50 + "b"}) == []


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        (r"^[A-Z]{3}-\d{4}$", "ABC-1234", "AB-1234"),
        (r"^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$", "10.0.0.1", "10.0.0"),
        (r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$", "ann@example.org", "ann@"),
        (r"^(a|b)*c$", "ababc", "abab"),
        (r"^(\d{3})+$", "123456", "12345"),
        (r"^(?:[a-z]+-)?v\d+$", "api-v2", "api-x"),
    ],
)
def test_benign_patterns_are_accepted_and_still_checked(pattern: str, good: str, bad: str) -> None:
    define_tool(name="t", description="d", input_schema=_schema(pattern), execute=_noop)
    assert validate_json(_schema(pattern), {"s": good}) == []
    assert [i.path for i in validate_json(_schema(pattern), {"s": bad})] == ["s"]


def test_a_pattern_python_cannot_compile_is_ignored_as_before() -> None:
    define_tool(name="t", description="d", input_schema=_schema(r"^\p{L}+$"), execute=_noop)
    assert validate_json(_schema(r"^\p{L}+$"), {"s": "x"}) == []


_ATOM = st.sampled_from(["a", "b", ".", "[ab]", "[^a]", "(?:ab)", "\\w"])
_QUANT = st.sampled_from(["", "", "*", "+", "?", "{1,3}", "{2}"])
_PIECE = st.tuples(_ATOM, _QUANT).map("".join)
_PATTERN = st.builds(
    lambda head, body, tail: head + "".join(body) + tail,
    st.sampled_from(["", "^"]),
    st.lists(_PIECE, min_size=1, max_size=6),
    st.sampled_from(["", "$"]),
)


@settings(max_examples=200, deadline=None)
@given(pattern=_PATTERN, subject=st.text(alphabet="abc", max_size=40))
def test_benign_patterns_agree_with_re(pattern: str, subject: str) -> None:
    vetted = check_pattern(pattern)
    assert vetted.refusal in (None, "too_many_quantifiers")
    if vetted.refusal is None:
        matched = validate_json(_schema(pattern), {"s": subject}) == []
        assert matched == (re.search(pattern, subject) is not None)
