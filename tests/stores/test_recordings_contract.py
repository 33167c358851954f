"""One contract for recording stores on every backend: put/get by run id, and a listing that pages newest first
and filters by agent and time without reading a body."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.stores import RecordingStore, StoreCursorError, StoreError, StoreFamily
from agentfootprint.stores.recordings import InMemoryRecordingStore, RecordingPage


def body(run_id: str) -> str:
    return json.dumps({"format": "agentfootprint.recording", "snapshot": {"run_id": run_id}})


def fill(store: RecordingStore, n: int) -> None:
    for i in range(n):
        store.put(f"run-{i:03d}", body(f"run-{i:03d}"), agent="a" if i % 2 else "b", created_at=1000.0 + i // 3)


def walk(store: RecordingStore, **filters: Any) -> list[str]:
    seen: list[str] = []
    page = store.list(limit=4, **filters)
    while True:
        seen += [m.run_id for m in page.items]
        if page.next_cursor is None:
            return seen
        page = store.list(limit=4, cursor=page.next_cursor, **filters)


def test_put_get_replace_delete(family: StoreFamily, reopen: Any) -> None:
    store = family.recordings
    assert isinstance(store, RecordingStore)
    meta = store.put("r1", body("r1"), agent="support", created_at=1700000000.5, question="Where?", answer="Here.")
    assert (meta.run_id, meta.agent, meta.created_at, meta.question) == ("r1", "support", 1700000000.5, "Where?")
    assert meta.bytes == len(body("r1"))
    assert store.get("r1") == body("r1") and store.get("nope") is None
    store.put("r1", body("r1-again"), agent="support", created_at=1700000001.0)
    again = reopen().recordings
    assert again.get("r1") == body("r1-again")
    assert [m.run_id for m in again.list().items] == ["r1"]
    assert store.delete("r1") is True and store.delete("r1") is False and store.get("r1") is None


def test_a_listing_pages_newest_first_and_filters(family: StoreFamily) -> None:
    store = family.recordings
    fill(store, 13)
    every = walk(store)
    assert every == sorted(every, key=lambda r: (1000 + int(r[4:]) // 3, r), reverse=True)
    assert len(every) == 13 == len(set(every))
    assert walk(store, agent="a") == [r for r in every if int(r[4:]) % 2]
    assert walk(store, since=1001.0, until=1003.0) == [r for r in every if 1001 <= 1000 + int(r[4:]) // 3 < 1003]
    first = store.list(limit=13)
    assert first.next_cursor is None and [m.run_id for m in first.items] == every
    assert store.list(agent="nobody") == RecordingPage()


def test_hostile_input_is_refused_by_name(family: StoreFamily) -> None:
    store = family.recordings
    store.put("r'; DROP TABLE recordings; --", body("x"))
    assert store.get("r'; DROP TABLE recordings; --") == body("x")
    for cursor in ("not-a-cursor", "W10=", "", "e30="):
        with pytest.raises(StoreCursorError) as bad:
            store.list(cursor=cursor)
        assert cursor not in str(bad.value) or not cursor
    with pytest.raises(StoreError):
        store.list(limit=0)
    with pytest.raises(StoreError):
        store.put("", body("x"))
    with pytest.raises(StoreError):
        store.put("r2", "[1, 2]")
    with pytest.raises(StoreError):
        store.put("r2", body("x"), created_at=float("nan"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(st.integers(0, 5), max_size=25), limit=st.integers(1, 7))
def test_walking_pages_shows_every_run_once_in_order(times: list[int], limit: int) -> None:
    store = InMemoryRecordingStore()
    for i, t in enumerate(times):
        store.put(f"r{i}", body(f"r{i}"), created_at=float(t))
    seen: list[str] = []
    page = store.list(limit=limit)
    while True:
        assert len(page.items) <= limit
        seen += [m.run_id for m in page.items]
        if page.next_cursor is None:
            break
        page = store.list(limit=limit, cursor=page.next_cursor)
    expected = sorted((f"r{i}" for i in range(len(times))), key=lambda r: (times[int(r[1:])], r), reverse=True)
    assert seen == expected
