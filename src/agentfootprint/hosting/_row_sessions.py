"""A ``SessionStore`` over any backend of ``agentfootprint.stores.sessions``: the rows keep owners, leases and
packed texts; this side packs and reads the thread records and turns the rows' refusals into wire refusals."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from agentfootprint.hosting.refusal import HostingConfigError, WireRequestRefusal
from agentfootprint.hosting.sessions import (
    Clock,
    ThreadLease,
    ThreadRecord,
    ThreadSummary,
    ThreadTranscript,
    decode_record,
    decode_recording,
    encode_thread,
)
from agentfootprint.stores.errors import StoreUnavailableError
from agentfootprint.stores.ledger import DecisionLedger, PostgresDecisionLedger, SQLiteDecisionLedger
from agentfootprint.stores.sessions import (
    RowLease,
    SessionRows,
    Texts,
    ThreadBusyError,
    ThreadExpiredError,
    ThreadNotFoundError,
    ThreadRow,
)

_REFUSALS = (
    (ThreadNotFoundError, "ERR_AGUI_THREAD_NOT_FOUND"),
    (ThreadBusyError, "ERR_AGUI_THREAD_BUSY"),
    (ThreadExpiredError, "ERR_AGUI_THREAD_EXPIRED"),
)


@contextmanager
def _as_wire_refusals(driver_hint: str) -> Iterator[None]:
    try:
        yield
    except (ThreadNotFoundError, ThreadBusyError, ThreadExpiredError) as err:
        code = next(code for kind, code in _REFUSALS if isinstance(err, kind))
        raise WireRequestRefusal(code, "threadId") from None
    except StoreUnavailableError:
        raise HostingConfigError(driver_hint) from None


class RowSessions:
    """Threads kept as rows by ``backend``; ``clock`` is the backend's (lease expiry, busy flags)."""

    _driver_hint = "this session store's driver is not installed"

    def __init__(self, backend: SessionRows, clock: Clock) -> None:
        self.backend = backend
        self.lease_seconds = backend.lease_seconds
        self._clock = clock
        self._ledger: SQLiteDecisionLedger | PostgresDecisionLedger | None = None

    def _kept_ledger(self) -> DecisionLedger:
        """The consent ledger kept in the same storage (opened once; ``close`` closes it)."""
        if self._ledger is None:
            self._ledger = self._open_ledger()
        return self._ledger

    def _open_ledger(self) -> SQLiteDecisionLedger | PostgresDecisionLedger:
        """This backend's decision ledger (each store opens its own kind)."""
        raise NotImplementedError

    @staticmethod
    def _row_lease(lease: ThreadLease) -> RowLease:
        return RowLease(lease.thread_id, lease.token, None, lease.created)

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Owner check and busy mark, atomic; a stored thread that cannot be read is freed and refused."""
        with _as_wire_refusals(self._driver_hint):
            lease = await self.backend.acquire(thread_id, owner)
        row = lease.row
        if row is None:
            return ThreadLease(thread_id, lease.token, ThreadRecord(), created=True)
        try:
            record = decode_record(thread_id, row.messages, row.conversation, row.pause, row.strings)
        except BaseException:
            await self.backend.release(RowLease(thread_id, lease.token, None, False))
            raise
        return ThreadLease(thread_id, lease.token, record, created=lease.created)

    async def renew(self, lease: ThreadLease) -> None:
        """Push the lease's expiry on, only while this lease holds the thread."""
        await self.backend.renew(self._row_lease(lease))

    async def save(
        self, lease: ThreadLease, record: ThreadRecord, recording: str | Mapping[str, Any] | None = None
    ) -> None:
        """Write and free, only while this lease holds the thread (a None recording keeps the one stored)."""

        def write(old: ThreadRow | None) -> Texts:
            kept = recording
            if kept is None and old is not None and old.recording is not None:
                kept = decode_recording(lease.thread_id, old.recording, old.strings)
            packed = encode_thread(record, kept)
            return {**packed.fields, "strings": packed.strings}

        await self.backend.save(self._row_lease(lease), write)

    async def release(self, lease: ThreadLease) -> None:
        """Free without writing; drop a thread this lease created and nobody saved."""
        await self.backend.release(self._row_lease(lease))

    async def _read(self, thread_id: str, owner: str | None, *, blank_ok: bool = False) -> ThreadRow:
        with _as_wire_refusals(self._driver_hint):
            return await self.backend.read(thread_id, owner, blank_ok=blank_ok)

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The owner's last recording (None while its first turn runs); 404 for an unknown or another's thread."""
        row = await self._read(thread_id, owner, blank_ok=True)
        return decode_recording(thread_id, row.recording, row.strings)

    async def read_thread(self, thread_id: str, owner: str | None) -> ThreadTranscript:
        """The thread as stored, for its owner."""
        row = await self._read(thread_id, owner)
        record = decode_record(thread_id, row.messages, row.conversation, row.pause, row.strings)
        return ThreadTranscript(summary=self._summary(thread_id, row), record=record)

    async def list_threads(self, owner: str, *, limit: int = 100) -> list[ThreadSummary]:
        """The owner's threads, most recently written first."""
        with _as_wire_refusals(self._driver_hint):
            rows = await self.backend.list(owner, limit=limit)
        return [self._summary(thread_id, row) for thread_id, row in rows]

    async def delete_thread(self, thread_id: str, owner: str | None) -> None:
        """Delete the thread and its recording; 404 if not the caller's, 409 while busy."""
        with _as_wire_refusals(self._driver_hint):
            await self.backend.delete(thread_id, owner)

    async def purge(self, older_than: float) -> int:
        """Delete the threads not written for ``older_than`` seconds (busy ones are kept)."""
        with _as_wire_refusals(self._driver_hint):
            return await self.backend.purge(older_than)

    async def close(self) -> None:
        """Release the backend's connections (the ledger's too; it reopens on next use)."""
        ledger, self._ledger = self._ledger, None
        if ledger is not None:
            ledger.close()
        await self.backend.close()

    def _summary(self, thread_id: str, row: ThreadRow) -> ThreadSummary:
        return ThreadSummary(
            thread_id=thread_id,
            created_at=row.created_at,
            updated_at=row.updated_at,
            paused=row.pause is not None,
            busy=row.busy(self._clock()),
        )


__all__ = ["RowSessions"]
