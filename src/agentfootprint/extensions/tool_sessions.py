"""Run-scoped tool sessions: a tool registers a cleanup with ``ctx.on_teardown(...)``; it fires when the run really
ended (completed or crashed), never on a pause, with ``agentfootprint.tools.session_*`` events carrying the run id.

Built into every agent (it costs nothing until a tool registers). ``scope="call"`` closes right after that call.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentfootprint.agent import CallTool, Extension, RunContext, RunOutcome, ToolCallRequest
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import (
    ToolsSessionClosed,
    ToolsSessionCloseFailed,
    ToolsSessionReused,
    ToolsSessionStarted,
)
from agentfootprint.tools import ToolContext, ToolOutcome

__all__ = ["TEARDOWN_TIMEOUT_S", "SessionTier", "ToolSessions"]

TEARDOWN_TIMEOUT_S = 5.0
Scope = Literal["call", "run"]


@dataclass
class _Open:
    tool: str
    key_hash: str
    scope: Scope
    run_id: str
    tool_call_id: str
    cleanup: Callable[[], Any]


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]


class SessionTier:
    """What tools reach as ``ctx.service("tool_sessions")`` (``ToolContext.on_teardown`` uses it)."""

    def __init__(self, ctx: RunContext, registry: dict[tuple[str, str, str], _Open]) -> None:
        self._ctx = ctx
        self._open = registry

    def register(self, call: ToolContext, cleanup: Callable[[], Any], *, key: str | None, scope: Scope) -> str:
        if not callable(cleanup):
            raise TypeError("on_teardown() takes a callable cleanup")
        if scope not in ("call", "run"):
            raise ValueError("on_teardown scope must be 'call' or 'run'")
        ident = (call.tool_name, scope, key or "")
        held = self._open.get(ident)
        payload = {
            "tool": call.tool_name,
            "scope": scope,
            "key_hash": _hash(key or ""),
            "tool_call_id": call.tool_call_id,
        }
        if held is not None:
            self._ctx.emit(ev.TOOLS_SESSION_REUSED, lambda: ToolsSessionReused(**payload))
            return "reused"
        self._open[ident] = _Open(
            call.tool_name, payload["key_hash"], scope, self._ctx.run_id, call.tool_call_id, cleanup
        )
        self._ctx.emit(ev.TOOLS_SESSION_STARTED, lambda: ToolsSessionStarted(**payload))
        return "started"


class ToolSessions(Extension):
    """Holds what tools opened for a run on the agent instance (a pause keeps it open for the resume)."""

    name = "tool_sessions"

    def _registry(self, ctx: RunContext) -> dict[tuple[str, str, str], _Open]:
        runs: dict[str, dict[tuple[str, str, str], _Open]] = ctx.agent_state.setdefault("open", {})
        return runs.setdefault(ctx.turn_id, {})  # a pause and its resume are one turn across two runs

    async def before_run(self, ctx: RunContext) -> None:
        ctx.offer_to_tools("tool_sessions", SessionTier(ctx, self._registry(ctx)))

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        outcome = await call_next(call)
        registry = self._registry(ctx)
        done = [k for k, v in registry.items() if v.scope == "call" and v.tool_call_id == call.tool_call_id]
        if done:
            await self._close(ctx, [registry.pop(k) for k in done], "call-end")
        return outcome

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        if outcome.status == "completed":  # a pause is not an end: the resume needs what is open
            await self._end(ctx)

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        await self._end(ctx)

    async def _end(self, ctx: RunContext) -> None:
        runs: dict[str, dict[tuple[str, str, str], _Open]] = ctx.agent_state.get("open", {})
        held = runs.pop(ctx.turn_id, {})
        if held:
            await self._close(ctx, list(held.values()), "run-end")

    @staticmethod
    async def _close(ctx: RunContext, sessions: list[_Open], reason: str) -> None:
        for s in reversed(sessions):  # reverse order of registration
            payload: dict[str, Any] = {"tool": s.tool, "scope": s.scope, "key_hash": s.key_hash, "reason": reason}
            try:
                result = s.cleanup()
                if inspect.isawaitable(result):
                    await asyncio.wait_for(result, TEARDOWN_TIMEOUT_S)
            except Exception as exc:  # never into the run, never silent
                failed = ToolsSessionCloseFailed(**payload, error_type=type(exc).__name__)
                ctx.emit(ev.TOOLS_SESSION_CLOSE_FAILED, failed)
                continue
            ctx.emit(ev.TOOLS_SESSION_CLOSED, functools.partial(ToolsSessionClosed, **payload))
