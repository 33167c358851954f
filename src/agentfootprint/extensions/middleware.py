"""Middleware: the ``input`` message chain and the tool-dispatch chain, every decision on the record.

``AgentBuilder.message_middleware(fn)`` runs ``fn(message, ctx)`` on the user's message before the run commits it
(``phase="input"``) or on the final answer (``phase="output"``). ``AgentBuilder.tool_middleware(fn)`` wraps every
tool dispatch, in declaration order: ``fn(call, call_next)`` may permit, deny, rewrite arguments, answer from a
cache or audit. Each decision files a row under ``middleware_decisions`` (never the values it saw) and an
``agentfootprint.middleware.decision`` event.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentfootprint.agent import CallTool, Extension, InputRefusedError, RunContext, ToolCallRequest
from agentfootprint.events.catalogue import MiddlewareDecision
from agentfootprint.extensions._ledger import file_row
from agentfootprint.tools import ToolOutcome

__all__ = [
    "DECISIONS_KEY",
    "Allow",
    "Deny",
    "MessageDeniedError",
    "MessageMiddleware",
    "MessageMiddlewareChain",
    "ToolMiddleware",
    "ToolMiddlewareChain",
    "allow",
    "deny",
]

DECISIONS_KEY = "middleware_decisions"
_ERR_TOOL_MIDDLEWARE = "ERR_TOOL_MIDDLEWARE"
_ERR_TOOL_DENIED = "ERR_TOOL_DENIED"
Phase = Literal["input", "output"]


@dataclass(frozen=True, slots=True)
class Allow:
    """Let it through, optionally changed (``value``); ``why`` is required when it changes."""

    value: Any = None
    why: str | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse: for a tool, ``reason`` is the error result the model reads; for a message, the run is refused."""

    reason: str


def allow(value: Any = None, why: str | None = None) -> Allow:
    """Pass through; with ``value`` the message (or the call's arguments) is replaced, and ``why`` says why."""
    if value is not None and not why:
        raise ValueError("allow(value, why): a middleware that changes what passes must say why")
    return Allow(value=value, why=why)


def deny(reason: str) -> Deny:
    """Refuse with ``reason`` (written for the model when it refuses a tool call)."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("deny(reason) needs a non-empty reason")
    return Deny(reason=reason)


MessageMiddleware = Callable[[str, RunContext], "str | Allow | Deny | Awaitable[str | Allow | Deny | None] | None"]
"""``fn(message, ctx)`` → the message (changed or not), ``allow(...)``, ``deny(reason)`` or None (unchanged)."""
ToolMiddleware = Callable[[ToolCallRequest, CallTool], "ToolOutcome | Deny | Awaitable[ToolOutcome | Deny]"]
"""``fn(call, call_next)`` → ``await call_next(call)`` (or ``call.with_args(...)``), an answer of its own, or
``deny(reason)``."""


class MessageDeniedError(InputRefusedError):
    """A message middleware refused the user's message (``phase="input"``) or the answer (``"output"``); it
    carries the middleware's name, the phase and the reason, never the refused text."""

    code = "ERR_MESSAGE_DENIED"

    def __init__(self, reason: str, *, middleware: str, phase: Phase) -> None:
        super().__init__(f"{phase} refused by middleware '{middleware}': {reason[:300]}", extension=middleware)
        self.middleware = middleware
        self.phase = phase
        self.reason = reason[:300]


def _name_of(fn: Any, given: str | None) -> str:
    name = given or getattr(fn, "name", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return str(name)[:80]


async def _settle(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class MessageMiddlewareChain(Extension):
    """The message chain of one phase; the first refusal wins and later links do not run."""

    name = "message_middleware"

    def __init__(self) -> None:
        self.links: list[tuple[str, Phase, MessageMiddleware]] = []

    def add(self, fn: MessageMiddleware, *, name: str | None = None, phase: Phase = "input") -> None:
        if not callable(fn):
            raise TypeError("message_middleware() takes a callable fn(message, ctx)")
        if phase not in ("input", "output"):
            raise ValueError("message_middleware phase must be 'input' or 'output'")
        self.links.append((_name_of(fn, name), phase, fn))

    async def _walk(self, ctx: RunContext, text: str, phase: Phase) -> str:
        for name, link_phase, fn in self.links:
            if link_phase != phase:
                continue
            row: dict[str, Any] = {"middleware": name, "moment": phase, "outcome": "allow", "changed": False}
            try:
                verdict = await _settle(fn(text, ctx))
            except Exception as exc:  # a middleware that fails did not say yes
                row.update(outcome="deny", why=f"middleware raised {type(exc).__name__}")
                file_row(ctx, DECISIONS_KEY, row, MiddlewareDecision)
                raise MessageDeniedError(row["why"], middleware=name, phase=phase) from None
            if isinstance(verdict, Deny):
                row.update(outcome="deny", why=verdict.reason[:300])
                file_row(ctx, DECISIONS_KEY, row, MiddlewareDecision)
                raise MessageDeniedError(verdict.reason, middleware=name, phase=phase)
            new = verdict.value if isinstance(verdict, Allow) else verdict
            if isinstance(verdict, Allow) and verdict.why:
                row["why"] = verdict.why[:300]
            if new is not None and not isinstance(new, str):
                raise TypeError(f"message middleware '{name}' returned {type(new).__name__}, not a str")
            if new is not None and new != text:
                row["changed"] = True
                text = new
            file_row(ctx, DECISIONS_KEY, row, MiddlewareDecision)
        return text

    async def on_input(self, ctx: RunContext, message: str) -> str:
        return await self._walk(ctx, message, "input")

    async def on_answer(self, ctx: RunContext, answer: str) -> str:
        return await self._walk(ctx, answer, "output")


class ToolMiddlewareChain(Extension):
    """The tool-dispatch chain, in declaration order, around every call. A raising link fails closed."""

    name = "tool_middleware"

    def __init__(self) -> None:
        self.links: list[tuple[str, ToolMiddleware]] = []

    def add(self, fn: ToolMiddleware, *, name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError("tool_middleware() takes a callable fn(call, call_next)")
        self.links.append((_name_of(fn, name), fn))

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        chain = call_next
        for name, fn in reversed(self.links):
            chain = self._link(ctx, name, fn, chain)
        return await chain(call)

    def _link(self, ctx: RunContext, name: str, fn: ToolMiddleware, inner: CallTool) -> CallTool:
        async def link(call: ToolCallRequest) -> ToolOutcome:
            seen: list[ToolCallRequest] = []

            async def call_next(request: ToolCallRequest) -> ToolOutcome:
                seen.append(request)
                return await inner(request)

            row: dict[str, Any] = {
                "middleware": name,
                "moment": "tool",
                "tool": call.name,
                "tool_call_id": call.tool_call_id,
                "iteration": ctx.iteration,
            }
            try:
                verdict = await _settle(fn(call, call_next))
            except Exception as exc:
                row.update(outcome="failed", why=f"middleware raised {type(exc).__name__}")
                file_row(ctx, DECISIONS_KEY, row, MiddlewareDecision)
                return ToolOutcome(
                    content=f"Error: tool call refused: middleware '{name}' failed ({type(exc).__name__})",
                    is_error=True,
                    error_code=_ERR_TOOL_MIDDLEWARE,
                )
            if isinstance(verdict, Deny):
                verdict = ToolOutcome(content=verdict.reason[:2000], is_error=True, error_code=_ERR_TOOL_DENIED)
                row["why"] = verdict.content[:300]
            if not isinstance(verdict, ToolOutcome):
                row.update(outcome="failed", why=f"middleware returned {type(verdict).__name__}")
                file_row(ctx, DECISIONS_KEY, row, MiddlewareDecision)
                return ToolOutcome(
                    content=f"Error: tool call refused: middleware '{name}' returned no tool outcome",
                    is_error=True,
                    error_code=_ERR_TOOL_MIDDLEWARE,
                )
            if not seen:
                row["outcome"] = "denied" if verdict.is_error else "answered"
            elif seen[-1].args != call.args:
                row["outcome"] = "rewrote"
            else:
                row["outcome"] = "passed"
            file_row(ctx, DECISIONS_KEY, row, MiddlewareDecision)
            return verdict

        return link
