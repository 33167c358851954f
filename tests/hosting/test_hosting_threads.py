"""The owner's thread endpoints: list, transcript, delete (with the recording), and retention by age.

Owner-only like the recording endpoint: another caller gets 404, a guest's thread is never a signed-in caller's.
Over a live uvicorn on 127.0.0.1 (SQLite and PostgreSQL), and on every store."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agui_live import live_server, stream
from test_hosting_crash import served
from test_hosting_sessions import ALICE, BOB, RECORD, Clock

from agentfootprint.hosting import HostingConfigError, ThreadRecord, WireRequestRefusal, ag_ui_app, sqlite_sessions
from conftest import StoreMaker

ALICE_H = {"x-test-user": "alice"}
BOB_H = {"x-test-user": "bob"}


def _turn(thread: str, run: str, *texts: str, **fields: Any) -> dict[str, Any]:
    messages = [{"id": f"u{i + 1}", "role": "user", "content": text} for i, text in enumerate(texts)]
    return {"threadId": thread, "runId": run, "messages": messages, **fields}


@pytest.fixture(params=["sqlite", "postgres"])
def live_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A live server on a SQLite file or on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        with live_server(tmp_path / "threads.db") as base:
            yield base
        return
    import psycopg

    dsn = request.getfixturevalue("postgres_dsn")
    name = f"af_threads_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        with live_server(dsn.rsplit("/", 1)[0] + f"/{name}") as base:
            yield base
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_owners_list_read_and_delete_their_threads_and_nobody_elses(live_store: str) -> None:
    agui = f"{live_store}/agui"
    async with httpx2.AsyncClient(timeout=30) as http:
        await stream(http, agui, _turn("a-1", "r1", "hi"), headers=ALICE_H)
        await stream(http, agui, _turn("a-1", "r2", "hi", "weather in Paris?"), headers=ALICE_H)
        await stream(http, agui, _turn("a-2", "r1", "ask me"), headers=ALICE_H)
        await stream(http, agui, _turn("b-1", "r1", "hi"), headers=BOB_H)
        await stream(http, agui, _turn("g-1", "r1", "hi"))

        listed = (await http.get(f"{agui}/threads", headers=ALICE_H)).json()["threads"]
        assert [t["threadId"] for t in listed] == ["a-2", "a-1"], "the owner's threads, newest first"
        assert [t["paused"] for t in listed] == [True, False] and not any(t["busy"] for t in listed)
        assert listed[0]["updatedAt"] >= listed[1]["updatedAt"] >= listed[1]["createdAt"]
        assert [t["threadId"] for t in (await http.get(f"{agui}/threads", headers=BOB_H)).json()["threads"]] == ["b-1"]
        one = (await http.get(f"{agui}/threads", params={"limit": "1"}, headers=ALICE_H)).json()["threads"]
        assert [t["threadId"] for t in one] == ["a-2"]
        guest = await http.get(f"{agui}/threads")
        assert guest.status_code == 401 and guest.json()["error"]["reason"] == "ERR_AGUI_SIGN_IN_REQUIRED"
        for bad in ("0", "1001", "x", "-1"):
            wrong = await http.get(f"{agui}/threads", params={"limit": bad}, headers=ALICE_H)
            assert wrong.status_code == 400 and wrong.json()["error"]["field"] == "limit"

        transcript = (await http.get(f"{agui}/threads/a-1", headers=ALICE_H)).json()
        roles = [m["role"] for m in transcript["messages"]]
        assert roles == ["user", "assistant", "user", "assistant", "tool", "assistant"]
        assert transcript["messages"][-1]["content"] == "It is sunny in Paris."
        assert transcript["threadId"] == "a-1" and transcript["outcome"] is None and transcript["paused"] is False
        paused = await http.get(f"{agui}/threads/a-2", headers=ALICE_H)
        (interrupt,) = paused.json()["outcome"]["interrupts"]
        assert interrupt["message"] == "Tea or coffee?" and "checkpoint" not in paused.text

        for headers, thread in ((BOB_H, "a-1"), ({}, "a-1"), (ALICE_H, "g-1"), (ALICE_H, "b-1"), (ALICE_H, "none")):
            other = await http.get(f"{agui}/threads/{thread}", headers=headers)
            assert other.status_code == 404 and other.json()["error"]["reason"] == "ERR_AGUI_THREAD_NOT_FOUND"
            assert "sunny" not in other.text
        assert (await http.get(f"{agui}/threads/g-1")).status_code == 200, "a guest reads a guest thread by id"

        assert (await http.delete(f"{agui}/threads/a-1", headers=BOB_H)).status_code == 404
        deleted = await http.delete(f"{agui}/threads/a-1", headers=ALICE_H)
        assert deleted.status_code == 204 and deleted.content == b""
        for url in (f"{agui}/threads/a-1", f"{agui}/threads/a-1/recording"):
            assert (await http.get(url, headers=ALICE_H)).status_code == 404, "the recording went with it"
        assert (await http.delete(f"{agui}/threads/a-1", headers=ALICE_H)).status_code == 404
        listed = (await http.get(f"{agui}/threads", headers=ALICE_H)).json()["threads"]
        assert [t["threadId"] for t in listed] == ["a-2"]
        fresh = await stream(http, agui, _turn("a-1", "r9", "hi"), headers=ALICE_H)
        assert fresh[-1]["type"] == "RUN_FINISHED", "a deleted thread's id starts afresh"
        assert len((await http.get(f"{agui}/threads/a-1", headers=ALICE_H)).json()["messages"]) == 2


async def test_a_thread_is_not_deleted_while_a_turn_runs_on_it(live_agui: str) -> None:
    agui = f"{live_agui}/agui"
    thread = f"busy-{uuid.uuid4().hex[:8]}"
    started = asyncio.Event()

    async def hang(http: httpx2.AsyncClient) -> None:
        async with http.stream("POST", agui, json=_turn(thread, "r1", "hang"), headers=ALICE_H) as response:
            async for text in response.aiter_text():
                if "RUN_STARTED" in text:
                    started.set()

    async with httpx2.AsyncClient(timeout=30) as http:
        task = asyncio.create_task(hang(http))
        await asyncio.wait_for(started.wait(), 30)
        busy = await http.delete(f"{agui}/threads/{thread}", headers=ALICE_H)
        listed = (await http.get(f"{agui}/threads", headers=ALICE_H)).json()["threads"]
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert busy.status_code in (404, 409), "a first turn still running has nothing saved to delete"
    assert thread not in [t["threadId"] for t in listed], "nor is it listed before it saved"


async def test_every_store_lists_reads_deletes_and_purges(make_store: StoreMaker) -> None:
    clock = Clock()
    store = make_store(clock=clock)
    try:
        await store.save(await store.acquire("old", ALICE), RECORD)
        clock.now += 100
        await store.save(await store.acquire("new", ALICE), RECORD, {"run": 1})
        await store.save(await store.acquire("bobs", BOB), ThreadRecord(messages=({"id": "u1", "role": "user"},)))
        running = await store.acquire("running", ALICE)
        assert [t.thread_id for t in await store.list_threads(ALICE)] == ["new", "old"]
        assert [t.thread_id for t in await store.list_threads(ALICE, limit=1)] == ["new"]
        stored = await store.read_thread("new", ALICE)
        assert stored.record == RECORD and stored.summary.paused and not stored.summary.busy
        assert stored.summary.created_at == stored.summary.updated_at == clock.now
        for caller in (BOB, None):
            with pytest.raises(WireRequestRefusal) as other:
                await store.read_thread("new", caller)
            assert other.value.status == 404
            with pytest.raises(WireRequestRefusal):
                await store.delete_thread("new", caller)
        with pytest.raises(WireRequestRefusal) as unsaved:
            await store.read_thread("running", ALICE)
        assert unsaved.value.status == 404, "a thread whose first turn has not saved has no transcript yet"

        await store.delete_thread("new", ALICE)
        with pytest.raises(WireRequestRefusal):
            await store.read_recording("new", ALICE)

        clock.now += 3600
        assert await store.purge(older_than=3650) == 1, "only 'old' is older than the retention"
        assert [t.thread_id for t in await store.list_threads(ALICE)] == []
        assert [t.thread_id for t in await store.list_threads(BOB)] == ["bobs"]
        clock.now += 10_000
        await store.renew(running)
        assert await store.purge(older_than=60) == 1, "the busy thread is kept; bob's goes"
        await store.release(running)
    finally:
        await store.close()


async def test_the_app_sweeps_by_age_when_asked(tmp_path: Path) -> None:
    clock = Clock()
    store = sqlite_sessions(tmp_path / "threads.db", clock=clock)
    app = ag_ui_app(lambda: None, sessions=store, retention_seconds=86_400)  # type: ignore[arg-type,return-value]
    await store.save(await store.acquire("t1", None), RECORD)
    assert await app.state.agentfootprint_sweep() == 0
    clock.now += 86_401
    assert await app.state.agentfootprint_sweep() == 1
    with pytest.raises(HostingConfigError):
        ag_ui_app(lambda: None, retention_seconds=1)  # type: ignore[arg-type,return-value]
    await store.close()


async def test_serve_with_a_retention_deletes_old_threads_at_start(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    old = sqlite_sessions(db, clock=lambda: 1_000_000.0)
    await old.save(await old.acquire("ancient", None), RECORD)
    await old.close()
    new = sqlite_sessions(db)
    await new.save(await new.acquire("recent", None), RECORD)
    await new.close()
    with served(str(db), "--retention-days", "30") as (_, base):
        async with httpx2.AsyncClient(timeout=10) as http:
            ancient = await http.get(f"{base}/agui/threads/ancient")
            recent = await http.get(f"{base}/agui/threads/recent")
    assert ancient.status_code == 404 and recent.status_code == 200
    assert recent.json()["threadId"] == "recent"


async def test_over_a_live_server_a_foreign_pause_record_is_ignored_R001_28(tmp_path: Path) -> None:
    """R001-28 live: a pause record rewritten by someone else is not read as a pause (no 500, nothing matched)."""
    import sqlite3

    db = tmp_path / "threads.db"
    with live_server(db) as base:
        agui = f"{base}/agui"
        async with httpx2.AsyncClient(timeout=30) as http:
            events = await stream(http, agui, _turn("p-1", "r1", "ask me"), headers=ALICE_H)
            (interrupt,) = events[-1]["outcome"]["interrupts"]
            with sqlite3.connect(db) as conn:
                foreign = json.dumps({"kind": "interrupt", "interrupt_id": interrupt["id"], "checkpoint": "not ours"})
                conn.execute("UPDATE agentfootprint_threads SET pause = ? WHERE thread_id = 'p-1'", (foreign,))
            resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "tea"}]
            refused = await http.post(agui, json=_turn("p-1", "r2", "ask me", resume=resume), headers=ALICE_H)
            assert refused.status_code == 409 and refused.json()["error"]["reason"] == "ERR_AGUI_RESUME_NOT_HELD"
            transcript = (await http.get(f"{agui}/threads/p-1", headers=ALICE_H)).json()
            assert transcript["outcome"] is None and transcript["paused"] is False
            events = await stream(http, agui, _turn("p-1", "r3", "ask me", "hi"), headers=ALICE_H)
    assert events[-1]["type"] == "RUN_FINISHED" and "RUN_ERROR" not in [e["type"] for e in events]
