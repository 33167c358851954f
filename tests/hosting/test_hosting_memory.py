"""Each turn is stored once: a stored turn costs at most 2x its content on every store, and the in-memory store is
capped by bytes (least recently used threads dropped first; their owner is told, others see nothing)."""

from __future__ import annotations

import gc
import sqlite3
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agui_http import body, client, text_of, turn, user
from agui_live import live_server, stream
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hosting_sessions import ALICE, BOB, RECORD

from agentfootprint import Agent
from agentfootprint.hosting import HostingConfigError, WireRequestRefusal, ag_ui_app, memory_sessions
from agentfootprint.hosting._pack import MIN_SHARED_CHARS, JsonText, long_strings, pack, unpack
from agentfootprint.hosting._pack import load_strings as strings_of
from agentfootprint.providers import mock
from conftest import StoreMaker

ASCII_900K = "All work and no play makes Jack a dull boy. " * 20_455
MIXED = "Grüße aus Köln, 東京 und 🚀 — " * 9_000


def _agent() -> Agent:
    provider = mock(reply="Noted.", record_requests=False)
    return Agent.create(provider=provider, model="m").system("You keep notes.").build()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["\x00", "\x00\x00", "\x001", "\x00x" * 40, "y" * MIN_SHARED_CHARS, "z" * 200]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), json_values))
def test_packing_round_trips_any_json_and_no_data_is_read_as_a_reference(values: dict[str, Any]) -> None:
    packed = pack(values, long_strings(*values.values()))
    table = strings_of(packed.strings)
    assert {name: unpack(text, table) for name, text in packed.fields.items()} == values


def test_a_repeated_long_string_is_kept_once() -> None:
    text = "q" * 10_000
    recording = JsonText(f'{{"x":["{text}"]}}')
    values = {"messages": [text, text], "conversation": {"history": [text]}, "recording": recording}
    packed = pack(values, [text])
    total = sum(len(t or "") for t in packed.fields.values()) + len(packed.strings or "")
    assert total < len(text) + 200
    table = strings_of(packed.strings)
    assert unpack(packed.fields["recording"], table) == {"x": [text]}


TRICKY = "z" * 70
NUMBERS = list(range(30))
BETWEEN = ", " + ", ".join(map(str, NUMBERS)) + ", "
ADVERSARIAL = [
    ({"a": ["x", *NUMBERS, "y"]}, BETWEEN),  # a shared string equal to the structure between two strings
    ({"a": ["x", *NUMBERS, "\x00y"]}, BETWEEN),  # ... ending where a NUL-led string opens
    ({"a": 'say "' + TRICKY}, TRICKY),  # a shared string that is the tail of another after a quote
    ({"a": ["\x00" + TRICKY, TRICKY]}, TRICKY),
    ({"a": ["\x005", "\x00", TRICKY + '\\"']}, TRICKY + '\\"'),
    ({"k" * 80: TRICKY, "b": "k" * 80}, "k" * 80),  # a key equal to a shared string stays a key
]


@pytest.mark.parametrize(("value", "shared"), ADVERSARIAL)
def test_shared_strings_that_line_up_with_structure_never_change_the_data(value: dict[str, Any], shared: str) -> None:
    padded = shared if len(shared) >= MIN_SHARED_CHARS else shared + " " * MIN_SHARED_CHARS
    for candidate in (shared, padded):
        packed = pack({"f": value}, [candidate])
        assert unpack(packed.fields["f"], strings_of(packed.strings)) == value


def _content_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


@pytest.mark.parametrize("content", [ASCII_900K, MIXED], ids=["ascii-900k", "mixed-unicode"])
async def test_the_in_memory_store_holds_a_big_turn_in_at_most_twice_its_size(content: str) -> None:
    """Measured with tracemalloc: what the process keeps after the turn (the store's copy) ≤ 2x the content."""
    store = memory_sessions()
    app = ag_ui_app(_agent, sessions=store)
    async with client(app) as http:
        await turn(http, body(user("u0", "warm up"), thread="warm"))
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            status, events = await turn(http, body(user("u1", content)))
            del events
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert status == 200
    assert kept <= 2 * _content_bytes(content), f"kept {kept} bytes for {_content_bytes(content)} of content"
    assert store.stored_bytes <= 2 * _content_bytes(content)


async def _row_bytes(store: Any, thread_id: str) -> int:
    """The bytes a store keeps for one thread: the row's columns (the in-memory store: its own count, which the
    tracemalloc test above checks against the process)."""
    if hasattr(store, "stored_bytes"):
        return int(store.stored_bytes)
    columns = "messages, conversation, pause, recording, strings"
    if hasattr(store, "_conn"):
        with sqlite3.connect(store.path) as conn:
            sizes = "COALESCE(length(CAST(messages AS BLOB)), 0) + COALESCE(length(CAST(conversation AS BLOB)), 0) + "
            sizes += "COALESCE(length(CAST(recording AS BLOB)), 0) + COALESCE(length(CAST(strings AS BLOB)), 0) + "
            sizes += "COALESCE(length(CAST(pause AS BLOB)), 0)"
            (size,) = conn.execute(f"SELECT {sizes} FROM {store._table} WHERE thread_id = ?", (thread_id,)).fetchone()
            return int(size)
    async with store._connection() as conn:
        parts = " + ".join(f"COALESCE(octet_length({c}), 0)" for c in columns.split(", "))
        cursor = await conn.execute(f"SELECT {parts} FROM {store._table} WHERE thread_id = %s", (thread_id,))
        (size,) = await cursor.fetchone()
        await conn.rollback()
        return int(size)


@pytest.mark.parametrize("content", [ASCII_900K, MIXED], ids=["ascii-900k", "mixed-unicode"])
async def test_every_store_writes_a_big_turn_in_at_most_twice_its_size(make_store: StoreMaker, content: str) -> None:
    store = make_store()
    try:
        async with client(ag_ui_app(_agent, sessions=store)) as http:
            status, _ = await turn(http, body(user("u1", content)))
            assert status == 200
            one = await _row_bytes(store, "t1")
            status, _ = await turn(http, body(user("u1", content), user("u2", content + "!"), run="r2"))
            two = await _row_bytes(store, "t1")
    finally:
        await store.close()
    assert one <= 2 * _content_bytes(content)
    assert two <= 2 * 2 * _content_bytes(content), "two turns of such content: still at most 2x"


async def test_over_a_live_server_the_sqlite_row_of_a_900k_turn_is_under_twice_its_size(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    thread = f"big-{uuid.uuid4().hex[:8]}"
    with live_server(db) as base:
        async with httpx2.AsyncClient(timeout=60) as http:
            events = await stream(
                http, f"{base}/agui", {"threadId": thread, "runId": "r1", "messages": [user("u1", ASCII_900K)]}
            )
    assert text_of(events) == "Hello from uvicorn, streamed word by word."
    with sqlite3.connect(db) as conn:
        size = conn.execute(
            "SELECT length(CAST(messages AS BLOB)) + length(CAST(conversation AS BLOB)) + "
            "length(CAST(recording AS BLOB)) + length(CAST(strings AS BLOB)) FROM agentfootprint_threads "
            "WHERE thread_id = ?",
            (thread,),
        ).fetchone()[0]
    assert size <= 2 * len(ASCII_900K)


async def test_the_in_memory_store_stays_under_its_cap_dropping_least_recently_used_threads() -> None:
    store = memory_sessions(max_bytes=64 * 1024)
    note = "n" * 6000
    record = RECORD.model_copy(update={"messages": ({"id": "u1", "role": "user", "content": note},), "pause": None})
    for i in range(40):
        await store.save(await store.acquire(f"t{i}", ALICE), record)
        if i == 5:
            busy = await store.acquire("t0", ALICE)  # held by a running turn: never dropped
        if i >= 5:
            await store.release(await store.acquire("t1", ALICE))  # used again and again: kept
        assert store.stored_bytes <= store.max_bytes
    assert store.stored_bytes <= 64 * 1024 and 5 <= len(store) < 15
    await store.save(busy, record)
    assert (await store.read_thread("t0", ALICE)).record == record
    assert (await store.read_thread("t1", ALICE)).record == record
    assert (await store.read_thread("t39", ALICE)).record == record
    with pytest.raises(WireRequestRefusal) as expired:
        await store.acquire("t2", ALICE)
    assert (expired.value.status, expired.value.reason) == (410, "ERR_AGUI_THREAD_EXPIRED")
    with pytest.raises(WireRequestRefusal) as other:
        await store.acquire("t2", BOB)
    assert other.value.status == 404, "another caller learns nothing about a dropped thread"
    with pytest.raises(HostingConfigError):
        memory_sessions(max_bytes=10)


async def test_an_expired_thread_is_a_410_over_http_and_a_new_thread_works() -> None:
    store = memory_sessions(max_bytes=8 * 1024)
    async with client(ag_ui_app(_agent, sessions=store)) as http:
        first, _ = await turn(http, body(user("u1", "a" * 3000), thread="old"))
        for i in range(6):
            await turn(http, body(user("u1", "b" * 3000), thread=f"new-{i}"))
        status, refused = await turn(http, body(user("u1", "a" * 3000), user("u2", "more"), thread="old"))
        fresh, events = await turn(http, body(user("u1", "hi"), thread="another"))
    assert first == 200 and status == 410 and refused["error"]["reason"] == "ERR_AGUI_THREAD_EXPIRED"
    assert fresh == 200 and text_of(events) == "Noted."
