"""Typed asks (R004-145): ask_human variants that declare the answer's type; a typed answer is validated, one that
does not fit is asked again, and the re-ask count crosses checkpoints (on the pause record)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import Agent, InvalidConversationError, ask_human, ask_human_typed
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import InvalidToolDefinitionError

how_many = ask_human_typed(int, name="ask_quantity", max_reasks=2)


class Address(BaseModel):
    city: str
    zip: str


def asks_then_echoes(tool: str = "ask_quantity") -> Any:
    def respond(req: LLMRequest) -> Any:
        answered = [m for m in req.messages if m.role == "tool"]
        if not answered:
            return {"tool_calls": [{"id": "q1", "name": tool, "args": {"question": "How many units?"}}]}
        return f"got {answered[-1].content}"

    return respond


def build(tool: Any = how_many, name: str = "ask_quantity") -> Agent:
    return Agent.create(provider=mock(respond=asks_then_echoes(name)), model="m").tool(tool).build()


def roundtrip(cp: Any) -> Any:
    return json.loads(json.dumps(cp))


async def test_R004_145_a_typed_ask_pauses_and_a_fitting_answer_is_its_result() -> None:
    agent = build()
    paused = await agent.run("order some")
    assert paused.status == "paused" and paused.question == "How many units?"
    data = paused.checkpoint["flow"]["pause_data"]  # type: ignore[index]
    assert data["answer_schema"] == {"type": "integer"} and data["repeat"] == {"count": 0}
    done = await build().resume(roundtrip(paused.checkpoint), "12")
    assert done.status == "completed" and done.answer == "got 12"


async def test_R004_145_a_resume_answering_a_typed_ask_is_marked_for_that_run_only() -> None:
    agent = build()
    paused = await agent.run("order some")
    assert agent.answered_ask() is None
    await agent.resume(paused.checkpoint, 7)
    assert agent.answered_ask() == {"tool_name": "ask_quantity", "tool_call_id": "q1", "reasks": 0}
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["tool_results"][-1]["typed_answer"] is True
    await agent.run("another turn")
    assert agent.answered_ask() is None


async def test_R004_145_an_answer_that_does_not_fit_is_asked_again_and_the_count_crosses_checkpoints() -> None:
    first = build()
    paused = await first.run("order some")
    again = await build().resume(roundtrip(paused.checkpoint), "a dozen-ish 98765")
    assert again.status == "paused" and again.question is not None
    assert again.question.startswith("How many units?\n(The answer given does not fit")
    assert "98765" not in again.question
    assert again.checkpoint["flow"]["pause_data"]["repeat"] == {"count": 1}  # type: ignore[index]
    third = await build().resume(roundtrip(again.checkpoint), "still no")
    assert third.checkpoint["flow"]["pause_data"]["repeat"] == {"count": 2}  # type: ignore[index]
    assert third.question is not None and third.question.count("(The answer given") == 1
    fresh = build()
    done = await fresh.resume(roundtrip(third.checkpoint), 3)
    assert done.answer == "got 3" and fresh.answered_ask() == {
        "tool_name": "ask_quantity",
        "tool_call_id": "q1",
        "reasks": 2,
    }


async def test_R004_145_when_the_re_asks_are_spent_the_model_is_told_and_the_run_goes_on() -> None:
    tool = ask_human_typed(int, name="ask_quantity", max_reasks=0)
    agent = build(tool)
    paused = await agent.run("order some")
    done = await build(tool).resume(roundtrip(paused.checkpoint), "many")
    assert done.status == "completed" and done.answer is not None
    assert done.answer.startswith("got Error: the person's answer did not fit the declared type after 1 ask(s)")
    assert "many" not in done.answer.removeprefix("got ")


async def test_R004_145_a_structured_answer_type() -> None:
    tool = ask_human_typed(Address, name="ask_address")
    agent = build(tool, "ask_address")
    paused = await agent.run("ship it")
    done = await build(tool, "ask_address").resume(roundtrip(paused.checkpoint), {"city": "Oslo", "zip": "0150"})
    assert done.answer == 'got {"city": "Oslo", "zip": "0150"}'


async def test_R004_145_plain_ask_human_is_untouched() -> None:
    agent = Agent.create(provider=mock(respond=asks_then_echoes("ask_human")), model="m").tool(ask_human).build()
    paused = await agent.run("go")
    assert "answer_schema" not in paused.checkpoint["flow"]["pause_data"]  # type: ignore[index]
    done = await agent.resume(paused.checkpoint, "anything at all")
    assert done.answer == "got anything at all" and agent.answered_ask() is None


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d.update(repeat={"count": 9}), "flow.pause_data.repeat.count"),
        (lambda d: d.update(repeat={"count": "1"}), "flow.pause_data.repeat"),
        (lambda d: d.update(answer_schema={"type": "string"}), "flow.pause_data.answer_schema"),
        (lambda d: d.pop("answer_schema"), "flow.pause_data.answer_schema"),
    ],
)
async def test_R004_145_a_forged_ask_record_is_refused_by_field(edit: Any, field: str) -> None:
    paused = await build().run("order some")
    cp = roundtrip(paused.checkpoint)
    edit(cp["flow"]["pause_data"])
    with pytest.raises(InvalidCheckpointError) as info:
        await build().resume(cp, 3)
    assert info.value.field == field and not isinstance(info.value, InvalidConversationError)


@pytest.mark.parametrize("answer", [object(), None, {}, [], "not a schema"])
def test_R004_145_an_answer_type_that_cannot_be_declared_is_refused(answer: Any) -> None:
    with pytest.raises(InvalidToolDefinitionError):
        ask_human_typed(answer)


def test_R004_145_max_reasks_is_bounded() -> None:
    for bad in (-1, 21, True, "2"):
        with pytest.raises(InvalidToolDefinitionError):
            ask_human_typed(int, max_reasks=bad)  # type: ignore[arg-type]


@settings(max_examples=30, deadline=None)
@given(st.integers(-(10**9), 10**9) | st.text(max_size=20))
def test_R004_145_an_int_ask_accepts_exactly_the_ints(answer: Any) -> None:
    paused = build().run_sync("order some")
    done = build().resume_sync(roundtrip(paused.checkpoint), answer)
    fits = isinstance(answer, int)
    if isinstance(answer, str):
        try:
            fits = isinstance(json.loads(answer), int) and not isinstance(json.loads(answer), bool)
        except ValueError:
            fits = False
    assert (done.status == "completed") is fits
