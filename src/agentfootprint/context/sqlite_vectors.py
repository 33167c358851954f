"""Vectors in SQLite (sqlite-vec + FTS5): they live in ``agentfootprint.stores.sqlite_vectors`` (re-exported)."""

from __future__ import annotations

from agentfootprint.stores import sqlite_vectors as _stores_sqlite_vectors
from agentfootprint.stores.sqlite_vectors import INSTALL_HINT as INSTALL_HINT
from agentfootprint.stores.sqlite_vectors import SQLiteVectorStore as SQLiteVectorStore
from agentfootprint.stores.sqlite_vectors import VectorStoreUnavailableError as VectorStoreUnavailableError
from agentfootprint.stores.sqlite_vectors import connect_with_extensions as connect_with_extensions
from agentfootprint.stores.sqlite_vectors import fts_query as fts_query
from agentfootprint.stores.sqlite_vectors import load_sqlite_vec as load_sqlite_vec
from agentfootprint.stores.sqlite_vectors import pack as pack

__all__ = list(_stores_sqlite_vectors.__all__)
