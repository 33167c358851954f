"""The one way a store opens SQLite: autocommit, shared across threads under the caller's lock, a 30 s busy
timeout and a WAL journal on files, so every store in one file behaves alike across processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from os import PathLike, fspath
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

if TYPE_CHECKING:
    import sqlite3

BUSY_TIMEOUT_SECONDS = 30.0
"""How long a write waits for another connection's lock before it fails."""
IN_MEMORY = ":memory:"
T = TypeVar("T")


def connect_sqlite(
    path: str | PathLike[str], *, readonly: bool = False, durable: bool = False, driver: Any = None
) -> sqlite3.Connection:
    """A connection to the SQLite file at ``path`` under the one policy: autocommit (transactions are explicit,
    ``BEGIN IMMEDIATE``), usable from any thread (callers hold a lock), busy timeout, WAL journal on a file.

    ``durable`` syncs every commit to disk (``synchronous=FULL``) for records that must survive a power loss;
    ``readonly`` opens an existing file read-only; ``driver`` is a drop-in ``sqlite3`` module (sqlean)."""
    if driver is None:
        import sqlite3 as driver  # loaded with the first SQLite store, not with the package
    target = fspath(path)
    if readonly:
        uri = f"file:{quote(target)}?mode=ro"
        conn: sqlite3.Connection = driver.connect(
            uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        return conn
    conn = driver.connect(target, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
    if target != IN_MEMORY:
        _switch_to_wal(conn)
    conn.execute("PRAGMA synchronous=FULL" if durable else "PRAGMA synchronous=NORMAL")
    return conn


def _switch_to_wal(conn: Any) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another process holds the file: SQLite answers that switch with
    "database is locked" at once, without waiting in the busy handler (two processes opening a new file at once)."""
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as exc:
            locked = "locked" in str(exc) or "busy" in str(exc)
            if not locked or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


@contextmanager
def sqlite_transaction(conn: Any) -> Iterator[Any]:
    """``BEGIN IMMEDIATE`` (the write lock first, so no deadlock between readers turned writers), then COMMIT, or
    ROLLBACK when the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def in_transaction(conn: Any, work: Callable[[Any], T]) -> T:
    """``work(conn)`` inside one ``sqlite_transaction``; its result."""
    with sqlite_transaction(conn):
        return work(conn)


def table_columns(conn: Any, table: str) -> set[str]:
    """The column names of ``table`` (empty when it does not exist); ``table`` must be a checked identifier."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def add_missing_columns(conn: Any, table: str, columns: tuple[tuple[str, str], ...]) -> None:
    """Add the ``(name, type)`` columns a table made by an earlier release lacks, in place."""
    present = table_columns(conn, table)
    for name, kind in columns:
        if name not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "IN_MEMORY",
    "add_missing_columns",
    "connect_sqlite",
    "in_transaction",
    "sqlite_transaction",
    "table_columns",
]
