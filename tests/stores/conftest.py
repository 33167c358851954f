"""Store fixtures: every contract runs against ``memory://``, ``sqlite:///<tmp>`` and ``postgresql://`` (a fresh
database per test on one throwaway server: the pgvector build when installed, else PostgreSQL 15)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.stores import StoreFamily, open_store
from tests._postgres import throwaway_postgres
from tests.context.conftest import pgvector_bin

PG15_BIN = Path("/usr/lib/postgresql/15/bin")
BACKENDS = ["memory", "sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[tuple[str, bool]]:
    """``(dsn, has_pgvector)`` of one throwaway server for the whole session."""
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    vector_bin = pgvector_bin()
    bin_dir = vector_bin or (PG15_BIN if (PG15_BIN / "initdb").exists() else None)
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (make test-setup installs them)")
    with throwaway_postgres(bin_dir, "PostgreSQL") as dsn:
        yield dsn, vector_bin is not None


@pytest.fixture
def postgres_url(postgres_server: tuple[str, bool]) -> str:
    """A URL of a database of its own for this test."""
    import psycopg

    dsn, _ = postgres_server
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return dsn.rsplit("/", 1)[0] + f"/{name}"


def store_url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh store of ``kind``."""
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'stores.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture(params=BACKENDS)
def family(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFamily]:
    """A fresh store family of each backend."""
    opened = open_store(store_url(request.param, request, tmp_path))
    yield opened
    opened.close()


@pytest.fixture
def reopen(family: StoreFamily, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Another family on the same database (memory: the same family, nothing outlives the process)."""
    made: list[StoreFamily] = []

    def again() -> StoreFamily:
        if family.kind == "memory":
            return family
        kind = "postgres" if family.kind == "postgresql" else family.kind
        other = open_store(store_url(kind, request, tmp_path))
        made.append(other)
        return other

    yield again
    for other in made:
        other.close()
