"""Where served threads live: a small ``SessionStore`` protocol, its records, and the in-memory store.

A store keeps per thread the AG-UI messages, the agent's conversation JSON, any held pause (server-side only) and
the last run's recording (served to the thread's owner for ``backtrack``)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from agentfootprint.errors import AgentFootprintError
from agentfootprint.hosting.plan import HeldPause, HeldThread
from agentfootprint.hosting.refusal import WireRequestRefusal
from agentfootprint.identity import Identity

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "LeaseLostError",
    "MemorySessions",
    "PauseRecord",
    "SessionStore",
    "StoredThreadUnreadableError",
    "ThreadLease",
    "ThreadRecord",
    "check_reader",
    "claim_thread",
    "decode_record",
    "decode_recording",
    "encode_record",
    "memory_sessions",
    "owner_key",
]

DEFAULT_LEASE_SECONDS = 900.0
"""How long a thread stays busy for a turn whose host died without freeing it."""


class PauseRecord(BaseModel):
    """A paused run the server keeps: its checkpoint (never sent to the page) and what it waits on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    checkpoint: dict[str, Any]
    kind: Literal["interrupt", "frontend_tool"]
    pause_kind: str = "ask_human"
    tool_call_id: str
    tool_name: str
    question: str = ""
    interrupt_id: str | None = None

    def held(self) -> HeldPause:
        """The ids this pause handed out, as the planner matches answers against them."""
        if self.kind == "frontend_tool":
            return HeldPause(frontend_tool_call_ids=(self.tool_call_id,))
        return HeldPause(interrupt_ids=(self.interrupt_id,) if self.interrupt_id else ())


class ThreadRecord(BaseModel):
    """One thread as stored: AG-UI messages (ids the server handed out), the conversation JSON, a held pause."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[dict[str, Any], ...] = ()
    conversation: dict[str, Any] | None = None
    pause: PauseRecord | None = None

    @property
    def empty(self) -> bool:
        """Whether nothing was ever saved for the thread."""
        return not self.messages and self.conversation is None and self.pause is None

    def held_thread(self) -> HeldThread:
        """What the planner reads: the stored messages and the held pause's ids."""
        return HeldThread(conversation=self.messages, pause=self.pause.held() if self.pause is not None else None)


@dataclass(frozen=True)
class ThreadLease:
    """A thread marked busy for one turn: its id, the lease token, the record as loaded, and whether it is new."""

    thread_id: str
    token: str
    record: ThreadRecord
    created: bool = False


class StoredThreadUnreadableError(AgentFootprintError):
    """A stored thread that cannot be read: the request fails naming the thread, and nothing starts fresh over it."""

    code = "ERR_AGUI_THREAD_UNREADABLE"

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"the stored conversation for thread {thread_id!r} cannot be read")
        self.thread_id = thread_id


class LeaseLostError(AgentFootprintError):
    """A turn tried to save a thread whose busy lease it no longer holds (it expired and was taken)."""

    code = "ERR_AGUI_LEASE_LOST"


@runtime_checkable
class SessionStore(Protocol):
    """Threads by id: ``acquire`` (owner check + mark busy, atomic), ``save`` (write + free), ``release`` (free)."""

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Mark the thread busy for ``owner`` and load it; refuses 404 (another owner's) or 409 (busy)."""
        ...

    async def save(self, lease: ThreadLease, record: ThreadRecord, recording: str | None = None) -> None:
        """Write the thread (and the turn's recording JSON text, if given) and free it; ``LeaseLostError`` if lost."""
        ...

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The last recording for the thread's owner (None if none yet); 404 for an unknown or other's thread."""
        ...

    async def release(self, lease: ThreadLease) -> None:
        """Free the thread without writing (a thread created by this lease and never saved is dropped)."""
        ...

    async def close(self) -> None:
        """Release the store's resources."""
        ...


def owner_key(identity: Identity | None) -> str | None:
    """The owner a thread is bound to: the caller's tenant and principal, or None for an anonymous caller."""
    if identity is None or (identity.tenant is None and identity.principal is None):
        return None
    return json.dumps([identity.tenant, identity.principal], ensure_ascii=False)


def check_reader(stored_owner: str | None, caller: str | None) -> None:
    """Refuse 404 unless ``caller`` may read the thread: its owner, or anyone for a thread nobody signed for."""
    if stored_owner is not None and stored_owner != caller:
        raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")


def claim_thread(stored_owner: str | None, caller: str | None, lease_until: float | None, now: float) -> str | None:
    """The owner after this caller's claim: 404 for another owner's thread, 409 while busy; first signer owns it."""
    check_reader(stored_owner, caller)
    if lease_until is not None and lease_until > now:
        raise WireRequestRefusal("ERR_AGUI_THREAD_BUSY", "threadId")
    return stored_owner if stored_owner is not None else caller


def encode_record(record: ThreadRecord) -> tuple[str, str | None, str | None]:
    """A record as three JSON texts: messages, conversation (or None), pause (or None)."""
    data = record.model_dump(mode="json")
    conversation = json.dumps(data["conversation"], ensure_ascii=False) if record.conversation is not None else None
    pause = json.dumps(data["pause"], ensure_ascii=False) if record.pause is not None else None
    return json.dumps(data["messages"], ensure_ascii=False), conversation, pause


def decode_record(thread_id: str, messages: Any, conversation: Any, pause: Any) -> ThreadRecord:
    """Read a stored record; anything unreadable raises ``StoredThreadUnreadableError`` naming the thread."""
    try:
        return ThreadRecord(
            messages=tuple(_loads(messages) or ()),
            conversation=_loads(conversation),
            pause=_loads(pause),
        )
    except (ValueError, TypeError, ValidationError):
        raise StoredThreadUnreadableError(thread_id) from None


def decode_recording(thread_id: str, value: Any) -> dict[str, Any] | None:
    """A stored recording's JSON text as an object (None if absent); unreadable raises naming the thread."""
    try:
        data = _loads(value)
    except (ValueError, TypeError):
        raise StoredThreadUnreadableError(thread_id) from None
    if data is not None and not isinstance(data, dict):
        raise StoredThreadUnreadableError(thread_id)
    return data


def _loads(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8")
    if not isinstance(value, str):
        raise TypeError("stored value is not JSON text")
    return json.loads(value)


@dataclass
class _Row:
    owner: str | None
    messages: str
    conversation: str | None
    pause: str | None
    token: str | None = None
    lease_until: float | None = None
    recording: str | None = None


class MemorySessions:
    """Threads in this process's memory, for the app's lifetime; records are kept as JSON text (copies)."""

    def __init__(self, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> None:
        self._rows: dict[str, _Row] = {}
        self._lease_seconds = float(lease_seconds)

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Owner check and busy mark, atomic (no await between them)."""
        now = time.time()
        row = self._rows.get(thread_id)
        token = uuid.uuid4().hex
        if row is None:
            self._rows[thread_id] = _Row(owner, "[]", None, None, token, now + self._lease_seconds)
            return ThreadLease(thread_id, token, ThreadRecord(), created=True)
        new_owner = claim_thread(row.owner, owner, row.lease_until, now)
        record = decode_record(thread_id, row.messages, row.conversation, row.pause)
        row.owner, row.token, row.lease_until = new_owner, token, now + self._lease_seconds
        return ThreadLease(thread_id, token, record)

    async def save(self, lease: ThreadLease, record: ThreadRecord, recording: str | None = None) -> None:
        """Write and free (a None recording keeps the one stored)."""
        row = self._rows.get(lease.thread_id)
        if row is None or row.token != lease.token:
            raise LeaseLostError(f"thread {lease.thread_id!r} is no longer held by this turn")
        row.messages, row.conversation, row.pause = encode_record(record)
        if recording is not None:
            row.recording = recording
        row.token, row.lease_until = None, None

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The owner's last recording; 404 for an unknown or another owner's thread."""
        row = self._rows.get(thread_id)
        if row is None:
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        check_reader(row.owner, owner)
        return decode_recording(thread_id, row.recording)

    async def release(self, lease: ThreadLease) -> None:
        """Free without writing; drop a thread this lease created and nobody saved."""
        row = self._rows.get(lease.thread_id)
        if row is None or row.token != lease.token:
            return
        if lease.created and row.messages == "[]" and row.conversation is None and row.pause is None:
            del self._rows[lease.thread_id]
            return
        row.token, row.lease_until = None, None

    async def close(self) -> None:
        """Nothing to release."""


def memory_sessions(*, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> MemorySessions:
    """An in-memory ``SessionStore`` (the default): threads last as long as the app."""
    return MemorySessions(lease_seconds=lease_seconds)
