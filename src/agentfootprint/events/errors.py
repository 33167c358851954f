"""Typed refusals of the event layer: an unknown event type, a payload that does not fit its catalogue class."""

from __future__ import annotations

import re
from typing import Any

from agentfootprint.errors import AgentFootprintError, validation_field

__all__ = ["InvalidEventPayloadError", "UnknownEventTypeError"]

_NAME = re.compile(r"^(agentfootprint\.)?[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")


class UnknownEventTypeError(AgentFootprintError, ValueError):
    """An event type (or ``domain.*`` glob) that is not in the registry."""

    code = "ERR_UNKNOWN_EVENT_TYPE"

    def __init__(self, event_type: object, *, names_only: bool = False) -> None:
        if isinstance(event_type, str) and (not names_only or _NAME.match(event_type)):
            shown = event_type[:120]
        else:
            shown = f"<{type(event_type).__name__}>"
        super().__init__(
            f"unknown event type {shown!r}: use a known type such as 'agentfootprint.stream.llm_start' "
            "(or 'stream.llm_start'), a 'domain.*' glob, or '*'"
        )
        self.event_type = shown


class InvalidEventPayloadError(AgentFootprintError, ValueError):
    """A payload that does not fit its event type's catalogue class; names the field, never the value."""

    code = "ERR_INVALID_EVENT_PAYLOAD"

    def __init__(self, event_type: str, field: str) -> None:
        super().__init__(f"the payload of {event_type} does not fit its catalogue class at field '{field}'")
        self.event_type = event_type
        self.field = field

    @classmethod
    def from_validation(cls, event_type: str, err: Any) -> InvalidEventPayloadError:
        """From a pydantic ``ValidationError``: its first problem's location (never its value)."""
        return cls(event_type, validation_field(err, "payload"))
