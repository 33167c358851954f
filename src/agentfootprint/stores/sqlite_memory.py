"""Conversation memory in one SQLite file (WAL): entries per namespace, vectors beside them (sqlite-vec)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentfootprint.stores.memory import MemoryEntry, MemoryNamespace, entry_from_row, entry_meta
from agentfootprint.stores.sqlite import add_missing_columns, connect_sqlite, sqlite_transaction
from agentfootprint.stores.vectors import VectorStore


class SQLiteMemoryStore:
    """A durable memory store on stdlib ``sqlite3`` (WAL journal); safe to share across threads of one process."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._conn = connect_sqlite(self.path)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS memory_entries ("
            " seq INTEGER PRIMARY KEY AUTOINCREMENT, ns TEXT NOT NULL, entry_id TEXT NOT NULL,"
            " role TEXT NOT NULL, content TEXT NOT NULL, run_id TEXT NOT NULL, created_at REAL NOT NULL,"
            " UNIQUE (ns, entry_id))"
        )
        self._conn.execute("CREATE INDEX IF NOT EXISTS memory_entries_ns ON memory_entries (ns, seq)")
        # stores written before facts and summaries existed
        add_missing_columns(
            self._conn,
            "memory_entries",
            (("kind", "TEXT NOT NULL DEFAULT 'turn'"), ("meta", "TEXT NOT NULL DEFAULT '{}'")),
        )
        self._vectors: VectorStore | None = None

    @property
    def vectors(self) -> VectorStore:
        """Vectors beside the entries, in the same file (sqlite-vec), opened on first use."""
        if self._vectors is None:
            from agentfootprint.stores.sqlite_vectors import SQLiteVectorStore

            self._vectors = SQLiteVectorStore(self.path, table="memory_vectors")
        return self._vectors

    def append(self, namespace: MemoryNamespace, entries: Sequence[MemoryEntry]) -> None:
        """Add entries in order in one transaction; ids already stored in this namespace are skipped."""
        rows = [
            (namespace.key(), e.id, e.role, e.content, e.run_id, e.created_at, e.kind, entry_meta(e.metadata))
            for e in entries
        ]
        with self._lock, sqlite_transaction(self._conn):
            self._conn.executemany(
                "INSERT OR IGNORE INTO memory_entries (ns, entry_id, role, content, run_id, created_at, kind, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def load(self, namespace: MemoryNamespace, *, last: int | None = None) -> list[MemoryEntry]:
        """Entries of this namespace, oldest first; ``last`` keeps only the newest ones."""
        sql = (
            "SELECT entry_id, role, content, run_id, created_at, kind, meta FROM memory_entries WHERE ns = ?"
            " ORDER BY seq DESC"
        )
        params: tuple[Any, ...] = (namespace.key(),)
        if last is not None:
            sql += " LIMIT ?"
            params = (*params, max(0, int(last)))
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [entry_from_row(r, json.loads(r[6] or "{}")) for r in reversed(rows)]

    def clear(self, namespace: MemoryNamespace) -> int:
        """Forget a namespace (its vectors too); returns how many entries were dropped."""
        with self._lock:
            cur = self._conn.execute("DELETE FROM memory_entries WHERE ns = ?", (namespace.key(),))
            dropped = int(cur.rowcount)
        if self._vectors is not None:
            self._vectors.drop(namespace.key())
        return dropped

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


__all__ = ["SQLiteMemoryStore"]
