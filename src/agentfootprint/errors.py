"""Base error type: every refusal in agentfootprint is typed and carries a stable ``code``."""

from __future__ import annotations

from typing import Any


class AgentFootprintError(Exception):
    """Root of all agentfootprint errors; ``code`` is stable across releases, the message is for people."""

    code: str = "ERR_AGENTFOOTPRINT"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


def validation_field(err: Any, default: str = "checkpoint") -> str:
    """The dotted location of a pydantic ``ValidationError``'s first problem (never its value)."""
    errors = err.errors()
    loc = errors[0].get("loc", ()) if errors else ()
    return ".".join(str(p) for p in loc) or default
