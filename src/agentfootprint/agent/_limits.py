"""Limits and their defaults, read once at build: the cost budget, the tool-result ceiling, the window's pin of
the newest tool results, and what a turn says when its action budget runs out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentfootprint.agent.errors import InvalidLimitError

WRAP_UP_INSTRUCTION = (
    "Your action budget for this turn is exhausted. Do not request tools. "
    "Give your best final answer from what you have: what you completed, "
    "what remains undone, and anything the person should know."
)
"""The one message the wrap-up call carries (a user turn), verbatim."""

DEFAULT_KEEP_LAST_TOOL_RESULTS = 2


class CostBudget(BaseModel):
    """A cost budget in USD and what crossing it does: ``warn`` (the default: one event, the run goes on) or
    ``halt`` (the loop stops at its next routing decision; ``stopped_early().reason == "cost-budget"``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float
    on_exceed: Literal["warn", "halt"] = "warn"


class EmptyAnswerWarning(UserWarning):
    """A limit stopped the turn and the answer handed back is the empty string (warned once per run)."""


def _positive(option: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InvalidLimitError(option, "must be a positive finite number of USD")
    return float(value)


def read_cost_budget(value: Any, on_exceed: Any = None) -> CostBudget | None:
    """A bare number is ``{"usd": n, "on_exceed": "warn"}``; a dict names ``usd`` and optionally ``on_exceed``."""
    if value is None:
        return None
    if isinstance(value, CostBudget):
        budget = value
    elif isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value) or set(value) - {"usd", "on_exceed"} or "usd" not in value:
            raise InvalidLimitError("cost_budget", 'takes a number of USD or {"usd": n, "on_exceed": "warn" | "halt"}')
        action = value.get("on_exceed", "warn")
        if action not in ("warn", "halt"):
            raise InvalidLimitError("cost_budget.on_exceed", "must be 'warn' or 'halt'")
        budget = CostBudget(usd=_positive("cost_budget.usd", value["usd"]), on_exceed=action)
    else:
        budget = CostBudget(usd=_positive("cost_budget", value))
    if on_exceed is not None:
        if on_exceed not in ("warn", "halt"):
            raise InvalidLimitError("cost_budget.on_exceed", "must be 'warn' or 'halt'")
        budget = CostBudget(usd=budget.usd, on_exceed=on_exceed)
    return budget


def read_result_ceiling(option: str, value: Any) -> int | None:
    """``max_tool_result_chars``: None (never measured, never cut) or a positive int."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidLimitError(option, "must be None (results are never cut) or a positive int of characters")
    return value


def read_keep_last(value: Any) -> int:
    """``keep_last_tool_results``: a non-negative int; ``False`` (or 0) switches the pin off."""
    if value is False:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
        raise InvalidLimitError("keep_last_tool_results", "must be an int in 0..1000, or False to switch it off")
    return value


def read_switch(option: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidLimitError(option, "must be True or False")
    return value


def empty_answer_line(stopped: Mapping[str, Any]) -> str:
    """The one warning a run gives when a limit cut it and the answer it hands back is empty."""
    why = "max_iterations was reached" if stopped.get("reason") == "max-iterations" else "its cost budget was reached"
    wrapped = (
        " One more call went out with the tools withheld, asking for a final answer, and it came back empty too."
        if stopped.get("wrapped_up")
        else ""
    )
    return (
        f"this turn stopped at iteration {stopped.get('iteration')} because {why} while the model was still asking "
        f"for {stopped.get('pending_tool_calls')} tool call(s), which did not run; the answer handed back is the "
        f"empty string (not a refusal, and not the model's conclusion).{wrapped} Raise the limit, or read "
        "agent.stopped_early() and decide what to show."
    )


__all__ = [
    "DEFAULT_KEEP_LAST_TOOL_RESULTS",
    "WRAP_UP_INSTRUCTION",
    "CostBudget",
    "EmptyAnswerWarning",
    "empty_answer_line",
    "read_cost_budget",
    "read_keep_last",
    "read_result_ceiling",
    "read_switch",
]
