"""Tool providers: tools supplied per model call (``static_tools``, ``gated_tools``, ``skill_scoped_tools``, MCP).

A provider answers one question each iteration: which tools should the model see now? The agent consults it in
its ``tools`` stage (``AgentBuilder.tool_provider(p)``) and dispatches what it offered beside the static tools.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentfootprint.identity import Identity
from agentfootprint.tools.errors import InvalidToolDefinitionError
from agentfootprint.tools.tool import Tool

__all__ = [
    "ProviderContext",
    "ToolPredicate",
    "ToolProvider",
    "gated_tools",
    "list_provider_tools",
    "skill_scoped_tools",
    "static_tools",
]


@dataclass(frozen=True, slots=True)
class ProviderContext:
    """What a provider (and a gate's predicate) may look at: the iteration, active skills, who asks."""

    iteration: int = 0
    run_id: str = ""
    active_skills: tuple[str, ...] = ()
    identity: Identity | None = None
    session_id: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class ToolProvider(Protocol):
    """``id`` names the provider in the record; ``list(ctx)`` returns this iteration's tools (sync or async).

    A provider that holds a connection may also define ``async aclose()``: the agent calls it when a run ends
    (completed or failed, never on a pause)."""

    @property
    def id(self) -> str: ...

    def list(self, ctx: ProviderContext) -> Sequence[Tool] | Any: ...


ToolPredicate = Callable[[str, ProviderContext], bool]
"""``fn(tool_name, ctx) -> bool``: whether the model may see that tool on this iteration."""


async def list_provider_tools(provider: ToolProvider, ctx: ProviderContext) -> list[Tool]:
    """The provider's tools for ``ctx`` (awaiting an async ``list``); anything but Tools is refused by name."""
    listed = provider.list(ctx)
    if inspect.isawaitable(listed):
        listed = await listed
    tools = list(listed or ())
    for t in tools:
        if not isinstance(t, Tool):
            raise InvalidToolDefinitionError(f"tool provider '{provider.id}' listed a {type(t).__name__}, not a Tool")
    return tools


@dataclass(frozen=True)
class _Static:
    id: str
    tools: tuple[Tool, ...]

    def list(self, ctx: ProviderContext) -> Sequence[Tool]:
        return self.tools


@dataclass(frozen=True)
class _Gated:
    id: str
    inner: ToolProvider
    predicate: ToolPredicate

    async def list(self, ctx: ProviderContext) -> Sequence[Tool]:
        return [t for t in await list_provider_tools(self.inner, ctx) if self.predicate(t.name, ctx)]

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


def static_tools(tools: Iterable[Tool], *, id: str = "static") -> ToolProvider:
    """A fixed list of tools, offered on every iteration."""
    fixed = tuple(tools)
    for t in fixed:
        if not isinstance(t, Tool):
            raise InvalidToolDefinitionError(f"static_tools() takes Tools, got {type(t).__name__}")
    return _Static(id=id, tools=fixed)


def gated_tools(inner: ToolProvider, predicate: ToolPredicate, *, id: str | None = None) -> ToolProvider:
    """``inner``'s tools, offered only while ``predicate(name, ctx)`` holds. A raising predicate fails the
    iteration's stage (a broken policy never lets tools through)."""
    if not callable(predicate):
        raise InvalidToolDefinitionError("gated_tools() needs a predicate fn(tool_name, ctx) -> bool")
    return _Gated(id=id or f"gated:{inner.id}", inner=inner, predicate=predicate)


def skill_scoped_tools(skill_id: str, tools: Iterable[Tool]) -> ToolProvider:
    """These tools, offered only while skill ``skill_id`` is active."""
    return gated_tools(
        static_tools(tools, id=f"skill:{skill_id}"),
        lambda _name, ctx: skill_id in ctx.active_skills,
        id=f"skill-scoped:{skill_id}",
    )
