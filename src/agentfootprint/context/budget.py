"""Per-slot character budgets that warn (never truncate), and a window that drops the oldest turns from view."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentfootprint.context._events import (
    CONTEXT_BUDGET_PRESSURE,
    CONTEXT_EVENT_TYPES,
    CONTEXT_EVICTED,
    ensure_context_event_types,
)
from agentfootprint.context.injection import InvalidInjectionError
from agentfootprint.providers import Message

BudgetSlot = Literal["system_prompt", "messages", "tools"]
_TOP_SOURCES = 3


def _limit(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInjectionError(f"{name} must be a positive int (characters) or None")
    return value


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """Character budgets per slot; exceeding one emits ``context.budget_pressure`` and nothing is cut."""

    system_prompt: int | None = None
    messages: int | None = None
    tools: int | None = None

    def __post_init__(self) -> None:
        for name in ("system_prompt", "messages", "tools"):
            _limit(getattr(self, name), f"context budget for {name}")

    def limits(self) -> dict[str, int]:
        """The slots that have a budget → their limit."""
        raw = {"system_prompt": self.system_prompt, "messages": self.messages, "tools": self.tools}
        return {k: v for k, v in raw.items() if v is not None}


def message_chars(message: Message) -> int:
    """Characters a message puts in front of the model (content plus tool-call names and arguments)."""
    size = len(message.content)
    for call in message.tool_calls:
        size += len(call.name) + len(json.dumps(call.args, sort_keys=True, default=str))
    return size


def slot_breakdown(
    system_records: Sequence[Mapping[str, Any]],
    injected: Sequence[Message],
    message_records: Sequence[Mapping[str, Any]],
    conversation: Sequence[Message],
    tool_specs: Sequence[Mapping[str, Any]],
) -> dict[str, list[tuple[str, int]]]:
    """Per slot, (source, characters) pairs: injection records, the conversation, and each offered tool."""
    system = [(str(r.get("source_id")), len(str(r.get("text", "")))) for r in system_records]
    if len(system) > 1:
        system.append(("(separators)", 2 * (len(system) - 1)))
    messages = [(str(r.get("source_id")), message_chars(m)) for r, m in zip(message_records, injected, strict=False)]
    if conversation:
        messages.append(("(conversation)", sum(message_chars(m) for m in conversation)))
    tools = [(str(s.get("name")), len(json.dumps(dict(s), sort_keys=True, default=str))) for s in tool_specs]
    return {"system_prompt": system, "messages": messages, "tools": tools}


def check_budget(budget: ContextBudget, breakdown: Mapping[str, Sequence[tuple[str, int]]]) -> list[dict[str, Any]]:
    """One pressure record per slot over its budget: chars, budget, overage and the largest sources."""
    out: list[dict[str, Any]] = []
    for slot, limit in budget.limits().items():
        parts = list(breakdown.get(slot, ()))
        chars = sum(n for _, n in parts)
        if chars <= limit:
            continue
        largest = sorted(parts, key=lambda p: -p[1])[:_TOP_SOURCES]
        out.append(
            {
                "slot": slot,
                "chars": chars,
                "budget": limit,
                "over_by": chars - limit,
                "largest": [{"source_id": sid, "chars": n} for sid, n in largest],
            }
        )
    return out


@dataclass(frozen=True, slots=True)
class WindowPolicy:
    """Which conversation turns the model sees: the last ``max_turns`` turns and/or at most ``max_chars``
    characters of conversation, dropping whole oldest turns; the current turn is never dropped."""

    max_turns: int | None = None
    max_chars: int | None = None

    def __post_init__(self) -> None:
        _limit(self.max_turns, "window max_turns")
        _limit(self.max_chars, "window max_chars")
        if self.max_turns is None and self.max_chars is None:
            raise InvalidInjectionError("a window needs max_turns and/or max_chars")


def _turns(messages: Sequence[Message]) -> list[list[int]]:
    """Message indexes grouped by turn: a turn starts at a user message (leading non-user ones join turn 0)."""
    turns: list[list[int]] = []
    for i, m in enumerate(messages):
        if m.role == "user" or not turns:
            turns.append([i])
        else:
            turns[-1].append(i)
    return turns


def apply_window(
    messages: Sequence[Message],
    policy: WindowPolicy,
    pinned: frozenset[int] = frozenset(),
    held: list[int] | None = None,
) -> tuple[list[Message], list[dict[str, Any]]]:
    """(what the model sees, one record per dropped message: history index, role, turn, chars, reason).

    ``pinned`` indexes stay in view even inside a dropped turn; each one that did is appended to ``held``."""
    turns = _turns(messages)
    dropped_turns: dict[int, str] = {}
    if policy.max_turns is not None and len(turns) > policy.max_turns:
        for t in range(len(turns) - policy.max_turns):
            dropped_turns[t] = "max-turns"
    if policy.max_chars is not None:
        sizes = [sum(message_chars(messages[i]) for i in turn) for turn in turns]
        total = sum(s for t, s in enumerate(sizes) if t not in dropped_turns)
        for t in range(len(turns) - 1):
            if total <= policy.max_chars:
                break
            if t in dropped_turns:
                continue
            dropped_turns[t] = "max-chars"
            total -= sizes[t]
    if not dropped_turns:
        return list(messages), []
    kept: list[Message] = []
    dropped: list[dict[str, Any]] = []
    for t, turn in enumerate(turns):
        for i in turn:
            m = messages[i]
            if t not in dropped_turns or i in pinned:
                kept.append(m)
                if t in dropped_turns and held is not None:
                    held.append(i)
                continue
            record: dict[str, Any] = {
                "index": i,
                "role": m.role,
                "turn": t,
                "chars": message_chars(m),
                "reason": dropped_turns[t],
            }
            if m.tool_call_id:
                record["tool_call_id"] = m.tool_call_id
            if m.tool_name:
                record["tool_name"] = m.tool_name
            dropped.append(record)
    return kept, dropped


__all__ = [
    "CONTEXT_BUDGET_PRESSURE",
    "CONTEXT_EVENT_TYPES",
    "CONTEXT_EVICTED",
    "ContextBudget",
    "WindowPolicy",
    "apply_window",
    "check_budget",
    "ensure_context_event_types",
    "message_chars",
    "slot_breakdown",
]
