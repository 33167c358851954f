"""Memory in PostgreSQL: it lives in ``agentfootprint.stores.postgres_memory`` (re-exported here)."""

from __future__ import annotations

from agentfootprint.stores.postgres_memory import PostgresMemoryStore

__all__ = ["PostgresMemoryStore"]
