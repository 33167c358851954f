"""Rows an extension files as evidence: appended to a recorded list, and emitted when someone listens."""

from __future__ import annotations

from typing import Any

from agentfootprint.agent import RunContext
from agentfootprint.events.catalogue import EventPayload


def file_row(ctx: RunContext, key: str, row: dict[str, Any], event: type[EventPayload] | None = None) -> None:
    """Append ``row`` to the recorded list ``key`` (inside a stage) and emit it as an ``event`` payload (built only
    when someone listens)."""
    if ctx.turn is not None:
        ctx.record_append(key, row)
    if event is not None:
        snapshot = dict(row)  # the row as filed: a later change to it is not this event
        ctx.emit(event.event_type, lambda: event.model_validate(snapshot))
