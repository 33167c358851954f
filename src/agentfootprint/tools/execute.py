"""Running one tool call: unknown tool, argument validation, permission, check-in, execution, result."""

from __future__ import annotations

import dataclasses
import inspect
import json
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.tools._codes import (
    ERR_CHECK_IN_DECLINED,
    ERR_INVALID_TOOL_ARGS,
    ERR_PERMISSION_DENIED,
    ERR_PERMISSION_HALT,
    ERR_TOOL_RAISED,
    ERR_TOOL_RESULT_UNSERIALISABLE,
    ERR_UNKNOWN_TOOL,
)
from agentfootprint.tools.context import ToolContext
from agentfootprint.tools.errors import ToolArgumentsError
from agentfootprint.tools.tool import PermissionChecker, Tool
from agentfootprint.tools.validation import ArgIssue, format_issues, validate_tool_args

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "PermissionDecision",
    "ToolOutcome",
    "execute_tool",
    "serialise_result",
]

DEFAULT_MAX_RESULT_CHARS: int | None = None
"""Tool results are never measured or cut unless a ceiling is given (``max_tool_result_chars``)."""
_MAX_ERROR_MESSAGE = 500
_MAX_LISTED_TOOLS = 20
_Decision = Literal["allow", "deny", "halt"]


class PermissionDecision(BaseModel):
    """A permission checker's verdict with an optional reason (shown to the model on deny/halt)."""

    model_config = ConfigDict(frozen=True)

    decision: _Decision
    reason: str | None = None

    @classmethod
    def allow(cls) -> PermissionDecision:
        return cls(decision="allow")

    @classmethod
    def deny(cls, reason: str | None = None) -> PermissionDecision:
        return cls(decision="deny", reason=reason)

    @classmethod
    def halt(cls, reason: str | None = None) -> PermissionDecision:
        return cls(decision="halt", reason=reason)


class ToolOutcome(BaseModel):
    """The result of one tool call: ``content`` is the tool message the model gets."""

    content: str
    is_error: bool = False
    error_code: str | None = None
    halted: bool = False
    truncated: bool = False
    elapsed_ms: float = 0.0
    paused: bool = False
    """The tool declares ``pauses`` (e.g. ``ask_human``): it was not run; the loop must pause."""
    needs_check_in: bool = False
    """The tool wants human consent first: it was not run; the loop must pause and ask."""
    question: str | None = None
    """The question a consent pause asks (None: the default "Allow tool ... to run?")."""
    issues: list[ArgIssue] = Field(default_factory=list)
    args: dict[str, Any] | None = Field(default=None, repr=False)
    """The validated arguments (for pause data); real values, never recorded unredacted."""
    value: Any = Field(default=None, exclude=True, repr=False)
    """The tool's raw return value (not serialised); ``None`` when it did not run."""


def _clean_name(name: object) -> str:
    text = name if isinstance(name, str) else f"<{type(name).__name__}>"
    text = "".join(ch if ch.isprintable() else "?" for ch in text[:65])
    return text if len(text) <= 64 else text[:63] + "…"


def _cap_message(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_MESSAGE else text[: _MAX_ERROR_MESSAGE - 1] + "…"


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""


def _error(content: str, code: str, **extra: Any) -> ToolOutcome:
    return ToolOutcome(content=content, is_error=True, error_code=code, **extra)


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return list(value)
    raise TypeError(type(value).__name__)


def serialise_result(value: Any) -> str:
    """A tool's return value as message text: a ``str`` as is, else ``json.dumps(value)`` (models dumped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump(mode="json"))
    return json.dumps(value, default=_json_default)


def _cap_result(content: str, limit: int | None) -> tuple[str, bool]:
    if limit is None or limit <= 0 or len(content) <= limit:
        return content, False
    dropped = len(content) - limit
    return f"{content[:limit]}\n…[truncated: {dropped} more characters]", True


async def _ask_permission(
    checker: PermissionChecker, name: str, args: dict[str, Any], ctx: ToolContext
) -> PermissionDecision:
    try:
        verdict = checker(name, args, ctx)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:
        return PermissionDecision.deny(f"the permission check failed ({type(exc).__name__})")
    if isinstance(verdict, PermissionDecision):
        return verdict
    if verdict is True:
        return PermissionDecision.allow()
    if verdict is False:
        return PermissionDecision.deny()
    if verdict in ("allow", "deny", "halt"):
        return PermissionDecision(decision=verdict)
    return PermissionDecision.deny(f"the permission check returned an unsupported {type(verdict).__name__}")


def _unknown(name: object, available: Sequence[str]) -> ToolOutcome:
    names = list(available)
    listed = ", ".join(names[:_MAX_LISTED_TOOLS])
    if len(names) > _MAX_LISTED_TOOLS:
        listed += f", … and {len(names) - _MAX_LISTED_TOOLS} more"
    tail = f" Available tools: {listed}." if names else " No tools are available."
    return _error(f"Error: unknown tool {_clean_name(name)!r}.{tail}", ERR_UNKNOWN_TOOL)


async def execute_tool(
    tool: Tool | None,
    name: str,
    args: Any,
    ctx: ToolContext,
    *,
    available: Sequence[str] = (),
    permission: PermissionChecker | None = None,
    check_in: Literal["approved", "declined"] | None = None,
    check_in_note: str | None = None,
    max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
    validate: bool = True,
    passthrough: tuple[type[BaseException], ...] = (),
    args_error: str | None = None,
) -> ToolOutcome:
    """Run one tool call; never raises for the tool's sake (``CancelledError`` and ``passthrough`` propagate).

    Order: unknown → validate → permission (run-level, then the tool's) → pause/check-in gate → execute.
    ``args_error`` (a provider's ``ToolCall.args_error``) makes the call invalid without running anything.
    """
    if tool is None:
        return _unknown(name, available)
    if args_error is not None:
        issue = ArgIssue(path="", expected="object", problem=_cap_message(args_error))
        return _error(format_issues(tool.name, [issue]), ERR_INVALID_TOOL_ARGS, issues=[issue])
    if validate:
        issues = validate_tool_args(tool.input_schema, args)
        if issues:
            return _error(format_issues(tool.name, issues), ERR_INVALID_TOOL_ARGS, issues=issues)
    elif not isinstance(args, dict):
        args = {}
    call_args: dict[str, Any] = args
    for checker in (permission, tool.permission):
        if checker is None:
            continue
        verdict = await _ask_permission(checker, tool.name, call_args, ctx)
        if verdict.decision == "halt":
            why = f": {_cap_message(verdict.reason)}" if verdict.reason else ""
            return _error(
                f"Run halted by the permission policy at tool {tool.name}{why}",
                ERR_PERMISSION_HALT,
                halted=True,
            )
        if verdict.decision == "deny":
            why = f": {_cap_message(verdict.reason)}" if verdict.reason else ""
            return _error(f"Error: permission denied for tool {tool.name}{why}", ERR_PERMISSION_DENIED)
    if tool.pauses:
        return ToolOutcome(content="", paused=True, args=call_args)
    if check_in != "approved" and tool.needs_check_in(call_args):
        if check_in == "declined":
            note = f": {_cap_message(check_in_note)}" if check_in_note else ""
            return _error(f"Declined by human{note}", ERR_CHECK_IN_DECLINED)
        return ToolOutcome(content="", needs_check_in=True, args=call_args)
    started = time.perf_counter()
    try:
        value = tool.execute(call_args, ctx)
        if inspect.isawaitable(value):
            value = await value
    except passthrough:
        raise
    except ToolArgumentsError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        text = format_issues(tool.name, exc.issues)
        return _error(text, ERR_INVALID_TOOL_ARGS, issues=exc.issues, elapsed_ms=elapsed)
    except Exception as exc:
        elapsed = (time.perf_counter() - started) * 1000
        message = _cap_message(_safe_str(exc))
        text = f"Error: tool {tool.name} raised {type(exc).__name__}" + (f": {message}" if message else "")
        return _error(text, ERR_TOOL_RAISED, elapsed_ms=elapsed)
    elapsed = (time.perf_counter() - started) * 1000
    try:
        content = serialise_result(value)
    except (TypeError, ValueError, RecursionError, OverflowError):
        text = f"Error: tool {tool.name} returned a {type(value).__name__} that cannot be serialised to JSON"
        return _error(text, ERR_TOOL_RESULT_UNSERIALISABLE, elapsed_ms=elapsed, value=value)
    content, truncated = _cap_result(content, max_result_chars)
    return ToolOutcome(content=content, truncated=truncated, elapsed_ms=elapsed, value=value, args=call_args)
