"""Per-slot budgets warn (never truncate); the window drops oldest turns from view and records each drop."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.context import WindowPolicy, define_fact
from agentfootprint.context.budget import apply_window
from agentfootprint.events import AgentEvent
from agentfootprint.providers import Message, ToolCall, mock

from ._support import call, committed_values, text_tool

BIG = "Fact: " + "x" * 400


# ------------------------------------------------------------------------------------------ budgets


async def test_budget_pressure_warns_per_slot_and_cuts_nothing() -> None:
    provider = mock(reply="ok")
    agent = (
        Agent.create(provider=provider, model="m")
        .system("base")
        .fact(define_fact(id="big", data=BIG))
        .tool(text_tool("lookup"))
        .context_budget(system_prompt=100, messages=10_000, tools=20)
        .build()
    )
    events: list[AgentEvent] = []
    agent.on("context.budget_pressure", events.append)  # the type is registered at build
    await agent.run("hi")
    assert BIG in provider.requests[0].system_prompt  # a warning, not a truncation
    slots = {e.payload["slot"]: e.payload for e in events}
    assert set(slots) == {"system_prompt", "tools"}
    sp = slots["system_prompt"]
    assert sp["budget"] == 100 and sp["chars"] == len(provider.requests[0].system_prompt)
    assert sp["over_by"] == sp["chars"] - 100 and sp["largest"][0]["source_id"] == "big"
    assert events[0].type == "agentfootprint.context.budget_pressure" and events[0].meta.iteration == 1
    committed = committed_values(agent, "budget_pressure")
    assert [p["slot"] for p in committed[0]] == ["system_prompt", "tools"]


async def test_no_pressure_within_budget_and_budget_validation() -> None:
    provider = mock(reply="ok")
    agent = Agent.create(provider=provider, model="m").system("base").context_budget(system_prompt=1000).build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    await agent.run("hi")
    assert not [e for e in events if e.type.endswith("budget_pressure")]
    assert committed_values(agent, "budget_pressure") == []
    with pytest.raises(AgentBuildError):
        Agent.create(provider=provider).context_budget()
    with pytest.raises(AgentBuildError):
        Agent.create(provider=provider).context_budget(messages=0)
    with pytest.raises(AgentBuildError):
        Agent.create(provider=provider).window()


async def test_budget_event_is_safe_on_a_without_clone_listening_to_everything() -> None:
    agent = (
        Agent.create(provider=mock(reply="ok"), model="m")
        .fact(define_fact(id="big", data=BIG))
        .fact(define_fact(id="other", data="o"))
        .context_budget(system_prompt=50)
        .build()
    )
    clone = agent.without("other")
    events: list[AgentEvent] = []
    clone.on("*", events.append)
    await clone.run("hi")
    assert any(e.type == "agentfootprint.context.budget_pressure" for e in events)


# ------------------------------------------------------------------------------------------ window


async def test_window_drops_oldest_turns_from_view_never_from_history_and_records_each() -> None:
    provider = mock(respond=lambda req: f"a{len(req.messages)}")
    agent = Agent.create(provider=provider, model="m").window(max_turns=2).build()
    evicted: list[AgentEvent] = []
    agent.on("context.evicted", evicted.append)
    await agent.run("q1")
    await agent.follow_up("q2")
    assert committed_values(agent, "window_dropped") == []
    await agent.follow_up("q3")
    seen = [(m.role, m.content) for m in provider.requests[-1].messages]
    assert seen == [("user", "q2"), ("assistant", "a3"), ("user", "q3")]
    snap = agent.last_snapshot()
    assert snap is not None
    history = snap.state["history"]
    assert [m["content"] for m in history][:2] == ["q1", "a1"]  # still in history
    dropped = committed_values(agent, "window_dropped")[-1]
    assert [(d["index"], d["role"], d["turn"], d["reason"]) for d in dropped] == [
        (0, "user", 0, "max-turns"),
        (1, "assistant", 0, "max-turns"),
    ]
    assert all(history[d["index"]]["role"] == d["role"] for d in dropped)
    assert dropped[0]["chars"] == 2
    assert evicted and evicted[-1].payload["dropped"][0]["index"] == 0


async def test_window_keeps_tool_calls_with_their_results_and_never_drops_the_current_turn() -> None:
    provider = mock(
        replies=[call("lookup", call_id="t1"), "first answer", call("lookup", call_id="t2"), "second answer"]
    )
    agent = Agent.create(provider=provider, model="m").tool(text_tool("lookup", "r" * 50)).window(max_chars=10).build()
    await agent.run("first question")
    await agent.follow_up("second question")
    last = provider.requests[-1].messages
    assert [m.role for m in last] == ["user", "assistant", "tool"]  # the current turn, whole, over budget
    assert last[0].content == "second question"
    dropped = committed_values(agent, "window_dropped")[-1]
    assert {d["turn"] for d in dropped} == {0}
    assert [d["role"] for d in dropped] == ["user", "assistant", "tool", "assistant"]
    assert {d["reason"] for d in dropped} == {"max-chars"}
    assert [d.get("tool_call_id") for d in dropped if d["role"] == "tool"] == ["t1"]


roles = st.sampled_from(["user", "assistant", "tool"])


@settings(max_examples=200, deadline=None)
@given(
    seq=st.lists(st.tuples(roles, st.integers(min_value=0, max_value=30)), min_size=1, max_size=25),
    max_turns=st.none() | st.integers(min_value=1, max_value=5),
    max_chars=st.none() | st.integers(min_value=1, max_value=200),
)
def test_property_window_partitions_history_by_whole_oldest_turns(
    seq: list[tuple[str, int]], max_turns: int | None, max_chars: int | None
) -> None:
    if max_turns is None and max_chars is None:
        max_turns = 1
    messages: list[Message] = []
    for i, (role, size) in enumerate(seq):
        extra: dict[str, Any] = {"tool_call_id": f"t{i}", "tool_name": "x"} if role == "tool" else {}
        calls = [ToolCall(id=f"t{i}", name="x", args={})] if role == "assistant" and size % 2 else []
        messages.append(Message(role=role, content="c" * size, tool_calls=calls, **extra))
    kept, dropped = apply_window(messages, WindowPolicy(max_turns=max_turns, max_chars=max_chars))
    dropped_idx = [d["index"] for d in dropped]
    assert len(kept) + len(dropped) == len(messages)
    assert dropped_idx == list(range(len(dropped)))  # always a prefix: the oldest messages
    assert kept == messages[len(dropped) :]
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=0)
    assert all(i < last_user for i in dropped_idx) or not dropped  # the current turn is never dropped
    if dropped and len(dropped) < len(messages):
        assert messages[len(dropped)].role == "user"  # cut only at a turn boundary
    if max_turns is not None:
        assert sum(1 for m in kept if m.role == "user") <= max(max_turns, 1) or kept[0].role != "user"
