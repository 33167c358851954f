"""Limits and defaults (seed 004): the cost budget's default action, the wrap-up at max iterations, the empty
stopped-early answer, and tool results that are never cut unless a ceiling is set."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import (
    Agent,
    AgentBuildError,
    CostBudget,
    EmptyAnswerWarning,
    InvalidLimitError,
    define_tool,
)
from agentfootprint.agent import WRAP_UP_INSTRUCTION
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock

FRAGMENT = "Let me check what's on screen now:"
SUMMARY = "Checked two of three findings; the third is unverified."


def _look(args: dict[str, Any], ctx: Any) -> str:
    return "RESULT"


look = define_tool(name="look", description="look something up", input_schema={"type": "object"}, execute=_look)


def never_finishes(seen: list[LLMRequest]) -> Any:
    """Asks for a tool on every call that offers one; answers when no tool is offered."""

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        if not req.tools:
            return SUMMARY
        return {"content": FRAGMENT, "tool_calls": [{"id": f"c{len(seen)}", "name": "look", "args": {}}]}

    return mock(respond=respond)


def spender(n_tools: int) -> Any:
    def respond(req: LLMRequest) -> Any:
        done = sum(1 for m in req.messages if m.role == "tool")
        usage = {"input_tokens": 1000, "output_tokens": 100}
        if done < n_tools:
            return {
                "content": "working",
                "tool_calls": [{"id": f"c{done}", "name": "look", "args": {}}],
                "usage": usage,
            }
        return {"content": "final", "usage": usage}

    return respond


def collect(agent: Agent) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    return events


# ------------------------------------------------------------------------------------------ R004-91 cost budget


async def test_R004_91_a_bare_number_budget_warns_once_and_the_run_goes_on() -> None:
    agent = (
        Agent.create(provider=mock(respond=spender(3)), model="gpt-x", max_iterations=10)
        .tool(look)
        .pricing({"*": {"input": 0.5, "output": 1.5}})
        .cost_budget(1.0)
        .build()
    )
    assert agent.cost_budget() == CostBudget(usd=1.0, on_exceed="warn")
    events = collect(agent)
    result = await agent.run("go")
    assert result.answer == "final" and agent.stopped_early() is None
    assert [e.payload["budget"] for e in events if e.type == "agentfootprint.cost.budget_warning"] == [1.0]


async def test_R004_91_the_same_bare_number_on_agent_create_also_warns() -> None:
    agent = (
        Agent.create(provider=mock(respond=spender(3)), model="gpt-x", cost_budget=1.0)
        .tool(look)
        .pricing({"*": {"input": 0.5, "output": 1.5}})
        .build()
    )
    assert agent.cost_budget() == CostBudget(usd=1.0, on_exceed="warn")
    assert (await agent.run("go")).answer == "final"


@pytest.mark.parametrize(
    "make",
    [
        lambda b: b.cost_budget({"usd": 1.0, "on_exceed": "halt"}),
        lambda b: b.cost_budget(1.0, on_exceed="halt"),
        lambda b: b.cost_budget(1.0, action="halt"),
        lambda b: b.cost_budget(CostBudget(usd=1.0, on_exceed="halt")),
    ],
)
async def test_R004_91_on_exceed_halt_stops_the_loop(make: Any) -> None:
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        return spender(10)(req)

    builder = Agent.create(provider=mock(respond=respond), model="gpt-x", max_iterations=10).tool(look)
    agent = make(builder.pricing({"*": {"input": 0.5, "output": 1.5}})).build()
    assert agent.cost_budget() == CostBudget(usd=1.0, on_exceed="halt")
    result = await agent.run("go")
    stopped = agent.stopped_early()
    assert result.status == "completed" and stopped is not None
    assert (stopped.reason, stopped.iteration, stopped.pending_tool_calls, stopped.wrapped_up) == (
        "cost-budget",
        2,
        1,
        False,
    )
    assert len(seen) == 2  # a halting budget capped the money: no wrap-up call spends past it


async def test_R004_91_an_agent_without_a_budget_reports_none() -> None:
    assert Agent.create(provider=mock(reply="x"), model="m").build().cost_budget() is None


@pytest.mark.parametrize(
    ("value", "option"),
    [
        (0, "cost_budget"),
        (-3.5, "cost_budget"),
        (math.nan, "cost_budget"),
        (math.inf, "cost_budget"),
        (True, "cost_budget"),
        ("12.5", "cost_budget"),
        ([7], "cost_budget"),
        ({"usd": 987654}, None),
        ({"usd": -987654}, "cost_budget.usd"),
        ({"usd": 1, "onExceed": "halt"}, "cost_budget"),
        ({"usd": 1, "on_exceed": "explode987"}, "cost_budget.on_exceed"),
        ({"on_exceed": "halt"}, "cost_budget"),
        ({1: 2}, "cost_budget"),
    ],
)
def test_R004_91_a_budget_that_cannot_be_used_is_refused_by_name_never_quoted(value: Any, option: str | None) -> None:
    builder = Agent.create(provider=mock(reply="x"), model="m")
    if option is None:
        assert builder.cost_budget(value).build().cost_budget() == CostBudget(usd=987654, on_exceed="warn")
        return
    with pytest.raises(InvalidLimitError) as info:
        builder.cost_budget(value)
    err = info.value
    assert err.code == "ERR_INVALID_LIMIT" and err.option == option and isinstance(err, AgentBuildError)
    for leak in ("12.5", "987654", "explode987", "onExceed"):
        assert leak not in str(err)
    with pytest.raises(InvalidLimitError):
        Agent.create(provider=mock(reply="x"), model="m", cost_budget=value)


def test_R004_91_on_exceed_given_twice_with_two_values_is_refused() -> None:
    with pytest.raises(InvalidLimitError) as info:
        Agent.create(provider=mock(reply="x"), model="m").cost_budget(1.0, on_exceed="halt", action="warn")
    assert info.value.option == "cost_budget.on_exceed"


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=1e-9, max_value=1e12, allow_nan=False, allow_infinity=False) | st.integers(1, 10**9))
def test_R004_91_every_bare_positive_number_normalizes_to_warn(usd: float) -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").cost_budget(usd).build()
    assert agent.cost_budget() == CostBudget(usd=float(usd), on_exceed="warn")


# ------------------------------------------------------------------------------------------ R004-92 wrap-up


async def test_R004_92_the_exhausted_turn_asks_once_more_with_the_tools_withheld() -> None:
    seen: list[LLMRequest] = []
    agent = Agent.create(provider=never_finishes(seen), model="m", max_iterations=2).tool(look).build()
    events = collect(agent)
    result = await agent.run("audit the findings")
    assert [[t.name for t in r.tools] for r in seen] == [["look"], ["look"], []]
    last = seen[2].messages
    assert [m.role for m in last] == ["user", "assistant", "tool", "user"]
    assert last[-1].content == WRAP_UP_INSTRUCTION
    assert result.answer == SUMMARY and FRAGMENT not in (result.answer or "")
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.model_dump() == {
        "reason": "max-iterations",
        "iteration": 2,
        "pending_tool_calls": 1,
        "answer_was_empty": False,
        "wrapped_up": True,
    }
    exhausted = [e.payload for e in events if e.type == "agentfootprint.agent.budget_exhausted"]
    assert exhausted == [
        {"reason": "max-iterations", "iteration": 2, "limit": 2, "pending_tool_calls": 1, "action": "wrapped-up"}
    ]
    end = next(e.payload for e in events if e.type == "agentfootprint.agent.turn_end")
    assert end["answer"] == SUMMARY and end["stopped_early"]["wrapped_up"] is True
    assert [e.meta.iteration for e in events if e.type == "agentfootprint.stream.llm_start"] == [1, 2, 3]
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["stopped_early"]["wrapped_up"] is True
    assert snap.state["llm_call"]["tools"] == []
    assert any("Wrap up" in e.text for e in agent.last_narrative())


async def test_R004_92_the_wrap_up_is_asked_at_most_once() -> None:
    calls: list[LLMRequest] = []

    def stubborn(req: LLMRequest) -> Any:  # ignores the withholding and asks for a tool anyway
        calls.append(req)
        return {"content": FRAGMENT, "tool_calls": [{"id": f"c{len(calls)}", "name": "look", "args": {}}]}

    agent = Agent.create(provider=mock(respond=stubborn), model="m", max_iterations=2).tool(look).build()
    result = await agent.run("go")
    assert len(calls) == 3 and result.answer == FRAGMENT
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.iteration == 2 and stopped.pending_tool_calls == 1 and stopped.wrapped_up


async def test_R004_92_turned_off_the_turn_is_cut_short_on_the_last_allowed_call() -> None:
    seen: list[LLMRequest] = []
    agent = (
        Agent.create(provider=never_finishes(seen), model="m", max_iterations=2, wrap_up_at_max_iterations=False)
        .tool(look)
        .build()
    )
    events = collect(agent)
    result = await agent.run("go")
    assert len(seen) == 2 and result.answer == FRAGMENT
    stopped = agent.stopped_early()
    assert stopped is not None and not stopped.wrapped_up and stopped.iteration == 2
    exhausted = [e.payload["action"] for e in events if e.type == "agentfootprint.agent.budget_exhausted"]
    assert exhausted == ["cut-short"]
    assert "wrap-up" not in agent.chart.to_mermaid()


async def test_R004_92_a_turn_inside_its_budget_is_untouched() -> None:
    replies = [{"tool_calls": [{"id": "a", "name": "look", "args": {}}]}, "done"]
    on, off = mock(replies=list(replies)), mock(replies=list(replies))
    a = Agent.create(provider=on, model="m", max_iterations=2).tool(look).build()
    b = Agent.create(provider=off, model="m", max_iterations=2, wrap_up_at_max_iterations=False).tool(look).build()
    events = collect(a)
    assert (await a.run("go")).answer == (await b.run("go")).answer == "done"
    assert a.stopped_early() is None and on.calls == off.calls == 2
    assert not [e for e in events if e.type == "agentfootprint.agent.budget_exhausted"]
    snap_a, snap_b = a.last_snapshot(), b.last_snapshot()
    assert snap_a is not None and snap_b is not None and set(snap_a.state) == set(snap_b.state)


async def test_R004_92_the_wrap_up_ask_travels_with_the_conversation() -> None:
    agent = Agent.create(provider=never_finishes([]), model="m", max_iterations=1).tool(look).build()
    await agent.run("go")
    conversation = agent.checkpoint()
    assert conversation is not None
    assert [m["content"] for m in conversation["history"]][-2:] == [WRAP_UP_INSTRUCTION, SUMMARY]
    json.dumps(conversation)


def test_R004_92_the_switch_takes_a_bool_only() -> None:
    with pytest.raises(InvalidLimitError) as info:
        Agent.create(provider=mock(reply="x"), model="m", wrap_up_at_max_iterations="no")  # type: ignore[arg-type]
    assert info.value.option == "wrap_up_at_max_iterations" and "no" not in str(info.value).split()


@settings(max_examples=25, deadline=None)
@given(max_iterations=st.integers(1, 6), wrap=st.booleans())
def test_R004_92_a_cut_turn_never_runs_past_the_cap_plus_one_call(max_iterations: int, wrap: bool) -> None:
    seen: list[LLMRequest] = []
    agent = (
        Agent.create(
            provider=never_finishes(seen), model="m", max_iterations=max_iterations, wrap_up_at_max_iterations=wrap
        )
        .tool(look)
        .build()
    )
    result = agent.run_sync("go")
    assert len(seen) == max_iterations + (1 if wrap else 0)
    assert result.answer == (SUMMARY if wrap else FRAGMENT)
    assert sum(1 for r in seen if not r.tools) == (1 if wrap else 0)


# ------------------------------------------------------------------------------------------ R004-90 empty answer


def _empty_tools(req: LLMRequest) -> Any:
    return {"content": "", "tool_calls": [{"id": f"c{len(req.messages)}", "name": "look", "args": {}}]}


@pytest.mark.parametrize("wrap", [True, False])
async def test_R004_90_an_empty_stopped_early_answer_warns_exactly_once(wrap: bool) -> None:
    agent = (
        Agent.create(provider=mock(respond=_empty_tools), model="m", max_iterations=2, wrap_up_at_max_iterations=wrap)
        .tool(look)
        .build()
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await agent.run("go")
        again = await agent.run("go")
    empties = [w for w in caught if issubclass(w.category, EmptyAnswerWarning)]
    assert len(empties) == 2  # once per run
    assert "max_iterations was reached" in str(empties[0].message)
    assert result.answer == "" and len(result.warnings) == 1 and result.warnings[0] == str(empties[0].message)
    assert len(again.warnings) == 1
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.answer_was_empty and stopped.wrapped_up is wrap


async def test_R004_90_a_stopped_early_answer_with_text_does_not_warn() -> None:
    agent = Agent.create(provider=never_finishes([]), model="m", max_iterations=1).tool(look).build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await agent.run("go")
    assert not [w for w in caught if issubclass(w.category, EmptyAnswerWarning)]
    assert result.warnings == [] and agent.stopped_early() is not None


async def test_R004_90_a_normal_empty_answer_is_not_a_stopped_early_warning() -> None:
    agent = Agent.create(provider=mock(reply=""), model="m").build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await agent.run("go")
    assert not [w for w in caught if issubclass(w.category, EmptyAnswerWarning)]


# ------------------------------------------------------------------------------------------ R004-93 tool results


def _big(n: int) -> Any:
    return define_tool(name="big", description="d", input_schema={"type": "object"}, execute=lambda a, c: "y" * n)


async def test_R004_93_without_a_ceiling_a_huge_result_reaches_the_model_whole() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "b", "name": "big", "args": {}}]}, "ok"])
    agent = Agent.create(provider=provider, model="m").tool(_big(250_000)).build()
    await agent.run("go")
    content = provider.requests[1].messages[-1].content
    assert content == "y" * 250_000
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["tool_results"][0]["truncated"] is False


@pytest.mark.parametrize("option", ["max_tool_result_chars", "max_result_chars"])
async def test_R004_93_a_set_ceiling_cuts_and_says_so(option: str) -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "b", "name": "big", "args": {}}]}, "ok"])
    agent = Agent.create(provider=provider, model="m", **{option: 1000}).tool(_big(5000)).build()
    await agent.run("go")
    content = provider.requests[1].messages[-1].content
    assert content == "y" * 1000 + "\n…[truncated: 4000 more characters]"


@pytest.mark.parametrize("value", [0, -5, True, "100", 1.5, [1]])
def test_R004_93_a_ceiling_that_cannot_be_used_is_refused(value: Any) -> None:
    with pytest.raises(InvalidLimitError) as info:
        Agent.create(provider=mock(reply="x"), model="m", max_tool_result_chars=value)
    assert info.value.option == "max_tool_result_chars" and info.value.code == "ERR_INVALID_LIMIT"


def test_R004_93_the_ceiling_is_one_option_under_two_spellings() -> None:
    with pytest.raises(InvalidLimitError):
        Agent.create(provider=mock(reply="x"), model="m", max_tool_result_chars=10, max_result_chars=10)


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=3000))
def test_R004_93_any_result_text_arrives_unchanged_without_a_ceiling(text: str) -> None:
    echo = define_tool(name="echo", description="d", input_schema={"type": "object"}, execute=lambda a, c: text)
    provider = mock(replies=[{"tool_calls": [{"id": "e", "name": "echo", "args": {}}]}, "ok"])
    Agent.create(provider=provider, model="m").tool(echo).build().run_sync("go")
    assert provider.requests[1].messages[-1].content == text
