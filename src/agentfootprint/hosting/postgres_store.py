"""Served threads in PostgreSQL (``agentfootprint.stores.sessions``; psycopg 3 imported on first use): for several
host replicas on one database."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agentfootprint.hosting._row_sessions import RowSessions
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.hosting.sessions import DEFAULT_LEASE_SECONDS, Clock, check_lease_seconds
from agentfootprint.hosting.sqlite_store import DEFAULT_TABLE, check_table_name
from agentfootprint.stores.errors import StoreUnavailableError
from agentfootprint.stores.ledger import DecisionLedger, PostgresDecisionLedger
from agentfootprint.stores.sessions import PostgresSessionRows

__all__ = ["PostgresSessions", "postgres_sessions"]


class PostgresSessions(RowSessions):
    """A ``SessionStore`` in PostgreSQL: the busy mark takes the thread's row lock (``SELECT ... FOR UPDATE``)."""

    backend: PostgresSessionRows
    _driver_hint = "postgres_sessions needs psycopg: pip install 'psycopg[binary]'"

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
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise HostingConfigError("pool_size must be a positive int")
        clock = clock or time.time
        self._dsn = dsn
        self._table = check_table_name(table)
        rows = PostgresSessionRows(
            dsn, lease_seconds=check_lease_seconds(lease_seconds), table=table, pool_size=pool_size, clock=clock
        )
        super().__init__(rows, clock)

    def decision_ledger(self) -> DecisionLedger:
        """The consent ledger kept in the same database, so a host restarted over these threads never spends twice."""
        return self._kept_ledger()

    def _open_ledger(self) -> PostgresDecisionLedger:
        return PostgresDecisionLedger(self._dsn)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        try:
            async with self.backend._connection() as conn:
                yield conn
        except StoreUnavailableError:
            raise HostingConfigError(self._driver_hint) from None


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
