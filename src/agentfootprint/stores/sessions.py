"""Served threads' rows: per thread its owner, a busy lease and the packed texts a host keeps (messages,
conversation, pause, recording and their shared-strings table), in memory, SQLite or PostgreSQL.

The rows know owners and leases, not what the texts mean: the hosting session stores encode and decode them. A
thread is claimed (owner check + busy mark) atomically; a save or renew holds only while its lease does."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from os import PathLike
from typing import Any, Protocol, TypeVar, runtime_checkable

from agentfootprint.stores._sql import check_table
from agentfootprint.stores.errors import StoreError
from agentfootprint.stores.postgres import PostgresPool
from agentfootprint.stores.sqlite import add_missing_columns, connect_sqlite, in_transaction

DEFAULT_SESSIONS_TABLE = "agentfootprint_threads"
DEFAULT_LEASE_SECONDS = 10.0
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
TEXTS = ("messages", "conversation", "pause", "recording", "strings")
"""The packed texts a row keeps, in column order."""
_ROW_BYTES = 512
"""What one in-memory thread costs besides its packed text (the row object, its dict entries, ids)."""
_TOMBSTONE_BYTES = 160
"""What a dropped thread's remembered id and owner cost besides their text."""
T = TypeVar("T")
Clock = Callable[[], float]
Texts = Mapping[str, "str | bytes | None"]
"""Packed texts by name (``TEXTS``); ``messages`` is ``"[]"`` for a thread never saved."""


class ThreadNotFoundError(StoreError):
    """No such thread for this caller (unknown, or another owner's: the two are never told apart)."""

    code = "ERR_STORE_THREAD_NOT_FOUND"


class ThreadBusyError(StoreError):
    """Another turn holds the thread's lease."""

    code = "ERR_STORE_THREAD_BUSY"


class ThreadExpiredError(StoreError):
    """The thread was dropped to keep the in-memory store within its bytes (its id is remembered)."""

    code = "ERR_STORE_THREAD_EXPIRED"


class LeaseLostError(StoreError):
    """A turn tried to renew or save a thread whose busy lease it no longer holds (it expired and was taken)."""

    code = "ERR_AGUI_LEASE_LOST"


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """One thread as stored: owner, timestamps, lease expiry, and the packed texts (str or UTF-8 bytes)."""

    owner: str | None
    created_at: float
    updated_at: float
    lease_until: float | None = None
    messages: str | bytes = "[]"
    conversation: str | bytes | None = None
    pause: str | bytes | None = None
    recording: str | bytes | None = None
    strings: str | bytes | None = None

    @property
    def blank(self) -> bool:
        """Whether nothing was ever saved for the thread."""
        return self.messages in ("[]", b"[]") and self.conversation is None and self.pause is None

    def busy(self, now: float) -> bool:
        return self.lease_until is not None and self.lease_until > now


@dataclass(frozen=True, slots=True)
class RowLease:
    """A thread claimed for one turn: its id, the lease token, the row as loaded, whether this claim made it."""

    thread_id: str
    token: str
    row: ThreadRow | None
    created: bool = False


def claim(stored_owner: str | None, caller: str | None, lease_until: float | None, now: float) -> None:
    """Refuse a thread that is not the caller's (not found), then one another turn holds (busy)."""
    if stored_owner != caller:
        raise ThreadNotFoundError("no such thread for this caller")
    if lease_until is not None and lease_until > now:
        raise ThreadBusyError("another turn holds this thread")


def _lost(thread_id: str) -> LeaseLostError:
    return LeaseLostError(f"thread {thread_id!r} is no longer held by this turn")


@runtime_checkable
class SessionRows(Protocol):
    """Thread rows by id, each bound to one owner; a claim marks it busy for ``lease_seconds``."""

    lease_seconds: float

    async def acquire(self, thread_id: str, owner: str | None) -> RowLease: ...

    async def renew(self, lease: RowLease) -> None: ...

    async def save(self, lease: RowLease, write: Callable[[ThreadRow | None], Texts]) -> None: ...

    async def release(self, lease: RowLease) -> None: ...

    async def read(self, thread_id: str, owner: str | None, *, blank_ok: bool = False) -> ThreadRow: ...

    async def list(self, owner: str, *, limit: int = 100) -> list[tuple[str, ThreadRow]]: ...

    async def delete(self, thread_id: str, owner: str | None) -> None: ...

    async def purge(self, older_than: float) -> int: ...

    async def close(self) -> None: ...


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

    def frozen(self) -> ThreadRow:
        texts = (self.messages, self.conversation, self.pause, self.recording, self.strings)
        return ThreadRow(self.owner, self.created_at, self.updated_at, self.lease_until, *texts)


def _utf8(text: str | bytes | None) -> bytes | None:
    return text.encode("utf-8") if isinstance(text, str) else text


def _tombstone(thread_id: str, owner: str | None) -> int:
    return _TOMBSTONE_BYTES + len(thread_id) + len(owner or "")


class MemorySessionRows:
    """Thread rows in this process, packed as UTF-8, capped at ``max_bytes``: the least recently used rows no turn
    holds are dropped first, and a dropped id is remembered so its owner is told it expired."""

    def __init__(
        self,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Clock | None = None,
    ) -> None:
        self.lease_seconds = lease_seconds
        self.max_bytes = max_bytes
        self._clock: Clock = clock or time.time
        self._rows: OrderedDict[str, _Row] = OrderedDict()
        self._dropped: OrderedDict[str, str | None] = OrderedDict()
        self._bytes = 0

    @property
    def stored_bytes(self) -> int:
        """What the kept rows and remembered dropped ids cost, as this store counts it."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._rows)

    async def acquire(self, thread_id: str, owner: str | None) -> RowLease:
        now = self._clock()
        token = uuid.uuid4().hex
        row = self._rows.get(thread_id)
        if row is None:
            self._check_dropped(thread_id, owner)
            row = _Row(owner, now, now, token=token, lease_until=now + self.lease_seconds)
            self._rows[thread_id] = row
            self._bytes += row.measure(thread_id)
            self._shrink()
            return RowLease(thread_id, token, None, created=True)
        claim(row.owner, owner, row.lease_until, now)
        frozen = row.frozen()
        row.token, row.lease_until = token, now + self.lease_seconds
        self._rows.move_to_end(thread_id)
        return RowLease(thread_id, token, frozen, created=row.blank)

    async def renew(self, lease: RowLease) -> None:
        self._held(lease).lease_until = self._clock() + self.lease_seconds

    async def save(self, lease: RowLease, write: Callable[[ThreadRow | None], Texts]) -> None:
        row = self._held(lease)
        texts = write(row.frozen())
        row.messages = _utf8(texts["messages"]) or b"[]"
        row.conversation, row.pause = _utf8(texts["conversation"]), _utf8(texts["pause"])
        row.recording, row.strings = _utf8(texts["recording"]), _utf8(texts["strings"])
        row.token, row.lease_until, row.updated_at = None, None, self._clock()
        self._bytes -= row.size
        self._bytes += row.measure(lease.thread_id)
        self._rows.move_to_end(lease.thread_id)
        self._shrink()

    async def release(self, lease: RowLease) -> None:
        row = self._rows.get(lease.thread_id)
        if row is None or row.token != lease.token:
            return
        if lease.created and row.blank:
            self._forget(lease.thread_id)
            return
        row.token, row.lease_until = None, None

    async def read(self, thread_id: str, owner: str | None, *, blank_ok: bool = False) -> ThreadRow:
        return self._owned(thread_id, owner, blank_ok).frozen()

    async def list(self, owner: str, *, limit: int = 100) -> list[tuple[str, ThreadRow]]:
        mine = [(tid, row) for tid, row in self._rows.items() if row.owner == owner and not row.blank]
        mine.sort(key=lambda item: item[1].updated_at, reverse=True)
        return [(tid, row.frozen()) for tid, row in mine[: max(0, limit)]]

    async def delete(self, thread_id: str, owner: str | None) -> None:
        row = self._owned(thread_id, owner, blank_ok=True)
        claim(row.owner, owner, row.lease_until, self._clock())
        self._forget(thread_id)

    async def purge(self, older_than: float) -> int:
        now = self._clock()
        cutoff = now - older_than
        old = [
            t
            for t, r in self._rows.items()
            if r.updated_at < cutoff and (r.lease_until is None or r.lease_until <= now)
        ]
        for thread_id in old:
            self._forget(thread_id)
        return len(old)

    async def close(self) -> None:
        """Nothing to release."""

    def _held(self, lease: RowLease) -> _Row:
        row = self._rows.get(lease.thread_id)
        if row is None or row.token != lease.token:
            raise _lost(lease.thread_id)
        return row

    def _owned(self, thread_id: str, owner: str | None, blank_ok: bool = False) -> _Row:
        row = self._rows.get(thread_id)
        if row is None or (row.blank and not blank_ok):
            self._check_dropped(thread_id, owner)
            raise ThreadNotFoundError("no such thread for this caller")
        claim(row.owner, owner, None, 0.0)
        return row

    def _check_dropped(self, thread_id: str, owner: str | None) -> None:
        if thread_id in self._dropped:
            claim(self._dropped[thread_id], owner, None, 0.0)
            raise ThreadExpiredError("this thread was dropped to keep the store within its bytes")

    def _forget(self, thread_id: str) -> None:
        row = self._rows.pop(thread_id, None)
        if row is not None:
            self._bytes -= row.size

    def _shrink(self) -> None:
        """Drop least recently used rows no turn holds (remembering their ids), then the oldest remembered ids."""
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


_ROW = "owner, created_at, updated_at, lease_until, messages, conversation, pause, recording, strings"
_SUMMARY = "owner, created_at, updated_at, lease_until, CASE WHEN pause IS NULL THEN NULL ELSE '' END"
_BLANK = "messages = '[]' AND conversation IS NULL AND pause IS NULL"
_ADDED = (("recording", "TEXT"), ("strings", "TEXT"), ("created_at", "{real}"))
"""Columns a table made by an earlier release lacks (added in place)."""


def _schema(table: str, real: str) -> tuple[str, ...]:
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (thread_id TEXT PRIMARY KEY, owner TEXT, messages TEXT NOT NULL, "
        f"conversation TEXT, pause TEXT, lease TEXT, lease_until {real}, updated_at {real} NOT NULL, "
        f"recording TEXT, strings TEXT, created_at {real})",
    )


def _indexes(table: str) -> tuple[str, ...]:
    return (
        f"CREATE INDEX IF NOT EXISTS {table}_owner ON {table} (owner, updated_at)",
        f"CREATE INDEX IF NOT EXISTS {table}_updated ON {table} (updated_at)",
    )


def _thread_row(row: Any) -> ThreadRow:
    """A row of ``_ROW`` columns (a row from before creation times: created = updated)."""
    owner, created, updated, lease_until, *texts = row
    return ThreadRow(owner, float(created if created is not None else updated), float(updated), lease_until, *texts)


class _SqlRows(ABC):
    """The SQL every database backend runs; a backend supplies ``_tx`` (one transaction) and ``_fetch`` (a read),
    both taking statements with ``?`` placeholders."""

    lease_seconds: float
    _table: str
    _clock: Clock

    @abstractmethod
    async def _tx(self, work: Callable[[Callable[[str, tuple[Any, ...]], Any]], T]) -> T:
        """Supplied by each backend."""

    @abstractmethod
    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        """Supplied by each backend."""

    async def acquire(self, thread_id: str, owner: str | None) -> RowLease:
        def work(run: Callable[[str, tuple[Any, ...]], Any]) -> RowLease:
            now = self._clock()
            token = uuid.uuid4().hex
            inserted = run(
                f"INSERT INTO {self._table} (thread_id, owner, messages, lease, lease_until, updated_at, "
                "created_at) VALUES (?, ?, '[]', ?, ?, ?, ?) ON CONFLICT (thread_id) DO NOTHING",
                (thread_id, owner, token, now + self.lease_seconds, now, now),
            )
            if inserted.rowcount == 1:
                return RowLease(thread_id, token, None, created=True)
            row = run(f"SELECT {_ROW} FROM {self._table} WHERE thread_id = ? {self._lock_row}", (thread_id,)).fetchone()
            if row is None:
                raise LeaseLostError(f"thread {thread_id!r} vanished while it was being claimed")
            found = _thread_row(row)
            claim(found.owner, owner, found.lease_until, now)
            run(
                f"UPDATE {self._table} SET lease = ?, lease_until = ? WHERE thread_id = ?",
                (token, now + self.lease_seconds, thread_id),
            )
            return RowLease(thread_id, token, found, created=found.blank)

        return await self._tx(work)

    async def renew(self, lease: RowLease) -> None:
        def work(run: Callable[[str, tuple[Any, ...]], Any]) -> None:
            cursor = run(
                f"UPDATE {self._table} SET lease_until = ? WHERE thread_id = ? AND lease = ?",
                (self._clock() + self.lease_seconds, lease.thread_id, lease.token),
            )
            if cursor.rowcount != 1:
                raise _lost(lease.thread_id)

        await self._tx(work)

    async def save(self, lease: RowLease, write: Callable[[ThreadRow | None], Texts]) -> None:
        def work(run: Callable[[str, tuple[Any, ...]], Any]) -> None:
            old = run(
                f"SELECT {_ROW} FROM {self._table} WHERE thread_id = ? AND lease = ? {self._lock_row}",
                (lease.thread_id, lease.token),
            ).fetchone()
            if old is None:
                raise _lost(lease.thread_id)
            texts = write(_thread_row(old))
            run(
                f"UPDATE {self._table} SET messages = ?, conversation = ?, pause = ?, recording = ?, strings = ?, "
                "lease = NULL, lease_until = NULL, updated_at = ? WHERE thread_id = ? AND lease = ?",
                (*(texts[name] for name in TEXTS), self._clock(), lease.thread_id, lease.token),
            )

        await self._tx(work)

    async def release(self, lease: RowLease) -> None:
        def work(run: Callable[[str, tuple[Any, ...]], Any]) -> None:
            if lease.created:
                run(
                    f"DELETE FROM {self._table} WHERE thread_id = ? AND lease = ? AND {_BLANK}",
                    (lease.thread_id, lease.token),
                )
            run(
                f"UPDATE {self._table} SET lease = NULL, lease_until = NULL WHERE thread_id = ? AND lease = ?",
                (lease.thread_id, lease.token),
            )

        await self._tx(work)

    async def read(self, thread_id: str, owner: str | None, *, blank_ok: bool = False) -> ThreadRow:
        rows = await self._fetch(f"SELECT {_ROW} FROM {self._table} WHERE thread_id = ?", (thread_id,))
        found = _thread_row(rows[0]) if rows else None
        if found is None or (found.blank and not blank_ok):
            raise ThreadNotFoundError("no such thread for this caller")
        claim(found.owner, owner, None, 0.0)
        return found

    async def list(self, owner: str, *, limit: int = 100) -> list[tuple[str, ThreadRow]]:
        rows = await self._fetch(
            f"SELECT thread_id, {_SUMMARY} FROM {self._table} WHERE owner = ? AND NOT ({_BLANK}) "
            "ORDER BY updated_at DESC LIMIT ?",
            (owner, max(0, limit)),
        )
        return [(row[0], _thread_row((*row[1:5], "[]", None, row[5], None, None))) for row in rows]

    async def delete(self, thread_id: str, owner: str | None) -> None:
        def work(run: Callable[[str, tuple[Any, ...]], Any]) -> None:
            sql = f"SELECT owner, lease_until FROM {self._table} WHERE thread_id = ? {self._lock_row}"
            row = run(sql, (thread_id,)).fetchone()
            if row is None:
                raise ThreadNotFoundError("no such thread for this caller")
            claim(row[0], owner, row[1], self._clock())
            run(f"DELETE FROM {self._table} WHERE thread_id = ?", (thread_id,))

        await self._tx(work)

    async def purge(self, older_than: float) -> int:
        def work(run: Callable[[str, tuple[Any, ...]], Any]) -> int:
            now = self._clock()
            cursor = run(
                f"DELETE FROM {self._table} WHERE updated_at < ? AND (lease_until IS NULL OR lease_until <= ?)",
                (now - older_than, now),
            )
            return int(cursor.rowcount)

        return await self._tx(work)

    _lock_row = ""
    """What a claim appends to lock the row it read (PostgreSQL: ``FOR UPDATE``)."""


class SqliteSessionRows(_SqlRows):
    """Thread rows in one SQLite file (WAL); a claim is one ``BEGIN IMMEDIATE`` transaction, atomic across
    processes; calls run in a worker thread."""

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        table: str = DEFAULT_SESSIONS_TABLE,
        clock: Clock | None = None,
    ) -> None:
        self.path = str(path)
        self._table = check_table(table, max_length=63)
        self.lease_seconds = lease_seconds
        self._clock = clock or time.time
        self._lock = threading.Lock()
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None:
            conn = connect_sqlite(self.path)
            for statement in _schema(self._table, "REAL"):
                conn.execute(statement)
            add_missing_columns(conn, self._table, tuple((n, k.format(real="REAL")) for n, k in _ADDED))
            for statement in _indexes(self._table):
                conn.execute(statement)
            self._conn = conn
        return self._conn

    def _locked_tx(self, work: Callable[[Callable[[str, tuple[Any, ...]], Any]], T]) -> T:
        with self._lock:
            return in_transaction(self._connection(), lambda conn: work(conn.execute))

    def _locked_fetch(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        with self._lock:
            return list(self._connection().execute(sql, args).fetchall())

    async def _tx(self, work: Callable[[Callable[[str, tuple[Any, ...]], Any]], T]) -> T:
        return await asyncio.to_thread(self._locked_tx, work)

    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        return await asyncio.to_thread(self._locked_fetch, sql, args)

    async def close(self) -> None:
        """Close the connection (a later call reopens it)."""

        def shut() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(shut)


class _Cursor:
    """A fetched PostgreSQL result as the shared SQL reads it (``fetchone``, ``rowcount``)."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows, self.rowcount = rows, rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None


class PostgresSessionRows(_SqlRows):
    """Thread rows in PostgreSQL (async connections from a pool of ``pool_size``); a claim takes the row lock
    (``SELECT ... FOR UPDATE``)."""

    _lock_row = "FOR UPDATE"

    def __init__(
        self,
        dsn: str,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        table: str = DEFAULT_SESSIONS_TABLE,
        pool_size: int = 10,
        clock: Clock | None = None,
    ) -> None:
        self._table = check_table(table, max_length=63)
        self.lease_seconds = lease_seconds
        self._clock = clock or time.time
        self._pool = PostgresPool(dsn, size=pool_size)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A connection on which the table exists."""
        async with self._pool.aconnection() as conn:
            name = f"sessions:{self._table}"
            if name not in self._pool.ready:
                async with conn.transaction():
                    await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentfootprint:{name}",))
                    real = "DOUBLE PRECISION"
                    for statement in _schema(self._table, real):
                        await conn.execute(statement)
                    for column, kind in _ADDED:
                        await conn.execute(
                            f"ALTER TABLE {self._table} ADD COLUMN IF NOT EXISTS {column} {kind.format(real=real)}"
                        )
                    for statement in _indexes(self._table):
                        await conn.execute(statement)
                self._pool.ready.add(name)
            yield conn

    async def _tx(self, work: Callable[[Callable[[str, tuple[Any, ...]], Any]], T]) -> T:
        async with self._connection() as conn, conn.transaction():
            # the work is plain (sync) code: run its statements one by one, each awaited, in order
            return await _drive(conn, work)

    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        async with self._connection() as conn:
            cursor = await conn.execute(sql.replace("?", "%s"), args)
            return list(await cursor.fetchall())

    async def close(self) -> None:
        """Close the idle connections."""
        await self._pool.aclose()


async def _drive(conn: Any, work: Callable[[Callable[[str, tuple[Any, ...]], Any]], T]) -> T:
    """Run ``work`` (sync code that issues statements through ``run``) against an async connection: ``work`` runs
    in a worker thread and each statement it issues is executed on this loop, in order."""
    loop = asyncio.get_running_loop()

    async def execute(sql: str, args: tuple[Any, ...]) -> _Cursor:
        cursor = await conn.execute(sql.replace("?", "%s"), args)
        rows = list(await cursor.fetchall()) if cursor.description else []
        return _Cursor(rows, cursor.rowcount)

    def run(sql: str, args: tuple[Any, ...]) -> Any:
        return asyncio.run_coroutine_threadsafe(execute(sql, args), loop).result()

    return await asyncio.to_thread(work, run)


__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_SESSIONS_TABLE",
    "TEXTS",
    "LeaseLostError",
    "MemorySessionRows",
    "PostgresSessionRows",
    "RowLease",
    "SessionRows",
    "SqliteSessionRows",
    "ThreadBusyError",
    "ThreadExpiredError",
    "ThreadNotFoundError",
    "ThreadRow",
    "claim",
]
