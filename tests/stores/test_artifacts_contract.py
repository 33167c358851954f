"""One contract for artifact stores on every backend (and the directory store): put, get, head, list, delete by
scope and ref; a scope never sees another's artifacts; bad scopes and oversized payloads are refused by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.extensions.artifacts import DirectoryArtifactStore, InMemoryArtifactStore
from agentfootprint.stores import ArtifactStore, open_store
from agentfootprint.stores import artifacts as stores_artifacts
from agentfootprint.stores.artifacts import ArtifactStoreError
from tests.stores.conftest import BACKENDS, store_url


@pytest.fixture(params=[*BACKENDS, "directory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ArtifactStore]:
    if request.param == "directory":
        yield DirectoryArtifactStore(tmp_path / "artifacts")
        return
    family = open_store(store_url(request.param, request, tmp_path))
    yield family.artifacts
    family.close()


async def test_an_artifact_round_trips_within_its_scope(store: ArtifactStore) -> None:
    assert isinstance(store, ArtifactStore)
    meta = await store.put("alice", kind="report", media_type="text/plain", data="héllo", origin={"run_id": "r1"})
    binary = await store.put("alice", kind="blob", media_type="application/octet-stream", data=b"\x00\xff")
    assert (meta.bytes, meta.digest[:7], meta.origin) == (len("héllo".encode()), "sha256:", {"run_id": "r1"})
    got = await store.get("alice", meta.ref)
    assert got is not None and got[0] == meta and got[1] == "héllo".encode()
    assert (await store.get("alice", binary.ref)) == (binary, b"\x00\xff")
    assert await store.head("alice", meta.ref) == meta
    assert await store.get("bob", meta.ref) is None and await store.head("bob", meta.ref) is None
    assert [m.ref for m in await store.list("alice")] == [meta.ref, binary.ref] and await store.list("bob") == []
    await store.delete("bob", meta.ref)
    assert await store.head("alice", meta.ref) == meta
    await store.delete("alice", meta.ref)
    assert await store.get("alice", meta.ref) is None and [m.ref for m in await store.list("alice")] == [binary.ref]


async def test_hostile_scopes_refs_and_payloads_are_refused(store: ArtifactStore) -> None:
    for scope in ("", "../etc", "a/b", "x" * 201, "a b"):
        with pytest.raises(ArtifactStoreError):
            await store.put(scope, kind="k", media_type="t", data="x")
    for ref in ("../../passwd", "'; DROP TABLE x; --", ""):
        assert await store.get("alice", ref) is None
    with pytest.raises(ArtifactStoreError):
        await store.put("alice", kind="k", media_type="t", data=123)  # type: ignore[arg-type]
    small = InMemoryArtifactStore(max_bytes=4)
    with pytest.raises(ArtifactStoreError):
        await small.put("alice", kind="k", media_type="t", data="12345")


@settings(max_examples=25, deadline=None)
@given(payloads=st.lists(st.binary(max_size=64), max_size=6))
def test_every_payload_comes_back_byte_for_byte(payloads: list[bytes]) -> None:
    import asyncio

    async def check() -> Any:
        memory = InMemoryArtifactStore()
        metas = [await memory.put("s", kind="k", media_type="t", data=p) for p in payloads]
        return [await memory.get("s", m.ref) for m in metas], metas

    got, metas = asyncio.run(check())
    assert [g[1] if g else None for g in got] == payloads and len({m.ref for m in metas}) == len(payloads)


def test_the_old_import_paths_name_the_stores_classes() -> None:
    assert InMemoryArtifactStore is stores_artifacts.InMemoryArtifactStore
    assert DirectoryArtifactStore is stores_artifacts.DirectoryArtifactStore
