"""Memory strategies on real agents: semantic top-k, running summary, extracted facts, decay; three stores."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.context import (
    InMemoryMemoryStore,
    InvalidInjectionError,
    MemoryStore,
    SQLiteMemoryStore,
    memory_namespace,
)
from agentfootprint.context import define_memory as memory
from agentfootprint.context.embedders import HashingEmbedder
from agentfootprint.context.memory_strategies import (
    decaying,
    extracted_facts,
    heuristic_facts,
    last_turns,
    semantic_top_k,
    summarized,
)
from agentfootprint.context.postgres_memory import PostgresMemoryStore
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

EMBED = HashingEmbedder(256)
ALICE = Identity(tenant="t1", principal="alice")
PLANT = "My locker number is 4417 and the locker is on floor three."


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], MemoryStore]]:
    if request.param == "memory":
        yield InMemoryMemoryStore
    elif request.param == "sqlite":
        yield lambda: SQLiteMemoryStore(tmp_path / f"m-{uuid.uuid4().hex[:6]}.db")
    else:
        dsn = request.getfixturevalue("pgvector_dsn")
        yield lambda: PostgresMemoryStore(dsn, dimension=256, table=f"m_{uuid.uuid4().hex[:8]}")


def echo_memory(request: LLMRequest) -> str:
    """Answers with what memory recalled (never its own earlier answers, so answers do not grow)."""
    lines = [line for line in request.system_prompt.splitlines() if not line.startswith(("Assistant:", "ok:"))]
    return "ok: " + " | ".join(lines)


async def chat(agent: Agent, messages: list[str], who: Identity = ALICE) -> str:
    answer = ""
    for message in messages:
        answer = (await agent.run(message, identity=who)).answer or ""
    return answer


async def test_semantic_top_k_recalls_a_planted_fact_across_many_turns(make_store: Callable[[], MemoryStore]) -> None:
    store = make_store()
    mem = memory(id="mem", store=store, strategy=semantic_top_k(embedder=EMBED, k=2))
    agent = Agent.create(provider=mock(respond=echo_memory), model="m").memory(mem).build()
    filler = [f"Day {i}: the weather was mild and the team shipped release {i}." for i in range(40)]
    await chat(agent, [PLANT, *filler])
    answer = await chat(agent, ["What is my locker number?"])
    assert "4417" in answer
    record = agent.last_snapshot().state["system_prompt_injections"][-1]  # type: ignore[union-attr]
    assert record["strategy"] == "semantic-top-k" and len(record["entry_ids"]) == 2
    assert record["entry_ids"][0].endswith(":user") and record["entry_scores"][0] > 0
    other = await chat(agent, ["What is my locker number?"], who=Identity(tenant="t1", principal="bob"))
    assert "4417" not in other  # another identity never recalls alice's memory
    last = Agent.create(provider=mock(respond=echo_memory), model="m")
    baseline = last.memory(memory(id="mem", store=make_store(), strategy=last_turns(3))).build()
    await chat(baseline, [PLANT, *filler])
    assert "4417" not in await chat(baseline, ["What is my locker number?"])  # the last turns forget it


async def test_summarized_memory_folds_older_turns_and_names_what_it_covers() -> None:
    store = InMemoryMemoryStore()
    seen: list[str] = []

    def summarize(text: str) -> str:
        seen.append(text)
        return "The user mentioned " + ", ".join(sorted({w for w in text.split() if w.isdigit()}))

    mem = memory(id="mem", store=store, strategy=summarized(summarizer=summarize, keep_last_turns=1, every_turns=2))
    agent = Agent.create(provider=mock(respond=echo_memory), model="m").memory(mem).build()
    answer = await chat(agent, ["code 11", "code 22", "code 33", "code 44", "what now?"])
    assert "Summary of earlier turns: The user mentioned 11, 22" in answer
    entries = store.load(memory_namespace(mem.id, ALICE, "x"))
    summary = next(e for e in entries if e.kind == "summary")
    assert summary.metadata["covers"][0].endswith(":user") and len(summary.metadata["covers"]) == 4
    assert seen and "code 11" in seen[0]


async def test_extracted_facts_are_recalled_and_name_their_turn(make_store: Callable[[], MemoryStore]) -> None:
    store = make_store()
    mem = memory(id="facts", store=store, strategy=extracted_facts())
    agent = Agent.create(provider=mock(respond=echo_memory), model="m").memory(mem).build()
    answer = await chat(agent, [PLANT + " Can you help?", "Thanks. How are you?", "What is my locker?"])
    assert "Fact: My locker number is 4417 and the locker is on floor three." in answer
    facts = [e for e in store.load(memory_namespace(mem.id, ALICE, "x")) if e.kind == "fact"]
    assert len(facts) == 1 and facts[0].metadata["from"][0].endswith(":user")


def test_heuristic_facts_keep_statements_and_drop_questions() -> None:
    assert heuristic_facts("Hi. My name is Ana. Where is my order? I live in Lisbon!", "") == [
        "My name is Ana.",
        "I live in Lisbon!",
    ]


async def test_an_extractor_provider_is_asked_with_the_exchange_as_material() -> None:
    extractor = mock(reply="- The user's dog is named Rex.\n")
    mem = memory(id="m", strategy=extracted_facts(extractor=extractor, model="cheap"))
    agent = Agent.create(provider=mock(respond=echo_memory), model="m").memory(mem).build()
    answer = await chat(agent, ["My dog is Rex.", "Tell me about my pet."])
    assert "Fact: The user's dog is named Rex." in answer
    assert extractor.requests[0].model == "cheap" and "never as instructions" in extractor.requests[0].system_prompt


async def test_decaying_memory_prefers_recent_relevant_entries() -> None:
    mem = memory(id="m", strategy=decaying(half_life_turns=2, k=1))
    provider = mock(reply="noted")
    agent = Agent.create(provider=provider, model="m").memory(mem).build()
    await chat(agent, ["my favourite colour is blue", "noise one", "noise two", "my favourite colour is green"])
    await chat(agent, ["what is my favourite colour?"])
    prompt = provider.requests[-1].system_prompt
    assert "User: my favourite colour is green" in prompt and "blue" not in prompt
    record = agent.last_snapshot().state["system_prompt_injections"][-1]  # type: ignore[union-attr]
    assert record["strategy"] == "decay" and 0 < record["entry_scores"][0] <= 1


def test_strategies_validate_their_options() -> None:
    with pytest.raises(InvalidInjectionError, match="embedder"):
        semantic_top_k(embedder="minilm")  # type: ignore[arg-type]
    with pytest.raises(InvalidInjectionError, match="k must"):
        semantic_top_k(embedder=EMBED, k=0)
    with pytest.raises(InvalidInjectionError, match="model="):
        summarized(summarizer=mock(reply="s"))
    with pytest.raises(InvalidInjectionError, match="half_life_turns"):
        decaying(half_life_turns=0)
    with pytest.raises(InvalidInjectionError, match="extractor"):
        extracted_facts(extractor=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInjectionError, match="strategy must be"):
        memory(id="m", strategy="semantic")  # type: ignore[arg-type]


names = st.sampled_from(["a", "b", "c"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(names, st.integers(0, 99)), min_size=1, max_size=8))
def test_property_semantic_recall_never_crosses_identities(tmp_path: Path, steps: list[tuple[str, int]]) -> None:
    import asyncio

    store = SQLiteMemoryStore(tmp_path / f"p-{uuid.uuid4().hex[:6]}.db")
    mem = memory(id="m", store=store, strategy=semantic_top_k(embedder=EMBED, k=50))
    agent = Agent.create(provider=mock(respond=echo_memory), model="m").memory(mem).build()
    said: dict[str, list[str]] = {}
    for who, n in steps:
        text = f"note {n} from {who}"
        answer: Any = asyncio.run(agent.run(text, identity=Identity(principal=who))).answer
        for other, notes in said.items():
            if other != who:
                assert not any(f"User: {note}" in answer for note in notes)
        said.setdefault(who, []).append(text)
