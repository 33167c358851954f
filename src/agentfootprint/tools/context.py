"""What a running tool knows about its call: ``ToolContext``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from agentfootprint.identity import Identity

__all__ = ["ToolContext"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Per-call facts handed to ``execute(args, ctx)``: call id, run id, identity, iteration, tool name."""

    tool_call_id: str = ""
    run_id: str = ""
    identity: Identity | None = None
    iteration: int = 0
    tool_name: str = ""
    cancelled: asyncio.Event | None = None

    @property
    def is_cancelled(self) -> bool:
        """True once the run asked its tools to stop."""
        return self.cancelled is not None and self.cancelled.is_set()
