"""LLMCall (R000-16): one model call with no tools, through the same run-input door as an Agent, recorded like an
Agent turn (snapshot, narrative, events, backtrack), and composable in Sequence and Parallel."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import (
    Agent,
    InvalidRunInputError,
    LLMCall,
    Parallel,
    Sequence,
    define_fact,
    define_skill,
    define_tool,
)
from agentfootprint.agent import AgentBuildError, LLMCallBuildError
from agentfootprint.events import AgentEvent
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, mock

noop = define_tool(name="noop", description="d", input_schema={"type": "object"}, execute=lambda a, c: "x")


def summarizer(provider: Any) -> LLMCall:
    return (
        LLMCall.create(provider=provider, model="m")
        .system("Summarize in one line.")
        .fact(define_fact(id="style-fact", data="Write in plain words."))
        .build()
    )


async def test_R000_16_one_call_no_tools_the_answer_is_the_reply() -> None:
    provider = mock(reply="A short summary.")
    call = summarizer(provider)
    result = await call.run("Long text to summarize")
    assert result.status == "completed" and result.answer == "A short summary."
    assert provider.calls == 1
    request = provider.requests[0]
    assert request.tools == [] and [m.role for m in request.messages] == ["user"]
    assert request.system_prompt == "Summarize in one line.\n\nWrite in plain words."
    assert call.stopped_early() is None and repr(call) == "<LLMCall 'llm-call' model='m'>"


async def test_R000_16_a_reply_asking_for_tools_runs_nothing_and_is_one_call() -> None:
    provider = mock(replies=[{"content": "done", "tool_calls": [{"id": "1", "name": "noop", "args": {}}]}])
    call = summarizer(provider)
    result = await call.run("go")
    assert provider.calls == 1 and result.answer == "done"
    stopped = call.stopped_early()
    assert stopped is not None and stopped.pending_tool_calls == 1 and not stopped.wrapped_up


@pytest.mark.parametrize(
    ("bad", "received"),
    [
        ({}, "object with no keys"),
        ({"text": "hi"}, "object with keys: text"),
        ("", "empty string"),
        ("   ", "empty string"),
        (None, "None"),
        (42, "int"),
        ({"message": 4242}, "object with keys: message"),
    ],
)
async def test_R000_16_the_same_door_refuses_naming_llm_call_run(bad: Any, received: str) -> None:
    provider = mock(reply="never")
    call = summarizer(provider)
    events: list[AgentEvent] = []
    call.on("*", events.append)
    with pytest.raises(InvalidRunInputError) as info:
        await call.run(bad)
    err = info.value
    assert err.code == "ERR_INVALID_RUN_INPUT" and err.runner == "LLMCall.run" and err.received == received
    assert "4242" not in str(err)
    assert provider.calls == 0 and events == [] and call.last_snapshot() is None


async def test_R000_16_follow_up_and_run_typed_doors_name_llm_call() -> None:
    call = summarizer(mock(reply="x"))
    with pytest.raises(InvalidRunInputError) as info:
        await call.follow_up("")
    assert info.value.runner == "LLMCall.follow_up"
    with pytest.raises(InvalidRunInputError) as typed:
        await call.run_typed({})
    assert typed.value.runner == "LLMCall.run_typed"


async def test_R000_16_recorded_like_an_agent_turn_events_snapshot_narrative_backtrack() -> None:
    provider = mock(reply="A short summary.")
    call, agent = (
        summarizer(provider),
        (
            Agent.create(provider=mock(reply="A short summary."), model="m")
            .system("Summarize in one line.")
            .fact(define_fact(id="style-fact", data="Write in plain words."))
            .build()
        ),
    )
    seen: dict[str, list[str]] = {"call": [], "agent": []}
    call.on("*", lambda e: seen["call"].append(e.type))
    agent.on("*", lambda e: seen["agent"].append(e.type))
    await call.run("Long text")
    await agent.run("Long text")
    assert seen["call"] == seen["agent"]
    assert "agentfootprint.stream.llm_start" in seen["call"] and seen["call"][0] == "agentfootprint.agent.turn_start"
    snap = call.last_snapshot()
    assert snap is not None and snap.state["answer"] == "A short summary."
    assert any("Call LLM" in e.text for e in call.last_narrative())
    bt = backtrack(call)
    assert bt.answer == "A short summary."
    assert {(s.kind, s.id) for s in bt.sources} >= {("fact", "style-fact")}
    assert str(bt) == str(backtrack(agent))


async def test_R000_16_composes_in_sequence_and_parallel() -> None:
    def upper(req: LLMRequest) -> str:
        return req.messages[-1].content.upper()

    first = LLMCall.create(provider=mock(respond=upper), model="m", name="shout").build()
    second = LLMCall.create(provider=mock(respond=lambda r: f"<{r.messages[-1].content}>"), model="m").build()
    seq = Sequence.create().step("shout", first).step("wrap", second).build()
    result = await seq.run("hello")
    assert result.answer == "<HELLO>"
    par = (
        Parallel.create()
        .branch("a", first)
        .branch("b", second)
        .merge_with(lambda answers: " | ".join(f"{k}={v}" for k, v in sorted(answers.items())))
        .build()
    )
    assert (await par.run("hi")).answer == "a=HI | b=<hi>"
    with pytest.raises(InvalidRunInputError) as info:
        await seq.run({})
    assert info.value.runner == "Sequence.run"


@pytest.mark.parametrize(
    "build",
    [
        lambda b: b.tool(noop),
        lambda b: b.tools([noop]),
        lambda b: b.skill(define_skill(id="s", description="d", body="b")),
        lambda b: b.tool_provider(object()),
        lambda b: b.self_explain().build(),
    ],
)
def test_R000_16_tools_are_refused_by_name_at_build(build: Any) -> None:
    builder = LLMCall.create(provider=mock(reply="x"), model="m")
    with pytest.raises(LLMCallBuildError) as info:
        build(builder)
    assert info.value.code == "ERR_LLM_CALL_BUILD" and isinstance(info.value, AgentBuildError)
    assert "LLMCall" in str(info.value)


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=200).filter(lambda s: s.strip()))
def test_R000_16_any_message_is_one_user_turn_and_one_call(message: str) -> None:
    provider = mock(respond=lambda r: r.messages[-1].content)
    result = LLMCall.create(provider=provider, model="m").build().run_sync(message)
    assert result.answer == message and provider.calls == 1
