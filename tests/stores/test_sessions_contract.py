"""One contract for session rows on every backend: a claim is atomic and owner-bound, a save holds only while its
lease does, a blank thread is dropped on release, and listing/purging see only what was written."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint.stores import SessionRows, StoreFamily
from agentfootprint.stores.sessions import (
    LeaseLostError,
    MemorySessionRows,
    RowLease,
    ThreadBusyError,
    ThreadExpiredError,
    ThreadNotFoundError,
    ThreadRow,
)


def texts(messages: str, recording: str | None = None, pause: str | None = None) -> Any:
    return lambda old: {
        "messages": messages,
        "conversation": '{"c": 1}',
        "pause": pause,
        "recording": recording if recording is not None else (old.recording if old is not None else None),
        "strings": None,
    }


def text(value: str | bytes | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


async def test_a_thread_is_claimed_saved_and_read_by_its_owner_only(family: StoreFamily, reopen: Any) -> None:
    rows = family.sessions
    assert isinstance(rows, SessionRows)
    lease = await rows.acquire("t1", "alice")
    assert lease.created and lease.row is None
    with pytest.raises(ThreadBusyError):
        await rows.acquire("t1", "alice")
    with pytest.raises(ThreadNotFoundError):
        await rows.acquire("t1", "bob")
    await rows.renew(lease)
    await rows.save(lease, texts('["m1"]', recording='{"r": 1}', pause='{"p": 1}'))
    again = reopen().sessions
    second = await again.acquire("t1", "alice")
    assert second.row is not None and not second.created and text(second.row.messages) == '["m1"]'
    await again.save(second, texts('["m1", "m2"]'))  # no new recording: the stored one is kept
    got = await rows.read("t1", "alice")
    assert (text(got.messages), text(got.recording), got.pause, got.busy(got.updated_at)) == (
        '["m1", "m2"]',
        '{"r": 1}',
        None,
        False,
    )
    with pytest.raises(ThreadNotFoundError):
        await rows.read("t1", "bob")
    with pytest.raises(ThreadNotFoundError):
        await rows.read("nope", "alice")


async def test_a_lost_lease_cannot_save_and_a_blank_thread_is_dropped(family: StoreFamily) -> None:
    rows = family.sessions
    lease = await rows.acquire("t2", None)
    await rows.release(lease)
    with pytest.raises(ThreadNotFoundError):
        await rows.read("t2", None)
    fresh = await rows.acquire("t2", None)
    assert fresh.created
    stale = RowLease("t2", "not-the-token", None, False)
    for attempt in (rows.renew(stale), rows.save(stale, texts("[]"))):
        with pytest.raises(LeaseLostError):
            await attempt
    await rows.release(fresh)


async def test_owners_list_delete_and_purge(family: StoreFamily) -> None:
    rows = family.sessions
    for thread, owner in (("a1", "alice"), ("a2", "alice"), ("b1", "bob")):
        await rows.save(
            await rows.acquire(thread, owner), texts(f'["{thread}"]', pause='{"p": 1}' if thread == "a2" else None)
        )
        await asyncio.sleep(0.01)
    blank = await rows.acquire("a3", "alice")
    listed = await rows.list("alice")
    assert [t for t, _ in listed] == ["a2", "a1"] and [r.pause is not None for _, r in listed] == [True, False]
    assert [t for t, _ in await rows.list("alice", limit=1)] == ["a2"]
    with pytest.raises(ThreadNotFoundError):
        await rows.delete("a1", "bob")
    with pytest.raises(ThreadBusyError):
        await rows.delete("a3", "alice")
    await rows.delete("a1", "alice")
    assert [t for t, _ in await rows.list("alice")] == ["a2"]
    assert await rows.purge(0.0) == 2  # a2 and b1; the busy a3 is kept
    await rows.release(blank)


async def test_hostile_ids_and_owners_are_data(family: StoreFamily) -> None:
    rows = family.sessions
    hostile = "t'; DROP TABLE agentfootprint_threads; --"
    await rows.save(await rows.acquire(hostile, "o'; --"), texts('["x"]'))
    assert text((await rows.read(hostile, "o'; --")).messages) == '["x"]'
    with pytest.raises(ThreadNotFoundError):
        await rows.read(hostile, None)


async def test_the_memory_rows_drop_the_least_recently_used_and_remember_them() -> None:
    rows = MemorySessionRows(max_bytes=4096)
    for i in range(6):
        await rows.save(await rows.acquire(f"t{i}", "o"), texts('["' + "x" * 900 + '"]'))
    assert rows.stored_bytes <= 4096
    with pytest.raises(ThreadExpiredError):
        await rows.acquire("t0", "o")
    with pytest.raises(ThreadNotFoundError):
        await rows.acquire("t0", "someone else")
    assert isinstance(await rows.read("t5", "o"), ThreadRow)
