"""The one PostgreSQL pool every store shares (psycopg 3, the ``postgres`` extra, imported on first use).

Sync stores borrow blocking connections; async stores borrow ``AsyncConnection``s, so nothing blocks a running
event loop. Connections are autocommit (a store opens ``conn.transaction()`` where it needs one); a connection
left broken or inside a transaction is closed instead of reused. The DSN is never shown."""

from __future__ import annotations

import asyncio
import importlib
import threading
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from agentfootprint.errors import AgentFootprintError
from agentfootprint.stores.errors import StoreUnavailableError

DEFAULT_POOL_SIZE = 10
DEFAULT_CONNECT_TIMEOUT = 10.0
INSTALL_HINT = "pip install 'agentfootprint[postgres]'"


def psycopg_module(what: str = "PostgreSQL stores", error: type[AgentFootprintError] = StoreUnavailableError) -> Any:
    """psycopg, imported now; ``error`` naming ``what`` needs it when it is not installed."""
    try:
        return importlib.import_module("psycopg")
    except ImportError:
        raise error(f"{what} need psycopg: {INSTALL_HINT}") from None


class _AsyncSide:
    """One event loop's share of a pool: its slots and its idle async connections."""

    def __init__(self, size: int) -> None:
        self.slots = asyncio.Semaphore(size)
        self.idle: list[Any] = []


class PostgresPool:
    """At most ``size`` open connections per side (threads, and each event loop), reused; ``setup`` statements
    run once on each new connection (session settings such as ``SET hnsw.ef_search``)."""

    def __init__(
        self,
        dsn: str,
        *,
        size: int = DEFAULT_POOL_SIZE,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        setup: Sequence[str] = (),
    ) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise StoreUnavailableError("a PostgreSQL store needs a connection string")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise StoreUnavailableError("a PostgreSQL pool's size must be a positive int")
        self._dsn = dsn
        self.size = size
        self._timeout = max(1, int(connect_timeout))
        self._setup = tuple(setup)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[Any] = []
        self._sides: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _AsyncSide] = weakref.WeakKeyDictionary()
        self.ready: set[str] = set()
        """Names of the schemas made on this database through this pool (each store's DDL runs once)."""

    def __repr__(self) -> str:
        return f"PostgresPool(size={self.size})"

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A blocking connection for a sync store (never call from a running event loop's thread)."""
        psycopg = psycopg_module()
        with self._slots:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=self._timeout)
                for statement in self._setup:
                    conn.execute(statement)
            try:
                yield conn
            finally:
                if conn.closed or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    _close_quietly(conn)
                else:
                    with self._lock:
                        self._idle.append(conn)

    @asynccontextmanager
    async def aconnection(self) -> AsyncIterator[Any]:
        """An ``AsyncConnection`` for an async store, from the running loop's share of the pool."""
        psycopg = psycopg_module()
        side = self._sides.get(asyncio.get_running_loop())
        if side is None:
            side = self._sides.setdefault(asyncio.get_running_loop(), _AsyncSide(self.size))
        async with side.slots:
            conn = side.idle.pop() if side.idle else None
            if conn is None:
                conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True, connect_timeout=self._timeout)
                for statement in self._setup:
                    await conn.execute(statement)
            try:
                yield conn
            finally:
                if conn.closed or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    await _aclose_quietly(conn)
                else:
                    side.idle.append(conn)

    def close(self) -> None:
        """Close the idle blocking connections (the pool stays usable: a later borrow opens new ones)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            _close_quietly(conn)

    async def aclose(self) -> None:
        """Close the running loop's idle async connections (the pool stays usable)."""
        side = self._sides.get(asyncio.get_running_loop())
        if side is not None:
            idle, side.idle = side.idle, []
            for conn in idle:
                await _aclose_quietly(conn)


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # a broken connection is being dropped anyway
        return


async def _aclose_quietly(conn: Any) -> None:
    try:
        await conn.close()
    except Exception:  # a broken connection is being dropped anyway
        return


def ensure_schema(pool: PostgresPool, conn: Any, name: str, statements: Sequence[str]) -> None:
    """Run a store's DDL once per pool: in one transaction holding an advisory lock on ``name``, so replicas and
    threads starting together never race on ``CREATE ... IF NOT EXISTS``."""
    if name in pool.ready:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentfootprint:{name}",))
        for statement in statements:
            conn.execute(statement)
    pool.ready.add(name)


_POOLS: dict[tuple[str, tuple[str, ...]], PostgresPool] = {}
_POOLS_LOCK = threading.Lock()


def postgres_pool(dsn: str, *, setup: Sequence[str] = ()) -> PostgresPool:
    """The process's pool for ``dsn`` (one per DSN and session setup), made on first use."""
    key = (dsn, tuple(setup))
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = PostgresPool(dsn, setup=setup)
        return pool


__all__ = ["DEFAULT_POOL_SIZE", "INSTALL_HINT", "PostgresPool", "ensure_schema", "postgres_pool", "psycopg_module"]
