"""Vectors in SQLite: ``sqlite-vec`` for nearest-neighbour search, FTS5 for keyword search, one file, WAL journal.

Python builds without SQLite extension loading fall back to ``sqlean`` (a drop-in ``sqlite3`` that has it); both
are in the ``vectors`` extra.
"""

from __future__ import annotations

import importlib
import json
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentfootprint.stores._sql import check_table
from agentfootprint.stores.bm25 import tokenize
from agentfootprint.stores.errors import VectorStoreUnavailableError
from agentfootprint.stores.sqlite import connect_sqlite, sqlite_transaction
from agentfootprint.stores.vectors import StoredItem, check_vector, normalized

INSTALL_HINT = "pip install 'agentfootprint[vectors]'"


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def connect_with_extensions(path: str) -> Any:
    """A DB-API connection that can load SQLite extensions: stdlib ``sqlite3`` when built with it, else ``sqlean``."""
    conn: Any = connect_sqlite(path)
    if hasattr(conn, "enable_load_extension"):
        return conn
    conn.close()
    sqlean = _module("sqlean")
    if sqlean is None:
        raise VectorStoreUnavailableError(
            f"this Python's sqlite3 cannot load extensions and sqlean is not installed: {INSTALL_HINT}"
        )
    return connect_sqlite(path, driver=sqlean)


def load_sqlite_vec(conn: Any) -> str:
    """Load the sqlite-vec extension into ``conn``; returns its version."""
    sqlite_vec = _module("sqlite_vec")
    if sqlite_vec is None:
        raise VectorStoreUnavailableError(f"SQLite vector search needs the sqlite-vec package: {INSTALL_HINT}")
    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)
    return str(conn.execute("SELECT vec_version()").fetchone()[0])


def pack(vector: Sequence[float]) -> bytes:
    """A float32 little-endian blob, sqlite-vec's vector format."""
    return struct.pack(f"<{len(vector)}f", *vector)


def fts_query(query: str) -> str | None:
    """An FTS5 OR-query of the query's word tokens, each quoted (no FTS syntax from the caller survives)."""
    terms = list(dict.fromkeys(tokenize(query)))[:64]
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms) if terms else None


class SQLiteVectorStore:
    """A ``VectorStore`` in one SQLite file: items and FTS5 in tables, vectors in a ``vec0`` table per namespace
    partition (cosine distance). Thread-safe within one process."""

    def __init__(self, path: str | Path, *, table: str = "af_vectors") -> None:
        self.table = check_table(table)
        self.path = str(path)
        self._lock = threading.Lock()
        self._conn = connect_with_extensions(self.path)
        self.vec_version = load_sqlite_vec(self._conn)
        t = self.table
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {t} (rid INTEGER PRIMARY KEY AUTOINCREMENT, ns TEXT NOT NULL,"
            " item_id TEXT NOT NULL, text TEXT NOT NULL, meta TEXT NOT NULL, dims INTEGER NOT NULL DEFAULT 0,"
            " UNIQUE (ns, item_id))"
        )
        self._conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {t}_fts USING fts5(text, ns UNINDEXED)")
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {t}_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self._conn.execute(f"SELECT value FROM {t}_meta WHERE key = 'dimension'").fetchone()
        self.dimension: int | None = int(row[0]) if row else None

    def _vec_table(self, dimension: int) -> str:
        t = f"{self.table}_vec"
        if self.dimension is None:
            self._conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING vec0("
                f"ns text partition key, embedding float[{dimension}] distance_metric=cosine)"
            )
            self._conn.execute(
                f"INSERT OR REPLACE INTO {self.table}_meta (key, value) VALUES ('dimension', ?)", (str(dimension),)
            )
            self.dimension = dimension
        return t

    def upsert(self, namespace: str, items: Sequence[StoredItem]) -> None:
        """Add or replace items by id, in one transaction."""
        t = self.table
        with self._lock, sqlite_transaction(self._conn):
            for item in items:
                vector = check_vector(item.vector, self.dimension) if item.vector is not None else None
                meta = json.dumps(dict(item.metadata), sort_keys=True, default=str)
                rid = self._conn.execute(
                    f"INSERT INTO {t} (ns, item_id, text, meta, dims) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (ns, item_id) DO UPDATE SET text = excluded.text, meta = excluded.meta,"
                    " dims = excluded.dims RETURNING rid",
                    (namespace, item.id, item.text, meta, len(vector) if vector else 0),
                ).fetchone()[0]
                self._conn.execute(f"DELETE FROM {t}_fts WHERE rowid = ?", (rid,))
                self._conn.execute(
                    f"INSERT INTO {t}_fts (rowid, text, ns) VALUES (?, ?, ?)", (rid, item.text, namespace)
                )
                if self.dimension is not None:
                    self._conn.execute(f"DELETE FROM {t}_vec WHERE rowid = ?", (rid,))
                if vector is not None:
                    vec = self._vec_table(len(vector))
                    self._conn.execute(
                        f"INSERT INTO {vec} (rowid, ns, embedding) VALUES (?, ?, ?)",
                        (rid, namespace, pack(normalized(vector))),
                    )

    def _items(self, rids: Sequence[int]) -> dict[int, StoredItem]:
        if not rids:
            return {}
        marks = ",".join("?" * len(rids))
        rows = self._conn.execute(
            f"SELECT rid, item_id, text, meta FROM {self.table} WHERE rid IN ({marks})", tuple(rids)
        ).fetchall()
        return {r[0]: StoredItem(id=r[1], text=r[2], metadata=json.loads(r[3])) for r in rows}

    def nearest(self, namespace: str, vector: Sequence[float], k: int) -> list[tuple[StoredItem, float]]:
        """The ``k`` nearest items by cosine similarity (``1 - distance``), best first."""
        if k <= 0:
            return []
        with self._lock:
            if self.dimension is None:
                return []
            query = normalized(check_vector(vector, self.dimension))
            rows = self._conn.execute(
                f"SELECT rowid, distance FROM {self.table}_vec WHERE embedding MATCH ? AND k = ? AND ns = ?"
                " ORDER BY distance",
                (pack(query), int(k), namespace),
            ).fetchall()
            found = self._items([r[0] for r in rows])
        return [(found[r[0]], round(1.0 - float(r[1]), 6)) for r in rows if r[0] in found]

    def keyword(self, namespace: str, query: str, k: int) -> list[tuple[StoredItem, float]]:
        """The ``k`` best FTS5 (BM25) matches of the query's words, best first."""
        match = fts_query(query)
        if match is None or k <= 0:
            return []
        t = self.table
        with self._lock:
            rows = self._conn.execute(
                f"SELECT rowid, bm25({t}_fts) AS s FROM {t}_fts WHERE {t}_fts MATCH ? AND ns = ? ORDER BY s LIMIT ?",
                (match, namespace, int(k)),
            ).fetchall()
            found = self._items([r[0] for r in rows])
        return [(found[r[0]], round(-float(r[1]), 6)) for r in rows if r[0] in found]

    def get(self, namespace: str, ids: Sequence[str]) -> list[StoredItem]:
        """The items with these ids that exist, in the order asked."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._conn.execute(
                f"SELECT item_id, text, meta FROM {self.table} WHERE ns = ? AND item_id IN ({marks})",
                (namespace, *ids),
            ).fetchall()
        by_id = {r[0]: StoredItem(id=r[0], text=r[1], metadata=json.loads(r[2])) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def count(self, namespace: str) -> int:
        with self._lock:
            return int(
                self._conn.execute(f"SELECT count(*) FROM {self.table} WHERE ns = ?", (namespace,)).fetchone()[0]
            )

    def drop(self, namespace: str) -> int:
        """Forget a namespace; returns how many items were dropped."""
        t = self.table
        with self._lock, sqlite_transaction(self._conn):
            rids = [r[0] for r in self._conn.execute(f"SELECT rid FROM {t} WHERE ns = ?", (namespace,))]
            for rid in rids:
                self._conn.execute(f"DELETE FROM {t}_fts WHERE rowid = ?", (rid,))
                if self.dimension is not None:
                    self._conn.execute(f"DELETE FROM {t}_vec WHERE rowid = ?", (rid,))
            self._conn.execute(f"DELETE FROM {t} WHERE ns = ?", (namespace,))
        return len(rids)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


__all__ = [
    "INSTALL_HINT",
    "SQLiteVectorStore",
    "VectorStoreUnavailableError",
    "connect_with_extensions",
    "fts_query",
    "load_sqlite_vec",
    "pack",
]
