"""Served threads in SQLite (stdlib ``sqlite3``, WAL): the embedded store; calls run in a thread executor."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
import time
import uuid
from os import PathLike
from typing import Any

from agentfootprint.hosting.refusal import HostingConfigError, WireRequestRefusal
from agentfootprint.hosting.sessions import (
    DEFAULT_LEASE_SECONDS,
    LeaseLostError,
    ThreadLease,
    ThreadRecord,
    check_reader,
    claim_thread,
    decode_record,
    decode_recording,
    encode_record,
)

__all__ = ["DEFAULT_TABLE", "SqliteSessions", "sqlite_sessions"]

DEFAULT_TABLE = "agentfootprint_threads"
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_table_name(table: str) -> str:
    """Refuse a table name that is not a plain SQL identifier."""
    if not isinstance(table, str) or _TABLE_NAME.fullmatch(table) is None:
        raise HostingConfigError("table must be a plain SQL identifier (letters, digits, _)")
    return table


class SqliteSessions:
    """A ``SessionStore`` in one SQLite file (WAL); busy marks are atomic across processes (``BEGIN IMMEDIATE``)."""

    def __init__(
        self, path: str | PathLike[str], *, lease_seconds: float = DEFAULT_LEASE_SECONDS, table: str = DEFAULT_TABLE
    ) -> None:
        self.path = str(path)
        self._table = check_table_name(table)
        self._lease_seconds = float(lease_seconds)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self._table} ("
                "thread_id TEXT PRIMARY KEY, owner TEXT, messages TEXT NOT NULL, conversation TEXT, pause TEXT, "
                "lease TEXT, lease_until REAL, updated_at REAL NOT NULL, recording TEXT)"
            )
            columns = {row[1] for row in conn.execute(f"PRAGMA table_info({self._table})")}
            if "recording" not in columns:  # a table made before recordings were kept
                conn.execute(f"ALTER TABLE {self._table} ADD COLUMN recording TEXT")
            self._conn = conn
        return self._conn

    def _transaction(self, work: Any) -> Any:
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

    def _acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        def work(conn: sqlite3.Connection) -> ThreadLease:
            now = time.time()
            token = uuid.uuid4().hex
            row = conn.execute(
                f"SELECT owner, messages, conversation, pause, lease_until FROM {self._table} WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
            if row is None:
                conn.execute(
                    f"INSERT INTO {self._table} (thread_id, owner, messages, lease, lease_until, updated_at) "
                    "VALUES (?, ?, '[]', ?, ?, ?)",
                    (thread_id, owner, token, now + self._lease_seconds, now),
                )
                return ThreadLease(thread_id, token, ThreadRecord(), created=True)
            new_owner = claim_thread(row[0], owner, row[4], now)
            record = decode_record(thread_id, row[1], row[2], row[3])
            conn.execute(
                f"UPDATE {self._table} SET owner = ?, lease = ?, lease_until = ? WHERE thread_id = ?",
                (new_owner, token, now + self._lease_seconds, thread_id),
            )
            return ThreadLease(thread_id, token, record)

        result: ThreadLease = self._transaction(work)
        return result

    def _save(self, lease: ThreadLease, record: ThreadRecord, recording: str | None) -> None:
        messages, conversation, pause = encode_record(record)

        def work(conn: sqlite3.Connection) -> None:
            cursor = conn.execute(
                f"UPDATE {self._table} SET messages = ?, conversation = ?, pause = ?, "
                "recording = COALESCE(?, recording), lease = NULL, lease_until = NULL, updated_at = ? "
                "WHERE thread_id = ? AND lease = ?",
                (messages, conversation, pause, recording, time.time(), lease.thread_id, lease.token),
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(f"thread {lease.thread_id!r} is no longer held by this turn")

        self._transaction(work)

    def _read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        with self._lock:
            row = (
                self._connection()
                .execute(f"SELECT owner, recording FROM {self._table} WHERE thread_id = ?", (thread_id,))
                .fetchone()
            )
        if row is None:
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        check_reader(row[0], owner)
        return decode_recording(thread_id, row[1])

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

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Owner check and busy mark in one write transaction."""
        return await asyncio.to_thread(self._acquire, thread_id, owner)

    async def save(self, lease: ThreadLease, record: ThreadRecord, recording: str | None = None) -> None:
        """Write and free, only while this lease holds the thread (a None recording keeps the one stored)."""
        await asyncio.to_thread(self._save, lease, record, recording)

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The owner's last recording; 404 for an unknown or another owner's thread."""
        return await asyncio.to_thread(self._read_recording, thread_id, owner)

    async def release(self, lease: ThreadLease) -> None:
        """Free without writing; drop a thread this lease created and nobody saved."""
        await asyncio.to_thread(self._release, lease)

    async def close(self) -> None:
        """Close the connection (a later call reopens it)."""

        def shut() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(shut)


def sqlite_sessions(
    path: str | PathLike[str], *, lease_seconds: float = DEFAULT_LEASE_SECONDS, table: str = DEFAULT_TABLE
) -> SqliteSessions:
    """A ``SessionStore`` in the SQLite file at ``path`` (created if missing; WAL journal)."""
    return SqliteSessions(path, lease_seconds=lease_seconds, table=table)
