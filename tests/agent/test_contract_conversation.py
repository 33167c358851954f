"""Contract (API.md §2, seeds 000/004): the run-input door, one turn per run, follow_up, checkpoint/continue_from,
NoConversationError, RunInFlightError and loop independence."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentfootprint import (
    Agent,
    InvalidRunInputError,
    NoConversationError,
    RunInFlightError,
    RunResult,
)
from agentfootprint.providers import LLMRequest, mock

from .conftest import lookup_calls, lookup_order

SYSTEM = "You are a refunds assistant."
SECRET = "hunter2-SECRET-input"


def echo_respond(req: LLMRequest) -> str:
    """Answers with a transcript of what it was shown, so a test can read what the model saw."""
    return " | ".join(f"{m.role}:{m.content}" for m in req.messages)


def build(provider: Any, **kw: Any) -> Agent:
    return Agent.create(provider=provider, model="mock-1", **kw).system(SYSTEM).tool(lookup_order).build()


# ------------------------------------------------------------------------------------------ the run-input door


@pytest.mark.parametrize(
    ("value", "received"),
    [
        ({}, "object with no keys"),
        ({"a": 1, "b": 2}, "object with keys: a, b"),
        ({"text": SECRET}, "object with keys: text"),
        ({"message": None}, "object with keys: message"),
        ({"message": 42}, "object with keys: message"),
        ({"message": ""}, "object with keys: message"),
        ({"message": " \n\t "}, "object with keys: message"),
        ({"message": ["hi"]}, "object with keys: message"),
        ("", "empty string"),
        ("   ", "empty string"),
        ("\n\t\r ", "empty string"),
        (None, "None"),
        (42, "int"),
        (3.5, "float"),
        (True, "bool"),
        ([SECRET], "list"),
        ((SECRET,), "tuple"),
        (b"hello", "bytes"),
    ],
)
async def test_run_input_refused_before_any_model_call(value: Any, received: str) -> None:
    provider = mock(respond=echo_respond)
    agent = build(provider)
    with pytest.raises(InvalidRunInputError) as info:
        await agent.run(value)
    err = info.value
    assert err.code == "ERR_INVALID_RUN_INPUT"
    assert err.runner == "Agent.run"
    assert err.received == received
    assert provider.calls == 0 and provider.requests == []
    assert lookup_calls == []
    assert SECRET not in str(err) and SECRET not in repr(err)
    assert agent.last_snapshot() is None
    # the refusal left the agent usable
    ok = await agent.run("hello")
    assert ok.status == "completed"


def test_run_input_refused_through_run_sync() -> None:
    provider = mock(reply="x")
    agent = build(provider)
    with pytest.raises(InvalidRunInputError) as info:
        agent.run_sync({"msg": "hi"})
    assert info.value.received == "object with keys: msg"
    assert provider.calls == 0


async def test_bare_string_and_message_dict_are_the_same_input() -> None:
    p1, p2 = mock(respond=echo_respond), mock(respond=echo_respond)
    r1 = await build(p1).run("Refund A-1001?")
    r2 = await build(p2).run({"message": "Refund A-1001?", "extra": {"any": "thing"}, "trace": 1})
    assert r1.answer == r2.answer == "user:Refund A-1001?"
    assert [m.model_dump() for m in p1.requests[0].messages] == [m.model_dump() for m in p2.requests[0].messages]


async def test_message_is_passed_verbatim_not_stripped() -> None:
    provider = mock(respond=echo_respond)
    await build(provider).run("  padded  \n")
    assert provider.requests[0].messages[0].content == "  padded  \n"


# ------------------------------------------------------------------------------------------ one turn per run()


async def test_result_shape_on_completion() -> None:
    agent = build(mock(reply="fine"))
    result = await agent.run("go")
    assert isinstance(result, RunResult)
    assert result.status == "completed" and result.answer == "fine"
    assert isinstance(result.run_id, str) and result.run_id
    assert result.question is None and result.checkpoint is None
    json.loads(result.model_dump_json())


async def test_run_is_one_turn_second_run_does_not_see_the_first() -> None:
    provider = mock(respond=echo_respond)
    agent = build(provider)
    first = await agent.run("My name is Dana.")
    second = await agent.run("What is my name?")
    assert first.run_id != second.run_id
    msgs = provider.requests[1].messages
    assert [(m.role, m.content) for m in msgs] == [("user", "What is my name?")]
    assert "Dana" not in second.answer


async def test_follow_up_continues_the_last_completed_conversation() -> None:
    provider = mock(respond=echo_respond)
    agent = build(provider)
    await agent.run("My name is Dana.")
    r = await agent.follow_up("What is my name?")
    assert r.status == "completed"
    msgs = provider.requests[1].messages
    assert [(m.role, m.content) for m in msgs] == [
        ("user", "My name is Dana."),
        ("assistant", "user:My name is Dana."),
        ("user", "What is my name?"),
    ]
    # a second follow_up continues the continued conversation
    await agent.follow_up("And again?")
    assert [m.role for m in provider.requests[2].messages] == ["user", "assistant", "user", "assistant", "user"]


async def test_follow_up_keeps_tool_turns_of_the_previous_turn() -> None:
    replies = [
        {"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-1"}}]},
        "looked it up",
        "sure",
    ]
    provider = mock(replies=replies)
    agent = build(provider)
    await agent.run("check A-1")
    await agent.follow_up("thanks")
    msgs = provider.requests[2].messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant", "user"]
    assert msgs[2].tool_call_id == "t1" and msgs[2].tool_name == "lookup_order"
    assert msgs[3].content == "looked it up"
    assert lookup_calls == [{"orderId": "A-1"}]  # the tool did not run again


async def test_no_conversation_error_on_a_fresh_agent() -> None:
    provider = mock(reply="x")
    agent = build(provider)
    with pytest.raises(NoConversationError):
        await agent.follow_up("hello?")
    assert provider.calls == 0
    assert agent.checkpoint() is None


def test_no_conversation_error_sync() -> None:
    with pytest.raises(NoConversationError):
        build(mock(reply="x")).follow_up_sync("hello?")


async def test_no_conversation_after_a_crashed_first_run() -> None:
    def boom(req: LLMRequest) -> Any:
        raise RuntimeError("down")

    agent = build(mock(respond=boom))
    with pytest.raises(RuntimeError):
        await agent.run("hi")
    with pytest.raises(NoConversationError):
        await agent.follow_up("again")


# ------------------------------------------------------------------------------------------ checkpoint / continue_from


async def test_checkpoint_is_json_and_continues_on_a_fresh_instance() -> None:
    p1 = mock(replies=[{"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A-7"}}]}, "got it"])
    a1 = build(p1)
    await a1.run("Look at A-7 please")
    cp = a1.checkpoint()
    assert isinstance(cp, dict)
    stored = json.loads(json.dumps(cp))  # plain JSON, as is
    assert stored == cp

    p2 = mock(respond=echo_respond)
    a2 = build(p2)  # a different instance, as in another process
    r = await a2.run("and the next step?", continue_from=stored)
    assert r.status == "completed"
    msgs = p2.requests[0].messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool", "assistant", "user"]
    assert msgs[0].content == "Look at A-7 please"
    assert msgs[1].tool_calls[0].name == "lookup_order" and msgs[1].tool_calls[0].args == {"orderId": "A-7"}
    assert msgs[2].tool_call_id == "t1"
    assert msgs[3].content == "got it"
    assert msgs[4].content == "and the next step?"
    assert lookup_calls == [{"orderId": "A-7"}]
    # the fresh instance now owns the continued conversation
    cp2 = a2.checkpoint()
    assert cp2 is not None and len(cp2["history"]) > len(cp["history"])


async def test_checkpoint_is_a_copy_and_unchanged_by_later_runs() -> None:
    agent = build(mock(respond=echo_respond))
    await agent.run("first")
    cp = agent.checkpoint()
    assert cp is not None
    kept = json.loads(json.dumps(cp))
    cp["history"].clear()  # mutating what we were handed does not touch the agent
    assert agent.checkpoint() == kept
    await agent.run("second")
    fresh = agent.checkpoint()
    assert fresh is not None and "second" in json.dumps(fresh) and "first" not in json.dumps(fresh)


async def test_continue_from_does_not_change_the_source_agent_conversation() -> None:
    a1 = build(mock(respond=echo_respond))
    await a1.run("hello")
    before = a1.checkpoint()
    a2 = build(mock(respond=echo_respond))
    await a2.run("more", continue_from=before)
    assert a1.checkpoint() == before


@pytest.mark.parametrize(
    "mutate",
    [
        lambda cp: cp.pop("history"),
        lambda cp: cp.__setitem__("history", "not-a-list"),
        lambda cp: cp.__setitem__("format", "something.else"),
        lambda cp: cp.__setitem__("version", 999),
        lambda cp: cp["history"][0].__setitem__("role", "wizard"),
    ],
)
async def test_malformed_continue_from_is_refused_before_any_model_call(mutate: Any) -> None:
    a1 = build(mock(reply="a"))
    await a1.run("hello")
    cp = a1.checkpoint()
    assert cp is not None
    mutate(cp)
    provider = mock(reply="b")
    with pytest.raises(ValueError) as info:
        await build(provider).run("more", continue_from=cp)
    assert getattr(info.value, "code", "").startswith("ERR_")
    assert getattr(info.value, "field", None)
    assert provider.calls == 0


async def test_continue_from_non_dict_is_refused() -> None:
    provider = mock(reply="b")
    with pytest.raises(ValueError):
        await build(provider).run("more", continue_from="not a checkpoint")  # type: ignore[arg-type]
    assert provider.calls == 0


# ------------------------------------------------------------------------------------------ one run at a time


def _held_provider() -> tuple[Any, asyncio.Event, asyncio.Event]:
    started, release = asyncio.Event(), asyncio.Event()

    async def respond(req: LLMRequest) -> str:
        started.set()
        await release.wait()
        return "slow answer"

    return mock(respond=respond), started, release


async def test_new_conversations_run_side_by_side_on_one_instance() -> None:
    """Issue 32: a run is a value, so one instance serves two new conversations at once, each with its own answer."""
    started = asyncio.Event()
    release = asyncio.Event()
    seen: list[str] = []

    async def respond(req: LLMRequest) -> str:
        seen.append(str(req.messages[-1].content))
        if len(seen) == 2:
            started.set()
        await release.wait()
        return f"answer to {req.messages[-1].content}"

    provider = mock(respond=respond)
    agent = build(provider)

    async def releaser() -> None:
        await started.wait()  # both turns are inside the model call at once
        assert agent.in_flight
        release.set()

    first, second, _ = await asyncio.gather(agent.run("first"), agent.run("second"), releaser())
    assert (first.answer, second.answer) == ("answer to first", "answer to second")
    assert sorted(seen) == ["first", "second"]
    assert not agent.in_flight


async def test_the_same_conversation_runs_one_turn_at_a_time() -> None:
    """R004-33: a second turn of a conversation in flight is refused (run with continue_from, resume_on_error),
    and follow_up (the latest conversation, which any turn may change) while any turn is in flight."""
    provider, started, release = _held_provider()
    agent = build(provider)
    release.set()
    await agent.run("one")  # gives a conversation to continue
    cp = agent.checkpoint()
    assert cp is not None
    release.clear()
    started.clear()
    task = asyncio.create_task(agent.run("two", continue_from=cp))
    await started.wait()
    with pytest.raises(RunInFlightError) as info:
        await agent.run("three", continue_from=cp)
    assert info.value.code == "ERR_RUN_IN_FLIGHT"
    with pytest.raises(RunInFlightError):
        await agent.resume_on_error(cp)
    with pytest.raises(RunInFlightError):
        await agent.follow_up("four")
    release.set()
    assert (await task).status == "completed"
    assert provider.calls == 2  # the refused turns never reached the model
    again = await agent.run("five", continue_from=cp)  # released once the turn finished
    assert again.answer == "slow answer"


async def test_two_instances_run_concurrently() -> None:
    p, started, release = _held_provider()
    a1, a2 = build(p), build(p)

    async def go(agent: Agent, msg: str) -> RunResult:
        return await agent.run(msg)

    async def releaser() -> None:
        await started.wait()
        release.set()

    r1, r2, _ = await asyncio.gather(go(a1, "x"), go(a2, "y"), releaser())
    assert r1.status == r2.status == "completed"


def test_successive_asyncio_run_calls_on_one_agent() -> None:
    provider = mock(respond=echo_respond)
    agent = build(provider)
    r1 = agent.run_sync("one")
    r2 = agent.run_sync("two")
    r3 = asyncio.run(agent.run("three"))
    r4 = agent.follow_up_sync("four")
    assert [r.status for r in (r1, r2, r3, r4)] == ["completed"] * 4
    assert r2.answer == "user:two" and r3.answer == "user:three"
    assert [m.content for m in provider.requests[3].messages] == ["three", "user:three", "four"]


def test_successive_asyncio_run_with_a_held_provider() -> None:
    """An agent that once ran on a loop that is now closed still works on a new loop (no loop-bound state)."""
    agent = build(mock(respond=echo_respond))

    async def concurrent_pair() -> list[Any]:
        return await asyncio.gather(agent.run("a"), agent.run("b"), return_exceptions=True)

    first = asyncio.run(concurrent_pair())
    assert [r.answer for r in first] == ["user:a", "user:b"]
    assert agent.run_sync("after").status == "completed"


async def test_sync_twin_inside_a_running_loop_is_refused_clearly() -> None:
    agent = build(mock(reply="x"))
    with pytest.raises(RuntimeError, match="await"):
        agent.run_sync("go")
