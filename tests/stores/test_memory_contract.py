"""One contract for memory stores on every backend: entries per namespace, in order, ``append`` idempotent by id."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.context.memory import InMemoryMemoryStore, SQLiteMemoryStore
from agentfootprint.context.postgres_memory import PostgresMemoryStore
from agentfootprint.stores import (
    MemoryEntry,
    MemoryNamespace,
    MemoryStore,
    StoreFamily,
    memory,
    postgres_memory,
    sqlite_memory,
)

ALICE = MemoryNamespace("m", tenant="acme", principal="alice")
BOB = MemoryNamespace("m", tenant="acme", principal="bob")


def entry(i: int, **kw: Any) -> MemoryEntry:
    return MemoryEntry(id=f"e{i}", role="user" if i % 2 == 0 else "assistant", content=f"turn {i}", **kw)


def test_entries_are_kept_per_namespace_in_order(family: StoreFamily, reopen: Any) -> None:
    store = family.memory
    assert isinstance(store, MemoryStore)
    store.append(ALICE, [entry(0), entry(1, kind="fact", metadata={"source": "e0"})])
    store.append(ALICE, [entry(1), entry(2)])  # a replayed id is skipped
    store.append(BOB, [entry(9)])
    again = reopen().memory
    got = again.load(ALICE)
    assert [e.id for e in got] == ["e0", "e1", "e2"]
    assert (got[1].kind, dict(got[1].metadata), got[1].role) == ("fact", {"source": "e0"}, "assistant")
    assert [e.id for e in again.load(ALICE, last=2)] == ["e1", "e2"] and again.load(ALICE, last=0) == []
    assert [e.id for e in again.load(BOB)] == ["e9"]
    assert store.clear(ALICE) == 3 and store.load(ALICE) == [] and len(store.load(BOB)) == 1


def test_namespaces_that_differ_only_by_none_and_empty_stay_apart(family: StoreFamily) -> None:
    store = family.memory
    hostile = [MemoryNamespace("m", tenant=None), MemoryNamespace("m", tenant=""), MemoryNamespace("m'; --")]
    for i, ns in enumerate(hostile):
        store.append(ns, [entry(i)])
    assert [[e.id for e in store.load(ns)] for ns in hostile] == [["e0"], ["e1"], ["e2"]]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(st.integers(0, 8), max_size=5), max_size=6))
def test_appending_batches_keeps_first_occurrences_in_order(batches: list[list[int]]) -> None:
    store = InMemoryMemoryStore()
    for batch in batches:
        store.append(ALICE, [entry(i) for i in batch])
    expected = list(dict.fromkeys(f"e{i}" for batch in batches for i in batch))
    assert [e.id for e in store.load(ALICE)] == expected


def test_the_old_import_paths_name_the_stores_classes() -> None:
    assert InMemoryMemoryStore is memory.InMemoryMemoryStore
    assert SQLiteMemoryStore is sqlite_memory.SQLiteMemoryStore
    assert PostgresMemoryStore is postgres_memory.PostgresMemoryStore
