"""A tool that raises is reported to the developer (an event and a line in str(result)); without() suggests ids."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint import Agent, UnknownSourceError, define_fact, define_tool
from agentfootprint.events import types as ev
from agentfootprint.providers import LLMRequest, mock


def boom(args: dict[str, Any], ctx: Any) -> str:
    raise RuntimeError("database is down")


def calls_then_answers(request: LLMRequest) -> Any:
    if request.messages[-1].role == "user":
        return {"tool_calls": [{"id": "t1", "name": "lookup", "args": {}}]}
    return "Sorry, I could not look that up."


def agent_with(execute: Any) -> Agent:
    tool = define_tool(name="lookup", description="Look it up.", input_schema={"type": "object"}, execute=execute)
    return (
        Agent.create(provider=mock(respond=calls_then_answers), model="m")
        .tool(tool)
        .fact(define_fact(id="vip-override-fact", data="VIP"))
        .fact(define_fact(id="style-fact", data="Be brief."))
        .build()
    )


async def test_a_raising_tool_is_a_warning_event_and_a_line_in_the_result() -> None:
    agent = agent_with(boom)
    seen: list[Any] = []
    agent.on(ev.WARNING_TOOL_RAISED, lambda event: seen.append(event.payload))
    result = await agent.run("Look it up")
    told = "Error: tool lookup raised RuntimeError: database is down"
    assert seen == [{"tool_call_id": "t1", "name": "lookup", "message": told}]
    line = f"tool 'lookup' raised an exception (call t1, tool-calls#7); the model was told: {told}"
    assert result.warnings == [line]
    assert str(result) == f"Sorry, I could not look that up.\nwarning: {line}"


async def test_a_tool_that_works_leaves_no_warning() -> None:
    result = await agent_with(lambda args, ctx: "found").run("Look it up")
    assert result.warnings == [] and str(result) == "Sorry, I could not look that up."


async def test_a_refused_call_is_the_models_problem_not_a_warning() -> None:
    def unknown_tool(request: LLMRequest) -> Any:
        if request.messages[-1].role == "user":
            return {"tool_calls": [{"id": "t1", "name": "no_such_tool", "args": {}}]}
        return "done"

    agent = Agent.create(provider=mock(respond=unknown_tool), model="m").build()
    assert (await agent.run("go")).warnings == []


def test_without_a_typo_suggests_the_id_meant() -> None:
    with pytest.raises(UnknownSourceError) as info:
        agent_with(boom).without("vip-overide-fact")
    assert str(info.value) == (
        "agent has no context source or tool named: vip-overide-fact (did you mean 'vip-override-fact'?)"
    )
    assert info.value.suggestions == ("vip-override-fact",) and info.value.code == "ERR_UNKNOWN_SOURCE"


def test_without_an_unrelated_id_suggests_nothing() -> None:
    with pytest.raises(UnknownSourceError) as info:
        agent_with(boom).without("ghost")
    assert info.value.suggestions == () and "did you mean" not in str(info.value)


@given(st.text(min_size=1, max_size=30))
def test_suggestions_are_always_real_ids(name: str) -> None:
    known = {"vip-override-fact", "style-fact", "lookup"}
    error = UnknownSourceError.for_ids([name], known)
    assert set(error.suggestions) <= known and error.code == "ERR_UNKNOWN_SOURCE"
