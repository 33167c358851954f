"""keep_last_tool_results (R004-139, default 2): under a window, the newest tool results since the request stay in
view (each with the call that asked for it) even when the window drops the turn that holds them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, InvalidLimitError, define_tool
from agentfootprint.agent import WRAP_UP_INSTRUCTION
from agentfootprint.context.window import pinned_tool_results
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock


def _tool(name: str) -> Any:
    return define_tool(name=name, description=name, input_schema={"type": "object"}, execute=lambda a, c: f"{name}!")


TOOLS = [_tool("alpha"), _tool("beta"), _tool("gamma")]


def one_tool_per_call(req: LLMRequest) -> Any:
    if not req.tools:
        return "summary"
    done = sum(1 for m in req.messages if m.role == "tool")
    name = ["alpha", "beta", "gamma", "alpha"][min(done, 3)]
    return {"tool_calls": [{"id": f"c{done}", "name": name, "args": {}}]}


def agent(keep: Any = None) -> tuple[Agent, Any]:
    provider = mock(respond=one_tool_per_call)
    options = {} if keep is None else {"keep_last_tool_results": keep}
    built = Agent.create(provider=provider, model="m", max_iterations=4, **options).tools(TOOLS).window(max_turns=1)
    return built.build(), provider


async def test_R004_139_by_default_the_two_newest_tools_results_stay_in_view() -> None:
    a, provider = agent()
    events: list[AgentEvent] = []
    a.on("agentfootprint.context.evicted", events.append)
    await a.run("audit")
    wrap = provider.requests[-1]  # the wrap-up call: the window keeps only its last turn (the wrap-up ask)
    assert [(m.role, m.tool_name or m.content) for m in wrap.messages] == [
        ("assistant", ""),
        ("tool", "beta"),
        ("assistant", ""),
        ("tool", "gamma"),
        ("user", WRAP_UP_INSTRUCTION),
    ]
    assert events and events[-1].payload["pinned"] == [3, 4, 5, 6]


@pytest.mark.parametrize(("keep", "tools"), [(0, []), (False, []), (1, ["gamma"]), (3, ["alpha", "beta", "gamma"])])
async def test_R004_139_the_pin_follows_its_setting(keep: Any, tools: list[str]) -> None:
    a, provider = agent(keep)
    await a.run("audit")
    wrap = provider.requests[-1]
    assert [m.tool_name for m in wrap.messages if m.role == "tool"] == tools
    assert wrap.messages[-1].content == WRAP_UP_INSTRUCTION


@pytest.mark.parametrize("bad", [-1, 1001, 2.5, "2", True, None])
def test_R004_139_a_setting_that_cannot_be_used_is_refused(bad: Any) -> None:
    with pytest.raises(InvalidLimitError) as info:
        Agent.create(provider=mock(reply="x"), model="m", keep_last_tool_results=bad)
    assert info.value.option == "keep_last_tool_results"


def _history(names: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "q"}]
    for i, name in enumerate(names):
        out.append({"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "name": name, "args": {}}]})
        out.append({"role": "tool", "content": "r", "tool_call_id": f"c{i}", "tool_name": name})
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8), st.integers(0, 5))
def test_R004_139_one_pin_per_tool_the_newest_and_never_more_than_keep(names: list[str], keep: int) -> None:
    history = _history(names)
    pins = pinned_tool_results(history, keep, 0)
    pinned_tools = [history[i]["tool_name"] for i in sorted(pins) if history[i]["role"] == "tool"]
    assert len(pinned_tools) == len(set(pinned_tools)) == min(keep, len(set(names)))
    for i in pins:  # every pinned result keeps the call that asked for it, and it is that tool's newest
        if history[i]["role"] == "tool":
            assert i - 1 in pins
            assert all(history[j].get("tool_name") != history[i]["tool_name"] for j in range(i + 1, len(history)))
    assert pinned_tool_results(history, keep, None) == frozenset()
