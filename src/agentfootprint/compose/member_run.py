"""Who a composition member runs for: the outermost run, reached through an unguessable, live link."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

from agentfootprint.agent.errors import MemberIdentityError
from agentfootprint.errors import AgentFootprintError
from agentfootprint.identity import Identity

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


class ParentRunRefusedError(AgentFootprintError, PermissionError):
    """A ``parent_run`` that is not a live link this process issued (forged, copied, or already closed)."""

    code = "ERR_PARENT_RUN_REFUSED"

    def __init__(self, door: str) -> None:
        super().__init__(f"{door}: parent_run is not a live run link; a member never runs under a run it cannot prove")


class ResumeRequestConflictError(AgentFootprintError, RuntimeError):
    """A resume names a caller while the run it resumes is still open under another."""

    code = "ERR_RESUME_REQUEST_CONFLICT"

    def __init__(self, door: str) -> None:
        super().__init__(f"{door}: the run is still open under another caller; refused before anything runs")


@dataclass(frozen=True)
class ParentRun:
    """The outermost run: its id (members' ``ctx.run_id``) and the identity its caller named, if any."""

    run_id: str
    identity: Identity | None
    session_id: str | None = None


@dataclass(frozen=True)
class ParentRunRecord(ParentRun):
    """A run as the registry holds it, with the link that names it (only the link ever travels)."""

    link: str = ""


_lock = threading.Lock()
_open: dict[str, ParentRunRecord] = {}
_by_run: dict[str, str] = {}


def open_parent_run(run_id: str, identity: Identity | None, session_id: str | None = None) -> ParentRunRecord:
    """Open the run a top-level composition run hands its members; close it with ``close_parent_run``."""
    record = ParentRunRecord(run_id=run_id, identity=identity, session_id=session_id, link=secrets.token_urlsafe(24))
    with _lock:
        _open[record.link] = record
        _by_run[run_id] = record.link
    return record


def close_parent_run(record: ParentRunRecord | None) -> None:
    if record is None:
        return
    with _lock:
        _open.pop(record.link, None)
        if _by_run.get(record.run_id) == record.link:
            _by_run.pop(record.run_id, None)


def resolve_parent_run(link: Any, door: str) -> ParentRunRecord:
    """The run a live link names; anything else is refused by name (never used)."""
    if not isinstance(link, str):
        raise ParentRunRefusedError(door)
    with _lock:
        record = _open.get(link)
    if record is None:
        raise ParentRunRefusedError(door)
    return record


def open_run_for(run_id: str) -> ParentRunRecord | None:
    """The still-open run with this id, if any (for resume conflict checks)."""
    with _lock:
        link = _by_run.get(run_id)
        return _open.get(link) if link else None
