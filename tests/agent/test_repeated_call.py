"""The repeated-call nudge (R004-94): on by default, can be turned off; a note, never a refusal."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, InvalidLimitError, define_tool
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock

runs: list[dict[str, Any]] = []


def _status(args: dict[str, Any], ctx: Any) -> str:
    runs.append(dict(args))
    return "rows: 3 (filter ignored)"


status = define_tool(name="status", description="Job status", input_schema={"type": "object"}, execute=_status)


def calls_then_answers(*argsets: dict[str, Any]) -> Any:
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "status", "args": a}]} for i, a in enumerate(argsets)]
    return mock(replies=[*replies, "done"])


def tool_messages(provider: Any) -> list[str]:
    return [m.content for m in provider.requests[-1].messages if m.role == "tool"]


async def test_R004_94_the_second_identical_call_and_result_gets_one_sentence() -> None:
    runs.clear()
    provider = calls_then_answers({"job": "7", "filter": "x"}, {"filter": "x", "job": "7"}, {"job": "7", "filter": "x"})
    agent = Agent.create(provider=provider, model="m").tool(status).build()
    events: list[AgentEvent] = []
    agent.on("agentfootprint.tools.repeated_call", events.append)
    result = await agent.run("go")
    assert result.answer == "done" and len(runs) == 3  # every call ran: a note, never a gate
    first, second, third = tool_messages(provider)
    assert first == third == "rows: 3 (filter ignored)"
    assert second.startswith("rows: 3 (filter ignored)\n\n[identical call: 'status' has now returned exactly this")
    assert "2 times this turn" in second
    assert len(events) == 1 and events[0].payload["occurrences"] == 2 and events[0].payload["name"] == "status"
    assert set(events[0].payload) == {"tool_call_id", "name", "occurrences", "args_fingerprint", "result_fingerprint"}
    assert "filter" not in str(events[0].payload) and "rows" not in str(events[0].payload)
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["tool_results"][1]["content"] == second


async def test_R004_94_different_arguments_are_progress_not_a_repeat() -> None:
    provider = calls_then_answers({"job": "1"}, {"job": "2"})
    agent = Agent.create(provider=provider, model="m").tool(status).build()
    await agent.run("go")
    assert tool_messages(provider) == ["rows: 3 (filter ignored)"] * 2


async def test_R004_94_turned_off_nothing_is_appended() -> None:
    provider = calls_then_answers({"job": "7"}, {"job": "7"})
    agent = Agent.create(provider=provider, model="m", repeated_call_nudge=False).tool(status).build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    await agent.run("go")
    assert tool_messages(provider) == ["rows: 3 (filter ignored)"] * 2
    assert not [e for e in events if e.type == "agentfootprint.tools.repeated_call"]


async def test_R004_94_the_tally_is_per_run() -> None:
    agent = Agent.create(provider=calls_then_answers({"job": "7"}), model="m").tool(status).build()
    await agent.run("go")
    provider = calls_then_answers({"job": "7"})
    again = Agent.create(provider=provider, model="m").tool(status).build()
    await again.run("go")
    assert tool_messages(provider) == ["rows: 3 (filter ignored)"]


def test_R004_94_the_switch_takes_a_bool_only() -> None:
    with pytest.raises(InvalidLimitError) as info:
        Agent.create(provider=mock(reply="x"), model="m", repeated_call_nudge=0)  # type: ignore[arg-type]
    assert info.value.option == "repeated_call_nudge"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6))
def test_R004_94_exactly_one_note_per_repeated_pair(jobs: list[str]) -> None:
    def respond(req: LLMRequest) -> Any:
        done = sum(1 for m in req.messages if m.role == "tool")
        if done < len(jobs):
            return {"tool_calls": [{"id": f"c{done}", "name": "status", "args": {"job": jobs[done]}}]}
        return "done"

    provider = mock(respond=respond)
    Agent.create(provider=provider, model="m", max_iterations=10).tool(status).build().run_sync("go")
    noted = [c for c in tool_messages(provider) if "[identical call:" in c]
    assert len(noted) == sum(1 for j in set(jobs) if jobs.count(j) >= 2)
