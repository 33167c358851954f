"""ToolRegistry: ordered, duplicate names refused, execution by name."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.tools import (
    ERR_UNKNOWN_TOOL,
    DuplicateToolError,
    InvalidToolDefinitionError,
    ToolContext,
    ToolRegistry,
    define_tool,
    tool,
)


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
