"""Base error type: every refusal in agentfootprint is typed and carries a stable ``code``."""

from __future__ import annotations


class AgentFootprintError(Exception):
    """Root of all agentfootprint errors; ``code`` is stable across releases, the message is for people."""

    code: str = "ERR_AGENTFOOTPRINT"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
