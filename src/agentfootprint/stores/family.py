"""``open_store(url)``: the family of stores behind one URL — every protocol's backend on one database."""

from __future__ import annotations

import inspect
import threading
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint.stores.errors import StoreURLError

if TYPE_CHECKING:
    from agentfootprint.stores.artifacts import ArtifactStore
    from agentfootprint.stores.ledger import DecisionLedger
    from agentfootprint.stores.memory import MemoryStore
    from agentfootprint.stores.recordings import RecordingStore
    from agentfootprint.stores.sessions import SessionRows
    from agentfootprint.stores.vectors import VectorStore

StoreKind = Literal["memory", "sqlite", "postgresql"]
_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_ASYNC = frozenset({"sessions", "artifacts"})
"""Stores whose close is a coroutine on some backend: ``aclose`` closes them."""


class StoreFamily:
    """Each protocol's backend on the one database a URL names, each opened on first use: ``.sessions``, ``.memory``,
    ``.vectors``, ``.artifacts``, ``.ledger``, ``.recordings``. ``close()`` closes what was opened."""

    def __init__(self, kind: StoreKind, target: str, *, dimension: int = 384) -> None:
        self.kind: StoreKind = kind
        self._target = target
        self.dimension = dimension
        self._opened: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # the target may hold a password: never shown
        return f"StoreFamily(kind={self.kind!r})"

    def _open(self, name: str) -> Any:
        with self._lock:
            found = self._opened.get(name)
            if found is None:
                found = self._opened[name] = getattr(self, f"_make_{name}")()
            return found

    @property
    def sessions(self) -> SessionRows:
        """Served threads' rows (what the hosting session stores keep their threads in)."""
        rows: SessionRows = self._open("sessions")
        return rows

    @property
    def memory(self) -> MemoryStore:
        """Conversation memory entries per namespace."""
        store: MemoryStore = self._open("memory")
        return store

    @property
    def vectors(self) -> VectorStore:
        """Items with vectors per namespace (SQLite needs sqlite-vec, PostgreSQL pgvector)."""
        store: VectorStore = self._open("vectors")
        return store

    @property
    def artifacts(self) -> ArtifactStore:
        """Artifacts by scope and ref."""
        store: ArtifactStore = self._open("artifacts")
        return store

    @property
    def ledger(self) -> DecisionLedger:
        """Spent consent requests."""
        store: DecisionLedger = self._open("ledger")
        return store

    @property
    def recordings(self) -> RecordingStore:
        """Run recordings by run id."""
        store: RecordingStore = self._open("recordings")
        return store

    def _make_sessions(self) -> Any:
        from agentfootprint.stores import sessions

        if self.kind == "memory":
            return sessions.MemorySessionRows()
        if self.kind == "sqlite":
            return sessions.SqliteSessionRows(self._target)
        return sessions.PostgresSessionRows(self._target)

    def _make_memory(self) -> Any:
        if self.kind == "memory":
            from agentfootprint.stores.memory import InMemoryMemoryStore

            return InMemoryMemoryStore()
        if self.kind == "sqlite":
            from agentfootprint.stores.sqlite_memory import SQLiteMemoryStore

            return SQLiteMemoryStore(self._target)
        from agentfootprint.stores.postgres_memory import PostgresMemoryStore

        return PostgresMemoryStore(self._target, dimension=self.dimension)

    def _make_vectors(self) -> Any:
        if self.kind == "memory":
            from agentfootprint.stores.vectors import InMemoryVectorStore

            return InMemoryVectorStore()
        if self.kind == "sqlite":
            from agentfootprint.stores.sqlite_vectors import SQLiteVectorStore

            return SQLiteVectorStore(self._target)
        from agentfootprint.stores.postgres_vectors import PostgresVectorStore

        return PostgresVectorStore(self._target, dimension=self.dimension)

    def _make_artifacts(self) -> Any:
        from agentfootprint.stores import artifacts

        if self.kind == "memory":
            return artifacts.InMemoryArtifactStore()
        if self.kind == "sqlite":
            return artifacts.SQLiteArtifactStore(self._target)
        return artifacts.PostgresArtifactStore(self._target)

    def _make_ledger(self) -> Any:
        from agentfootprint.stores import ledger

        if self.kind == "memory":
            return ledger.InMemoryDecisionLedger()
        if self.kind == "sqlite":
            return ledger.SQLiteDecisionLedger(self._target)
        return ledger.PostgresDecisionLedger(self._target)

    def _make_recordings(self) -> Any:
        from agentfootprint.stores import recordings

        if self.kind == "memory":
            return recordings.InMemoryRecordingStore()
        if self.kind == "sqlite":
            return recordings.SQLiteRecordingStore(self._target)
        return recordings.PostgresRecordingStore(self._target)

    def close(self) -> None:
        """Close the sync stores opened so far (``aclose`` closes the async ones too)."""
        for name in [n for n in self._opened if n not in _ASYNC]:
            store = self._opened.pop(name)
            close = getattr(store, "close", None)
            if callable(close):
                close()

    async def aclose(self) -> None:
        """Close every store opened so far, async ones (sessions, PostgreSQL artifacts) included."""
        self.close()
        for name in [n for n in self._opened if n in _ASYNC]:
            store = self._opened.pop(name)
            close = getattr(store, "aclose", None) or getattr(store, "close", None)
            if callable(close):
                outcome = close()
                if inspect.isawaitable(outcome):
                    await outcome


def parse_store_url(url: object) -> tuple[StoreKind, str]:
    """The kind of store a URL names and its target (a file path or the DSN); ``StoreURLError`` otherwise."""
    if not isinstance(url, str):
        raise StoreURLError("not_a_string", "a store URL must be a string")
    if url in ("memory://", "memory:"):
        return "memory", ""
    if url.startswith("memory:"):
        raise StoreURLError("unexpected_path", "a memory:// store URL takes no path")
    if url.startswith("sqlite:"):
        if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
            raise StoreURLError("missing_path", "a SQLite store URL needs a file path: sqlite:///path/to/file.db")
        return "sqlite", url[len("sqlite:///") :]
    if url.startswith(_POSTGRES_SCHEMES):
        return "postgresql", url
    if "://" not in url:
        raise StoreURLError("no_scheme", "a store URL starts with memory://, sqlite:/// or postgresql://")
    raise StoreURLError("unknown_scheme", "a store URL's scheme must be memory, sqlite or postgresql")


def open_store(url: str, *, dimension: int = 384) -> StoreFamily:
    """The stores behind ``url``: ``memory://``, ``sqlite:///path`` (one file; ``sqlite:////abs/path`` for an
    absolute path) or ``postgresql://...`` (one database). ``dimension`` sizes PostgreSQL vectors."""
    kind, target = parse_store_url(url)
    return StoreFamily(kind, target, dimension=dimension)


__all__ = ["StoreFamily", "StoreKind", "open_store", "parse_store_url"]
