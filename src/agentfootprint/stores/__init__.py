"""Stores: the storage layer at the bottom. One SQLite connection policy, one PostgreSQL pool, and per protocol
(sessions, memory, vectors, artifacts, decision ledgers, recordings) its in-memory, SQLite and PostgreSQL backends.

``open_store(url)`` opens the family of stores behind ``memory://``, ``sqlite:///path`` or ``postgresql://...``.
Names load on first use, so importing the package loads neither sqlite3 nor psycopg."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentfootprint._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from agentfootprint.stores.artifacts import ArtifactMeta, ArtifactStore
    from agentfootprint.stores.errors import (
        StoreCursorError,
        StoreError,
        StoreUnavailableError,
        StoreURLError,
        VectorStoreUnavailableError,
    )
    from agentfootprint.stores.family import StoreFamily, open_store
    from agentfootprint.stores.ledger import DecisionLedger, DecisionLedgerError
    from agentfootprint.stores.memory import MemoryEntry, MemoryNamespace, MemoryStore
    from agentfootprint.stores.postgres import PostgresPool, postgres_pool
    from agentfootprint.stores.recordings import RecordingMeta, RecordingPage, RecordingStore
    from agentfootprint.stores.sessions import SessionRows
    from agentfootprint.stores.sqlite import connect_sqlite
    from agentfootprint.stores.vectors import StoredItem, VectorStore

_EXPORTS: dict[str, str] = {
    "ArtifactMeta": ".artifacts",
    "ArtifactStore": ".artifacts",
    "DecisionLedger": ".ledger",
    "DecisionLedgerError": ".ledger",
    "MemoryEntry": ".memory",
    "MemoryNamespace": ".memory",
    "MemoryStore": ".memory",
    "PostgresPool": ".postgres",
    "RecordingMeta": ".recordings",
    "RecordingPage": ".recordings",
    "RecordingStore": ".recordings",
    "SessionRows": ".sessions",
    "StoreCursorError": ".errors",
    "StoreError": ".errors",
    "StoreFamily": ".family",
    "StoreURLError": ".errors",
    "StoreUnavailableError": ".errors",
    "StoredItem": ".vectors",
    "VectorStore": ".vectors",
    "VectorStoreUnavailableError": ".errors",
    "connect_sqlite": ".sqlite",
    "open_store": ".family",
    "postgres_pool": ".postgres",
}

__all__ = [
    "ArtifactMeta",
    "ArtifactStore",
    "DecisionLedger",
    "DecisionLedgerError",
    "MemoryEntry",
    "MemoryNamespace",
    "MemoryStore",
    "PostgresPool",
    "RecordingMeta",
    "RecordingPage",
    "RecordingStore",
    "SessionRows",
    "StoreCursorError",
    "StoreError",
    "StoreFamily",
    "StoreURLError",
    "StoreUnavailableError",
    "StoredItem",
    "VectorStore",
    "VectorStoreUnavailableError",
    "connect_sqlite",
    "open_store",
    "postgres_pool",
]
__getattr__, __dir__ = _lazy_exports(__name__, globals(), _EXPORTS)
