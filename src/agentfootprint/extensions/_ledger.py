"""Rows an extension files as evidence: appended to a recorded list, and emitted when someone listens."""

from __future__ import annotations

from typing import Any

from agentfootprint.agent import RunContext


def file_row(ctx: RunContext, key: str, row: dict[str, Any], event: str | None = None) -> None:
    """Append ``row`` to the recorded list ``key`` (inside a stage) and emit ``event`` with it."""
    if ctx.turn is not None:
        ctx.record_append(key, row)
    if event is not None:
        ctx.emit(event, row)
