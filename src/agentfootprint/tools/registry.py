"""``ToolRegistry``: the tools of one agent by name; duplicates refused."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agentfootprint.tools.context import ToolContext
from agentfootprint.tools.errors import DuplicateToolError, InvalidToolDefinitionError
from agentfootprint.tools.execute import ToolOutcome, execute_tool
from agentfootprint.tools.tool import Tool

__all__ = ["ToolRegistry"]


class ToolRegistry:
    """An ordered name → ``Tool`` map that refuses duplicate names (``DuplicateToolError``)."""

    __slots__ = ("_tools",)

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    def add(self, item: Tool) -> None:
        """Register one tool; a second tool with the same name is refused."""
        if not isinstance(item, Tool):
            raise InvalidToolDefinitionError(f"expected a Tool (from define_tool or @tool), got {type(item).__name__}")
        if item.name in self._tools:
            raise DuplicateToolError(item.name)
        self._tools[item.name] = item

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name) if isinstance(name, str) else None

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """``to_spec()`` of every tool, in registration order."""
        return [t.to_spec() for t in self._tools.values()]

    def without(self, *names: str) -> ToolRegistry:
        """A new registry without the named tools (unknown names are ignored)."""
        drop = set(names)
        return ToolRegistry(t for n, t in self._tools.items() if n not in drop)

    async def execute(self, name: str, args: Any, ctx: ToolContext, **options: Any) -> ToolOutcome:
        """``execute_tool`` for ``name`` against this registry (unknown names list the available ones)."""
        return await execute_tool(self.get(name), name, args, ctx, available=self.names(), **options)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({', '.join(self._tools)})"
