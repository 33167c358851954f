"""Conversation memory: stores, identity namespaces (never crossed), recall records, post-turn writes."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, Identity
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.context import (
    InjectionContext,
    InMemoryMemoryStore,
    InvalidInjectionError,
    MemoryEntry,
    MemoryStore,
    SQLiteMemoryStore,
    define_fact,
    define_memory,
    memory_namespace,
)
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock

from ._support import records_per_call


def echo(req: LLMRequest) -> str:
    return f"answer to: {req.messages[-1].content}"


def memory_agent(store: MemoryStore, **kw: Any) -> tuple[Agent, Any]:
    provider = mock(respond=echo)
    agent = (
        Agent.create(provider=provider, model="m")
        .system("base")
        .memory(define_memory(id="mem", store=store, **kw))
        .build()
    )
    return agent, provider


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "memory":
        yield InMemoryMemoryStore()
        return
    sqlite_store = SQLiteMemoryStore(tmp_path / "memory.db")
    yield sqlite_store
    sqlite_store.close()


# ------------------------------------------------------------------------------------------ stores


def test_store_append_load_last_idempotent_and_clear(store: MemoryStore) -> None:
    a = memory_namespace("mem", Identity(tenant="t1", principal="p1"), "run-1")
    b = memory_namespace("mem", Identity(tenant="t1", principal="p2"), "run-2")
    entries = [MemoryEntry(id=f"e{i}", role="user" if i % 2 == 0 else "assistant", content=f"m{i}") for i in range(5)]
    store.append(a, entries)
    store.append(a, entries[:2])  # replayed ids are ignored
    assert [e.id for e in store.load(a)] == ["e0", "e1", "e2", "e3", "e4"]
    assert [e.id for e in store.load(a, last=2)] == ["e3", "e4"]
    assert store.load(a, last=0) == []
    assert store.load(b) == []
    assert store.load(a)[1].role == "assistant" and store.load(a)[1].content == "m1"
    assert store.clear(a) == 5
    assert store.load(a) == []


def test_sqlite_store_uses_wal_and_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ns = memory_namespace("mem", Identity(tenant="t"), "r")
    first = SQLiteMemoryStore(path)
    first.append(ns, [MemoryEntry(id="x", role="user", content="remember me")])
    first.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = SQLiteMemoryStore(path)
    assert [e.content for e in again.load(ns)] == ["remember me"]
    again.close()


def test_namespace_distinguishes_none_from_empty_and_anonymous_runs() -> None:
    none = memory_namespace("mem", Identity(tenant=None), "r1")
    empty = memory_namespace("mem", Identity(tenant=""), "r1")
    assert none.key() != empty.key()
    assert none.anonymous and none.conversation_id == "r1"
    spoof = memory_namespace("mem", Identity(conversation_id="r1"), "other")
    assert spoof.key() != none.key()  # a caller naming a run id as conversation never reaches an anonymous run
    assert (
        memory_namespace("other", Identity(tenant="t"), "r").key()
        != memory_namespace("mem", Identity(tenant="t"), "r").key()
    )


def test_define_memory_validates() -> None:
    with pytest.raises(InvalidInjectionError):
        define_memory(id="m", recall=-1)
    with pytest.raises(InvalidInjectionError):
        define_memory(id="m", store=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInjectionError):
        define_memory(id="m", cache="sometimes")  # type: ignore[arg-type]
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).memory(define_fact(id="f", data="d"))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ through the agent


async def test_recall_lands_as_a_memory_record_with_entry_ids_and_turns_are_written(store: MemoryStore) -> None:
    agent, provider = memory_agent(store)
    alice = {"tenant": "acme", "principal": "alice"}
    events: list[AgentEvent] = []
    agent.on("memory.written", events.append)
    first = await agent.run("My order number is A-77.", identity=alice)
    assert "A-77" not in provider.requests[0].system_prompt  # nothing remembered yet: no record lands
    assert records_per_call(agent, "system_prompt_injections")[0][-1]["source_id"] == "system"
    assert events and events[0].payload["entry_ids"] == [f"{first.run_id}:user", f"{first.run_id}:assistant"]
    await agent.run("What was my order number?", identity=alice)
    prompt = provider.requests[1].system_prompt
    assert "User: My order number is A-77." in prompt
    assert "Assistant: answer to: My order number is A-77." in prompt
    record = records_per_call(agent, "system_prompt_injections")[0][-1]
    assert record["source"] == "memory" and record["source_id"] == "mem" and record["trigger"] == "always"
    assert record["entry_ids"] == [f"{first.run_id}:user", f"{first.run_id}:assistant"]
    assert record["namespace"] == {"tenant": "acme", "principal": "alice", "conversation_id": None}


async def test_recall_k_turns_and_callable_recall() -> None:
    store = InMemoryMemoryStore()
    agent, provider = memory_agent(store, recall=1)
    who = Identity(tenant="t", principal="p")
    for i in range(3):
        await agent.run(f"message {i}", identity=who)
    await agent.run("last", identity=who)
    prompt = provider.requests[-1].system_prompt
    assert "message 2" in prompt and "message 1" not in prompt

    def only_user(entries: list[MemoryEntry], ctx: InjectionContext) -> list[MemoryEntry]:
        return [e for e in entries if e.role == "user"]

    agent2, provider2 = memory_agent(store, recall=only_user)
    await agent2.run("next", identity=who)
    assert "Assistant:" not in provider2.requests[-1].system_prompt
    assert "message 0" in provider2.requests[-1].system_prompt


async def test_memory_in_messages_slot_keeps_its_role_and_stays_out_of_history() -> None:
    store = InMemoryMemoryStore()
    agent, provider = memory_agent(store, slot="messages", role="assistant")
    who = {"tenant": "t"}
    await agent.run("first", identity=who)
    await agent.run("second", identity=who)
    msgs = provider.requests[-1].messages
    assert msgs[0].role == "assistant" and "User: first" in msgs[0].content
    assert [m.content for m in msgs[1:]] == ["second"]
    record = records_per_call(agent, "message_injections")[0][0]
    assert record["source"] == "memory" and len(record["entry_ids"]) == 2


async def test_runs_without_identity_never_share_memory() -> None:
    store = InMemoryMemoryStore()
    agent, provider = memory_agent(store)
    await agent.run("secret anonymous note")
    await agent.run("anything?")
    assert "secret anonymous note" not in provider.requests[-1].system_prompt


async def test_without_memory_drops_recall_but_original_keeps_it() -> None:
    store = InMemoryMemoryStore()
    agent, provider = memory_agent(store)
    who = {"principal": "p"}
    await agent.run("remember the blue door", identity=who)
    await agent.without("mem").run("?", identity=who)
    assert "blue door" not in provider.requests[-1].system_prompt
    await agent.run("?", identity=who)
    assert "blue door" in provider.requests[-1].system_prompt


# ------------------------------------------------------------------------------------------ isolation property

names = st.sampled_from(["acme", "globex", "initech", ""]) | st.none()
identities = st.builds(
    Identity, tenant=names, principal=st.sampled_from(["alice", "bob", "carol"]) | st.none(), conversation_id=st.none()
)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(identities, st.booleans()), min_size=1, max_size=12))
def test_property_memory_never_crosses_identities(steps: list[tuple[Identity, bool]]) -> None:
    inj = define_memory(id="mem", store=InMemoryMemoryStore(), recall=1000)
    written: list[tuple[tuple[str | None, str | None], str]] = []  # (who, entry id) in write order
    for n, (who, write) in enumerate(steps):
        run_id = f"run-{n}"
        ctx = InjectionContext(user_message="q", iteration=1, identity=who, run_id=run_id)
        rendered = inj.render_record(ctx)
        recalled = [] if rendered is None else rendered[1]["entry_ids"]
        anonymous = who.tenant is None and who.principal is None
        expected = [] if anonymous else [eid for owner, eid in written if owner == (who.tenant, who.principal)]
        assert recalled == expected
        if write:
            asyncio.run(inj.remember(who, run_id, f"note {n}", ""))
            if not anonymous:
                written.append(((who.tenant, who.principal), f"{run_id}:user"))


@settings(max_examples=25, deadline=None)
@given(a=identities, b=identities)
def test_property_agent_memory_never_crosses_identities(a: Identity, b: Identity) -> None:
    store = InMemoryMemoryStore()
    agent, provider = memory_agent(store)
    secret = "SECRET-" + "-".join(str(x) for x in (a.tenant, a.principal))
    agent.run_sync(f"remember {secret}", identity=a)
    agent.run_sync("what do you remember?", identity=b)
    seen_by_b = provider.requests[-1].system_prompt
    anonymous = a.tenant is None and a.principal is None  # a run without identity has its own namespace
    same = (a.tenant, a.principal) == (b.tenant, b.principal) and not anonymous
    assert (secret in seen_by_b) == same


async def test_members_of_a_composition_remember_under_the_outermost_identity() -> None:
    from agentfootprint import Sequence

    store = InMemoryMemoryStore()
    member, provider = memory_agent(store)
    seq = Sequence.create().step("remembering", member).build()
    alice = {"tenant": "acme", "principal": "alice"}
    await seq.run("My order number is A-77.", identity=alice)
    await seq.run("What was my order number?", identity=alice)
    assert "A-77" in provider.requests[-1].system_prompt
    await seq.run("And mine?", identity={"tenant": "acme", "principal": "bob"})
    assert "A-77" not in provider.requests[-1].system_prompt  # never across identities
