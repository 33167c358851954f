"""Vector stores for memory and retrieval: they live in ``agentfootprint.stores.vectors`` (re-exported here)."""

from __future__ import annotations

from agentfootprint.stores import vectors as _stores_vectors
from agentfootprint.stores.vectors import RRF_K as RRF_K
from agentfootprint.stores.vectors import InMemoryVectorStore as InMemoryVectorStore
from agentfootprint.stores.vectors import StoredItem as StoredItem
from agentfootprint.stores.vectors import VectorStore as VectorStore
from agentfootprint.stores.vectors import check_vector as check_vector
from agentfootprint.stores.vectors import fuse as fuse
from agentfootprint.stores.vectors import normalized as normalized

__all__ = list(_stores_vectors.__all__)
