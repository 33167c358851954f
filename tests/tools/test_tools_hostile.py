"""Hostile arguments: deep nesting, cycles, huge strings and arrays, odd keys; nothing crashes, nothing leaks."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from agentfootprint.tools import (
    ToolContext,
    define_tool,
    tool,
    validate_json,
    validate_tool_args,
)
from agentfootprint.tools._codes import ERR_INVALID_TOOL_ARGS
from agentfootprint.tools.execute import execute_tool
from agentfootprint.tools.validation import MAX_ARG_DEPTH

SECRET = "SECRET-payload-0xdeadbeef"
OPEN = {"type": "object"}
RECURSIVE = {
    "type": "object",
    "properties": {"node": {"$ref": "#/$defs/N"}},
    "$defs": {"N": {"type": "object", "additionalProperties": {"$ref": "#/$defs/N"}}},
}


def nested_dict(depth: int, leaf: Any = SECRET) -> dict[str, Any]:
    value: Any = leaf
    for _ in range(depth):
        value = {"k": value}
    return value  # type: ignore[no-any-return]


def nested_list(depth: int) -> list[Any]:
    value: Any = SECRET
    for _ in range(depth):
        value = [value]
    return value  # type: ignore[no-any-return]


@pytest.mark.parametrize("schema", [OPEN, RECURSIVE, {"type": "object", "additionalProperties": True}])
@pytest.mark.parametrize("builder", [nested_dict, lambda d: {"k": nested_list(d)}])
def test_ten_thousand_levels_deep_is_one_issue_not_a_crash(schema: dict[str, Any], builder: Any) -> None:
    args = builder(10_000)
    issues = validate_tool_args(schema, args)
    assert len(issues) == 1
    assert f"nesting deeper than {MAX_ARG_DEPTH} levels" in issues[0].problem
    assert SECRET not in issues[0].message
    assert len(issues[0].path) <= 300


def test_depth_at_the_limit_is_fine() -> None:
    assert validate_tool_args(OPEN, nested_dict(MAX_ARG_DEPTH)) == []
    assert validate_tool_args(OPEN, nested_dict(MAX_ARG_DEPTH + 1)) != []


def test_cyclic_args_terminate() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    issues = validate_tool_args(OPEN, loop)
    assert len(issues) == 1 and "nesting" in issues[0].problem


@pytest.mark.stack_depth
def test_recursion_limit_is_untouched_under_a_low_limit() -> None:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        assert validate_tool_args(RECURSIVE, {"node": nested_dict(60, {})}) == []
    finally:
        sys.setrecursionlimit(old)


def test_huge_string_is_validated_without_echo() -> None:
    big = SECRET * 400_000  # ~10 MB
    schema = {"type": "object", "properties": {"q": {"type": "integer"}}}
    issues = validate_tool_args(schema, {"q": big})
    assert [i.message for i in issues] == ["q: expected integer, got string"]
    schema2 = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 10}}}
    assert validate_tool_args(schema2, {"q": big})[0].message == "q: string is longer than 10 characters"


def test_huge_array_is_refused_as_too_large() -> None:
    issues = validate_tool_args(OPEN, {"xs": [[0]] * 200_000})
    assert len(issues) == 1 and "too large" in issues[0].problem


def test_many_invalid_items_stop_at_the_issue_cap() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}
    assert len(validate_tool_args(schema, {"xs": ["x"] * 50_000})) == 20


@pytest.mark.parametrize("key", [1, 2.5, None, (1, 2), b"k", frozenset()])
def test_non_str_keys_are_reported_by_type(key: Any) -> None:
    issues = validate_tool_args(OPEN, {"ok": {key: SECRET}})
    assert len(issues) == 1
    assert issues[0].path == "ok" and "non-string key" in issues[0].problem
    assert SECRET not in issues[0].message


@pytest.mark.parametrize("key", ["__proto__", "__class__", "constructor", "__init__", "__dict__", "prototype"])
async def test_magic_keys_are_plain_data(key: str) -> None:
    seen: list[dict[str, Any]] = []
    t = define_tool(
        name="t",
        description="",
        input_schema={"type": "object", "properties": {"a": {"type": "string"}}},
        execute=lambda args, ctx: seen.append(args) or "ok",
    )
    args = {"a": "x", key: {"polluted": True}}
    out = await execute_tool(t, "t", args, ToolContext())
    assert out.content == "ok" and seen == [args]
    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    issues = validate_tool_args(closed, args)
    assert [i.path for i in issues] == [key]
    assert validate_json({"type": "object", "required": [key]}, {}) != []
    assert not hasattr(object(), "polluted")


async def test_decorated_tool_refuses_magic_keys_and_is_not_run() -> None:
    calls: list[Any] = []

    @tool
    def f(a: str) -> str:
        """F."""
        calls.append(a)
        return a

    out = await execute_tool(f, "f", {"a": "x", "__class__": "Evil"}, ToolContext())
    assert out.error_code == ERR_INVALID_TOOL_ARGS and calls == []


async def test_hostile_args_through_execute_tool_never_run_the_tool() -> None:
    calls: list[Any] = []
    t = define_tool(name="t", description="", input_schema=OPEN, execute=lambda a, c: calls.append(a))
    for args in (nested_dict(10_000), {1: SECRET}, [SECRET], SECRET, None):
        out = await execute_tool(t, "t", args, ToolContext())
        assert out.error_code == ERR_INVALID_TOOL_ARGS
        assert SECRET not in out.content
    assert calls == []


def test_hostile_schema_pattern_does_not_raise() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?P<x"}}}
    assert validate_tool_args(schema, {"a": SECRET}) == []


def test_a_caller_deep_in_its_stack_gets_an_issue_not_a_recursion_error() -> None:
    old = sys.getrecursionlimit()
    depth = len(__import__("inspect").stack(0))
    sys.setrecursionlimit(depth + 60)
    try:
        issues = validate_tool_args(RECURSIVE, {"node": nested_dict(60, {})})
    finally:
        sys.setrecursionlimit(old)
    assert len(issues) == 1 and "nesting" in issues[0].problem


def _nest_objects(levels: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def _nest_arrays(levels: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def test_an_empty_container_at_the_depth_limit_is_accepted_whatever_the_schema() -> None:
    """The depth limit is the same with or without a schema: a leaf (an empty {} or [] too) may sit at level 64."""
    recursive_object = {"type": "object", "properties": {"a": {"$ref": "#"}}}
    recursive_array = {"type": "array", "items": {"$ref": "#"}}
    for schema, nest, leaf in ((recursive_object, _nest_objects, {}), (recursive_array, _nest_arrays, [])):
        assert validate_json({}, nest(MAX_ARG_DEPTH, leaf)) == []
        assert validate_json(schema, nest(MAX_ARG_DEPTH, leaf)) == []
        deeper = validate_json(schema, nest(MAX_ARG_DEPTH, [1] if leaf == [] else {"a": {}}))
        assert [i.problem for i in deeper] == [f"nesting deeper than {MAX_ARG_DEPTH} levels"]
