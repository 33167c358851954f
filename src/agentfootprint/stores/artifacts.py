"""Artifact stores: payloads kept by scope and ref (never shared across scopes), in memory, in a directory, in a
SQLite file or in PostgreSQL. Async: SQLite calls run in a worker thread, PostgreSQL uses async connections."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentfootprint.errors import AgentFootprintError
from agentfootprint.stores._sql import check_table
from agentfootprint.stores.postgres import PostgresPool, postgres_pool
from agentfootprint.stores.sqlite import connect_sqlite

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
_SCOPE = re.compile(r"^[A-Za-z0-9_.:@-]{1,200}$")
_REF = re.compile(r"^[0-9a-f]{32}$")


class ArtifactStoreError(AgentFootprintError, ValueError):
    """A store refused a put or a read (bad scope, too large, not serialisable)."""

    code = "ERR_ARTIFACT_STORE"


@dataclass(frozen=True, slots=True)
class ArtifactMeta:
    """What a store knows of one artifact (never its content)."""

    ref: str
    kind: str
    media_type: str
    bytes: int
    digest: str
    created_at: float
    label: str | None = None
    origin: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class ArtifactStore(Protocol):
    """A keyed payload store with scope isolation: ``put`` returns the meta; ``get``/``head`` by ref."""

    async def put(
        self,
        scope: str,
        *,
        kind: str,
        media_type: str,
        data: str | bytes,
        label: str | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> ArtifactMeta: ...

    async def get(self, scope: str, ref: str) -> tuple[ArtifactMeta, bytes] | None: ...

    async def head(self, scope: str, ref: str) -> ArtifactMeta | None: ...

    async def list(self, scope: str) -> list[ArtifactMeta]: ...

    async def delete(self, scope: str, ref: str) -> None: ...


def check_scope(scope: str) -> str:
    """An artifact scope: 1-200 letters, digits or ``_.:@-``; ``ArtifactStoreError`` otherwise."""
    if not isinstance(scope, str) or not _SCOPE.match(scope):
        raise ArtifactStoreError("an artifact scope is 1-200 characters of letters, digits, '_', '.', ':', '@', '-'")
    return scope


def _meta(kind: str, media_type: str, body: bytes, label: str | None, origin: Mapping[str, Any] | None) -> ArtifactMeta:
    return ArtifactMeta(
        ref=uuid.uuid4().hex,
        kind=str(kind)[:100],
        media_type=str(media_type)[:100],
        bytes=len(body),
        digest="sha256:" + hashlib.sha256(body).hexdigest(),
        created_at=time.time(),
        label=None if label is None else str(label)[:200],
        origin=dict(origin or {}),
    )


def _bytes(data: str | bytes, limit: int) -> bytes:
    if isinstance(data, str):
        body = data.encode("utf-8")
    elif isinstance(data, bytes):
        body = data
    else:
        raise ArtifactStoreError(f"artifact data must be str or bytes, got {type(data).__name__}")
    if len(body) > limit:
        raise ArtifactStoreError(f"artifact is larger than the store's limit of {limit} bytes")
    return body


def meta_fields(meta: ArtifactMeta) -> dict[str, Any]:
    """The meta as a JSON-ready dict."""
    return {k: getattr(meta, k) for k in ArtifactMeta.__slots__}


_Metas = list[ArtifactMeta]
"""What a listing returns (named outside the classes, whose ``list`` method shadows the builtin)."""


class _Artifacts(ABC):
    """What every backend shares: ``put`` checks, measures and names the artifact; a backend keeps it
    (``_write``), finds it (``_find``), lists (``_metas``) and forgets (``_forget``) by checked scope."""

    max_bytes: int = DEFAULT_MAX_BYTES

    async def put(
        self,
        scope: str,
        *,
        kind: str,
        media_type: str,
        data: str | bytes,
        label: str | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> ArtifactMeta:
        """Keep ``data`` in ``scope``; returns its meta (a fresh ``ref``)."""
        body = _bytes(data, self.max_bytes)
        meta = _meta(kind, media_type, body, label, origin)
        await self._write(check_scope(scope), meta, body)
        return meta

    async def get(self, scope: str, ref: str) -> tuple[ArtifactMeta, bytes] | None:
        """The artifact's meta and content, or None when ``scope`` holds no such ref."""
        return await self._find(check_scope(scope), ref, True) if _REF.match(ref or "") else None

    async def head(self, scope: str, ref: str) -> ArtifactMeta | None:
        """The artifact's meta, or None."""
        found = await self._find(check_scope(scope), ref, False) if _REF.match(ref or "") else None
        return found[0] if found is not None else None

    async def list(self, scope: str) -> _Metas:
        """The scope's artifacts, oldest first."""
        return sorted(await self._metas(check_scope(scope)), key=lambda m: (m.created_at, m.ref))

    async def delete(self, scope: str, ref: str) -> None:
        """Forget the artifact (nothing happens for an unknown ref)."""
        if _REF.match(ref or ""):
            await self._forget(check_scope(scope), ref)

    @abstractmethod
    async def _write(self, scope: str, meta: ArtifactMeta, body: bytes) -> None:
        """Supplied by each backend."""

    @abstractmethod
    async def _find(self, scope: str, ref: str, content: bool) -> tuple[ArtifactMeta, bytes] | None:
        """Supplied by each backend."""

    @abstractmethod
    async def _metas(self, scope: str) -> _Metas:
        """Supplied by each backend."""

    @abstractmethod
    async def _forget(self, scope: str, ref: str) -> None:
        """Supplied by each backend."""


class InMemoryArtifactStore(_Artifacts):
    """Artifacts in this process (tests, development); ``max_bytes`` caps one artifact."""

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: dict[tuple[str, str], tuple[ArtifactMeta, bytes]] = {}
        self._lock = threading.Lock()

    async def _write(self, scope: str, meta: ArtifactMeta, body: bytes) -> None:
        with self._lock:
            self._items[(scope, meta.ref)] = (meta, body)

    async def _find(self, scope: str, ref: str, content: bool) -> tuple[ArtifactMeta, bytes] | None:
        return self._items.get((scope, ref))

    async def _metas(self, scope: str) -> _Metas:
        return [m for (s, _), (m, _b) in list(self._items.items()) if s == scope]

    async def _forget(self, scope: str, ref: str) -> None:
        with self._lock:
            self._items.pop((scope, ref), None)


class DirectoryArtifactStore(_Artifacts):
    """Artifacts as files under ``root/<scope>/<ref>`` (content) and ``<ref>.json`` (meta)."""

    def __init__(self, root: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes

    async def _write(self, scope: str, meta: ArtifactMeta, body: bytes) -> None:
        folder = self.root / scope
        folder.mkdir(parents=True, exist_ok=True)
        (folder / meta.ref).write_bytes(body)
        (folder / f"{meta.ref}.json").write_text(json.dumps(meta_fields(meta)))

    async def _find(self, scope: str, ref: str, content: bool) -> tuple[ArtifactMeta, bytes] | None:
        path = self.root / scope / f"{ref}.json"
        if not path.exists():
            return None
        meta = ArtifactMeta(**json.loads(path.read_text()))
        return meta, (self.root / scope / ref).read_bytes() if content else b""

    async def _metas(self, scope: str) -> _Metas:
        folder = self.root / scope
        return [ArtifactMeta(**json.loads(p.read_text())) for p in folder.glob("*.json")] if folder.exists() else []

    async def _forget(self, scope: str, ref: str) -> None:
        for path in (self.root / scope / ref, self.root / scope / f"{ref}.json"):
            path.unlink(missing_ok=True)


_COLUMNS = "ref, kind, media_type, bytes, digest, created_at, label, origin"


def _row_meta(row: Sequence[Any]) -> ArtifactMeta:
    origin = row[7]
    return ArtifactMeta(
        ref=row[0],
        kind=row[1],
        media_type=row[2],
        bytes=int(row[3]),
        digest=row[4],
        created_at=float(row[5]),
        label=row[6],
        origin=json.loads(origin) if isinstance(origin, str) else dict(origin or {}),
    )


def _row_values(scope: str, meta: ArtifactMeta, body: bytes) -> tuple[Any, ...]:
    origin = json.dumps(meta.origin, sort_keys=True, default=str)
    return (scope, *(meta_fields(meta)[k] for k in ArtifactMeta.__slots__[:-1]), origin, body)


class SQLiteArtifactStore(_Artifacts):
    """Artifacts in a SQLite file (content as a BLOB beside its meta); calls run in a worker thread."""

    def __init__(
        self, path: str | PathLike[str], *, table: str = "agentfootprint_artifacts", max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.path = str(path)
        self.table = check_table(table)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._conn = connect_sqlite(self.path)
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self.table} (scope TEXT NOT NULL, ref TEXT NOT NULL, kind TEXT NOT NULL,"
            " media_type TEXT NOT NULL, bytes INTEGER NOT NULL, digest TEXT NOT NULL, created_at REAL NOT NULL,"
            " label TEXT, origin TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (scope, ref))"
        )

    def _run(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    async def _write(self, scope: str, meta: ArtifactMeta, body: bytes) -> None:
        sql = f"INSERT INTO {self.table} (scope, {_COLUMNS}, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        await asyncio.to_thread(self._run, sql, _row_values(scope, meta, body))

    async def _find(self, scope: str, ref: str, content: bool) -> tuple[ArtifactMeta, bytes] | None:
        data = "data" if content else "x''"
        sql = f"SELECT {_COLUMNS}, {data} FROM {self.table} WHERE scope = ? AND ref = ?"
        rows = await asyncio.to_thread(self._run, sql, (scope, ref))
        return (_row_meta(rows[0]), bytes(rows[0][8])) if rows else None

    async def _metas(self, scope: str) -> _Metas:
        rows = await asyncio.to_thread(self._run, f"SELECT {_COLUMNS} FROM {self.table} WHERE scope = ?", (scope,))
        return [_row_meta(r) for r in rows]

    async def _forget(self, scope: str, ref: str) -> None:
        await asyncio.to_thread(self._run, f"DELETE FROM {self.table} WHERE scope = ? AND ref = ?", (scope, ref))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresArtifactStore(_Artifacts):
    """Artifacts in a PostgreSQL table (content as ``bytea``), through the shared pool's async connections."""

    def __init__(
        self, dsn: str | PostgresPool, *, table: str = "agentfootprint_artifacts", max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.table = check_table(table)
        self.max_bytes = max_bytes
        self._pool = dsn if isinstance(dsn, PostgresPool) else postgres_pool(dsn)

    async def _run(self, sql: str, args: tuple[Any, ...]) -> list[Any]:
        async with self._pool.aconnection() as conn:
            name = f"artifacts:{self.table}"
            if name not in self._pool.ready:
                async with conn.transaction():
                    await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"agentfootprint:{name}",))
                    await conn.execute(
                        f"CREATE TABLE IF NOT EXISTS {self.table} (scope TEXT NOT NULL, ref TEXT NOT NULL,"
                        " kind TEXT NOT NULL, media_type TEXT NOT NULL, bytes BIGINT NOT NULL, digest TEXT NOT NULL,"
                        " created_at DOUBLE PRECISION NOT NULL, label TEXT, origin TEXT NOT NULL,"
                        " data BYTEA NOT NULL, PRIMARY KEY (scope, ref))"
                    )
                self._pool.ready.add(name)
            cursor = await conn.execute(sql, args)
            return list(await cursor.fetchall()) if cursor.description else []

    async def _write(self, scope: str, meta: ArtifactMeta, body: bytes) -> None:
        marks = ", ".join(["%s"] * 10)
        await self._run(
            f"INSERT INTO {self.table} (scope, {_COLUMNS}, data) VALUES ({marks})", _row_values(scope, meta, body)
        )

    async def _find(self, scope: str, ref: str, content: bool) -> tuple[ArtifactMeta, bytes] | None:
        data = "data" if content else "''::bytea"
        rows = await self._run(
            f"SELECT {_COLUMNS}, {data} FROM {self.table} WHERE scope = %s AND ref = %s", (scope, ref)
        )
        return (_row_meta(rows[0]), bytes(rows[0][8])) if rows else None

    async def _metas(self, scope: str) -> _Metas:
        rows = await self._run(f"SELECT {_COLUMNS} FROM {self.table} WHERE scope = %s", (scope,))
        return [_row_meta(r) for r in rows]

    async def _forget(self, scope: str, ref: str) -> None:
        await self._run(f"DELETE FROM {self.table} WHERE scope = %s AND ref = %s", (scope, ref))

    async def aclose(self) -> None:
        """Close the running loop's idle connections."""
        await self._pool.aclose()


__all__ = [
    "ArtifactMeta",
    "ArtifactStore",
    "ArtifactStoreError",
    "DirectoryArtifactStore",
    "InMemoryArtifactStore",
    "PostgresArtifactStore",
    "SQLiteArtifactStore",
    "check_scope",
    "meta_fields",
]
