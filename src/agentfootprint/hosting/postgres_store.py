"""Served threads in PostgreSQL (psycopg 3, imported on first use): for several host replicas on one database."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

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
from agentfootprint.hosting.sqlite_store import DEFAULT_TABLE, check_table_name

__all__ = ["PostgresSessions", "postgres_sessions"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS {table} ("
    "thread_id TEXT PRIMARY KEY, owner TEXT, messages TEXT NOT NULL, conversation TEXT, pause TEXT, "
    "lease TEXT, lease_until DOUBLE PRECISION, updated_at DOUBLE PRECISION NOT NULL, recording TEXT, "
    "strings TEXT, created_at DOUBLE PRECISION)"
)
_MIGRATE = (
    "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS recording TEXT",
    "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS strings TEXT",
    "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS created_at DOUBLE PRECISION",
    "CREATE INDEX IF NOT EXISTS {table}_owner ON {table} (owner, updated_at)",
    "CREATE INDEX IF NOT EXISTS {table}_updated ON {table} (updated_at)",
)
_BLANK = "messages = '[]' AND conversation IS NULL AND pause IS NULL"


class PostgresSessions:
    """A ``SessionStore`` in PostgreSQL: the busy mark takes the thread's row lock (``SELECT ... FOR UPDATE``)."""

    def __init__(
        self,
        dsn: str,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        table: str = DEFAULT_TABLE,
        pool_size: int = 10,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise HostingConfigError("postgres_sessions needs a connection string")
        if not isinstance(pool_size, int) or pool_size < 1:
            raise HostingConfigError("pool_size must be a positive int")
        self._dsn = dsn
        self._table = check_table_name(table)
        self.lease_seconds = check_lease_seconds(lease_seconds)
        self._clock: Clock = clock or time.time
        self._pool_size = pool_size
        self._idle: list[Any] = []
        self._slots: asyncio.Semaphore | None = None
        self._ready = False
        self._creating: asyncio.Lock | None = None

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        try:
            import psycopg
        except ImportError:
            raise HostingConfigError("postgres_sessions needs psycopg: pip install 'psycopg[binary]'") from None
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._pool_size)
        async with self._slots:
            conn = self._idle.pop() if self._idle else await psycopg.AsyncConnection.connect(self._dsn)
            try:
                if not self._ready:
                    await self._create_table(conn)
                yield conn
            finally:
                if conn.closed or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    await _close_quietly(conn)
                else:
                    self._idle.append(conn)

    async def _create_table(self, conn: Any) -> None:
        if self._creating is None:
            self._creating = asyncio.Lock()
        async with self._creating:
            if self._ready:
                return
            # Replicas starting together serialise their DDL on a transaction-scoped advisory lock.
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentfootprint:{self._table}",))
                for statement in (_SCHEMA, *_MIGRATE):
                    await conn.execute(statement.format(table=self._table))
            self._ready = True

    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        async with self._connection() as conn:
            cursor = await conn.execute(sql, args)
            rows = await cursor.fetchall()
            await conn.rollback()
        return list(rows)

    async def acquire(self, thread_id: str, owner: str | None) -> ThreadLease:
        """Owner check and busy mark in one transaction holding the row lock."""
        async with self._connection() as conn, conn.transaction():
            now = self._clock()
            token = uuid.uuid4().hex
            cursor = await conn.execute(
                f"INSERT INTO {self._table} (thread_id, owner, messages, lease, lease_until, updated_at, created_at) "
                "VALUES (%s, %s, '[]', %s, %s, %s, %s) ON CONFLICT (thread_id) DO NOTHING",
                (thread_id, owner, token, now + self.lease_seconds, now, now),
            )
            if cursor.rowcount == 1:
                return ThreadLease(thread_id, token, ThreadRecord(), created=True)
            cursor = await conn.execute(
                f"SELECT owner, messages, conversation, pause, lease_until, strings FROM {self._table} "
                "WHERE thread_id = %s FOR UPDATE",
                (thread_id,),
            )
            row = await cursor.fetchone()
            if row is None:
                raise LeaseLostError(f"thread {thread_id!r} vanished while it was being claimed")
            claim_thread(row[0], owner, row[4], now)
            record = decode_record(thread_id, row[1], row[2], row[3], row[5])
            await conn.execute(
                f"UPDATE {self._table} SET lease = %s, lease_until = %s WHERE thread_id = %s",
                (token, now + self.lease_seconds, thread_id),
            )
            return ThreadLease(thread_id, token, record, created=blank_row(row[1], row[2], row[3]))

    async def renew(self, lease: ThreadLease) -> None:
        """Push the lease's expiry on, only while this lease holds the thread."""
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                f"UPDATE {self._table} SET lease_until = %s WHERE thread_id = %s AND lease = %s",
                (self._clock() + self.lease_seconds, lease.thread_id, lease.token),
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(f"thread {lease.thread_id!r} is no longer held by this turn")

    async def save(
        self, lease: ThreadLease, record: ThreadRecord, recording: str | Mapping[str, Any] | None = None
    ) -> None:
        """Write and free, only while this lease holds the thread (a None recording keeps the one stored)."""
        async with self._connection() as conn, conn.transaction():
            kept = recording
            if kept is None:
                cursor = await conn.execute(
                    f"SELECT recording, strings FROM {self._table} WHERE thread_id = %s AND lease = %s",
                    (lease.thread_id, lease.token),
                )
                old = await cursor.fetchone()
                kept = decode_recording(lease.thread_id, old[0], old[1]) if old is not None else None
            packed = encode_thread(record, kept)
            fields = packed.fields
            cursor = await conn.execute(
                f"UPDATE {self._table} SET messages = %s, conversation = %s, pause = %s, recording = %s, "
                "strings = %s, lease = NULL, lease_until = NULL, updated_at = %s WHERE thread_id = %s AND lease = %s",
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

    async def release(self, lease: ThreadLease) -> None:
        """Free without writing; drop a thread this lease created and nobody saved."""
        async with self._connection() as conn, conn.transaction():
            if lease.created:
                await conn.execute(
                    f"DELETE FROM {self._table} WHERE thread_id = %s AND lease = %s AND {_BLANK}",
                    (lease.thread_id, lease.token),
                )
            await conn.execute(
                f"UPDATE {self._table} SET lease = NULL, lease_until = NULL WHERE thread_id = %s AND lease = %s",
                (lease.thread_id, lease.token),
            )

    async def _owned(self, thread_id: str, owner: str | None, columns: str) -> Any:
        rows = await self._fetch(f"SELECT owner, {columns} FROM {self._table} WHERE thread_id = %s", (thread_id,))
        if not rows:
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        check_reader(rows[0][0], owner)
        return rows[0]

    async def read_recording(self, thread_id: str, owner: str | None) -> dict[str, Any] | None:
        """The owner's last recording; 404 for an unknown or another owner's thread."""
        row = await self._owned(thread_id, owner, "recording, strings")
        return decode_recording(thread_id, row[1], row[2])

    async def read_thread(self, thread_id: str, owner: str | None) -> ThreadTranscript:
        """The thread as stored, for its owner."""
        row = await self._owned(thread_id, owner, f"{SUMMARY_COLUMNS}, messages, conversation, pause, strings")
        if row[5] == "[]" and row[6] is None and row[7] is None:
            raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
        record = decode_record(thread_id, row[5], row[6], row[7], row[8])
        return ThreadTranscript(summary=summary_of(thread_id, row[1:5], self._clock()), record=record)

    async def list_threads(self, owner: str, *, limit: int = 100) -> list[ThreadSummary]:
        """The owner's threads, most recently written first."""
        rows = await self._fetch(
            f"SELECT thread_id, {SUMMARY_COLUMNS} FROM {self._table} WHERE owner = %s AND NOT ({_BLANK}) "
            "ORDER BY updated_at DESC LIMIT %s",
            (owner, max(0, limit)),
        )
        now = self._clock()
        return [summary_of(row[0], row[1:], now) for row in rows]

    async def delete_thread(self, thread_id: str, owner: str | None) -> None:
        """Delete the thread and its recording; 404 if not the caller's, 409 while busy."""
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                f"SELECT owner, lease_until FROM {self._table} WHERE thread_id = %s FOR UPDATE", (thread_id,)
            )
            row = await cursor.fetchone()
            if row is None:
                raise WireRequestRefusal("ERR_AGUI_THREAD_NOT_FOUND", "threadId")
            claim_thread(row[0], owner, row[1], self._clock())
            await conn.execute(f"DELETE FROM {self._table} WHERE thread_id = %s", (thread_id,))

    async def purge(self, older_than: float) -> int:
        """Delete the threads not written for ``older_than`` seconds (busy ones are kept)."""
        async with self._connection() as conn, conn.transaction():
            now = self._clock()
            cursor = await conn.execute(
                f"DELETE FROM {self._table} WHERE updated_at < %s AND (lease_until IS NULL OR lease_until <= %s)",
                (now - older_than, now),
            )
            return int(cursor.rowcount)

    async def close(self) -> None:
        """Close the idle connections."""
        idle, self._idle = self._idle, []
        for conn in idle:
            await _close_quietly(conn)


async def _close_quietly(conn: Any) -> None:
    try:
        await conn.close()
    except Exception:  # a broken connection is being dropped anyway
        return


def postgres_sessions(
    dsn: str,
    *,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    table: str = DEFAULT_TABLE,
    pool_size: int = 10,
    clock: Clock | None = None,
) -> PostgresSessions:
    """A ``SessionStore`` in PostgreSQL at ``dsn`` (``postgresql://...``); psycopg is imported on first use."""
    return PostgresSessions(dsn, lease_seconds=lease_seconds, table=table, pool_size=pool_size, clock=clock)
