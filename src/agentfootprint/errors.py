"""Base error type: every refusal in agentfootprint is typed and carries a stable ``code``."""

from __future__ import annotations

import re
from typing import Any

_SAFE_SEGMENT = re.compile(r"^[a-z_][a-z0-9_]{0,47}$")


class AgentFootprintError(Exception):
    """Root of all agentfootprint errors; ``code`` is stable across releases, the message is for people."""

    code: str = "ERR_AGENTFOOTPRINT"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


def safe_segment(part: object) -> str:
    """One segment of a field path as it may be shown: an index, a lower_snake_case name, else ``*`` (a key the
    input chose is data, and is never echoed)."""
    if isinstance(part, int) and not isinstance(part, bool):
        return str(part)
    if isinstance(part, str) and _SAFE_SEGMENT.match(part):
        return part
    return "*"


def validation_field(err: Any, default: str = "checkpoint") -> str:
    """The dotted location of a pydantic ``ValidationError``'s first problem (never its value, nor a key the input
    chose: such segments read ``*``)."""
    errors = err.errors()
    loc = errors[0].get("loc", ()) if errors else ()
    return ".".join(safe_segment(p) for p in loc) or default
