"""Every source kind is ablatable on its own: memory entries, retrieved chunks, one tool result per call; the
built-in read_skill is reported as not ablatable, never silently dropped."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, UnknownSourceError, define_fact, define_skill, define_tool
from agentfootprint._flagship import approved_flipped
from agentfootprint.context import InMemoryMemoryStore, MemoryEntry, define_memory, define_rag
from agentfootprint.context.memory import memory_namespace
from agentfootprint.explain import backtrack, localize_context_bug
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

APPROVED, DECLINED = "Refund APPROVED.", "Refund DECLINED."
WHO = Identity(principal="ops")


def seen(req: LLMRequest) -> str:
    return req.system_prompt + "\n" + "\n".join(m.content for m in req.messages)


def marker_model(marker: str) -> Any:
    return lambda req: APPROVED if marker in seen(req) else DECLINED


class PlantedStore(InMemoryMemoryStore):
    """A store holding planted entries; the runs' own turns are not written back."""

    def plant(self, entries: list[MemoryEntry]) -> None:
        super().append(memory_namespace("history", WHO, "seed"), entries)

    def append(self, namespace: Any, entries: Any) -> None:
        return None


async def memory_agent() -> Agent:
    store = PlantedStore()
    store.plant(
        [
            MemoryEntry(id="t1:user", role="user", content="My order is late.", run_id="t1", created_at=1.0),
            MemoryEntry(
                id="t2:user", role="user", content="Manager said code zq-9 applies.", run_id="t2", created_at=2.0
            ),
            MemoryEntry(id="t3:user", role="user", content="Thanks.", run_id="t3", created_at=3.0),
        ]
    )
    agent = (
        Agent.create(provider=mock(respond=marker_model("zq-9")), model="m")
        .fact(define_fact(id="tone", data="Be polite."))
        .memory(define_memory(id="history", store=store, recall=3))
        .build()
    )
    await agent.run("Refund?", identity=WHO)
    return agent


async def test_a_memory_entry_is_a_source_and_a_culprit_of_its_own() -> None:
    agent = await memory_agent()
    bt = backtrack(agent)
    entries = [(s.kind, s.id, s.parent, s.text) for s in bt.sources if s.parent == "history"]
    assert entries == [
        ("memory", "t1:user", "history", "User: My order is late."),
        ("memory", "t2:user", "history", "User: Manager said code zq-9 applies."),
        ("memory", "t3:user", "history", "User: Thanks."),
    ]
    born = bt.source("t2:user").hops[-1]  # type: ignore[union-attr]
    assert born.kind == "born" and born.detail == "turn entry t2:user, recalled by define_memory('history') (#2)"
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, max_suspects=None, progress=False, max_samples=None
    )
    assert sorted(s.id for s in report.suspects) == ["t1:user", "t2:user", "t3:user", "tone"]  # not 'history'
    assert [(c.ids, c.kinds, c.verdict) for c in report.confirmed_sets] == [(("t2:user",), ("memory",), "confirmed")]
    assert report.honesty_flags == []


async def test_without_an_entry_id_leaves_that_entry_out_of_the_recall() -> None:
    agent = await memory_agent()
    clone = agent.without("t2:user")
    result = await clone.run("Refund?", identity=WHO)
    assert result.answer == DECLINED
    assert [s.id for s in backtrack(clone).sources if s.parent == "history"] == ["t1:user", "t3:user"]
    assert agent.ablatable_ids()["t2:user"] == "memory"


async def test_a_retrieved_chunk_is_localized_by_its_chunk_id() -> None:
    docs = [{"id": f"doc-{i}", "text": f"refund policy note {i}"} for i in range(4)]
    docs[2]["text"] = "refund policy note: exception zq-5 grants refunds"
    agent = (
        Agent.create(provider=mock(respond=marker_model("zq-5")), model="m")
        .rag(define_rag(id="kb", documents=docs, k=4))
        .fact(define_fact(id="tone", data="Be polite."))
        .build()
    )
    await agent.run("refund policy?")
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, max_suspects=None, progress=False, max_samples=None
    )
    assert "kb" not in {s.id for s in report.suspects}  # ablated through its chunks, not as a whole
    assert {s.id for s in report.suspects} == {"doc-0", "doc-1", "doc-2", "doc-3", "tone"}
    assert [(c.ids, c.kinds) for c in report.confirmed_sets] == [(("doc-2",), ("rag",))]


def two_lookups(req: LLMRequest) -> Any:
    results = [m for m in req.messages if m.role == "tool"]
    if len(results) < 3:
        return {"tool_calls": [{"id": "c1", "name": "lookup", "args": {"n": len(results) + 1}}]}
    return APPROVED if "zq-1" in seen(req) else DECLINED


def lookup_tool(planted: int = 2) -> Any:
    def run(args: dict[str, Any], ctx: Any) -> str:
        n = args["n"]
        return f"record {n}" + (" with exception zq-1" if n == planted else "")

    return define_tool(name="lookup", description="Look up.", input_schema={"type": "object"}, execute=run)


def lookup_agent(planted: int = 2) -> Agent:
    return Agent.create(provider=mock(respond=two_lookups), model="m").tool(lookup_tool(planted)).build()


async def test_one_tool_result_is_ablatable_per_call() -> None:
    agent = lookup_agent()
    await agent.run("Refund?")
    trails = [(s.id, s.result_id, s.text) for s in backtrack(agent).sources if s.kind == "tool" and s.result_id]
    assert trails == [
        ("lookup", "lookup#1", "record 1"),
        ("lookup", "lookup#2", "record 2 with exception zq-1"),
        ("lookup", "lookup#3", "record 3"),
    ]
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, max_suspects=None, progress=False, max_samples=None
    )
    verdicts = {s.id: s.verdict for s in report.suspects}
    assert verdicts == {
        "lookup": "confirmed",
        "lookup#1": "not-confirmed",
        "lookup#2": "confirmed",
        "lookup#3": "not-confirmed",
    }
    assert sorted(c.ids for c in report.confirmed_sets) == [("lookup",), ("lookup#2",)]


async def test_without_a_result_id_blanks_that_call_only_and_records_it() -> None:
    agent = lookup_agent()
    await agent.run("Refund?")
    clone = agent.without("lookup#2")
    result = await clone.run("Refund?")
    assert result.answer == DECLINED
    records = clone.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [(r["content"], r.get("ablated", False)) for r in records] == [
        ("record 1", False),
        ("", True),
        ("record 3", False),
    ]


@pytest.mark.parametrize(
    "bad", ["lookup#0", "lookup#", "lookup#-1", "lookup#02", "lookup#1e3", "lookup#\u0663", "nope#1"]
)
def test_a_malformed_result_id_is_refused(bad: str) -> None:
    agent = lookup_agent()
    with pytest.raises(UnknownSourceError) as err:
        agent.without(bad)
    assert err.value.code == "ERR_UNKNOWN_SOURCE" and str(err.value).startswith("agent has no context source")


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=1, max_value=3))
def test_result_n_is_exactly_the_nth_call(n: int) -> None:
    import asyncio

    async def go() -> list[str]:
        clone = lookup_agent(planted=0).without(f"lookup#{n}")
        await clone.run("Refund?")
        return [r["content"] for r in clone.last_snapshot().state["tool_results"]]  # type: ignore[union-attr]

    contents = asyncio.run(go())
    assert contents == ["" if i == n else f"record {i}" for i in (1, 2, 3)]


async def test_read_skill_is_reported_not_ablatable_never_dropped_silently() -> None:
    def model(req: LLMRequest) -> Any:
        if not any(m.role == "tool" for m in req.messages):
            return {"tool_calls": [{"id": "r1", "name": "read_skill", "args": {"id": "refunds"}}]}
        return APPROVED if "zq-3" in seen(req) else DECLINED

    agent = (
        Agent.create(provider=mock(respond=model), model="m")
        .skill(define_skill(id="refunds", description="Refund know-how.", body="Exception zq-3 applies."))
        .build()
    )
    await agent.run("Refund?")
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, max_suspects=None, progress=False, max_samples=None
    )
    assert report.not_ablatable == ["read_skill"]
    assert "read-skill-not-ablated" in report.honesty_flags
    assert "not ablatable (reached the call, no rerun removes them): read_skill" in str(report)
    assert [c.ids for c in report.confirmed_sets] == [("refunds",)]
    with pytest.raises(UnknownSourceError):
        agent.without("read_skill#1")


async def test_a_redundant_pair_across_kinds_is_one_culprit_set_among_twenty_sources() -> None:
    """A memory entry and a retrieved chunk, each enough to mislead, among facts, entries and chunks."""
    store = PlantedStore()
    store.plant(
        [
            MemoryEntry(id=f"t{i}:user", role="user", content=text, run_id=f"t{i}", created_at=float(i))
            for i, text in enumerate([*(f"note {i}" for i in range(5)), "exception zq-7 on file"])
        ]
    )
    docs = [{"id": f"doc-{i}", "text": f"policy paragraph {i}"} for i in range(8)]
    docs[6]["text"] = "policy paragraph: exception zq-7 grants refunds"
    builder = (
        Agent.create(provider=mock(respond=marker_model("zq-7")), model="m")
        .memory(define_memory(id="history", store=store, recall=6))
        .rag(define_rag(id="kb", documents=docs, k=8))
    )
    for i in range(6):
        builder = builder.fact(define_fact(id=f"fact-{i}", data=f"Fact number {i}."))
    agent = builder.build()
    await agent.run("policy paragraph?", identity=WHO)
    report = await localize_context_bug(
        agent, outcome_changed=approved_flipped, max_suspects=None, search="group", progress=False, max_samples=None
    )
    assert report.sources_considered == 20
    # the single-source arms that ran are the restore checks: each member alone changes nothing
    assert sorted((s.id, s.verdict) for s in report.suspects) == [
        ("doc-6", "not-confirmed"),
        ("t5:user", "not-confirmed"),
    ]
    assert [(c.ids, c.kinds, c.minimal) for c in report.confirmed_sets] == [
        (("doc-6", "t5:user"), ("rag", "memory"), True)
    ]
    assert report.reruns < 3 * 21  # fewer than one-at-a-time over all twenty
