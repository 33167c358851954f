"""Opening a new SQLite file from two processes at once: the WAL switch answers "database is locked" without the
busy handler, so ``connect_sqlite`` retries it (bounded by the busy timeout) instead of failing the open."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.stores.sqlite import connect_sqlite


class _Conn:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.wal_tries = 0

    def execute(self, sql: str) -> None:
        if sql == "PRAGMA journal_mode=WAL":
            self.wal_tries += 1
            if self.failures:
                raise self.failures.pop(0)


class _Driver:
    def __init__(self, failures: list[Exception]) -> None:
        self.conn = _Conn(failures)

    def connect(self, *args: Any, **kwargs: Any) -> _Conn:
        return self.conn


def test_a_locked_wal_switch_is_retried_until_it_goes_through(tmp_path: Path) -> None:
    driver = _Driver([sqlite3.OperationalError("database is locked")] * 3)
    conn: Any = connect_sqlite(tmp_path / "x.db", driver=driver)
    assert conn is driver.conn and conn.wal_tries == 4


def test_another_failure_of_the_switch_is_not_retried(tmp_path: Path) -> None:
    driver = _Driver([sqlite3.OperationalError("disk I/O error")])
    with pytest.raises(sqlite3.OperationalError):
        connect_sqlite(tmp_path / "x.db", driver=driver)
    assert driver.conn.wal_tries == 1


def test_a_real_file_still_opens_in_wal(tmp_path: Path) -> None:
    conn = connect_sqlite(tmp_path / "real.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
