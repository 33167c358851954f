"""Rerun plumbing: the response cache for identical seeded requests, the replaying provider, and memory as it stood
for the recorded run."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_instruction, define_tool
from agentfootprint.context import InMemoryMemoryStore, define_memory
from agentfootprint.context.memory import MemoryEntry, MemoryNamespace
from agentfootprint.explain import localize_context_bug
from agentfootprint.explain._replay import (
    RecordedMemoryView,
    ReplayCache,
    ReplayingProvider,
    RerunWorld,
    is_deterministic_for_seed,
    request_key,
    rerun_agent,
)
from agentfootprint.explain.localize import rerun_answer
from agentfootprint.providers import LLMRequest, LLMResponse, Message, mock


def request(seed: int | None = 1, text: str = "hi") -> LLMRequest:
    return LLMRequest(messages=[Message(role="user", content=text)], seed=seed)


class Counting:
    """A provider that answers ``answer-<n>`` for its n-th call; optionally fails or waits first."""

    def __init__(self, *, deterministic: Any = True, name: str = "counting", fail: int = 0) -> None:
        self.deterministic_for_seed = deterministic
        self.name = name
        self.calls = 0
        self.fail = fail
        self.gate: asyncio.Event | None = None

    async def complete(self, req: LLMRequest) -> LLMResponse:
        self.calls += 1
        n = self.calls
        if self.gate is not None:
            await self.gate.wait()
        if n <= self.fail:
            raise RuntimeError("down")
        return LLMResponse(content=f"answer-{n}")


@pytest.mark.parametrize(("flag", "expected"), [(True, True), (1, False), ("yes", False), (False, False)])
def test_only_a_literal_true_declares_a_deterministic_provider(flag: Any, expected: bool) -> None:
    assert is_deterministic_for_seed(Counting(deterministic=flag)) is expected
    assert is_deterministic_for_seed(object()) is False


def test_the_request_key_is_a_digest_of_the_provider_and_the_whole_request() -> None:
    req = request()
    expected = hashlib.sha256(b"p\0" + req.model_dump_json().encode()).hexdigest()
    assert request_key("p", req) == expected
    assert request_key("p", request()) == expected
    assert request_key("q", req) != expected
    assert request_key("p", request(seed=2)) != expected
    assert request_key("p", request(text="ho")) != expected


async def test_an_identical_seeded_request_to_a_deterministic_provider_is_answered_once() -> None:
    cache, provider = ReplayCache(), Counting()
    first = await cache.complete(provider, request())
    first.content = "changed by the caller"
    again = await cache.complete(provider, request())
    assert (again.content, provider.calls, cache.saved) == ("answer-1", 1, 1)
    other = await cache.complete(provider, request(seed=2))
    assert (other.content, provider.calls, cache.saved) == ("answer-2", 2, 1)
    other_name = await cache.complete(Counting(name="else"), request())
    assert other_name.content == "answer-1" and cache.saved == 1


@pytest.mark.parametrize(("deterministic", "seed"), [(False, 1), (True, None)])
async def test_unseeded_or_nondeterministic_requests_always_reach_the_model(deterministic: bool, seed: Any) -> None:
    cache, provider = ReplayCache(), Counting(deterministic=deterministic)
    answers = [(await cache.complete(provider, request(seed=seed))).content for _ in range(3)]
    assert answers == ["answer-1", "answer-2", "answer-3"] and cache.saved == 0


async def test_concurrent_identical_requests_share_the_one_in_flight() -> None:
    cache, provider = ReplayCache(), Counting()
    provider.gate = asyncio.Event()
    tasks = [asyncio.ensure_future(cache.complete(provider, request())) for _ in range(3)]
    await asyncio.sleep(0)
    provider.gate.set()
    answers = await asyncio.gather(*tasks)
    assert [a.content for a in answers] == ["answer-1"] * 3
    assert (provider.calls, cache.saved) == (1, 2)
    assert len({id(a) for a in answers}) == 3  # every caller gets its own copy


async def test_when_the_first_caller_fails_the_next_asks_the_model_itself() -> None:
    cache, provider = ReplayCache(), Counting(fail=1)
    provider.gate = asyncio.Event()
    first = asyncio.ensure_future(cache.complete(provider, request()))
    second = asyncio.ensure_future(cache.complete(provider, request()))
    await asyncio.sleep(0)
    provider.gate.set()
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert isinstance(results[0], RuntimeError) and str(results[0]) == "down"
    assert isinstance(results[1], LLMResponse) and results[1].content == "answer-2"
    assert (provider.calls, cache.saved) == (2, 0)
    third = await cache.complete(provider, request())
    assert third.content == "answer-2" and cache.saved == 1  # the success is cached


async def test_a_failed_call_is_not_cached() -> None:
    cache, provider = ReplayCache(), Counting(fail=1)
    with pytest.raises(RuntimeError):
        await cache.complete(provider, request())
    assert (await cache.complete(provider, request())).content == "answer-2"
    assert cache.saved == 0


async def test_a_cancelled_call_is_forgotten_and_its_waiters_ask_again() -> None:
    cache, provider = ReplayCache(), Counting()
    provider.gate = asyncio.Event()
    first = asyncio.ensure_future(cache.complete(provider, request()))
    await asyncio.sleep(0)
    waiter = asyncio.ensure_future(cache.complete(provider, request()))
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0)
    provider.gate.set()
    answer = await waiter
    assert first.cancelled() and answer.content == "answer-2" and cache.saved == 0


async def test_a_waiter_cancelled_with_the_first_caller_stays_cancelled() -> None:
    cache, provider = ReplayCache(), Counting()
    provider.gate = asyncio.Event()
    first = asyncio.ensure_future(cache.complete(provider, request()))
    await asyncio.sleep(0)
    waiter = asyncio.ensure_future(cache.complete(provider, request()))
    await asyncio.sleep(0)
    first.cancel()
    waiter.cancel()
    provider.gate.set()
    results = await asyncio.gather(first, waiter, return_exceptions=True)
    assert [type(r) for r in results] == [asyncio.CancelledError, asyncio.CancelledError]
    assert (provider.calls, cache.saved) == (1, 0)  # only the first caller reached the model


async def test_no_caller_can_change_what_another_is_answered() -> None:
    class Calling(Counting):
        async def complete(self, req: LLMRequest) -> LLMResponse:
            self.calls += 1
            return LLMResponse(tool_calls=[{"id": "c1", "name": "look", "args": {"at": "left"}}])

    cache, provider = ReplayCache(), Calling()
    first = await cache.complete(provider, request())
    first.tool_calls[0].args["at"] = "changed by the first caller"
    second = await cache.complete(provider, request())
    second.tool_calls[0].args["at"] = "changed by the second caller"
    third = await cache.complete(provider, request())
    assert third.tool_calls[0].args == {"at": "left"} and (provider.calls, cache.saved) == (1, 2)


async def test_the_replaying_provider_wraps_name_flag_complete_and_stream() -> None:
    inner = Counting(name="inner")
    cache = ReplayCache()
    replaying = ReplayingProvider(inner, cache)
    assert (replaying.name, replaying.deterministic_for_seed) == ("inner", True)
    assert (await replaying.complete(request())).content == "answer-1"
    chunks = [c async for c in replaying.stream(request())]
    assert [c.kind for c in chunks] == ["text", "done"] and chunks[0].text == "answer-1"
    assert inner.calls == 1 and cache.saved == 1

    class Bare:
        async def complete(self, req: LLMRequest) -> LLMResponse:
            return LLMResponse(content="x")

    bare = ReplayingProvider(Bare(), cache)
    assert (bare.name, bare.deterministic_for_seed) == ("provider", False)


def entry(eid: str, run_id: str, at: float) -> MemoryEntry:
    return MemoryEntry(id=eid, role="user", content=eid, run_id=run_id, created_at=at)


def test_the_recorded_memory_view_hides_the_runs_own_and_later_writes_and_ablated_entries() -> None:
    store = InMemoryMemoryStore()
    ns = MemoryNamespace("mem", "t", "p", "c")
    store.append(ns, [entry("a", "r0", 1.0), entry("b", "r0", 2.0), entry("own", "r1", 3.0), entry("c", "r0", 4.0)])
    store.append(ns, [entry("late", "r2", 9.0)])
    view = RecordedMemoryView(store, "r1", 5.0, frozenset({"b"}))
    assert [e.id for e in view.load(ns)] == ["a"]  # c was stored at 4.0, after the recorded run stored its own
    assert [e.id for e in view.load(ns, last=2)] == ["a"]  # the last two visible are a and b; b is ablated
    assert view.load(ns, last=1) == [] and view.load(ns, last=0) == [] and view.load(ns, last=-1) == []
    elsewhere = RecordedMemoryView(store, "r9", 5.0, frozenset({"b"}))  # a run that stored nothing here
    assert [e.id for e in elsewhere.load(ns)] == ["a", "own", "c"]
    assert [e.id for e in elsewhere.load(ns, last=2)] == ["own", "c"]
    assert [e.id for e in RecordedMemoryView(store, "r1", 2.0, frozenset()).load(ns)] == ["a", "b"]  # cutoff first
    assert [e.id for e in RecordedMemoryView(store, None, 4.0, frozenset()).load(ns)] == ["a", "b", "own", "c"]
    assert [e.id for e in RecordedMemoryView(store, None, 3.0, frozenset()).load(ns)] == ["a", "b", "own"]
    assert view.append(ns, [entry("new", "r3", 0.0)]) is None and view.clear(ns) == 0
    assert [e.id for e in store.load(ns)] == ["a", "b", "own", "c", "late"]  # nothing written, nothing cleared


async def test_a_rerun_agent_replays_and_reads_memory_as_recorded() -> None:
    store = InMemoryMemoryStore()
    agent = (
        Agent.create(provider=mock(reply="ok"), model="m")
        .fact(define_fact(id="f", data="x"))
        .memory(define_memory(id="mem", store=store))
        .build()
    )
    world = RerunWorld(ReplayCache(), "r1", cutoff=10.0)
    clone = rerun_agent(agent, ["f"], world)
    assert isinstance(clone.config.provider, ReplayingProvider)
    assert set(clone.source_ids()) == {"mem"}
    (memory,) = [i for i in clone.config.injections if i.id == "mem"]
    view = memory.store
    assert isinstance(view, RecordedMemoryView)
    assert (view._run_id, view._cutoff, view._hidden, view._inner) == ("r1", 10.0, frozenset({"f"}), store)

    class Composition:
        def without(self, *ids: str) -> str:
            return f"without {ids}"

    assert rerun_agent(Composition(), ["x"], world) == "without ('x',)"


def late_instruction_agent() -> tuple[Any, Any]:
    """An agent whose instruction 'cite' joins only after its search tool returns, and its recording mock."""
    provider = mock(
        respond=lambda req: (
            {"tool_calls": [{"id": "s1", "name": "search", "args": {}}]}
            if req.messages[-1].role != "tool"
            else ("Cited answer." if "Cite" in req.system_prompt else "Plain answer.")
        )
    )
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(define_tool(name="search", description="s", input_schema={"type": "object"}, execute=lambda a, c: "d"))
        .instruction(define_instruction(id="cite", prompt="Cite the document.", on_tool_return="search"))
        .build()
    )
    return agent, provider


async def test_reruns_reuse_an_identical_first_call_and_report_the_saving() -> None:
    """Ablating an instruction that only joins after the tool returns leaves the first call identical: its answer
    is reused for both seeds (12 calls asked, 2 answered from the cache), and the report counts it."""
    agent, _ = late_instruction_agent()
    await agent.run("question")
    report = await localize_context_bug(agent, samples=2, search="single", progress=False, max_samples=None)
    cite = report.suspect("cite")
    assert cite is not None and cite.verdict == "confirmed"
    assert (report.reruns, report.model_calls, report.model_calls_saved) == (6, 10, 2)


async def test_a_rerun_does_not_see_what_another_agent_stored_after_the_recorded_run() -> None:
    store = InMemoryMemoryStore()

    def respond(req: LLMRequest) -> str:
        return "seen before" if "lucky number" in req.system_prompt else "new to me"

    def build() -> Any:
        return Agent.create(provider=mock(respond=respond), model="m").memory(define_memory(id="mem", store=store))

    identity = {"tenant": "t", "principal": "p", "conversation_id": "c"}
    recorded = build().build()
    assert (await recorded.run("hello", identity=identity)).answer == "new to me"
    assert (await build().build().run("My lucky number is 7.", identity=identity)).answer == "new to me"
    assert await rerun_answer(recorded, 0) == "new to me"
