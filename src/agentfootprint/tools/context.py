"""What a running tool knows about its call: ``ToolContext``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from agentfootprint.identity import Identity

if TYPE_CHECKING:
    from agentfootprint.flow import CancelToken, RedactionPolicy

__all__ = ["ToolContext"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Per-call facts handed to ``execute(args, ctx)``: call id, run id, the caller's identity and session, the
    iteration, the tool name, the request the run serves (a host's served turn; None when it serves none, e.g. an
    unlinked member), the run link; and what a tool that runs another agent passes on: ``redact`` (the policy this
    run is covered by) and ``signal`` (the run's cancel token)."""

    tool_call_id: str = ""
    run_id: str = ""
    identity: Identity | None = None
    """Only what the caller passed: never a namespace derived from the run or the session."""
    iteration: int = 0
    tool_name: str = ""
    cancelled: asyncio.Event | None = None
    request: Any = None
    parent_run: str | None = None
    """The live link of the composition run a member serves: ``helper.run(msg, parent_run=ctx.parent_run)`` runs a
    helper for that same run (its id, caller and request). None outside a composition."""
    services: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """What the run's extensions hand to tools (``credentials``, ``artifacts``, ``on_teardown``...), by name."""
    session_id: str | None = None
    """The session the transport delivered, beside the identity (None for an unhosted run)."""
    redact: RedactionPolicy | None = None
    """The redaction this run is covered by (the agent's joined with the caller's); None when there is none."""
    signal: CancelToken | None = None
    """The run's cancel token: pass it to a nested run (``other.run(..., signal=ctx.signal)``)."""

    @property
    def is_cancelled(self) -> bool:
        """True once the run asked its tools to stop."""
        if self.signal is not None and self.signal.cancelled:
            return True
        return self.cancelled is not None and self.cancelled.is_set()

    def service(self, name: str, default: Any = None) -> Any:
        """The service an extension offered tools under ``name`` (``default`` when none did)."""
        return self.services.get(name, default)

    def on_teardown(self, cleanup: Any, *, key: str | None = None, scope: str = "run") -> str:
        """Close ``cleanup`` when the run really ends (``scope="run"``: completed or failed, never on a pause) or
        right after this call (``"call"``); a second registration under ``key`` reuses the first.
        Returns ``"started"`` or ``"reused"``."""
        tier = self.services.get("tool_sessions")
        if tier is None:
            raise RuntimeError("on_teardown() needs a running agent (no tool sessions are offered here)")
        outcome: str = tier.register(self, cleanup, key=key, scope=scope)
        return outcome
