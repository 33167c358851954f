"""Who a composition member runs for: the outermost run, reached through an unguessable, live link."""

from __future__ import annotations

from agentfootprint.agent.errors import MemberIdentityError, ParentRunRefusedError
from agentfootprint.agent.member_run import (
    ParentRun,
    ParentRunRecord,
    close_parent_run,
    open_parent_run,
    open_run_for,
    resolve_parent_run,
)
from agentfootprint.errors import AgentFootprintError

__all__ = [
    "MemberIdentityError",
    "ParentRun",
    "ParentRunRecord",
    "ParentRunRefusedError",
    "ResumeRequestConflictError",
    "close_parent_run",
    "open_parent_run",
    "open_run_for",
    "resolve_parent_run",
]


class ResumeRequestConflictError(AgentFootprintError, RuntimeError):
    """A resume names a caller while the run it resumes is still open under another."""

    code = "ERR_RESUME_REQUEST_CONFLICT"

    def __init__(self, door: str) -> None:
        super().__init__(f"{door}: the run is still open under another caller; refused before anything runs")
