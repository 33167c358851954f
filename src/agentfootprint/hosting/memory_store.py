"""Served threads in this process's memory (the default store): capped by bytes, least recently used dropped first.

Each thread is kept packed as UTF-8 JSON (each long string once). When the threads pass ``max_bytes``, the least
recently used ones that no turn holds are dropped; a dropped thread's id is remembered (with its owner), so its
owner is told it expired (410) instead of silently starting a fresh conversation under the same id."""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentfootprint.hosting.refusal import HostingConfigError, WireRequestRefusal
from agentfootprint.hosting.sessions import (
    DEFAULT_LEASE_SECONDS,
    Clock,
    LeaseLostError,
    ThreadLease,
    ThreadRecord,
    ThreadSummary,
    ThreadTranscript,
    check_lease_seconds,
    check_reader,
    claim_thread,
    decode_record,
    decode_recording,
    encode_thread,
)

__all__ = ["DEFAULT_MAX_BYTES", "MemorySessions", "memory_sessions"]

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""The in-memory store's default cap (256 MiB of stored threads)."""

_ROW_BYTES = 512
"""What one thread costs besides its packed text (the row object, its dict entries, ids)."""
_TOMBSTONE_BYTES = 160
"""What a dropped thread's remembered id and owner cost besides their text."""


@dataclass(slots=True)
class _Row:
    owner: str | None
    created_at: float
    updated_at: float
    messages: bytes = b"[]"
    conversation: bytes | None = None
    pause: bytes | None = None
    recording: bytes | None = None
    strings: bytes | None = None
    token: str | None = None
    lease_until: float | None = None
    size: int = 0

    def measure(self, thread_id: str) -> int:
        texts = (self.messages, self.conversation, self.pause, self.recording, self.strings)
        self.size = _ROW_BYTES + len(thread_id) + len(self.owner or "") + sum(len(t) for t in texts if t is not None)
        return self.size

    @property
    def blank(self) -> bool:
        return self.messages == b"[]" and self.conversation is None and self.pause is None


def _utf8(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


class MemorySessions:
    """Threads in this process's memory, for the app's lifetime, capped at ``max_bytes`` (LRU by bytes)."""

    def __init__(
        self,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Clock | None = None,
    ) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 4096:
            raise HostingConfigError("max_bytes must be an int of at least 4096")
        self.lease_seconds = check_lease_seconds(lease_seconds)
        self.max_bytes = max_bytes
        self._clock: Clock = clock or time.time
        self._rows: OrderedDict[str, _Row] = OrderedDict()
        self._dropped: OrderedDict[str, str | None] = OrderedDict()
        self._bytes = 0

    @property
    def stored_bytes(self) -> int:
        """What the kept threads and remembered dropped ids cost, as this store counts it."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._rows)

    # -- the turn's lease ----------------------------------------------------------------------------------------
    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Owner check and busy mark, atomic (no await between them)."""
        now = self._clock()
        token = uuid.uuid4().hex
        row = self._rows.get(thread_id)
        if row is None:
            self._check_dropped(thread_id, owner)
            row = _Row(owner, now, now, token=token, lease_until=now + self.lease_seconds)
            self._rows[thread_id] = row
            self._bytes += row.measure(thread_id)
            self._shrink()
            return ThreadLease(thread_id, token, ThreadRecord(), created=True)
        claim_thread(row.owner, owner, row.lease_until, now)
        record = decode_record(thread_id, row.messages, row.conversation, row.pause, row.strings)
        row.token, row.lease_until = token, now + self.lease_seconds
        self._rows.move_to_end(thread_id)
        return ThreadLease(thread_id, token, record, created=row.blank)

    async def renew(self, lease: ThreadLease) -> None:
        """Push the lease's expiry on."""
        self._held(lease).lease_until = self._clock() + self.lease_seconds

    async def save(
        self, lease: ThreadLease, record: ThreadRecord, recording: str | Mapping[str, Any] | None = None
    ) -> None:
        """Write and free (a None recording keeps the one stored)."""
        row = self._held(lease)
        if recording is None and row.recording is not None:
            recording = decode_recording(lease.thread_id, row.recording, row.strings)
        packed = encode_thread(record, recording)
        fields = packed.fields
        row.messages = _utf8(fields["messages"]) or b"[]"
        row.conversation, row.pause = _utf8(fields["conversation"]), _utf8(fields["pause"])
        row.recording, row.strings = _utf8(fields["recording"]), _utf8(packed.strings)
        row.token, row.lease_until, row.updated_at = None, None, self._clock()
        self._bytes -= row.size
        self._bytes += row.measure(lease.thread_id)
        self._rows.move_to_end(lease.thread_id)
        self._shrink()

    async def release(self, lease: ThreadLease) -> None:
        """Free without writing; drop a thread this lease created and nobody saved."""
        row = self._rows.get(lease.thread_id)
        if row is None or row.token != lease.token:
            return
        if lease.created and row.blank:
            self._forget(lease.thread_id)
            return
        row.token, row.lease_until = None, None

    # -- the owner's reads and deletes ---------------------------------------------------------------------------
    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The owner's last recording; 404 for an unknown or another owner's thread."""
        row = self._owned(thread_id, owner)
        return decode_recording(thread_id, row.recording, row.strings)

    async def read_thread(self, thread_id: str, owner: str | None) -> ThreadTranscript:
        """The thread as stored, for its owner."""
        row = self._owned(thread_id, owner)
        record = decode_record(thread_id, row.messages, row.conversation, row.pause, row.strings)
        return ThreadTranscript(summary=self._summary(thread_id, row), record=record)

    async def list_threads(self, owner: str, *, limit: int = 100) -> list[ThreadSummary]:
        """The owner's threads, most recently written first."""
        mine = [(tid, row) for tid, row in self._rows.items() if row.owner == owner and not row.blank]
        mine.sort(key=lambda item: item[1].updated_at, reverse=True)
        return [self._summary(tid, row) for tid, row in mine[: max(0, limit)]]

    async def delete_thread(self, thread_id: str, owner: str | None) -> None:
        """Delete the thread and its recording (its id may then be used afresh)."""
        row = self._owned(thread_id, owner)
        claim_thread(row.owner, owner, row.lease_until, self._clock())
        self._forget(thread_id)

    async def purge(self, older_than: float) -> int:
        """Delete the threads not written for ``older_than`` seconds (busy ones are kept)."""
        now = self._clock()
        cutoff = now - older_than
        old = [
            tid
            for tid, row in self._rows.items()
            if row.updated_at < cutoff and (row.lease_until is None or row.lease_until <= now)
        ]
        for thread_id in old:
            self._forget(thread_id)
        return len(old)

    async def close(self) -> None:
        """Nothing to release."""

    # -- inside ----------------------------------------------------------------------------------------------------
    def _held(self, lease: ThreadLease) -> _Row:
        row = self._rows.get(lease.thread_id)
        if row is None or row.token != lease.token:
            raise LeaseLostError(f"thread {lease.thread_id!r} is no longer held by this turn")
        return row

    def _owned(self, thread_id: str, owner: str | None) -> _Row:
        row = self._rows.get(thread_id)
        if row is None or row.blank:
            self._check_dropped(thread_id, owner)
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        check_reader(row.owner, owner)
        return row

    def _summary(self, thread_id: str, row: _Row) -> ThreadSummary:
        busy = row.lease_until is not None and row.lease_until > self._clock()
        return ThreadSummary(
            thread_id=thread_id,
            created_at=row.created_at,
            updated_at=row.updated_at,
            paused=row.pause is not None,
            busy=busy,
        )

    def _check_dropped(self, thread_id: str, owner: str | None) -> None:
        if thread_id in self._dropped:
            check_reader(self._dropped[thread_id], owner)
            raise WireRequestRefusal("ERR_AGUI_THREAD_EXPIRED", "threadId")

    def _forget(self, thread_id: str) -> None:
        row = self._rows.pop(thread_id, None)
        if row is not None:
            self._bytes -= row.size

    def _shrink(self) -> None:
        """Drop least recently used threads no turn holds (remembering their ids), then the oldest remembered ids."""
        if self._bytes <= self.max_bytes:
            return
        now = self._clock()
        excess = self._bytes - self.max_bytes
        victims: list[str] = []
        for thread_id, row in self._rows.items():
            if excess <= 0:
                break
            if row.lease_until is not None and row.lease_until > now:
                continue
            victims.append(thread_id)
            excess -= row.size - (0 if row.blank else _tombstone(thread_id, row.owner))
        for thread_id in victims:
            row = self._rows[thread_id]
            self._forget(thread_id)
            if not row.blank:
                self._dropped[thread_id] = row.owner
                self._bytes += _tombstone(thread_id, row.owner)
        while self._bytes > self.max_bytes and self._dropped:
            thread_id, owner = self._dropped.popitem(last=False)
            self._bytes -= _tombstone(thread_id, owner)


def _tombstone(thread_id: str, owner: str | None) -> int:
    return _TOMBSTONE_BYTES + len(thread_id) + len(owner or "")


def memory_sessions(
    *, lease_seconds: float = DEFAULT_LEASE_SECONDS, max_bytes: int = DEFAULT_MAX_BYTES, clock: Clock | None = None
) -> MemorySessions:
    """An in-memory ``SessionStore`` (the default): threads last as long as the app, within ``max_bytes``."""
    return MemorySessions(lease_seconds=lease_seconds, max_bytes=max_bytes, clock=clock)
