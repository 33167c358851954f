"""Injection = slot × trigger × cache: one primitive for facts, steering, instructions, skills, memory and RAG."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentfootprint.errors import AgentFootprintError
from agentfootprint.identity import Identity
from agentfootprint.tools import Tool

Flavor = Literal["fact", "steering", "instruction", "skill", "memory", "rag", "custom"]
Slot = Literal["system_prompt", "messages", "tools"]
TriggerKind = Literal["always", "rule", "on-tool-return", "llm-activated"]
CachePolicy = Literal["always", "never", "while-active"]

_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$")


class InvalidInjectionError(AgentFootprintError, ValueError):
    """An injection definition that cannot work (bad id, empty content, conflicting triggers)."""

    code = "ERR_INVALID_INJECTION"


@dataclass(frozen=True, slots=True)
class ToolReturn:
    """One tool result of the previous batch, as triggers see it."""

    name: str
    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class InjectionContext:
    """What a trigger predicate or a template sees at the start of an iteration."""

    user_message: str
    iteration: int
    last_tool_results: tuple[ToolReturn, ...] = ()
    activated_skills: tuple[str, ...] = ()
    identity: Identity | None = None
    state: Mapping[str, Any] = field(default_factory=dict)
    run_id: str = ""

    @property
    def last_tool_result(self) -> ToolReturn | None:
        return self.last_tool_results[-1] if self.last_tool_results else None


@dataclass(frozen=True, slots=True)
class Trigger:
    """When an injection is active: always, a rule over the context, after a tool returned, or when the model asks."""

    kind: TriggerKind
    predicate: Callable[[InjectionContext], bool] | None = None
    tool_match: str | re.Pattern[str] | None = None
    label: str | None = None

    def describe(self) -> str:
        if self.kind == "on-tool-return":
            match = self.tool_match.pattern if isinstance(self.tool_match, re.Pattern) else self.tool_match
            return f"on-tool-return {match}"
        if self.kind == "rule" and self.label:
            return f"rule {self.label}"
        return self.kind

    def matches_tool(self, name: str) -> bool:
        if isinstance(self.tool_match, re.Pattern):
            return self.tool_match.fullmatch(name) is not None
        return self.tool_match == name


Content = str | Callable[[InjectionContext], str]


@dataclass(frozen=True, slots=True)
class Injection:
    """A piece of context: what it says (``content``), where it lands (``slot``), when (``trigger``)."""

    id: str
    flavor: Flavor
    trigger: Trigger
    slot: Slot
    content: Content
    cache: CachePolicy = "while-active"
    role: Literal["user", "assistant"] = "user"
    description: str = ""
    tools: tuple[Tool, ...] = ()
    scope_tools: bool = True
    template: bool = False

    def render(self, ctx: InjectionContext) -> str:
        """The text this injection lands with, for this iteration."""
        if callable(self.content):
            return str(self.content(ctx))
        if self.template:
            return self.content.format_map(_TemplateValues(ctx))
        return self.content

    def render_record(self, ctx: InjectionContext) -> tuple[str, dict[str, Any]] | None:
        """(text, extra record fields) for this iteration; None when there is nothing to land (e.g. empty recall)."""
        return self.render(ctx), {}


class _TemplateValues(dict[str, str]):
    """Template placeholders: runtime facts only; an unknown placeholder stays visible as ``{name}``."""

    def __init__(self, ctx: InjectionContext) -> None:
        last = ctx.last_tool_result
        super().__init__(
            user_message=ctx.user_message,
            iteration=str(ctx.iteration),
            last_tool_name=last.name if last else "",
            last_tool_result=last.content if last else "",
            tenant=(ctx.identity.tenant or "") if ctx.identity else "",
            principal=(ctx.identity.principal or "") if ctx.identity else "",
        )
        for key, value in ctx.state.items():
            if isinstance(key, str) and key not in self and isinstance(value, str | int | float | bool):
                self[key] = str(value)

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def check_injection_id(value: Any) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        shown = type(value).__name__ if not isinstance(value, str) else f"{value[:40]!r}"
        raise InvalidInjectionError(f"injection id {shown} is invalid: use 1-128 letters, digits, _ . : -")
    return value
