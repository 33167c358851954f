"""Artifact stores and run recordings filed into them.

``AgentBuilder.artifacts(store, recordings=True)``: tools reach the store bound to the run's scope as
``ctx.service("artifacts")``; ``agent.get_artifact_store()`` returns the store itself. With ``recordings=True`` a
COMPLETED run's recording (the served snapshot and the run's events, as JSON text) is filed as an artifact of kind
``recording/run`` (never for a pause); a filing failure never fails the run: it is reported as
``agentfootprint.artifacts.refused`` and in the result.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentfootprint.agent import Extension, RunContext, RunOutcome
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import AgentEvent
from agentfootprint.events import types as ev

__all__ = [
    "RECORDING_KIND",
    "ArtifactMeta",
    "ArtifactStore",
    "ArtifactStoreError",
    "Artifacts",
    "DirectoryArtifactStore",
    "InMemoryArtifactStore",
    "ScopedArtifacts",
]

RECORDING_KIND = "recording/run"
_SCOPE = re.compile(r"^[A-Za-z0-9_.:@-]{1,200}$")


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


def _check_scope(scope: str) -> str:
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


class InMemoryArtifactStore:
    """Artifacts in this process (tests, development); ``max_bytes`` caps one artifact."""

    def __init__(self, *, max_bytes: int = 50 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._items: dict[tuple[str, str], tuple[ArtifactMeta, bytes]] = {}
        self._lock = threading.Lock()

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
        body = _bytes(data, self.max_bytes)
        meta = _meta(kind, media_type, body, label, origin)
        with self._lock:
            self._items[(_check_scope(scope), meta.ref)] = (meta, body)
        return meta

    async def get(self, scope: str, ref: str) -> tuple[ArtifactMeta, bytes] | None:
        return self._items.get((_check_scope(scope), ref))

    async def head(self, scope: str, ref: str) -> ArtifactMeta | None:
        found = self._items.get((_check_scope(scope), ref))
        return found[0] if found else None

    async def list(self, scope: str) -> list[ArtifactMeta]:
        scope = _check_scope(scope)
        return sorted((m for (s, _), (m, _b) in self._items.items() if s == scope), key=lambda m: m.created_at)

    async def delete(self, scope: str, ref: str) -> None:
        with self._lock:
            self._items.pop((_check_scope(scope), ref), None)


class DirectoryArtifactStore:
    """Artifacts as files under ``root/<scope>/<ref>`` (content) and ``<ref>.json`` (meta)."""

    def __init__(self, root: str | Path, *, max_bytes: int = 50 * 1024 * 1024) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes

    def _dir(self, scope: str) -> Path:
        return self.root / _check_scope(scope)

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
        body = _bytes(data, self.max_bytes)
        meta = _meta(kind, media_type, body, label, origin)
        folder = self._dir(scope)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / meta.ref).write_bytes(body)
        (folder / f"{meta.ref}.json").write_text(
            json.dumps(meta.__dict__ if hasattr(meta, "__dict__") else _asdict(meta))
        )
        return meta

    async def head(self, scope: str, ref: str) -> ArtifactMeta | None:
        if not re.fullmatch(r"[0-9a-f]{32}", ref or ""):
            return None
        path = self._dir(scope) / f"{ref}.json"
        return ArtifactMeta(**json.loads(path.read_text())) if path.exists() else None

    async def get(self, scope: str, ref: str) -> tuple[ArtifactMeta, bytes] | None:
        meta = await self.head(scope, ref)
        return None if meta is None else (meta, (self._dir(scope) / ref).read_bytes())

    async def list(self, scope: str) -> list[ArtifactMeta]:
        folder = self._dir(scope)
        metas = [ArtifactMeta(**json.loads(p.read_text())) for p in folder.glob("*.json")] if folder.exists() else []
        return sorted(metas, key=lambda m: m.created_at)

    async def delete(self, scope: str, ref: str) -> None:
        if await self.head(scope, ref) is not None:
            for path in (self._dir(scope) / ref, self._dir(scope) / f"{ref}.json"):
                path.unlink(missing_ok=True)


def _asdict(meta: ArtifactMeta) -> dict[str, Any]:
    return {k: getattr(meta, k) for k in ArtifactMeta.__slots__}


class ScopedArtifacts:
    """The store bound to one run's scope: what a tool reaches as ``ctx.service("artifacts")``."""

    def __init__(self, store: ArtifactStore, scope: str, run_id: str) -> None:
        self.store, self.scope, self.run_id = store, scope, run_id

    async def put(self, *, kind: str, media_type: str, data: str | bytes, label: str | None = None) -> ArtifactMeta:
        return await self.store.put(
            self.scope, kind=kind, media_type=media_type, data=data, label=label, origin={"run_id": self.run_id}
        )

    async def get(self, ref: str) -> tuple[ArtifactMeta, bytes] | None:
        return await self.store.get(self.scope, ref)


def scope_of(ctx: RunContext) -> str:
    """The run's artifact scope: the caller's conversation or principal, else the session, else the run."""
    ident = ctx.identity
    raw = ((ident.conversation_id or ident.principal) if ident is not None else None) or ctx.session_id or ctx.run_id
    return re.sub(r"[^A-Za-z0-9_.:@-]", "_", str(raw))[:200]


class Artifacts(Extension):
    """``.artifacts(store, recordings=...)``: the store for tools, and completed runs' recordings filed into it."""

    name = "artifacts"

    def __init__(self, *, store: ArtifactStore, recordings: bool = False, label: str | None = None) -> None:
        if not isinstance(store, ArtifactStore):
            raise TypeError(
                f"artifacts() takes an ArtifactStore (put/get/head/list/delete), got {type(store).__name__}"
            )
        self.store = store
        self.recordings = bool(recordings)
        self.label = label

    def get_store(self) -> ArtifactStore:
        return self.store

    async def before_run(self, ctx: RunContext) -> None:
        ctx.offer_to_tools("artifacts", ScopedArtifacts(self.store, scope_of(ctx), ctx.run_id))
        if self.recordings:
            events: list[AgentEvent] = []
            ctx.state["events"] = events
            ctx.state["off"] = ctx.listen("*", events.append)

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        off = ctx.state.pop("off", None)
        if off is not None:
            off()
        if not self.recordings or outcome.status != "completed":
            return
        events = [e.model_dump(mode="json") for e in ctx.state.get("events", ())]
        try:
            text = json.dumps(
                {
                    "kind": RECORDING_KIND,
                    "run_id": ctx.run_id,
                    "snapshot": outcome.snapshot.model_dump(mode="json"),
                    "events": events,
                }
            )
            meta = await self.store.put(
                scope_of(ctx),
                kind=RECORDING_KIND,
                media_type="application/json",
                data=text,
                label=self.label or f"recording of run {ctx.run_id}",
                origin={"run_id": ctx.run_id},
            )
        except Exception as exc:  # the answer is already composed: filing can never fail the run
            ctx.state["refused"] = {"reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
            ctx.emit(ev.ARTIFACTS_REFUSED, {"kind": RECORDING_KIND, **ctx.state["refused"]})
            return
        ctx.state["recording"] = {"ref": meta.ref, "scope": scope_of(ctx), "bytes": meta.bytes, "digest": meta.digest}
        ctx.emit(ev.ARTIFACTS_MINTED, {"kind": RECORDING_KIND, **ctx.state["recording"]})

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        off = ctx.state.pop("off", None)
        if off is not None:
            off()

    def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
        if "recording" in ctx.state:
            return {"recording": ctx.state["recording"]}
        if "refused" in ctx.state:
            return {"refused": ctx.state["refused"]}
        return None
