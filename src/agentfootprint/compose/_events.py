"""Event fan-out for members: a member's stage events reach its own listeners and the composition's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agentfootprint.events import AgentEvent, EventDispatcher, PayloadArg
from agentfootprint.events import types as ev

COMPOSITION_TYPES = (
    "agentfootprint.composition.fork_start",
    "agentfootprint.composition.branch_complete",
    "agentfootprint.composition.route_decided",
    "agentfootprint.composition.iteration_start",
)


def composition_dispatcher() -> EventDispatcher:
    dispatcher = EventDispatcher()
    for t in COMPOSITION_TYPES:
        dispatcher.register_type(t)
    return dispatcher


class TeeEvents:
    """Quacks like the dispatcher the agent's stages use: emits to every dispatcher that listens."""

    def __init__(self, *dispatchers: EventDispatcher) -> None:
        self._targets = dispatchers

    def has_listeners(self, event_type: str) -> bool:
        return any(d.has_listeners(event_type) for d in self._targets)

    def has_any_listeners(self) -> bool:
        return any(d.has_any_listeners for d in self._targets)

    def emit(
        self,
        event_type: str,
        payload: PayloadArg = None,
        *,
        run_id: str | None = None,
        runtime_stage_id: str | None = None,
        iteration: int | None = None,
        timestamp: float | None = None,
        redact: Callable[[Any], Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> AgentEvent | None:
        last = None
        for d in self._targets:
            if d.has_listeners(event_type):
                event = d.emit(
                    event_type,
                    payload,
                    run_id=run_id,
                    runtime_stage_id=runtime_stage_id,
                    iteration=iteration,
                    timestamp=timestamp,
                    redact=redact,
                    meta=meta,
                )
                last = event or last
        return last

    def is_known(self, event_type: str) -> bool:
        return all(d.is_known(event_type) for d in self._targets)

    def register_type(self, event_type: str) -> str:
        for d in self._targets:
            d.register_type(event_type)
        return event_type


__all__ = ["COMPOSITION_TYPES", "TeeEvents", "composition_dispatcher", "ev"]
