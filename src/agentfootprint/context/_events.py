"""Event types emitted by context engineering (budgets, windows, memory) and their lazy registration."""

from __future__ import annotations

from agentfootprint.events import EventSink

CONTEXT_BUDGET_PRESSURE = "agentfootprint.context.budget_pressure"
CONTEXT_EVICTED = "agentfootprint.context.evicted"
MEMORY_WRITTEN = "agentfootprint.memory.written"
CONTEXT_EVENT_TYPES = (CONTEXT_BUDGET_PRESSURE, CONTEXT_EVICTED, MEMORY_WRITTEN)


def ensure_context_event_types(events: EventSink) -> None:
    """Register the context/memory event types on ``events`` if its registry lacks them (idempotent)."""
    for event_type in CONTEXT_EVENT_TYPES:
        if not events.is_known(event_type):
            events.register_type(event_type)
