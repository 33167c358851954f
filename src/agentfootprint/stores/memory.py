"""Conversation memory storage: entries (turns, facts, summaries) per namespace, in insertion order."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agentfootprint.stores.vectors import InMemoryVectorStore, VectorStore


@dataclass(frozen=True, slots=True)
class MemoryNamespace:
    """Where a memory's entries live: the memory id and the run's identity (an anonymous run gets its own)."""

    memory_id: str
    tenant: str | None = None
    principal: str | None = None
    conversation_id: str | None = None
    anonymous: bool = False

    def key(self) -> str:
        """A stable, unambiguous string key (None and "" stay distinct)."""
        return json.dumps(
            [self.memory_id, self.tenant, self.principal, self.conversation_id, self.anonymous], separators=(",", ":")
        )

    def as_dict(self) -> dict[str, Any]:
        """The namespace as recorded on injection records and events."""
        out: dict[str, Any] = {"tenant": self.tenant, "principal": self.principal}
        out["conversation_id"] = self.conversation_id
        if self.anonymous:
            out["anonymous"] = True
        return out


EntryKind = Literal["turn", "fact", "summary"]


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One remembered item: a message of a completed turn, a fact pulled from turns, or a summary of turns."""

    id: str
    role: Literal["user", "assistant"]
    content: str
    run_id: str = ""
    created_at: float = 0.0
    kind: EntryKind = "turn"
    metadata: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class MemoryStore(Protocol):
    """Storage for memory entries, strictly per namespace; ``append`` ignores entry ids already stored."""

    def append(self, namespace: MemoryNamespace, entries: Sequence[MemoryEntry]) -> None: ...

    def load(self, namespace: MemoryNamespace, *, last: int | None = None) -> list[MemoryEntry]: ...

    def clear(self, namespace: MemoryNamespace) -> int: ...


class InMemoryMemoryStore:
    """A process-local memory store (tests, demos, single-process services)."""

    def __init__(self) -> None:
        self._entries: dict[str, list[MemoryEntry]] = {}
        self._lock = threading.Lock()
        self.vectors: VectorStore = InMemoryVectorStore()
        """Vectors beside the entries (semantic recall)."""

    def append(self, namespace: MemoryNamespace, entries: Sequence[MemoryEntry]) -> None:
        """Add entries in order; an id already stored in this namespace is skipped (idempotent replays)."""
        with self._lock:
            bucket = self._entries.setdefault(namespace.key(), [])
            known = {e.id for e in bucket}
            for entry in entries:
                if entry.id not in known:
                    bucket.append(entry)
                    known.add(entry.id)

    def load(self, namespace: MemoryNamespace, *, last: int | None = None) -> list[MemoryEntry]:
        """Entries of this namespace, oldest first; ``last`` keeps only the newest ones."""
        with self._lock:
            bucket = list(self._entries.get(namespace.key(), ()))
        return bucket[-last:] if last is not None and last > 0 else ([] if last == 0 else bucket)

    def clear(self, namespace: MemoryNamespace) -> int:
        """Forget a namespace (its vectors too); returns how many entries were dropped."""
        self.vectors.drop(namespace.key())
        with self._lock:
            return len(self._entries.pop(namespace.key(), []))


def entry_from_row(row: Sequence[Any], metadata: dict[str, Any]) -> MemoryEntry:
    """A stored row ``(entry_id, role, content, run_id, created_at, kind, ...)`` as an entry; odd roles and kinds
    read as ``user`` and ``turn``."""
    return MemoryEntry(
        id=row[0],
        role="assistant" if row[1] == "assistant" else "user",
        content=row[2],
        run_id=row[3],
        created_at=row[4],
        kind=row[5] if row[5] in ("turn", "fact", "summary") else "turn",
        metadata=metadata,
    )


def entry_meta(metadata: Mapping[str, Any]) -> str:
    return json.dumps(dict(metadata), sort_keys=True, default=str)


__all__ = [
    "EntryKind",
    "InMemoryMemoryStore",
    "MemoryEntry",
    "MemoryNamespace",
    "MemoryStore",
    "entry_from_row",
    "entry_meta",
]
