"""ToolRegistry: ordered, duplicate names refused, execution by name."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.tools import (
    DuplicateToolError,
    InvalidToolDefinitionError,
    ToolContext,
    ToolRegistry,
    define_tool,
    tool,
)
from agentfootprint.tools._codes import ERR_UNKNOWN_TOOL


def make(name: str) -> Any:
    return define_tool(
        name=name, description=name, input_schema={"type": "object"}, execute=lambda args, ctx: name.upper()
    )


def test_registry_keeps_order_and_specs() -> None:
    reg = ToolRegistry([make("b"), make("a")])
    assert reg.names() == ["b", "a"]
    assert [s["name"] for s in reg.specs()] == ["b", "a"]
    assert len(reg) == 2 and "a" in reg and "z" not in reg and 3 not in reg
    assert [t.name for t in reg] == ["b", "a"]
    assert reg.get("a") is not None and reg.get("z") is None
    assert repr(reg) == "ToolRegistry(b, a)"


def test_duplicates_are_refused_naming_the_name() -> None:
    with pytest.raises(DuplicateToolError) as info:
        ToolRegistry([make("lookup"), make("other"), make("lookup")])
    assert info.value.code == "ERR_DUPLICATE_TOOL"
    assert "'lookup'" in str(info.value) and info.value.name == "lookup"


def test_non_tools_are_refused() -> None:
    with pytest.raises(InvalidToolDefinitionError, match="expected a Tool"):
        ToolRegistry([lambda: None])  # type: ignore[list-item]


def test_without() -> None:
    reg = ToolRegistry([make("a"), make("b"), make("c")])
    assert reg.without("b", "nope").names() == ["a", "c"]
    assert reg.names() == ["a", "b", "c"]


async def test_execute_by_name() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    reg = ToolRegistry([add, make("x")])
    assert (await reg.execute("add", {"a": 1, "b": 2}, ToolContext())).content == "3"
    out = await reg.execute("sub", {}, ToolContext())
    assert out.error_code == ERR_UNKNOWN_TOOL and "Available tools: add, x." in out.content
    limited = await reg.execute("x", {}, ToolContext(), max_result_chars=0)
    assert limited.content == "X"


async def test_execute_hands_the_name_context_and_options_through() -> None:
    seen: list[Any] = []
    echo = define_tool(
        name="echo",
        description="echo",
        input_schema={"type": "object"},
        execute=lambda args, ctx: seen.append((args, ctx.run_id)) or "x" * 50,
    )
    reg = ToolRegistry([echo])
    out = await reg.execute("echo", {"a": 1}, ToolContext(run_id="r-1"), max_result_chars=10)
    assert seen == [({"a": 1}, "r-1")] and out.truncated and not out.is_error
    missing = await reg.execute("nope", {}, ToolContext())
    assert (missing.is_error, missing.error_code) == (True, ERR_UNKNOWN_TOOL)
    assert "nope" in missing.content and "echo" in missing.content
    assert reg.get(5) is None  # type: ignore[arg-type]
    assert reg.get(["echo"]) is None  # type: ignore[arg-type]
    assert ["echo"] not in reg
    with pytest.raises(InvalidToolDefinitionError) as info:
        reg.add("not a tool")  # type: ignore[arg-type]
    assert str(info.value) == "expected a Tool (from define_tool or @tool), got str"


def test_tool_arguments_error_text() -> None:
    from agentfootprint.tools import ToolArgumentsError
    from agentfootprint.tools.validation import ArgIssue

    issues = [ArgIssue(path="a", expected="x", problem="p"), ArgIssue(path="", expected="y", problem="q")]
    err = ToolArgumentsError(issues)
    assert str(err) == "a: p; (arguments): q" and err.issues == issues
    assert str(ToolArgumentsError([])) == "invalid arguments"
    assert str(DuplicateToolError("t")) == "duplicate tool name: 't' is registered twice"
