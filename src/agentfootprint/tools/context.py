"""What a running tool knows about its call: ``ToolContext``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from agentfootprint.identity import Identity

__all__ = ["ToolContext"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Per-call facts handed to ``execute(args, ctx)``: call id, run id, identity, iteration, tool name, the
    request the run serves (a host's served turn; None when it serves none, e.g. an unlinked member), the run link."""

    tool_call_id: str = ""
    run_id: str = ""
    identity: Identity | None = None
    iteration: int = 0
    tool_name: str = ""
    cancelled: asyncio.Event | None = None
    request: Any = None
    parent_run: str | None = None
    """The live link of the composition run a member serves: ``helper.run(msg, parent_run=ctx.parent_run)`` runs a
    helper for that same run (its id, caller and request). None outside a composition."""

    @property
    def is_cancelled(self) -> bool:
        """True once the run asked its tools to stop."""
        return self.cancelled is not None and self.cancelled.is_set()
