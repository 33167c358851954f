"""Vector stores: items (id, text, vector, metadata) per namespace, nearest and keyword search.

Three stores share one protocol: ``InMemoryVectorStore`` (process-local), ``SQLiteVectorStore`` (sqlite-vec + FTS5,
embedded) and ``PostgresVectorStore`` (pgvector + full-text search, for several replicas). Scores are higher-better:
cosine similarity for ``nearest``, BM25 for ``keyword``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentfootprint.stores.bm25 import BM25Scores, tokenize

RRF_K = 60


@dataclass(frozen=True, slots=True)
class StoredItem:
    """One stored piece of text: its id (unique per namespace), the text, its vector (if embedded), metadata."""

    id: str
    text: str
    vector: tuple[float, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class VectorStore(Protocol):
    """Items per namespace; ``upsert`` replaces an item with the same id."""

    def upsert(self, namespace: str, items: Sequence[StoredItem]) -> None: ...

    def nearest(self, namespace: str, vector: Sequence[float], k: int) -> list[tuple[StoredItem, float]]: ...

    def keyword(self, namespace: str, query: str, k: int) -> list[tuple[StoredItem, float]]: ...

    def get(self, namespace: str, ids: Sequence[str]) -> list[StoredItem]: ...

    def count(self, namespace: str) -> int: ...

    def drop(self, namespace: str) -> int: ...


def normalized(vector: Sequence[float]) -> tuple[float, ...]:
    """The unit-length copy of ``vector`` (a zero vector stays zero)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return tuple(float(x) / norm for x in vector) if norm > 0 else tuple(float(x) for x in vector)


def check_vector(vector: Sequence[float], dimension: int | None) -> tuple[float, ...]:
    """A finite float vector of the expected dimension, or ``ValueError`` naming what is wrong (never the values)."""
    values = tuple(float(x) for x in vector)
    if dimension is not None and len(values) != dimension:
        raise ValueError(f"vector has {len(values)} dimensions, the store holds {dimension}")
    if not values or not all(math.isfinite(x) for x in values):
        raise ValueError("vector must be non-empty and finite")
    return values


def fuse(rankings: Sequence[Sequence[tuple[StoredItem, float]]], k: int) -> list[tuple[StoredItem, float]]:
    """Reciprocal rank fusion of several rankings (hybrid retrieval): score = Σ 1 / (60 + rank)."""
    scores: dict[str, float] = {}
    items: dict[str, StoredItem] = {}
    for ranking in rankings:
        for rank, (item, _) in enumerate(ranking, start=1):
            scores[item.id] = scores.get(item.id, 0.0) + 1.0 / (RRF_K + rank)
            items.setdefault(item.id, item)
    ranked = sorted(scores, key=lambda i: (-scores[i], i))[:k]
    return [(items[i], round(scores[i], 6)) for i in ranked]


class _Space:
    """One namespace of the in-memory store: items in insertion order, a lazily rebuilt BM25 index."""

    def __init__(self) -> None:
        self.items: dict[str, StoredItem] = {}
        self.unit: dict[str, tuple[float, ...]] = {}
        self.bm25: BM25Scores | None = None


class InMemoryVectorStore:
    """A process-local vector store (tests, demos, one process); exact cosine search, BM25 keyword search."""

    def __init__(self) -> None:
        self._spaces: dict[str, _Space] = {}
        self._lock = threading.Lock()
        self.dimension: int | None = None

    def upsert(self, namespace: str, items: Sequence[StoredItem]) -> None:
        """Add or replace items by id."""
        with self._lock:
            space = self._spaces.setdefault(namespace, _Space())
            for item in items:
                if item.vector is not None:
                    vector = check_vector(item.vector, self.dimension)
                    self.dimension = len(vector)
                    space.unit[item.id] = normalized(vector)
                    item = StoredItem(item.id, item.text, vector, dict(item.metadata))
                space.items[item.id] = item
            space.bm25 = None

    def nearest(self, namespace: str, vector: Sequence[float], k: int) -> list[tuple[StoredItem, float]]:
        """The ``k`` items most similar to ``vector`` (cosine), best first; ties keep insertion order."""
        query = normalized(check_vector(vector, self.dimension))
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None:
                return []
            scored = [
                (i, sum(a * b for a, b in zip(query, unit, strict=True)), n)
                for n, (i, unit) in enumerate(space.unit.items())
            ]
            top = sorted(scored, key=lambda s: (-s[1], s[2]))[: max(0, k)]
            return [(space.items[i], round(score, 6)) for i, score, _ in top]

    def keyword(self, namespace: str, query: str, k: int) -> list[tuple[StoredItem, float]]:
        """The ``k`` best BM25 matches for ``query`` (positive scores only)."""
        with self._lock:
            space = self._spaces.get(namespace)
            if space is None or not tokenize(query):
                return []
            items = list(space.items.values())
            if space.bm25 is None:
                space.bm25 = BM25Scores([i.text for i in items])
            return [(items[n], round(score, 6)) for n, score in space.bm25.top(query, max(0, k))]

    def get(self, namespace: str, ids: Sequence[str]) -> list[StoredItem]:
        """The items with these ids that exist, in the order asked."""
        with self._lock:
            space = self._spaces.get(namespace)
            return [space.items[i] for i in ids if i in space.items] if space is not None else []

    def count(self, namespace: str) -> int:
        with self._lock:
            space = self._spaces.get(namespace)
            return len(space.items) if space is not None else 0

    def drop(self, namespace: str) -> int:
        """Forget a namespace; returns how many items were dropped."""
        with self._lock:
            space = self._spaces.pop(namespace, None)
            return len(space.items) if space is not None else 0


__all__ = [
    "RRF_K",
    "InMemoryVectorStore",
    "StoredItem",
    "VectorStore",
    "check_vector",
    "fuse",
    "normalized",
]
