"""What the host seal covers (issue 39, items 6-7): the thread's owner and its recording as well as its pause,
conversation and messages; several keys rotate (the newest signs, each verifies, the next write re-seals), and a
thread no key verifies is a typed 409, never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agui_http import body, client, of, turn, user
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, ask_human
from agentfootprint.flow import CheckpointSealError
from agentfootprint.hosting import HostingConfigError, ag_ui_app, memory_sessions
from agentfootprint.hosting._host_seal import (
    CHECKPOINT_KEY_ENV,
    HOST_SEAL,
    host_key,
    key_from_env,
    open_recording,
    seal_recording,
)
from agentfootprint.hosting.sessions import owner_key
from agentfootprint.identity import Identity
from agentfootprint.providers import mock

SECRET = "alice's private plan"
ALICE = owner_key(Identity(tenant="acme", principal="alice"))
BOB = owner_key(Identity(tenant="acme", principal="bob"))


def _by_header(request: Any) -> dict[str, str] | None:
    name = request.headers.get("x-user")
    return {"tenant": "acme", "principal": name} if name else None


class MovedOwner:
    """A store whose owner column was edited behind the host: bob's requests reach alice's threads once armed."""

    def __init__(self) -> None:
        self.inner = memory_sessions()
        self.moved = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _owner(self, owner: str | None) -> str | None:
        return ALICE if self.moved and owner == BOB else owner

    async def acquire(self, thread_id: str, owner: str | None) -> Any:
        return await self.inner.acquire(thread_id, self._owner(owner))

    async def read_thread(self, thread_id: str, owner: str | None) -> Any:
        return await self.inner.read_thread(thread_id, self._owner(owner))

    async def read_recording(self, thread_id: str, owner: str | None) -> Any:
        return await self.inner.read_recording(thread_id, self._owner(owner))


class EditedRecording:
    """A store whose stored recording is edited by ``edit`` once armed."""

    def __init__(self) -> None:
        self.inner = memory_sessions()
        self.edit: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def read_recording(self, thread_id: str, owner: str | None) -> Any:
        data = await self.inner.read_recording(thread_id, owner)
        return data if self.edit is None or data is None else self.edit(data)


def _factory(provider: Any) -> Any:
    return lambda: Agent.create(provider=provider).tool(ask_human).build()


def _app(store: Any, key: Any, provider: Any = None) -> Any:
    provider = provider if provider is not None else mock(reply="Noted.")
    return ag_ui_app(_factory(provider), sessions=store, checkpoint_key=key, bind_thread=_by_header)


ALICE_H = {"x-user": "alice"}
BOB_H = {"x-user": "bob"}


async def test_a_thread_moved_to_another_owner_in_the_store_is_refused_to_him_on_every_door() -> None:
    store, provider = MovedOwner(), mock(reply="Noted.")
    async with client(_app(store, "k1", provider)) as http:
        status, _ = await turn(http, body(user("u1", SECRET)), headers=ALICE_H)
        assert status == 200
        store.moved = True
        calls = provider.calls
        shown = await http.get("/agui/threads/t1", headers=BOB_H)
        recording = await http.get("/agui/threads/t1/recording", headers=BOB_H)
        status, refused = await turn(http, body(user("u2", "continue"), run="r2"), headers=BOB_H)
        for response in (shown, recording):
            assert (response.status_code, response.json()["error"]["code"]) == (409, "ERR_CHECKPOINT_SEAL")
            assert "private" not in response.text
        assert (status, refused["error"]["code"], refused["error"]["field"]) == (409, "ERR_CHECKPOINT_SEAL", "seal")
        assert provider.calls == calls and "private" not in json.dumps(refused)
        mine = await http.get("/agui/threads/t1", headers=ALICE_H)  # the owner still reads her own thread
    assert mine.status_code == 200 and SECRET in mine.text


async def test_a_thread_moved_to_another_owner_is_served_without_a_key_showing_what_the_seal_prevents() -> None:
    store = MovedOwner()  # the control: without a key the host cannot tell, which is why the seal covers the owner
    async with client(_app(store, None)) as http:
        await turn(http, body(user("u1", SECRET)), headers=ALICE_H)
        store.moved = True
        shown = await http.get("/agui/threads/t1", headers=BOB_H)
    assert shown.status_code == 200 and SECRET in shown.text


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: {**d, "answer": "tampered"},
        lambda d: {k: v for k, v in d.items() if k != HOST_SEAL},
        lambda d: {**d, HOST_SEAL: "0" * 64},
        lambda d: {**d, HOST_SEAL: 7},
        lambda d: {**d, "extra": {"x": 1}},
    ],
    ids=["answer", "no-seal", "wrong-seal", "not-a-seal", "added-field"],
)
async def test_a_stored_recording_edited_behind_the_host_is_refused(edit: Any) -> None:
    store = EditedRecording()
    async with client(_app(store, "k1")) as http:
        await turn(http, body(user("u1", "Hi")), headers=ALICE_H)
        clean = await http.get("/agui/threads/t1/recording", headers=ALICE_H)
        store.edit = edit
        refused = await http.get("/agui/threads/t1/recording", headers=ALICE_H)
    assert clean.status_code == 200 and HOST_SEAL not in clean.json()
    assert (refused.status_code, refused.json()["error"]["code"]) == (409, "ERR_CHECKPOINT_SEAL")
    assert "tampered" not in refused.text


async def test_keys_rotate_the_newest_signs_each_verifies_and_the_next_write_reseals() -> None:
    store = memory_sessions()
    async with client(_app(store, "old key")) as http:
        status, _ = await turn(http, body(user("u1", "Hi")), headers=ALICE_H)
        assert status == 200
    async with client(_app(store, ["new key", "old key"])) as http:
        shown = await http.get("/agui/threads/t1", headers=ALICE_H)
        recording = await http.get("/agui/threads/t1/recording", headers=ALICE_H)
        status, events = await turn(http, body(user("u1", "Hi"), user("u2", "Again"), run="r2"), headers=ALICE_H)
    assert (shown.status_code, recording.status_code, status) == (200, 200, 200) and of(events, "RUN_FINISHED")
    async with client(_app(store, "new key")) as http:  # the old key retired: the write above re-sealed
        shown = await http.get("/agui/threads/t1", headers=ALICE_H)
        recording = await http.get("/agui/threads/t1/recording", headers=ALICE_H)
    assert (shown.status_code, recording.status_code) == (200, 200)


async def test_a_thread_no_key_verifies_is_a_typed_409_not_a_500() -> None:
    store, provider = memory_sessions(), mock(reply="Noted.")
    async with client(_app(store, "old key", provider)) as http:
        await turn(http, body(user("u1", "Hi")), headers=ALICE_H)
    calls = provider.calls
    async with client(_app(store, ["newer", "newest"], provider)) as http:
        shown = await http.get("/agui/threads/t1", headers=ALICE_H)
        status, refused = await turn(http, body(user("u1", "Hi"), user("u2", "x"), run="r2"), headers=ALICE_H)
    assert (shown.status_code, shown.json()["error"]["code"]) == (409, "ERR_CHECKPOINT_SEAL")
    assert (status, refused["error"]["code"], provider.calls) == (409, "ERR_CHECKPOINT_SEAL", calls)


def test_the_host_keys_never_show_in_repr_and_lists_are_bounded() -> None:
    keys = host_key(["first secret", b"second secret"])
    assert keys is not None and len(keys) == 2 and "secret" not in repr(keys)
    for bad in ([], ["k"] * 17, [""], ["k", 5], {"k": 1}):
        with pytest.raises(HostingConfigError):
            host_key(bad)


def test_serve_reads_several_keys_newest_first_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHECKPOINT_KEY_ENV, " new key , old key ,")
    assert key_from_env() == ["new key", "old key"]
    monkeypatch.setenv(CHECKPOINT_KEY_ENV, " , ")
    assert key_from_env() is None


@settings(max_examples=80, deadline=None)
@given(
    thread=st.sampled_from(["t1", "t2"]),
    owner=st.sampled_from([ALICE, BOB, None]),
    field=st.text(min_size=1, max_size=8),
    value=st.one_of(st.text(max_size=10), st.integers(), st.none()),
)
def test_property_a_sealed_recording_opens_only_unchanged_for_its_own_thread_and_owner(
    thread: str, owner: str | None, field: str, value: Any
) -> None:
    keys = host_key(["k2", "k1"])
    sealed = seal_recording("t1", ALICE, json.dumps({"answer": "a", "n": 1}), host_key("k1"))
    assert isinstance(sealed, dict)
    if (thread, owner) != ("t1", ALICE):
        with pytest.raises(CheckpointSealError):
            open_recording(thread, owner, sealed, keys)
        return
    assert open_recording(thread, owner, sealed, keys) == {"answer": "a", "n": 1}
    edited = {**sealed, field: value}
    if edited == sealed:
        return
    with pytest.raises(CheckpointSealError):
        open_recording(thread, owner, edited, keys)
