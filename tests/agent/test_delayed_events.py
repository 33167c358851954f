"""Delayed delivery: a listener wrapped in ``delayed`` sees a run's events only after the leg ends, redacted with
every secret the run learned, so a password typed before the model names it never reaches it."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.events import AgentEvent, DelayedListener, InvalidListenerError, delayed
from agentfootprint.providers import mock
from agentfootprint.tools import Tool, ToolContext

SECRET = "hunter2-Zq9"


def login_agent(secret: str = SECRET) -> Agent:
    async def login(args: dict[str, Any], ctx: ToolContext) -> str:
        return "logged in" if args["password"] == secret else "wrong password"

    tool = Tool(
        name="login",
        description="Log in.",
        input_schema={"type": "object", "properties": {"password": {"type": "string"}}, "required": ["password"]},
        execute=login,
    )
    replies = [{"tool_calls": [{"id": "c1", "name": "login", "args": {"password": secret}}]}, "You are logged in."]
    return Agent.create(provider=mock(replies=replies)).tool(tool).redact(keys=["password"]).build()


def text(events: list[AgentEvent]) -> str:
    return json.dumps([e.payload for e in events], default=str)


async def test_a_live_listener_sees_the_secret_in_turn_start_but_a_delayed_one_never_does() -> None:
    live: list[AgentEvent] = []
    held: list[AgentEvent] = []
    await login_agent().run(f"my password is {SECRET}, log me in", on_event=live.append)
    result = await login_agent().run(f"my password is {SECRET}, log me in", on_event=delayed(held.append))
    assert result.answer == "You are logged in."
    assert SECRET in text(live[:1])  # the control: nothing could redact it before the model named it
    assert [e.type for e in held] == [e.type for e in live]
    assert SECRET not in text(held)
    assert held[0].payload["message"] == "my password is [REDACTED], log me in"


async def test_delayed_events_arrive_only_after_the_run_returns_its_leg() -> None:
    seen_during: list[int] = []
    held: list[AgentEvent] = []

    async def spy(args: dict[str, Any], ctx: ToolContext) -> str:
        seen_during.append(len(held))
        return "ok"

    agent = (
        Agent.create(provider=mock(replies=[{"tool_calls": [{"id": "c", "name": "spy", "args": {}}]}, "done"]))
        .tool(Tool(name="spy", description="s", input_schema={"type": "object", "properties": {}}, execute=spy))
        .build()
    )
    await agent.run("hello", on_event=delayed(held.append))
    assert seen_during == [0]
    assert held[0].type == "agentfootprint.agent.turn_start" and held[-1].type == "agentfootprint.agent.turn_end"


async def test_an_async_delayed_listener_is_awaited_and_a_failing_one_is_kept_as_a_listener_error() -> None:
    got: list[str] = []

    async def slow(event: AgentEvent) -> None:
        got.append(event.type)

    agent = login_agent()
    await agent.run("go", on_event=delayed(slow))
    assert got[0] == "agentfootprint.agent.turn_start" and got[-1] == "agentfootprint.agent.turn_end"

    calls: list[int] = []

    def boom(event: AgentEvent) -> None:
        calls.append(1)
        raise RuntimeError("listener broke")

    other = login_agent()
    result = await other.run("go", on_event=delayed(boom))
    assert result.answer == "You are logged in."
    assert len(calls) == len(got)
    assert {(e.error_type, e.message) for e in other.events.listener_errors} == {("RuntimeError", "listener broke")}


def test_delayed_needs_a_callable() -> None:
    with pytest.raises(InvalidListenerError):
        delayed("not a function")  # type: ignore[arg-type]
    assert isinstance(delayed(print), DelayedListener)


@cache
def _vocabulary() -> str:
    """What the delayed events of a run say besides the password (the control run's is ``SECRET``, redacted)."""
    held: list[AgentEvent] = []
    login_agent().run_sync(f"log in with {SECRET} please", on_event=delayed(held.append))
    return text(held)


@settings(max_examples=15, deadline=None)
@given(secret=st.text(alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGH23456789", min_size=8, max_size=24))
def test_any_typed_password_named_later_never_reaches_a_delayed_listener(secret: str) -> None:
    assume(secret not in _vocabulary())  # a password that is one of the events' own words ("findings") leaks nothing
    held: list[AgentEvent] = []
    login_agent(secret).run_sync(f"log in with {secret} please", on_event=delayed(held.append))
    assert held and secret not in text(held)


def test_a_memory_store_keeps_the_real_value_while_the_record_and_events_are_redacted() -> None:
    from agentfootprint.context.memory import define_memory
    from agentfootprint.stores.memory import InMemoryMemoryStore

    store = InMemoryMemoryStore()
    events: list[AgentEvent] = []
    agent = (
        Agent.create(provider=mock(reply="ok"))
        .memory(define_memory(id="m", store=store))
        .redact(patterns=[r"hunter\d"])
        .build()
    )
    agent.run_sync("my password is hunter2", identity={"principal": "ann"}, on_event=events.append)
    assert "hunter2" in repr(vars(store))  # as docs/agent.md says: the store is as sensitive as the conversation
    assert "hunter2" not in text(events) and "[REDACTED]" in text(events)
