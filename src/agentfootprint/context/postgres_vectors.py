"""Vectors in PostgreSQL (pgvector): they live in ``agentfootprint.stores.postgres_vectors`` (re-exported)."""

from __future__ import annotations

from agentfootprint.stores.postgres_vectors import PostgresVectorStore, ts_query

__all__ = ["PostgresVectorStore", "ts_query"]
