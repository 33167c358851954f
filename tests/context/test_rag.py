"""RAG: the BM25 index, retriever callables, and chunk ids recorded where backtrack can name them."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.context import BM25Index, Chunk, InvalidInjectionError, define_fact, define_rag
from agentfootprint.explain import backtrack
from agentfootprint.providers import mock

from ._support import committed_values, records_per_call

DOCS = [
    {"id": "policy-refunds", "text": "Refunds are accepted within 30 days of purchase with a receipt."},
    {"id": "policy-shipping", "text": "Shipping takes 3 to 5 business days; express shipping is next day."},
    {"id": "policy-warranty", "text": "Electronics carry a one year warranty against defects."},
]


def test_bm25_ranks_the_relevant_document_first_and_skips_non_matches() -> None:
    index = BM25Index(DOCS)
    found = index.search("how many days for refunds?", k=3)
    assert found[0].id == "policy-refunds"
    assert all(c.score > 0 for c in found)
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    assert index.search("zebra quantum", k=3) == []
    assert [c.id for c in BM25Index(["alpha beta", "beta gamma"]).search("gamma")] == ["doc-1"]


def test_bm25_refuses_duplicate_ids_and_define_rag_validates() -> None:
    with pytest.raises(InvalidInjectionError, match="dup"):
        BM25Index([{"id": "dup", "text": "a"}, {"id": "dup", "text": "b"}])
    with pytest.raises(InvalidInjectionError):
        define_rag(id="r")
    with pytest.raises(InvalidInjectionError):
        define_rag(id="r", documents=DOCS, retriever=lambda q: [])
    with pytest.raises(InvalidInjectionError):
        define_rag(id="r", documents=DOCS, k=0)
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).rag(define_fact(id="f", data="d"))  # type: ignore[arg-type]


async def test_retrieved_chunks_land_as_a_rag_record_with_their_ids() -> None:
    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m").system("base").rag(define_rag(id="kb", documents=DOCS, k=2)).build()
    )
    await agent.run("What is the refunds window in days?")
    prompt = provider.requests[0].system_prompt
    assert "[policy-refunds] Refunds are accepted within 30 days" in prompt
    record = records_per_call(agent, "system_prompt_injections")[0][-1]
    assert record["source"] == "rag" and record["source_id"] == "kb" and record["trigger"] == "always"
    assert record["chunk_ids"][0] == "policy-refunds"
    assert len(record["chunk_ids"]) <= 2 and len(record["chunk_scores"]) == len(record["chunk_ids"])
    trail = backtrack(agent).source("kb")
    assert trail is not None and trail.kind == "rag" and "[policy-refunds]" in trail.text


async def test_retriever_callable_in_messages_slot_and_empty_retrieval_lands_nothing() -> None:
    seen: list[str] = []

    def retriever(query: str) -> list[Any]:
        seen.append(query)
        if "nothing" in query:
            return []
        return [Chunk(id="c-9", text="Chunk nine.", score=0.9), {"id": "c-3", "text": "Chunk three."}, "plain"]

    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .rag(define_rag(id="search", retriever=retriever, k=2, slot="messages"))
        .build()
    )
    await agent.run("find it")
    assert seen == ["find it"]
    first = provider.requests[0].messages[0]
    assert first.role == "user" and "[c-9] Chunk nine." in first.content and "plain" not in first.content
    assert records_per_call(agent, "message_injections")[0][0]["chunk_ids"] == ["c-9", "c-3"]
    await agent.run("nothing here")
    assert [m.content for m in provider.requests[-1].messages] == ["nothing here"]
    summary = committed_values(agent, "context_evaluated")[-1]
    assert "search" not in summary["active_ids"]


async def test_a_failing_or_async_retriever_is_recorded_and_the_run_continues() -> None:
    async def async_retriever(query: str) -> list[Chunk]:
        return []

    def broken(query: str) -> list[Chunk]:
        raise RuntimeError("index offline")

    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .rag(define_rag(id="slow", retriever=async_retriever))  # type: ignore[arg-type]
        .rag(define_rag(id="broken", retriever=broken))
        .build()
    )
    result = await agent.run("q")
    assert result.answer == "ok"
    errors = {e["source_id"]: e["error"] for e in committed_values(agent, "context_evaluated")[-1]["errors"]}
    assert "synchronous" in errors["slow"]
    assert "index offline" in errors["broken"]
