"""Who a run serves: the outermost run a composition opened, reached only through an unguessable, live link.

The registry lives with the agent because an agent resolves links itself: a ``parent_run`` in its input (refused
unless live), or what a chart a caller built hands a mounted agent (``parent_run`` or ``member_identity``)."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

from agentfootprint.agent.errors import ParentRunRefusedError
from agentfootprint.identity import Identity

__all__ = [
    "ParentRun",
    "ParentRunRecord",
    "close_parent_run",
    "open_parent_run",
    "open_run_for",
    "resolve_parent_run",
]


@dataclass(frozen=True)
class ParentRun:
    """The outermost run: its id (members' ``ctx.run_id``), the caller it named, and the request it serves."""

    run_id: str
    identity: Identity | None
    session_id: str | None = None
    request: Any = None


@dataclass(frozen=True)
class ParentRunRecord(ParentRun):
    """A run as the registry holds it, with the link that names it (only the link ever travels)."""

    link: str = ""


_lock = threading.Lock()
_open: dict[str, ParentRunRecord] = {}
_by_run: dict[str, str] = {}


def open_parent_run(
    run_id: str, identity: Identity | None, session_id: str | None = None, request: Any = None
) -> ParentRunRecord:
    """Open the run a top-level composition run hands its members; close it with ``close_parent_run``."""
    record = ParentRunRecord(
        run_id=run_id, identity=identity, session_id=session_id, request=request, link=secrets.token_urlsafe(24)
    )
    with _lock:
        _open[record.link] = record
        _by_run[run_id] = record.link
    return record


def close_parent_run(record: ParentRunRecord | None) -> None:
    """Release a run this module opened: its link is dead from now on."""
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
