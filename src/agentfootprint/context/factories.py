"""Factories for the built-in injection flavors: facts, steering, instructions and skills."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agentfootprint.context.cache import check_cache_policy
from agentfootprint.context.injection import (
    CachePolicy,
    Content,
    Injection,
    InjectionContext,
    InvalidInjectionError,
    Slot,
    Trigger,
    check_injection_id,
)
from agentfootprint.tools import Tool


def _text(value: Any, what: str, injection_id: str) -> Content:
    if callable(value):
        return value  # type: ignore[no-any-return]
    if not isinstance(value, str) or not value.strip():
        raise InvalidInjectionError(f"{what} of '{injection_id}' must be a non-empty string or a callable")
    return value


def _rule(active_when: Callable[[InjectionContext], bool] | None, label: str | None) -> Trigger:
    if active_when is None:
        return Trigger(kind="always")
    if not callable(active_when):
        raise InvalidInjectionError("active_when must be a callable(ctx) -> bool")
    name = label or getattr(active_when, "__name__", "rule")
    return Trigger(kind="rule", predicate=active_when, label=None if name == "<lambda>" else name)


def _slot(slot: str) -> Slot:
    if slot not in ("system_prompt", "messages"):
        raise InvalidInjectionError(f"slot must be 'system_prompt' or 'messages', got {str(slot)[:40]!r}")
    return slot  # type: ignore[return-value]


def define_fact(
    *,
    id: str,
    data: Content,
    active_when: Callable[[InjectionContext], bool] | None = None,
    slot: Literal["system_prompt", "messages"] = "system_prompt",
    role: Literal["user", "assistant"] = "user",
    description: str = "",
    cache: CachePolicy = "while-active",
) -> Injection:
    """Data the model should know; always on, or while ``active_when(ctx)`` holds."""
    check_injection_id(id)
    check_cache_policy(cache, id)
    return Injection(
        id=id,
        flavor="fact",
        trigger=_rule(active_when, None),
        slot=_slot(slot),
        content=_text(data, "data", id),
        role=role,
        description=description,
        cache=cache,
    )


def define_steering(
    *, id: str, prompt: Content, description: str = "", cache: CachePolicy = "while-active"
) -> Injection:
    """An always-on rule or persona text in the system prompt."""
    check_injection_id(id)
    check_cache_policy(cache, id)
    return Injection(
        id=id,
        flavor="steering",
        trigger=Trigger(kind="always"),
        slot="system_prompt",
        content=_text(prompt, "prompt", id),
        description=description,
        cache=cache,
    )


def define_instruction(
    *,
    id: str,
    prompt: Content,
    active_when: Callable[[InjectionContext], bool] | None = None,
    on_tool_return: str | re.Pattern[str] | None = None,
    template: bool = False,
    slot: Literal["system_prompt", "messages"] = "system_prompt",
    description: str = "",
    cache: CachePolicy = "while-active",
) -> Injection:
    """Guidance that lands when a rule holds or right after a named tool returned; ``template`` fills
    ``{user_message}``, ``{iteration}``, ``{last_tool_name}``, ``{last_tool_result}`` and state values."""
    check_injection_id(id)
    check_cache_policy(cache, id)
    if active_when is not None and on_tool_return is not None:
        raise InvalidInjectionError(f"instruction '{id}' takes active_when or on_tool_return, not both")
    if on_tool_return is not None:
        if not isinstance(on_tool_return, str | re.Pattern) or (isinstance(on_tool_return, str) and not on_tool_return):
            raise InvalidInjectionError(f"on_tool_return of '{id}' must be a tool name or a compiled regex")
        trigger = Trigger(kind="on-tool-return", tool_match=on_tool_return)
    else:
        trigger = _rule(active_when, None)
    return Injection(
        id=id,
        flavor="instruction",
        trigger=trigger,
        slot=_slot(slot),
        content=_text(prompt, "prompt", id),
        template=template,
        description=description,
        cache=cache,
    )


def define_skill(
    *,
    id: str,
    description: str,
    body: Content,
    tools: Sequence[Tool] = (),
    scope_tools: bool = True,
    cache: CachePolicy = "while-active",
) -> Injection:
    """A body of know-how the model activates with ``read_skill(id)``; its tools are offered from then on
    (``scope_tools=False`` offers them from the start)."""
    check_injection_id(id)
    check_cache_policy(cache, id)
    if not isinstance(description, str) or not description.strip():
        raise InvalidInjectionError(f"skill '{id}' needs a description (the model picks skills by it)")
    for t in tools:
        if not isinstance(t, Tool):
            raise InvalidInjectionError(f"skill '{id}' tools must be Tool objects, got {type(t).__name__}")
    return Injection(
        id=id,
        flavor="skill",
        trigger=Trigger(kind="llm-activated"),
        slot="system_prompt",
        content=_text(body, "body", id),
        description=description,
        tools=tuple(tools),
        scope_tools=scope_tools,
        cache=cache,
    )
