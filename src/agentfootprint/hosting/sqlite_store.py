"""Served threads in SQLite (``agentfootprint.stores.sessions``, WAL): the embedded store; calls run in a thread."""

from __future__ import annotations

import re
import time
from os import PathLike
from typing import Any

from agentfootprint.hosting._row_sessions import RowSessions
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.hosting.sessions import DEFAULT_LEASE_SECONDS, Clock, check_lease_seconds
from agentfootprint.stores.ledger import DecisionLedger, SQLiteDecisionLedger
from agentfootprint.stores.sessions import DEFAULT_SESSIONS_TABLE, SqliteSessionRows

__all__ = ["DEFAULT_TABLE", "SqliteSessions", "check_table_name", "sqlite_sessions"]

DEFAULT_TABLE = DEFAULT_SESSIONS_TABLE
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_table_name(table: str) -> str:
    """Refuse a table name that is not a plain SQL identifier."""
    if not isinstance(table, str) or _TABLE_NAME.fullmatch(table) is None:
        raise HostingConfigError("table must be a plain SQL identifier (letters, digits, _)")
    return table


class SqliteSessions(RowSessions):
    """A ``SessionStore`` in one SQLite file (WAL); busy marks are atomic across processes (``BEGIN IMMEDIATE``)."""

    backend: SqliteSessionRows

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        table: str = DEFAULT_TABLE,
        clock: Clock | None = None,
    ) -> None:
        clock = clock or time.time
        self.path = str(path)
        self._table = check_table_name(table)
        rows = SqliteSessionRows(path, lease_seconds=check_lease_seconds(lease_seconds), table=table, clock=clock)
        super().__init__(rows, clock)

    @property
    def _conn(self) -> Any:
        return self.backend._conn

    def decision_ledger(self) -> DecisionLedger:
        """The consent ledger kept in the same file, so a host restarted over these threads never spends twice."""
        return self._kept_ledger()

    def _open_ledger(self) -> SQLiteDecisionLedger:
        return SQLiteDecisionLedger(self.path)


def sqlite_sessions(
    path: str | PathLike[str],
    *,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    table: str = DEFAULT_TABLE,
    clock: Clock | None = None,
) -> SqliteSessions:
    """A ``SessionStore`` in the SQLite file at ``path`` (created if missing; WAL journal)."""
    return SqliteSessions(path, lease_seconds=lease_seconds, table=table, clock=clock)
