"""Decision ledgers: where answered consent requests are spent, once. In memory, SQLite (one file) or PostgreSQL
(one database); each spends with one atomic insert against a primary key, so of two processes resuming the same
pause exactly one is told True and runs the tool."""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentfootprint.errors import AgentFootprintError
from agentfootprint.stores.postgres import PostgresPool, ensure_schema, psycopg_module
from agentfootprint.stores.sqlite import connect_sqlite

DEFAULT_LEDGER_TABLE = "agentfootprint_spent_requests"
_MAX_REMEMBERED = 1_000_000
_TABLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class DecisionLedgerError(AgentFootprintError):
    """A decision ledger that cannot be used (its database is unreachable, its table name is not a plain name, its
    driver is missing). A consent is never spent on a ledger that failed: the tool does not run."""

    code = "ERR_DECISION_LEDGER"


@runtime_checkable
class DecisionLedger(Protocol):
    """Where answered consent requests are spent. ``spend`` must be atomic: True only for the first caller."""

    def spend(self, request_id: str) -> bool: ...

    def is_spent(self, request_id: str) -> bool: ...


class InMemoryDecisionLedger:
    """Spent request ids in this process (thread-safe); remembers the newest million."""

    def __init__(self, max_entries: int = _MAX_REMEMBERED) -> None:
        self._spent: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries

    def spend(self, request_id: str) -> bool:
        with self._lock:
            if request_id in self._spent:
                return False
            self._spent[request_id] = time.time()
            while len(self._spent) > self._max:
                self._spent.popitem(last=False)
            return True

    def is_spent(self, request_id: str) -> bool:
        with self._lock:
            return request_id in self._spent

    def __len__(self) -> int:
        return len(self._spent)


class SQLiteDecisionLedger:
    """Spent request ids in a SQLite file, shared by every process that opens it (WAL, each spend synced)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._conn = connect_sqlite(self.path, durable=True)
        self._conn.execute("CREATE TABLE IF NOT EXISTS spent_requests (request_id TEXT PRIMARY KEY, spent_at REAL)")

    def spend(self, request_id: str) -> bool:
        with self._lock:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO spent_requests (request_id, spent_at) VALUES (?, ?)", (request_id, time.time())
            )
            return cursor.rowcount == 1

    def is_spent(self, request_id: str) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM spent_requests WHERE request_id = ?", (request_id,)).fetchone()
            return row is not None

    def close(self) -> None:
        """Close the ledger's connection."""
        with self._lock:
            self._conn.close()


class PostgresDecisionLedger:
    """Spent request ids in a PostgreSQL table (psycopg 3, extra ``postgres``), shared by every process and host
    on the database: ``INSERT ... ON CONFLICT DO NOTHING`` in autocommit, so exactly one spender is told True.

    Connections come from the pool of ``agentfootprint.stores.postgres``; the DSN is never shown."""

    def __init__(self, dsn: str, *, table: str = DEFAULT_LEDGER_TABLE, connect_timeout: float = 10.0) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise DecisionLedgerError("PostgresDecisionLedger needs a connection string")
        if not isinstance(table, str) or _TABLE.match(table) is None:
            raise DecisionLedgerError("the ledger's table must be a lower_snake_case name of at most 63 characters")
        if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, int | float) or connect_timeout <= 0:
            raise DecisionLedgerError("connect_timeout must be a positive number of seconds")
        self.table = table
        self._pool = PostgresPool(dsn, size=4, connect_timeout=connect_timeout)
        self._schema = (
            f"CREATE TABLE IF NOT EXISTS {table} (request_id TEXT PRIMARY KEY, spent_at DOUBLE PRECISION NOT NULL)"
        )

    def __repr__(self) -> str:
        return f"PostgresDecisionLedger(table={self.table!r})"

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        psycopg = psycopg_module("PostgresDecisionLedger", DecisionLedgerError)
        for attempt in (1, 2):  # a connection the server dropped is replaced once
            try:
                with self._pool.connection() as conn:
                    ensure_schema(self._pool, conn, f"ledger:{self.table}", (self._schema,))
                    cursor = conn.execute(sql, params)
                    return cursor.rowcount, cursor.fetchone() if cursor.description else None
            except psycopg.OperationalError as err:
                if attempt == 2:
                    raise DecisionLedgerError(
                        f"the PostgreSQL decision ledger is unreachable ({type(err).__name__})"
                    ) from None
            except psycopg.Error as err:
                raise DecisionLedgerError(f"the PostgreSQL decision ledger failed ({type(err).__name__})") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def spend(self, request_id: str) -> bool:
        sql = f"INSERT INTO {self.table} (request_id, spent_at) VALUES (%s, %s) ON CONFLICT (request_id) DO NOTHING"
        return int(self._execute(sql, (request_id, time.time()))[0]) == 1

    def is_spent(self, request_id: str) -> bool:
        return self._execute(f"SELECT 1 FROM {self.table} WHERE request_id = %s", (request_id,))[1] is not None

    def close_quietly(self) -> None:
        """Close the idle connections (a later call opens a new one)."""
        self._pool.close()

    def close(self) -> None:
        """Close the ledger's connections."""
        self._pool.close()


__all__ = [
    "DEFAULT_LEDGER_TABLE",
    "DecisionLedger",
    "DecisionLedgerError",
    "InMemoryDecisionLedger",
    "PostgresDecisionLedger",
    "SQLiteDecisionLedger",
]
