"""One conformance suite for every session store (memory, SQLite, PostgreSQL), plus the app on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agui_http import asking, body, client, factory, text_of, turn, user

from agentfootprint import ask_human
from agentfootprint.hosting import (
    HostingConfigError,
    LeaseLostError,
    PauseRecord,
    SessionStore,
    StoredThreadUnreadableError,
    ThreadRecord,
    WireRequestRefusal,
    ag_ui_app,
    open_sessions,
    postgres_sessions,
    sqlite_sessions,
)
from agentfootprint.hosting.sessions import owner_key
from agentfootprint.identity import Identity
from agentfootprint.providers import mock
from conftest import StoreMaker

ALICE = owner_key(Identity(tenant="acme", principal="alice"))
BOB = owner_key(Identity(tenant="acme", principal="bob"))
RECORD = ThreadRecord(
    messages=({"id": "u1", "role": "user", "content": "hi"},),
    conversation={"format": "agentfootprint.conversation", "version": 1, "run_id": "x", "history": []},
    pause=PauseRecord(
        checkpoint={"any": "json"}, kind="interrupt", tool_call_id="c1", tool_name="ask_human", interrupt_id="int-1"
    ),
)


@pytest.fixture
async def store(make_store: StoreMaker) -> AsyncIterator[SessionStore]:
    made = make_store()
    yield made
    await made.close()


async def test_a_new_thread_is_created_busy_and_saving_frees_it(store: SessionStore) -> None:
    lease = await store.acquire("t1", ALICE)
    assert lease.created and lease.record == ThreadRecord() and lease.thread_id == "t1"
    with pytest.raises(WireRequestRefusal) as busy:
        await store.acquire("t1", ALICE)
    assert (busy.value.status, busy.value.reason, busy.value.field) == (409, "ERR_AGUI_THREAD_BUSY", "threadId")
    await store.save(lease, RECORD)
    again = await store.acquire("t1", ALICE)
    assert not again.created and again.record == RECORD
    await store.release(again)


async def test_another_owner_gets_404_even_while_busy(store: SessionStore) -> None:
    lease = await store.acquire("t1", ALICE)
    for caller in (BOB, None):
        with pytest.raises(WireRequestRefusal) as missing:
            await store.acquire("t1", caller)
        assert (missing.value.status, missing.value.reason) == (404, "ERR_AGUI_THREAD_NOT_FOUND")
    await store.save(lease, RECORD)
    for caller in (BOB, None):
        with pytest.raises(WireRequestRefusal):
            await store.acquire("t1", caller)


async def test_an_anonymous_thread_is_never_handed_to_a_signed_in_caller(store: SessionStore) -> None:
    """A guest's thread stays the guest's: a signed-in caller gets 404 and the guest is never locked out."""
    await store.save(await store.acquire("t1", None), RECORD)
    for caller in (ALICE, BOB):
        with pytest.raises(WireRequestRefusal) as refused:
            await store.acquire("t1", caller)
        assert (refused.value.status, refused.value.reason) == (404, "ERR_AGUI_THREAD_NOT_FOUND")
        with pytest.raises(WireRequestRefusal):
            await store.read_recording("t1", caller)
    lease = await store.acquire("t1", None)
    assert lease.record == RECORD
    await store.release(lease)


async def test_releasing_a_never_saved_thread_drops_it(store: SessionStore) -> None:
    await store.release(await store.acquire("t1", ALICE))
    lease = await store.acquire("t1", BOB)
    assert lease.created
    await store.release(lease)


async def test_release_keeps_a_saved_thread(store: SessionStore) -> None:
    await store.save(await store.acquire("t1", ALICE), RECORD)
    await store.release(await store.acquire("t1", ALICE))
    lease = await store.acquire("t1", ALICE)
    assert lease.record == RECORD and not lease.created
    await store.release(lease)


async def test_threads_never_bleed(store: SessionStore) -> None:
    await store.save(await store.acquire("t1", ALICE), RECORD)
    other = await store.acquire("t2", ALICE)
    assert other.created and other.record == ThreadRecord()
    await store.release(other)


async def test_exactly_one_of_many_concurrent_claims_wins(store: SessionStore) -> None:
    results = await asyncio.gather(*(store.acquire("race", ALICE) for _ in range(8)), return_exceptions=True)
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, WireRequestRefusal) and r.reason == "ERR_AGUI_THREAD_BUSY"]
    assert len(winners) == 1 and len(losers) == 7
    await store.release(winners[0])


class Clock:
    """A settable clock for lease expiry and retention."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_an_expired_lease_can_be_taken_and_the_old_turn_cannot_save(make_store: StoreMaker) -> None:
    clock = Clock()
    quick = make_store(lease_seconds=10, clock=clock)
    try:
        old = await quick.acquire("t1", ALICE)
        await quick.save(old, RECORD)
        stale = await quick.acquire("t1", ALICE)
        clock.now += 9.9
        with pytest.raises(WireRequestRefusal) as busy:
            await quick.acquire("t1", ALICE)
        assert busy.value.reason == "ERR_AGUI_THREAD_BUSY"
        clock.now += 0.2
        fresh = await quick.acquire("t1", ALICE)
        with pytest.raises(LeaseLostError):
            await quick.save(stale, ThreadRecord())
        with pytest.raises(LeaseLostError):
            await quick.renew(stale)
        await quick.save(fresh, RECORD)
    finally:
        await quick.close()


async def test_a_heartbeat_keeps_a_long_turn_busy_past_its_lease(make_store: StoreMaker) -> None:
    """While a turn renews its lease, nobody takes the thread; once renewals stop, it expires after one lease."""
    clock = Clock()
    store = make_store(lease_seconds=10, clock=clock)
    try:
        lease = await store.acquire("t1", ALICE)
        for _ in range(5):
            clock.now += 6
            await store.renew(lease)
            with pytest.raises(WireRequestRefusal) as busy:
                await store.acquire("t1", ALICE)
            assert busy.value.reason == "ERR_AGUI_THREAD_BUSY"
        clock.now += 10.1
        taken = await store.acquire("t1", ALICE)
        assert taken.created, "the crashed turn never saved, so the thread is still new"
        await store.release(taken)
    finally:
        await store.close()


async def test_a_stored_record_that_is_not_readable_fails_by_thread(
    make_store: StoreMaker, request: pytest.FixtureRequest
) -> None:
    store = make_store()
    try:
        await store.save(await store.acquire("t1", ALICE), RECORD)
        await _corrupt(store, "t1")
        with pytest.raises(StoredThreadUnreadableError) as unreadable:
            await store.acquire("t1", ALICE)
        assert unreadable.value.thread_id == "t1" and "t1" in str(unreadable.value)
        with pytest.raises(StoredThreadUnreadableError):
            await store.acquire("t1", ALICE)
    finally:
        await store.close()


async def _corrupt(store: Any, thread_id: str) -> None:
    if hasattr(store, "_rows"):
        store._rows[thread_id].conversation = "{not json"
        return
    table = store._table
    if hasattr(store, "_conn"):
        import sqlite3

        with sqlite3.connect(store.path) as conn:
            conn.execute(f"UPDATE {table} SET strings = '[1, 2]' WHERE thread_id = ?", (thread_id,))
        return
    async with store._connection() as conn, conn.transaction():
        await conn.execute(f"UPDATE {table} SET messages = 'nope' WHERE thread_id = %s", (thread_id,))


def test_open_sessions_reads_a_url(tmp_path: Any) -> None:
    from agentfootprint.hosting import MemorySessions, PostgresSessions, SqliteSessions

    assert isinstance(open_sessions(None), MemorySessions)
    assert isinstance(open_sessions(f"sqlite:///{tmp_path}/a.db"), SqliteSessions)
    assert isinstance(open_sessions(str(tmp_path / "b.db")), SqliteSessions)
    assert isinstance(open_sessions("postgresql://u@127.0.0.1:1/db"), PostgresSessions)
    with pytest.raises(HostingConfigError):
        sqlite_sessions(tmp_path / "c.db", table="x; DROP TABLE y")


async def test_the_app_runs_a_paused_conversation_on_postgres(postgres_dsn: str) -> None:
    table = f"app_{uuid.uuid4().hex[:12]}"
    provider = asking("Which city?", "Booked Paris.")
    store = postgres_sessions(postgres_dsn, table=table)
    async with client(ag_ui_app(factory(provider, ask_human), sessions=store)) as http:
        _, events = await turn(http, body(user("u1", "Book a trip")))
        interrupt_id = events[-1]["outcome"]["interrupts"][0]["id"]
    await store.close()

    second = mock(replies=["Booked Paris.", "Paris, as you said."])
    store = postgres_sessions(postgres_dsn, table=table)
    async with client(ag_ui_app(factory(second, ask_human), sessions=store)) as http:
        resume = [{"interruptId": interrupt_id, "status": "resolved", "payload": "Paris"}]
        status, events = await turn(http, body(user("u1", "Book a trip"), run="r2", resume=resume))
        assert status == 200 and text_of(events) == "Booked Paris."
        status, events = await turn(http, body(user("u1", "Book a trip"), user("u2", "Where?"), run="r3"))
    await store.close()
    assert status == 200 and text_of(events) == "Paris, as you said."
    assert [m.role for m in second.requests[-1].messages] == ["user", "assistant", "tool", "assistant", "user"]


async def _write_pause(store: Any, thread_id: str, text: str) -> None:
    """Overwrite the stored pause record with ``text``, as a foreign writer would."""
    if hasattr(store, "_rows"):
        store._rows[thread_id].pause = text.encode()
        return
    if hasattr(store, "_conn"):
        import sqlite3

        with sqlite3.connect(store.path) as conn:
            conn.execute(f"UPDATE {store._table} SET pause = ? WHERE thread_id = ?", (text, thread_id))
        return
    async with store._connection() as conn, conn.transaction():
        await conn.execute(f"UPDATE {store._table} SET pause = %s WHERE thread_id = %s", (text, thread_id))


FOREIGN_PAUSES = [
    '{"kind": "interrupt", "interruptId": "int-1"}',
    '{"checkpoint": {}, "kind": "interrupt", "tool_call_id": "c1", "tool_name": "x"}',
    '{"checkpoint": {}, "kind": "mystery", "tool_call_id": "c1", "tool_name": "x", "interrupt_id": "int-1"}',
    '"\\u0000 not ours"',
    "[1, 2, 3]",
    "{not json",
]


@pytest.mark.parametrize("foreign", FOREIGN_PAUSES)
async def test_a_pause_record_this_host_did_not_write_is_not_read_as_a_pause_R001_28(
    store: SessionStore, foreign: str
) -> None:
    """R001-28: a stored suspension record that is not one this adapter wrote is ignored; nothing is matched to it."""
    await store.save(await store.acquire("t1", ALICE), RECORD)
    await _write_pause(store, "t1", foreign)
    lease = await store.acquire("t1", ALICE)
    assert lease.record.pause is None and lease.record.held_thread().pause is None
    assert lease.record.messages == RECORD.messages and lease.record.conversation == RECORD.conversation
    await store.release(lease)


async def test_the_app_matches_nothing_to_a_foreign_pause_and_runs_the_thread_on_R001_28(tmp_path: Any) -> None:
    """R001-28 at the door: a resume naming the foreign record's ids is refused as not held; a message runs (no 500)."""
    store = sqlite_sessions(tmp_path / "threads.db")
    provider = mock(replies=["first", "second"])
    async with client(ag_ui_app(factory(provider), sessions=store)) as http:
        status, _ = await turn(http, body(user("u1", "hi")))
        assert status == 200
        foreign = {**RECORD.pause.model_dump(), "interrupt_id": "int-foreign"}  # shaped right, checkpoint not ours
        await _write_pause(store, "t1", json.dumps(foreign))
        resume = [{"interruptId": "int-foreign", "status": "resolved", "payload": "yes"}]
        status, refused = await turn(http, body(user("u1", "hi"), run="r2", resume=resume))
        assert status == 409 and refused["error"]["reason"] == "ERR_AGUI_RESUME_NOT_HELD"
        status, events = await turn(http, body(user("u1", "hi"), user("u2", "again"), run="r3"))
    assert status == 200 and text_of(events) == "second"
    assert [m.role for m in provider.requests[-1].messages] == ["user", "assistant", "user"]
