"""Served threads in SQLite (stdlib ``sqlite3``, WAL): the embedded store; calls run in a thread executor."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from os import PathLike
from typing import Any, TypeVar

from agentfootprint.hosting.refusal import HostingConfigError, WireRequestRefusal
from agentfootprint.hosting.sessions import (
    DEFAULT_LEASE_SECONDS,
    SUMMARY_COLUMNS,
    Clock,
    LeaseLostError,
    ThreadLease,
    ThreadRecord,
    ThreadSummary,
    ThreadTranscript,
    blank_row,
    check_lease_seconds,
    check_reader,
    claim_thread,
    decode_record,
    decode_recording,
    encode_thread,
    summary_of,
)

__all__ = ["DEFAULT_TABLE", "SqliteSessions", "check_table_name", "sqlite_sessions"]

DEFAULT_TABLE = "agentfootprint_threads"
T = TypeVar("T")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_table_name(table: str) -> str:
    """Refuse a table name that is not a plain SQL identifier."""
    if not isinstance(table, str) or _TABLE_NAME.fullmatch(table) is None:
        raise HostingConfigError("table must be a plain SQL identifier (letters, digits, _)")
    return table


_COLUMNS = (
    "thread_id TEXT PRIMARY KEY, owner TEXT, messages TEXT NOT NULL, conversation TEXT, pause TEXT, "
    "lease TEXT, lease_until REAL, updated_at REAL NOT NULL, recording TEXT, strings TEXT, created_at REAL"
)
_ADDED = (("recording", "TEXT"), ("strings", "TEXT"), ("created_at", "REAL"))
"""Columns a table made by an earlier release lacks (added in place)."""


class SqliteSessions:
    """A ``SessionStore`` in one SQLite file (WAL); busy marks are atomic across processes (``BEGIN IMMEDIATE``)."""

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        table: str = DEFAULT_TABLE,
        clock: Clock | None = None,
    ) -> None:
        self.path = str(path)
        self._table = check_table_name(table)
        self.lease_seconds = check_lease_seconds(lease_seconds)
        self._clock: Clock = clock or time.time
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            table = self._table
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({_COLUMNS})")
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            for name, kind in _ADDED:
                if name not in columns:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
            conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_owner ON {table} (owner, updated_at)")
            conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_updated ON {table} (updated_at)")
            self._conn = conn
        return self._conn

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

    def _read(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        with self._lock:
            return self._connection().execute(sql, args).fetchall()

    def _acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        def work(conn: sqlite3.Connection) -> ThreadLease:
            now = self._clock()
            token = uuid.uuid4().hex
            row = conn.execute(
                f"SELECT owner, messages, conversation, pause, lease_until, strings FROM {self._table} "
                "WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
            if row is None:
                conn.execute(
                    f"INSERT INTO {self._table} "
                    "(thread_id, owner, messages, lease, lease_until, updated_at, created_at) "
                    "VALUES (?, ?, '[]', ?, ?, ?, ?)",
                    (thread_id, owner, token, now + self.lease_seconds, now, now),
                )
                return ThreadLease(thread_id, token, ThreadRecord(), created=True)
            claim_thread(row[0], owner, row[4], now)
            record = decode_record(thread_id, row[1], row[2], row[3], row[5])
            conn.execute(
                f"UPDATE {self._table} SET lease = ?, lease_until = ? WHERE thread_id = ?",
                (token, now + self.lease_seconds, thread_id),
            )
            return ThreadLease(thread_id, token, record, created=blank_row(row[1], row[2], row[3]))

        return self._transaction(work)

    def _renew(self, lease: ThreadLease) -> None:
        def work(conn: sqlite3.Connection) -> None:
            cursor = conn.execute(
                f"UPDATE {self._table} SET lease_until = ? WHERE thread_id = ? AND lease = ?",
                (self._clock() + self.lease_seconds, lease.thread_id, lease.token),
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(f"thread {lease.thread_id!r} is no longer held by this turn")

        self._transaction(work)

    def _save(self, lease: ThreadLease, record: ThreadRecord, recording: str | Mapping[str, Any] | None) -> None:
        def work(conn: sqlite3.Connection) -> None:
            kept = recording
            if kept is None:
                old = conn.execute(
                    f"SELECT recording, strings FROM {self._table} WHERE thread_id = ? AND lease = ?",
                    (lease.thread_id, lease.token),
                ).fetchone()
                kept = decode_recording(lease.thread_id, old[0], old[1]) if old is not None else None
            packed = encode_thread(record, kept)
            fields = packed.fields
            cursor = conn.execute(
                f"UPDATE {self._table} SET messages = ?, conversation = ?, pause = ?, recording = ?, strings = ?, "
                "lease = NULL, lease_until = NULL, updated_at = ? WHERE thread_id = ? AND lease = ?",
                (
                    fields["messages"],
                    fields["conversation"],
                    fields["pause"],
                    fields["recording"],
                    packed.strings,
                    self._clock(),
                    lease.thread_id,
                    lease.token,
                ),
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(f"thread {lease.thread_id!r} is no longer held by this turn")

        self._transaction(work)

    def _release(self, lease: ThreadLease) -> None:
        def work(conn: sqlite3.Connection) -> None:
            if lease.created:
                conn.execute(
                    f"DELETE FROM {self._table} WHERE thread_id = ? AND lease = ? AND messages = '[]' "
                    "AND conversation IS NULL AND pause IS NULL",
                    (lease.thread_id, lease.token),
                )
            conn.execute(
                f"UPDATE {self._table} SET lease = NULL, lease_until = NULL WHERE thread_id = ? AND lease = ?",
                (lease.thread_id, lease.token),
            )

        self._transaction(work)

    def _owned(self, thread_id: str, owner: str | None, columns: str) -> Any:
        rows = self._read(f"SELECT owner, {columns} FROM {self._table} WHERE thread_id = ?", (thread_id,))
        if not rows:
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        check_reader(rows[0][0], owner)
        return rows[0]

    def _read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        row = self._owned(thread_id, owner, "recording, strings")
        return decode_recording(thread_id, row[1], row[2])

    def _read_thread(self, thread_id: str, owner: str | None) -> ThreadTranscript:
        row = self._owned(thread_id, owner, f"{SUMMARY_COLUMNS}, messages, conversation, pause, strings")
        if row[5] == "[]" and row[6] is None and row[7] is None:
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        record = decode_record(thread_id, row[5], row[6], row[7], row[8])
        return ThreadTranscript(summary=summary_of(thread_id, row[1:5], self._clock()), record=record)

    def _list(self, owner: str, limit: int) -> list[ThreadSummary]:
        rows = self._read(
            f"SELECT thread_id, {SUMMARY_COLUMNS} FROM {self._table} WHERE owner = ? AND NOT "
            "(messages = '[]' AND conversation IS NULL AND pause IS NULL) ORDER BY updated_at DESC LIMIT ?",
            (owner, max(0, limit)),
        )
        now = self._clock()
        return [summary_of(row[0], row[1:], now) for row in rows]

    def _delete(self, thread_id: str, owner: str | None) -> None:
        def work(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                f"SELECT owner, lease_until FROM {self._table} WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            if row is None:
                raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
            claim_thread(row[0], owner, row[1], self._clock())
            conn.execute(f"DELETE FROM {self._table} WHERE thread_id = ?", (thread_id,))

        self._transaction(work)

    def _purge(self, older_than: float) -> int:
        def work(conn: sqlite3.Connection) -> int:
            now = self._clock()
            cursor = conn.execute(
                f"DELETE FROM {self._table} WHERE updated_at < ? AND (lease_until IS NULL OR lease_until <= ?)",
                (now - older_than, now),
            )
            return int(cursor.rowcount)

        return self._transaction(work)

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Owner check and busy mark in one write transaction."""
        return await asyncio.to_thread(self._acquire, thread_id, owner)

    async def renew(self, lease: ThreadLease) -> None:
        """Push the lease's expiry on, only while this lease holds the thread."""
        await asyncio.to_thread(self._renew, lease)

    async def save(
        self, lease: ThreadLease, record: ThreadRecord, recording: str | Mapping[str, Any] | None = None
    ) -> None:
        """Write and free, only while this lease holds the thread (a None recording keeps the one stored)."""
        await asyncio.to_thread(self._save, lease, record, recording)

    async def release(self, lease: ThreadLease) -> None:
        """Free without writing; drop a thread this lease created and nobody saved."""
        await asyncio.to_thread(self._release, lease)

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The owner's last recording; 404 for an unknown or another owner's thread."""
        return await asyncio.to_thread(self._read_recording, thread_id, owner)

    async def read_thread(self, thread_id: str, owner: str | None) -> ThreadTranscript:
        """The thread as stored, for its owner."""
        return await asyncio.to_thread(self._read_thread, thread_id, owner)

    async def list_threads(self, owner: str, *, limit: int = 100) -> list[ThreadSummary]:
        """The owner's threads, most recently written first."""
        return await asyncio.to_thread(self._list, owner, limit)

    async def delete_thread(self, thread_id: str, owner: str | None) -> None:
        """Delete the thread and its recording; 404 if not the caller's, 409 while busy."""
        await asyncio.to_thread(self._delete, thread_id, owner)

    async def purge(self, older_than: float) -> int:
        """Delete the threads not written for ``older_than`` seconds (busy ones are kept)."""
        return await asyncio.to_thread(self._purge, older_than)

    async def close(self) -> None:
        """Close the connection (a later call reopens it)."""

        def shut() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(shut)


def sqlite_sessions(
    path: str | PathLike[str],
    *,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    table: str = DEFAULT_TABLE,
    clock: Clock | None = None,
) -> SqliteSessions:
    """A ``SessionStore`` in the SQLite file at ``path`` (created if missing; WAL journal)."""
    return SqliteSessions(path, lease_seconds=lease_seconds, table=table, clock=clock)
