"""The event envelope: ``AgentEvent(type, payload, meta)``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.events.catalogue import CustomEventPayload, EventPayload, catalogue_class

__all__ = ["AgentEvent", "EventMeta"]


class EventMeta(BaseModel):
    """Where and when an event happened: run, stage, iteration, wall-clock time, dispatcher sequence; and the
    run's session, correlation and trace ids when the caller gave them."""

    model_config = ConfigDict(frozen=True)

    run_id: str | None = None
    runtime_stage_id: str | None = None
    iteration: int | None = None
    timestamp: float = 0.0
    seq: int = 0
    session_id: str | None = None
    correlation_id: str | None = None
    trace_id: str | None = None


class AgentEvent(BaseModel):
    """One typed event: ``type`` is ``agentfootprint.<domain>.<name>``; ``payload`` is already redacted."""

    model_config = ConfigDict(frozen=True)

    type: str
    payload: dict[str, Any] = Field(default_factory=dict)
    meta: EventMeta = Field(default_factory=EventMeta)

    @property
    def typed(self) -> EventPayload:
        """The payload as its catalogue class (``CustomEventPayload`` for a registered custom type): what the
        library's own code reads. Built over the delivered, redacted mapping without validation."""
        cls = catalogue_class(self.type) or CustomEventPayload
        return cls.view(self.payload)

    @property
    def domain(self) -> str:
        """``stream`` for ``agentfootprint.stream.llm_start``."""
        parts = self.type.split(".")
        return parts[1] if len(parts) >= 3 else ""

    @property
    def name(self) -> str:
        """``llm_start`` for ``agentfootprint.stream.llm_start``."""
        return self.type.rsplit(".", 1)[-1]

    @property
    def short_type(self) -> str:
        """``stream.llm_start`` for ``agentfootprint.stream.llm_start``."""
        return self.type.removeprefix("agentfootprint.")
