"""Decision ledgers a host shares between processes: SQLite (one file) and PostgreSQL (one database).

Each spends a request with one atomic insert against a primary key, so of two processes resuming the same pause
exactly one is told True and runs the tool."""

from __future__ import annotations

import re
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentfootprint.errors import AgentFootprintError

if TYPE_CHECKING:
    import sqlite3

DEFAULT_LEDGER_TABLE = "agentfootprint_spent_requests"
_TABLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class DecisionLedgerError(AgentFootprintError):
    """A decision ledger that cannot be used (its database is unreachable, its table name is not a plain name, its
    driver is missing). A consent is never spent on a ledger that failed: the tool does not run."""

    code = "ERR_DECISION_LEDGER"


class SQLiteDecisionLedger:
    """Spent request ids in a SQLite file, shared by every process that opens it (WAL)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        with self._lock, closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS spent_requests (request_id TEXT PRIMARY KEY, spent_at REAL)")

    def _connect(self) -> sqlite3.Connection:
        import sqlite3

        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def spend(self, request_id: str) -> bool:
        with self._lock, closing(self._connect()) as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO spent_requests (request_id, spent_at) VALUES (?, ?)", (request_id, time.time())
            )
            return cursor.rowcount == 1

    def is_spent(self, request_id: str) -> bool:
        with self._lock, closing(self._connect()) as db:
            row = db.execute("SELECT 1 FROM spent_requests WHERE request_id = ?", (request_id,)).fetchone()
            return row is not None


class PostgresDecisionLedger:
    """Spent request ids in a PostgreSQL table (psycopg 3, extra ``postgres``), shared by every process and host
    on the database: ``INSERT ... ON CONFLICT DO NOTHING`` in autocommit, so exactly one spender is told True.

    The connection is opened on first use and kept (one per ledger, used under a lock); the DSN is never shown."""

    def __init__(self, dsn: str, *, table: str = DEFAULT_LEDGER_TABLE, connect_timeout: float = 10.0) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise DecisionLedgerError("PostgresDecisionLedger needs a connection string")
        if not isinstance(table, str) or _TABLE.match(table) is None:
            raise DecisionLedgerError("the ledger's table must be a lower_snake_case name of at most 63 characters")
        if isinstance(connect_timeout, bool) or not isinstance(connect_timeout, int | float) or connect_timeout <= 0:
            raise DecisionLedgerError("connect_timeout must be a positive number of seconds")
        self._dsn = dsn
        self.table = table
        self._timeout = max(1, int(connect_timeout))
        self._lock = threading.Lock()
        self._conn: Any = None

    def __repr__(self) -> str:
        return f"PostgresDecisionLedger(table={self.table!r})"

    def _connection(self) -> Any:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        try:
            import psycopg
        except ImportError:
            raise DecisionLedgerError(
                "PostgresDecisionLedger needs psycopg: pip install 'agentfootprint[postgres]'"
            ) from None
        try:
            conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=self._timeout)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} "
                "(request_id TEXT PRIMARY KEY, spent_at DOUBLE PRECISION NOT NULL)"
            )
        except psycopg.errors.UniqueViolation:  # another process created the table at the same moment
            conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=self._timeout)
        except psycopg.Error as err:
            raise DecisionLedgerError(f"the PostgreSQL decision ledger is unreachable ({type(err).__name__})") from None
        self._conn = conn
        return conn

    def _execute(self, sql: str, params: tuple[Any, ...]) -> Any:
        import psycopg

        with self._lock:
            for attempt in (1, 2):  # a connection the server dropped is reopened once
                conn = self._connection()
                try:
                    return conn.execute(sql, params)
                except psycopg.OperationalError as err:
                    self.close_quietly()
                    if attempt == 2:
                        raise DecisionLedgerError(
                            f"the PostgreSQL decision ledger is unreachable ({type(err).__name__})"
                        ) from None
                except psycopg.Error as err:
                    raise DecisionLedgerError(f"the PostgreSQL decision ledger failed ({type(err).__name__})") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def spend(self, request_id: str) -> bool:
        sql = f"INSERT INTO {self.table} (request_id, spent_at) VALUES (%s, %s) ON CONFLICT (request_id) DO NOTHING"
        return int(self._execute(sql, (request_id, time.time())).rowcount) == 1

    def is_spent(self, request_id: str) -> bool:
        cursor = self._execute(f"SELECT 1 FROM {self.table} WHERE request_id = %s", (request_id,))
        return cursor.fetchone() is not None

    def close_quietly(self) -> None:
        """Close the connection (a later call opens a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing a broken connection: nothing left to free
                pass

    def close(self) -> None:
        """Close the ledger's connection."""
        with self._lock:
            self.close_quietly()


__all__ = ["DEFAULT_LEDGER_TABLE", "DecisionLedgerError", "PostgresDecisionLedger", "SQLiteDecisionLedger"]
