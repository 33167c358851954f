"""Contract edges (API.md §2, seeds 000/004): every door runs the input check, crashes inside a resumed leg,
iteration numbering across a pause, skill idempotence and the shape of what reaches the model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint import (
    Agent,
    InvalidRunInputError,
    RunCheckpointError,
    ask_human,
    define_skill,
    define_tool,
)
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock

from .conftest import lookup_calls, lookup_order


def build(provider: Any, **kw: Any) -> Agent:
    return Agent.create(provider=provider, model="m", **kw).system("sys").tool(lookup_order).tool(ask_human).build()


def ask(call_id: str = "h1") -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "ask_human", "args": {"question": "which?"}}]}


class Out(BaseModel):
    ok: bool


@pytest.mark.parametrize(
    ("value", "received"), [("", "empty string"), ("  \n", "empty string"), (None, "None"), (5, "int")]
)
async def test_follow_up_runs_the_same_input_door(value: Any, received: str) -> None:
    provider = mock(reply="x")
    agent = build(provider)
    await agent.run("first")
    with pytest.raises(InvalidRunInputError) as info:
        await agent.follow_up(value)
    assert info.value.received == received
    assert provider.calls == 1


@pytest.mark.parametrize(("value", "received"), [({}, "object with no keys"), ("", "empty string"), (None, "None")])
async def test_run_typed_runs_the_same_input_door(value: Any, received: str) -> None:
    provider = mock(reply='{"ok": true}')
    agent = Agent.create(provider=provider, model="m").output_schema(Out).build()
    with pytest.raises(InvalidRunInputError) as info:
        await agent.run_typed(value)
    assert info.value.received == received
    assert provider.calls == 0


async def test_input_door_comes_before_continue_from_validation() -> None:
    provider = mock(reply="x")
    with pytest.raises(InvalidRunInputError):
        await build(provider).run({}, continue_from={"garbage": True})
    assert provider.calls == 0


async def test_identity_rides_in_the_input_dict() -> None:
    seen: list[Any] = []
    who = define_tool(
        name="who", description="d", input_schema={"type": "object"}, execute=lambda a, c: seen.append(c) or "x"
    )
    provider = mock(replies=[{"tool_calls": [{"id": "w", "name": "who", "args": {}}]}, "done"])
    agent = Agent.create(provider=provider, model="m").tool(who).build()
    await agent.run({"message": "go", "identity": {"tenant": "t9", "principal": "p9"}})
    assert seen[0].identity.tenant == "t9" and seen[0].identity.principal == "p9"


async def test_requests_carry_only_user_assistant_tool_turns_and_the_model_name() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "l", "name": "lookup_order", "args": {"orderId": "A"}}]}, "done"])
    await build(provider).run("go")
    for req in provider.requests:
        assert {m.role for m in req.messages} <= {"user", "assistant", "tool"}
        assert req.model == "m"
        assert req.system_prompt == "sys"
    # a turn that only calls tools has content ""
    assert provider.requests[1].messages[1].content == ""


# ------------------------------------------------------------------------------------------ across a pause


async def test_iteration_numbers_continue_across_pause_and_resume() -> None:
    """R004-17: the resumed leg is a new run (its events carry one fresh run id) of the same turn."""
    a1 = build(mock(replies=[{"tool_calls": [{"id": "l", "name": "lookup_order", "args": {"orderId": "A"}}]}, ask()]))
    first: list[AgentEvent] = []
    a1.on("stream.llm_start", first.append)
    paused = await a1.run("go")
    assert paused.status == "paused"
    assert [e.meta.iteration for e in first] == [1, 2]

    a2 = build(mock(reply="done"))
    second: list[AgentEvent] = []
    a2.on("*", second.append)
    done = await a2.resume(json.loads(json.dumps(paused.checkpoint)), "A")
    assert done.status == "completed"
    llm = [e for e in second if e.type == "agentfootprint.stream.llm_start"]
    assert [e.meta.iteration for e in llm] == [3]
    assert {e.meta.run_id for e in second} == {done.run_id} and done.run_id != paused.run_id
    assert done.resumed_from == paused.run_id
    assert second[0].type == "agentfootprint.agent.turn_start" and second[-1].type == "agentfootprint.agent.turn_end"
    assert any(e.type == "agentfootprint.pause.resumed" for e in second)
    assert len(lookup_calls) == 1


async def test_crash_in_a_resumed_leg_checkpoints_the_answer_and_resume_on_error_completes() -> None:
    paused = await build(mock(replies=[ask("h1")])).run("go")

    def down(req: LLMRequest) -> Any:
        raise TimeoutError("model timed out")

    with pytest.raises(RunCheckpointError) as info:
        await build(mock(respond=down)).resume(json.loads(json.dumps(paused.checkpoint)), "the answer")
    cp = json.loads(json.dumps(info.value.checkpoint))
    tool_turns = [m for m in cp["history"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_turns] == [("h1", "the answer")]

    provider = mock(respond=lambda req: f"last: {req.messages[-1].content}")
    done = await build(provider).resume_on_error(cp)
    assert done.status == "completed" and done.answer == "last: the answer"


async def test_resume_on_error_after_a_crash_in_a_follow_up_keeps_the_earlier_turns() -> None:
    count = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        count["n"] += 1
        if count["n"] == 2:
            raise RuntimeError("flaky")
        return f"reply {count['n']}"

    agent = build(mock(respond=respond))
    await agent.run("turn one")
    with pytest.raises(RunCheckpointError) as info:
        await agent.follow_up("turn two")
    cp = json.loads(json.dumps(info.value.checkpoint))
    assert [m["content"] for m in cp["history"]] == ["turn one", "reply 1", "turn two"]
    p2 = mock(respond=lambda req: " / ".join(m.content for m in req.messages))
    done = await build(p2).resume_on_error(cp)
    assert done.answer == "turn one / reply 1 / turn two"


# ------------------------------------------------------------------------------------------ skills


async def test_reading_a_skill_twice_lands_its_body_once() -> None:
    body = "Skill body: be careful."
    skill = define_skill(id="care", description="Careful mode", body=body)
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "s1", "name": "read_skill", "args": {"id": "care"}}]},
            {"tool_calls": [{"id": "s2", "name": "read_skill", "args": {"id": "care"}}]},
            "ok",
        ]
    )
    await Agent.create(provider=provider, model="m").system("sys").skill(skill).build().run("go")
    assert provider.requests[2].system_prompt == f"sys\n\n{body}"
    assert provider.requests[2].system_prompt.count(body) == 1
