"""Artifact stores (``agentfootprint.stores.artifacts``, re-exported) and run recordings filed into them.

``AgentBuilder.artifacts(store, recordings=True)``: tools reach the store bound to the run's scope as
``ctx.service("artifacts")``; ``agent.get_artifact_store()`` returns the store itself. With ``recordings=True`` a
COMPLETED run's recording (the served snapshot and the run's events, as JSON text) is filed as an artifact of kind
``recording/run`` (never for a pause); a filing failure never fails the run: it is reported as
``agentfootprint.artifacts.refused`` and in the result.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentfootprint.agent import Extension, RunContext, RunOutcome
from agentfootprint.events import AgentEvent
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import ArtifactsMinted, ArtifactsRefused
from agentfootprint.stores.artifacts import (
    ArtifactMeta,
    ArtifactStore,
    ArtifactStoreError,
    DirectoryArtifactStore,
    InMemoryArtifactStore,
)

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
            refused = ctx.state["refused"]
            ctx.emit(ev.ARTIFACTS_REFUSED, lambda: ArtifactsRefused(kind=RECORDING_KIND, **refused))
            return
        ctx.state["recording"] = {"ref": meta.ref, "scope": scope_of(ctx), "bytes": meta.bytes, "digest": meta.digest}
        minted = ctx.state["recording"]
        ctx.emit(ev.ARTIFACTS_MINTED, lambda: ArtifactsMinted(kind=RECORDING_KIND, **minted))

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
