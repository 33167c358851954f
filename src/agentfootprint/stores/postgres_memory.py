"""Memory in PostgreSQL, for several replicas sharing one database: entries in a table, vectors with pgvector."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentfootprint.stores.errors import VectorStoreUnavailableError
from agentfootprint.stores.memory import MemoryEntry, MemoryNamespace, entry_from_row, entry_meta
from agentfootprint.stores.postgres import ensure_schema, postgres_pool, psycopg_module
from agentfootprint.stores.postgres_vectors import PostgresVectorStore
from agentfootprint.stores.vectors import VectorStore


class PostgresMemoryStore:
    """A ``MemoryStore`` in PostgreSQL (psycopg 3): entries per namespace in insertion order, ``append`` idempotent
    by entry id; ``vectors`` (pgvector, ``dimension`` floats) backs semantic recall."""

    def __init__(self, dsn: str, *, dimension: int = 384, table: str = "af_memory") -> None:
        psycopg_module("PostgreSQL memory", VectorStoreUnavailableError)
        self.dsn = dsn
        self.dimension = dimension
        self._vectors_table = f"{table}_vectors"
        self.table = PostgresVectorStore.check_table(table)
        self._pool = postgres_pool(dsn)
        self._vectors: PostgresVectorStore | None = None
        with self._pool.connection() as conn:
            self._create_table(conn)

    def _create_table(self, conn: Any) -> None:
        t = self.table
        ensure_schema(
            self._pool,
            conn,
            f"memory:{t}",
            (
                f"CREATE TABLE IF NOT EXISTS {t} (seq BIGSERIAL PRIMARY KEY, ns TEXT NOT NULL,"
                " entry_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, run_id TEXT NOT NULL,"
                " created_at DOUBLE PRECISION NOT NULL, kind TEXT NOT NULL DEFAULT 'turn',"
                " meta JSONB NOT NULL DEFAULT '{}', UNIQUE (ns, entry_id))",
                f"CREATE INDEX IF NOT EXISTS {t}_ns ON {t} (ns, seq)",
            ),
        )

    @property
    def vectors(self) -> VectorStore:
        """Vectors beside the entries (pgvector), opened on first use."""
        if self._vectors is None:
            self._vectors = PostgresVectorStore(self.dsn, dimension=self.dimension, table=self._vectors_table)
        return self._vectors

    def append(self, namespace: MemoryNamespace, entries: Sequence[MemoryEntry]) -> None:
        """Add entries in order in one transaction; ids already stored in this namespace are skipped."""
        rows = [
            (namespace.key(), e.id, e.role, e.content, e.run_id, e.created_at, e.kind, entry_meta(e.metadata))
            for e in entries
        ]
        with self._pool.connection() as conn:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {self.table} (ns, entry_id, role, content, run_id, created_at, kind, meta)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (ns, entry_id) DO NOTHING",
                    rows,
                )

    def load(self, namespace: MemoryNamespace, *, last: int | None = None) -> list[MemoryEntry]:
        """Entries of this namespace, oldest first; ``last`` keeps only the newest ones."""
        sql = (
            f"SELECT entry_id, role, content, run_id, created_at, kind, meta FROM {self.table} WHERE ns = %s"
            " ORDER BY seq DESC"
        )
        params: tuple[Any, ...] = (namespace.key(),)
        if last is not None:
            sql += " LIMIT %s"
            params = (*params, max(0, int(last)))
        with self._pool.connection() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [entry_from_row(r, dict(r[6] or {})) for r in reversed(rows)]

    def clear(self, namespace: MemoryNamespace) -> int:
        """Forget a namespace (its vectors too); returns how many entries were dropped."""
        with self._pool.connection() as conn:
            dropped = int(conn.execute(f"DELETE FROM {self.table} WHERE ns = %s", (namespace.key(),)).rowcount)
        if self._vectors is not None:
            self._vectors.drop(namespace.key())
        return dropped

    def close(self) -> None:
        """Close the pool's idle connections."""
        self._pool.close()
        if self._vectors is not None:
            self._vectors.close()


__all__ = ["PostgresMemoryStore"]
