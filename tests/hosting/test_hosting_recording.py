"""``GET {path}/threads/{id}/recording``: the thread's last run as a recording, for its owner only, so ``backtrack``
works on a served conversation (live uvicorn on 127.0.0.1, and each session store)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from agui_live import stream
from agui_served import SECRET
from test_hosting_sessions import ALICE, BOB, RECORD

from agentfootprint.explain import backtrack
from agentfootprint.explain.recording import Recording, load_recording
from agentfootprint.hosting import StoredThreadUnreadableError, WireRequestRefusal, sqlite_sessions
from conftest import StoreMaker

ALICE_H = {"x-test-user": "alice"}
BOB_H = {"x-test-user": "bob"}


def _turn(thread: str, run: str, *messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": run, "messages": list(messages), **fields}


def _user(mid: str, content: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": content}


async def test_the_owner_backtracks_a_served_conversation_and_nobody_else_sees_it(
    live_agui: str, tmp_path: Path
) -> None:
    thread = f"rec-{uuid.uuid4().hex[:8]}"
    url = f"{live_agui}/agui/threads/{thread}/recording"
    async with httpx2.AsyncClient(timeout=30) as http:
        payload = _turn(thread, "r1", _user("u1", f"weather in Paris? my key is {SECRET}"))
        events = await stream(http, f"{live_agui}/agui", payload, headers=ALICE_H)
        assert events[-1]["type"] == "RUN_FINISHED"

        served = await http.get(url, headers=ALICE_H)
        assert served.status_code == 200 and served.headers["content-type"].startswith("application/json")
        assert SECRET not in served.text, "the recording is the redacted view"
        data = served.json()
        assert data["format"] == "agentfootprint.recording" and data["model"] == "mock-model"

        for headers in (BOB_H, {}):
            other = await http.get(url, headers=headers)
            assert other.status_code == 404 and other.json()["error"]["reason"] == "ERR_AGUI_THREAD_NOT_FOUND"
            assert SECRET not in other.text and "weather" not in other.text
        missing = await http.get(f"{live_agui}/agui/threads/no-such-thread/recording", headers=ALICE_H)
        assert missing.status_code == 404 and missing.json()["error"]["reason"] == "ERR_AGUI_THREAD_NOT_FOUND"
        long_id = await http.get(f"{live_agui}/agui/threads/{'x' * 129}/recording", headers=ALICE_H)
        assert long_id.status_code == 400 and long_id.json()["error"]["reason"] == "ERR_AGUI_ID_TOO_LONG"
        assert (await http.post(url, headers=ALICE_H)).status_code == 405

    trail = backtrack(Recording.model_validate(data))
    assert trail.answer == "It is sunny in Paris."
    kinds = [(source.kind, source.id) for source in trail.sources]
    assert ("system", "system") in kinds and ("tool", "weather") in kinds, "the tool result reached the answer"
    saved = tmp_path / "served.json"
    saved.write_text(served.text)
    assert backtrack(load_recording(saved)).answer == trail.answer


async def test_the_recording_follows_the_last_run_including_a_pause_and_its_resume(live_agui: str) -> None:
    thread = f"rec-{uuid.uuid4().hex[:8]}"
    url = f"{live_agui}/agui/threads/{thread}/recording"
    async with httpx2.AsyncClient(timeout=30) as http:
        ask = _turn(thread, "r1", _user("u1", "ask me"))
        events = await stream(http, f"{live_agui}/agui", ask, headers=ALICE_H)
        (interrupt,) = events[-1]["outcome"]["interrupts"]
        paused = (await http.get(url, headers=ALICE_H)).json()
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "tea"}]
        await stream(http, f"{live_agui}/agui", {**ask, "runId": "r2", "resume": resume}, headers=ALICE_H)
        finished = (await http.get(url, headers=ALICE_H)).json()
    assert len(finished["snapshot"]["commit_log"]) > len(paused["snapshot"]["commit_log"]), "the resumed run's own"
    assert backtrack(Recording.model_validate(finished)).answer == "You chose tea."


async def test_every_store_keeps_the_last_recording_for_its_owner(make_store: StoreMaker) -> None:
    store = make_store()
    try:
        with pytest.raises(WireRequestRefusal) as unknown:
            await store.read_recording("t1", ALICE)
        assert (unknown.value.status, unknown.value.reason) == (404, "ERR_AGUI_THREAD_NOT_FOUND")
        await store.save(await store.acquire("t1", ALICE), RECORD)
        assert await store.read_recording("t1", ALICE) is None
        await store.save(await store.acquire("t1", ALICE), RECORD, json.dumps({"run": 1}))
        await store.save(await store.acquire("t1", ALICE), RECORD)
        assert await store.read_recording("t1", ALICE) == {"run": 1}, "a turn without a recording keeps the last"
        await store.save(await store.acquire("t1", ALICE), RECORD, json.dumps({"run": 2}))
        assert await store.read_recording("t1", ALICE) == {"run": 2}
        for caller in (BOB, None):
            with pytest.raises(WireRequestRefusal) as other:
                await store.read_recording("t1", caller)
            assert (other.value.status, other.value.reason) == (404, "ERR_AGUI_THREAD_NOT_FOUND")
        await store.save(await store.acquire("t2", None), RECORD, json.dumps({"run": 3}))
        assert await store.read_recording("t2", None) == {"run": 3}, "a thread nobody signed for is any guest's"
        with pytest.raises(WireRequestRefusal) as signed:
            await store.read_recording("t2", BOB)
        assert signed.value.status == 404, "and never a signed-in caller's"
    finally:
        await store.close()


async def test_an_unreadable_stored_recording_fails_naming_the_thread(tmp_path: Path) -> None:
    store = sqlite_sessions(tmp_path / "threads.db")
    try:
        await store.save(await store.acquire("t1", ALICE), RECORD, "{}")
        with sqlite3.connect(tmp_path / "threads.db") as conn:
            conn.execute("UPDATE agentfootprint_threads SET recording = '[not json' WHERE thread_id = 't1'")
        with pytest.raises(StoredThreadUnreadableError) as unreadable:
            await store.read_recording("t1", ALICE)
        assert unreadable.value.thread_id == "t1"
    finally:
        await store.close()


async def test_a_sqlite_table_from_before_recordings_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE agentfootprint_threads (thread_id TEXT PRIMARY KEY, owner TEXT, messages TEXT NOT NULL, "
            "conversation TEXT, pause TEXT, lease TEXT, lease_until REAL, updated_at REAL NOT NULL)"
        )
        conn.execute("INSERT INTO agentfootprint_threads VALUES ('old', NULL, '[]', NULL, NULL, NULL, NULL, 0)")
    store = sqlite_sessions(path)
    try:
        assert await store.read_recording("old", None) is None
        await store.save(await store.acquire("old", None), RECORD, json.dumps({"run": 1}))
        assert await store.read_recording("old", None) == {"run": 1}
        summary = (await store.read_thread("old", None)).summary
        assert summary.created_at == summary.updated_at > 0, "a row from before creation times: created = updated"
    finally:
        await store.close()
