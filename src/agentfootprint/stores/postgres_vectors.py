"""Vectors in PostgreSQL: ``pgvector`` (HNSW, cosine) for nearest-neighbour search, ``tsvector`` for keyword search.

For several replicas sharing one database. psycopg 3 is imported on first use (the ``postgres`` extra); the
database needs the ``vector`` extension available (``CREATE EXTENSION vector`` is run when missing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentfootprint.stores._sql import check_table
from agentfootprint.stores.bm25 import tokenize
from agentfootprint.stores.errors import VectorStoreUnavailableError
from agentfootprint.stores.postgres import ensure_schema, postgres_pool, psycopg_module
from agentfootprint.stores.vectors import StoredItem, check_vector, normalized


def _literal(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector (``[1,2,3]``)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def ts_query(query: str) -> str | None:
    """A ``to_tsquery`` OR-query of the query's word tokens (no tsquery syntax from the caller survives)."""
    terms = [t for t in dict.fromkeys(tokenize(query)) if t.isalnum()][:64]
    return " | ".join(terms) if terms else None


class PostgresVectorStore:
    """A ``VectorStore`` in one PostgreSQL table: ``(ns, item_id)`` primary key, a ``vector(d)`` column with an
    HNSW cosine index, a generated ``tsvector`` with a GIN index. Connections from the shared pool; thread-safe."""

    def __init__(self, dsn: str, *, dimension: int, table: str = "af_vectors", ef_search: int = 100) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise ValueError("PostgresVectorStore needs a connection string")
        if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= 16_000:
            raise ValueError("dimension must be an int in 1..16000")
        self.table = self.check_table(table)
        psycopg_module("PostgreSQL vectors", VectorStoreUnavailableError)
        self.dsn = dsn
        self.dimension = dimension
        self.ef_search = int(ef_search)
        # a namespace filter still returns k rows with the iterative scan
        setup = (f"SET hnsw.ef_search = {self.ef_search}", "SET hnsw.iterative_scan = relaxed_order")
        self._pool = postgres_pool(dsn, setup=setup)
        with self._pool.connection() as conn:
            self._create_table(conn)

    @staticmethod
    def check_table(table: str) -> str:
        """A safe SQL table name (1-41 letters, digits or _), or ``ValueError``."""
        return check_table(table)

    def _create_table(self, conn: Any) -> None:
        t, d = self.table, self.dimension
        ensure_schema(
            self._pool,
            conn,
            f"vectors:{t}",
            (
                "CREATE EXTENSION IF NOT EXISTS vector",
                f"CREATE TABLE IF NOT EXISTS {t} (ns TEXT NOT NULL, item_id TEXT NOT NULL, text TEXT NOT NULL,"
                f" meta JSONB NOT NULL DEFAULT '{{}}', embedding vector({d}),"
                " tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED, PRIMARY KEY (ns, item_id))",
                f"CREATE INDEX IF NOT EXISTS {t}_hnsw ON {t} USING hnsw (embedding vector_cosine_ops)",
                f"CREATE INDEX IF NOT EXISTS {t}_tsv ON {t} USING gin (tsv)",
            ),
        )

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        with self._pool.connection() as conn:
            return list(conn.execute(sql, params).fetchall())

    def upsert(self, namespace: str, items: Sequence[StoredItem]) -> None:
        """Add or replace items by id, in one transaction."""
        rows = []
        for item in items:
            vector = check_vector(item.vector, self.dimension) if item.vector is not None else None
            meta = json.dumps(dict(item.metadata), sort_keys=True, default=str)
            rows.append((namespace, item.id, item.text, meta, _literal(normalized(vector)) if vector else None))
        with self._pool.connection() as conn:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {self.table} (ns, item_id, text, meta, embedding) VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (ns, item_id) DO UPDATE SET text = EXCLUDED.text, meta = EXCLUDED.meta,"
                    " embedding = EXCLUDED.embedding",
                    rows,
                )

    def nearest(self, namespace: str, vector: Sequence[float], k: int) -> list[tuple[StoredItem, float]]:
        """The ``k`` nearest items by cosine similarity, best first (HNSW: approximate, like every ANN index)."""
        if k <= 0:
            return []
        query = _literal(normalized(check_vector(vector, self.dimension)))
        rows = self._rows(
            f"SELECT item_id, text, meta, embedding <=> %s::vector AS d FROM {self.table}"
            " WHERE ns = %s AND embedding IS NOT NULL ORDER BY d LIMIT %s",
            (query, namespace, int(k)),
        )
        return [(StoredItem(id=r[0], text=r[1], metadata=dict(r[2])), round(1.0 - float(r[3]), 6)) for r in rows]

    def keyword(self, namespace: str, query: str, k: int) -> list[tuple[StoredItem, float]]:
        """The ``k`` best full-text matches of the query's words (``ts_rank``), best first."""
        match = ts_query(query)
        if match is None or k <= 0:
            return []
        rows = self._rows(
            f"SELECT item_id, text, meta, ts_rank(tsv, q) AS s FROM {self.table},"
            " to_tsquery('simple', %s) AS q WHERE ns = %s AND tsv @@ q ORDER BY s DESC, item_id LIMIT %s",
            (match, namespace, int(k)),
        )
        return [(StoredItem(id=r[0], text=r[1], metadata=dict(r[2])), round(float(r[3]), 6)) for r in rows]

    def get(self, namespace: str, ids: Sequence[str]) -> list[StoredItem]:
        """The items with these ids that exist, in the order asked."""
        if not ids:
            return []
        rows = self._rows(
            f"SELECT item_id, text, meta FROM {self.table} WHERE ns = %s AND item_id = ANY(%s)",
            (namespace, list(ids)),
        )
        by_id = {r[0]: StoredItem(id=r[0], text=r[1], metadata=dict(r[2])) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def count(self, namespace: str) -> int:
        return int(self._rows(f"SELECT count(*) FROM {self.table} WHERE ns = %s", (namespace,))[0][0])

    def drop(self, namespace: str) -> int:
        """Forget a namespace; returns how many items were dropped."""
        with self._pool.connection() as conn:
            return int(conn.execute(f"DELETE FROM {self.table} WHERE ns = %s", (namespace,)).rowcount)

    def close(self) -> None:
        """Close the pool's idle connections."""
        self._pool.close()


__all__ = ["PostgresVectorStore", "ts_query"]
