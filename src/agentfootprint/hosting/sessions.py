"""Where served threads live: the ``SessionStore`` protocol, its records, and the rules every store shares.

A store keeps per thread the AG-UI messages, the agent's conversation JSON, any held pause (server-side only) and
the last run's recording (served to the thread's owner for ``backtrack``), packed so each long string is kept once."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from agentfootprint.errors import AgentFootprintError
from agentfootprint.hosting._pack import JsonText, Packed, load_strings, long_strings, pack, unpack
from agentfootprint.hosting.plan import HeldPause, HeldThread
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.identity import Identity
from agentfootprint.stores.sessions import LeaseLostError

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "Clock",
    "LeaseLostError",
    "PauseRecord",
    "SessionStore",
    "StoredThreadUnreadableError",
    "ThreadLease",
    "ThreadRecord",
    "ThreadSummary",
    "ThreadTranscript",
    "check_lease_seconds",
    "decode_record",
    "decode_recording",
    "encode_thread",
    "owner_key",
    "read_pause",
]

logger = logging.getLogger("agentfootprint.hosting")

DEFAULT_LEASE_SECONDS = 10.0
"""How long a thread stays busy without a heartbeat: a running turn renews it every third of this, so a host that
dies mid-turn leaves the thread busy for at most this long."""

Clock = Callable[[], float]
"""Seconds since the epoch (``time.time``); stores take one so lease expiry and retention can be tested."""


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
    seal: str | None = None
    """The host's HMAC-SHA256 over this record and its thread id, when the app has a ``checkpoint_key``."""

    def held(self) -> HeldPause:
        """The ids this pause handed out, as the planner matches answers against them."""
        if self.kind == "frontend_tool":
            return HeldPause(frontend_tool_call_ids=(self.tool_call_id,))
        return HeldPause(interrupt_ids=(self.interrupt_id,) if self.interrupt_id else ())


def read_pause(thread_id: str, value: Any) -> PauseRecord | None:
    """A stored pause record, checked: one this host did not write is None, and nothing is matched to it."""
    if value is None:
        return None
    try:
        record = PauseRecord.model_validate(value, strict=False)
    except ValidationError:
        record = None
    if record is None or (record.kind == "interrupt" and not record.interrupt_id) or not record.tool_call_id:
        logger.warning("thread %r holds a pause record this host did not write: it is ignored", thread_id)
        return None
    return record


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


class ThreadSummary(BaseModel):
    """One thread in its owner's list: when it was created and last written, and whether it is paused or busy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    thread_id: str
    created_at: float
    updated_at: float
    paused: bool = False
    busy: bool = False


class ThreadTranscript(BaseModel):
    """A thread as its owner reads it: the summary and the stored record (the app never sends the checkpoints)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: ThreadSummary
    record: ThreadRecord


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


@runtime_checkable
class SessionStore(Protocol):
    """Threads by id, each bound to one owner (the caller's tenant and principal, or nobody for anonymous threads).

    ``acquire`` (owner check + busy mark, atomic), ``renew`` (heartbeat), ``save`` (write + free), ``release``
    (free); the owner's reads (``read_recording``, ``read_thread``, ``list_threads``), ``delete_thread`` and
    ``purge`` (retention)."""

    lease_seconds: float

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Mark the thread busy for ``owner`` and load it; refuses 404 (another owner's) or 409 (busy)."""
        ...

    async def renew(self, lease: ThreadLease) -> None:
        """Push the busy mark's expiry a lease further; ``LeaseLostError`` if the lease was lost."""
        ...

    async def save(
        self, lease: ThreadLease, record: ThreadRecord, recording: str | Mapping[str, Any] | None = None
    ) -> None:
        """Write the thread (and the turn's recording, JSON text or object, if given) and free it;
        ``LeaseLostError`` if the lease was lost."""
        ...

    async def release(self, lease: ThreadLease) -> None:
        """Free the thread without writing (a thread created by this lease and never saved is dropped)."""
        ...

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The last recording for the thread's owner (None if none yet); 404 for an unknown or other's thread."""
        ...

    async def read_thread(self, thread_id: str, owner: str | None) -> ThreadTranscript:
        """The thread as stored, for its owner; 404 for an unknown or another owner's thread."""
        ...

    async def list_threads(self, owner: str, *, limit: int = 100) -> list[ThreadSummary]:
        """The owner's threads, most recently written first (at most ``limit``)."""
        ...

    async def delete_thread(self, thread_id: str, owner: str | None) -> None:
        """Delete the thread and its recording; 404 for an unknown or another owner's thread, 409 while busy."""
        ...

    async def purge(self, older_than: float) -> int:
        """Delete every thread not written for ``older_than`` seconds and not busy; returns how many."""
        ...

    async def close(self) -> None:
        """Release the store's resources."""
        ...


def check_lease_seconds(value: float) -> float:
    """A lease length in seconds: a finite number from 1 to 86,400."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 86_400:
        raise HostingConfigError("lease_seconds must be a number of seconds from 1 to 86400")
    return float(value)


def owner_key(identity: Identity | None) -> str | None:
    """The owner a thread is bound to: the caller's tenant and principal (and issuer, when one is named), or None for
    an anonymous caller. A JSON array, so no crafted name can reach another's key."""
    if identity is None or (identity.tenant is None and identity.principal is None):
        return None
    if identity.issuer is not None:
        return json.dumps([identity.tenant, identity.principal, identity.issuer], ensure_ascii=False)
    return json.dumps([identity.tenant, identity.principal], ensure_ascii=False)


def encode_thread(record: ThreadRecord, recording: str | bytes | Mapping[str, Any] | None) -> Packed:
    """A record and recording packed: fields ``messages``, ``conversation``, ``pause``, ``recording`` and a table.

    A recording given as JSON text is packed as it is (it must be a JSON object)."""
    data = record.model_dump(mode="json")
    if isinstance(recording, bytes):
        recording = recording.decode("utf-8")
    if isinstance(recording, str):
        if not recording.lstrip().startswith("{"):
            raise HostingConfigError("a recording must be a JSON object")
        recording = JsonText(recording)
    fields = {
        "messages": data["messages"],
        "conversation": data["conversation"],
        "pause": data["pause"],
        "recording": recording,
    }
    return pack(fields, long_strings(data["messages"], data["conversation"]))


def decode_record(thread_id: str, messages: Any, conversation: Any, pause: Any, strings: Any = None) -> ThreadRecord:
    """Read a stored record; an unreadable one raises ``StoredThreadUnreadableError`` naming the thread.

    A pause record this host did not write is ignored (logged), never read as a pause."""
    try:
        table = load_strings(_text(strings))
        loaded_messages = unpack(_text(messages), table)
        loaded_conversation = unpack(_text(conversation), table)
        record = ThreadRecord(messages=tuple(loaded_messages or ()), conversation=loaded_conversation)
    except (ValueError, TypeError, ValidationError):
        raise StoredThreadUnreadableError(thread_id) from None
    try:
        loaded_pause = unpack(_text(pause), table)
    except (ValueError, TypeError):
        loaded_pause = {"unreadable": True}
    held = read_pause(thread_id, loaded_pause)
    return record if held is None else record.model_copy(update={"pause": held})


def decode_recording(thread_id: str, value: Any, strings: Any = None) -> dict[str, Any] | None:
    """A stored recording as an object (None if absent); unreadable raises naming the thread."""
    try:
        data = unpack(_text(value), load_strings(_text(strings)))
    except (ValueError, TypeError):
        raise StoredThreadUnreadableError(thread_id) from None
    if data is not None and not isinstance(data, dict):
        raise StoredThreadUnreadableError(thread_id)
    return data


def _text(value: Any) -> str | bytes | None:
    if value is None or isinstance(value, str | bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise TypeError("stored value is not JSON text")
