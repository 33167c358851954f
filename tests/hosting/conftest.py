"""Hosting fixtures: a throwaway PostgreSQL 15 on loopback (skipped, with the reason, when it cannot start)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests._live import free_port
from tests._postgres import throwaway_postgres

from agentfootprint.hosting import SessionStore, memory_sessions, postgres_sessions, sqlite_sessions

StoreMaker = Callable[..., SessionStore]
__all__ = ["StoreMaker", "free_port"]
PG_BIN_CANDIDATES = (Path("/usr/lib/postgresql/15/bin"),)


def _pg_bin() -> Path | None:
    try:
        listed = subprocess.run(["dpkg", "-L", "postgresql-15"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        listed = ""
    for line in listed.splitlines():
        if line.endswith("/bin/initdb"):
            return Path(line).parent
    for candidate in PG_BIN_CANDIDATES:
        if (candidate / "initdb").exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN for a fresh PostgreSQL 15 server in a temp dir on a free loopback port; stopped after the session."""
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL 15 server binaries not found (dpkg -L postgresql-15)")
    with throwaway_postgres(bin_dir, "PostgreSQL") as dsn:
        yield dsn


@pytest.fixture(scope="module")
def live_agui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of ``agui_served:build_app`` under uvicorn on 127.0.0.1 (one server per test module)."""
    from agui_live import live_server

    with live_server(tmp_path_factory.mktemp("agui") / "threads.db") as base:
        yield base


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreMaker:
    """A maker of stores of one kind; every store made in one test shares its backing data."""
    table = f"t_{uuid.uuid4().hex[:12]}"
    if request.param == "memory":
        shared = memory_sessions()
        return lambda **kw: shared if not kw else memory_sessions(**kw)
    if request.param == "sqlite":
        return lambda **kw: sqlite_sessions(tmp_path / "threads.db", table=table, **kw)
    dsn = request.getfixturevalue("postgres_dsn")
    return lambda **kw: postgres_sessions(dsn, table=table, **kw)
