"""Typed asks exactly: the answer schema of each answer type, the tool they make, and their refusals."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint.tools import InvalidToolDefinitionError, PauseOutsideAgentError, ToolContext, ask_human_typed
from agentfootprint.tools.tool import question_schema
from agentfootprint.tools.typed_ask import answer_schema_of


class Refund(BaseModel):
    amount: int
    reason: str


def test_answer_schema_of_each_scalar() -> None:
    assert answer_schema_of(bool) == {"type": "boolean"}
    assert answer_schema_of(int) == {"type": "integer"}
    assert answer_schema_of(float) == {"type": "number"}
    assert answer_schema_of(str) == {"type": "string"}
    fresh = answer_schema_of(int)
    fresh["minimum"] = 0
    assert answer_schema_of(int) == {"type": "integer"}


def test_answer_schema_of_a_model_and_a_schema_dict() -> None:
    assert answer_schema_of(Refund) == Refund.model_json_schema()
    given: dict[str, Any] = {"type": "string", "enum": ["yes", "no"]}
    out = answer_schema_of(given)
    assert out == given and out is not given


@pytest.mark.parametrize("answer", [{}, list, None, "string", 5, Refund(amount=1, reason="x"), dict])
def test_other_answers_are_refused(answer: Any) -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        answer_schema_of(answer)
    assert str(info.value) == (
        "a typed ask's answer must be bool, int, float, str, a pydantic model class or a JSON Schema dict"
    )


def test_a_typed_ask_is_a_pausing_tool_with_its_answer_schema() -> None:
    made = ask_human_typed(int)
    assert (made.name, made.pauses, made.max_reasks, made.answer_schema) == (
        "ask_human_typed",
        True,
        2,
        {"type": "integer"},
    )
    assert made.description == (
        "Ask the human user a question whose answer is an integer value, and wait for it. Use it when you need "
        "information only the user can give."
    )
    assert made.input_schema == question_schema()
    assert (made.check_in, made.permission) == (False, None)


def test_a_structured_answer_and_a_custom_name_and_description() -> None:
    made = ask_human_typed(Refund, name="ask_refund", description="Ask for a refund.", max_reasks=0)
    assert (made.name, made.description, made.max_reasks) == ("ask_refund", "Ask for a refund.", 0)
    assert ask_human_typed({"anyOf": [{"type": "string"}]}).description.startswith(
        "Ask the human user a question whose answer is a structured value,"
    )
    assert ask_human_typed({"type": ["string", "null"]}).description.startswith(
        "Ask the human user a question whose answer is a structured value,"
    )
    assert ask_human_typed(str, max_reasks=20).max_reasks == 20
    assert ask_human_typed(bool).description.startswith(
        "Ask the human user a question whose answer is a boolean value,"
    )
    for kind, article in [("object", "an"), ("array", "an"), ("number", "a"), ("null", "a"), ("string", "a")]:
        assert ask_human_typed({"type": kind}).description.startswith(
            f"Ask the human user a question whose answer is {article} {kind} value,"
        )


@pytest.mark.parametrize("max_reasks", [-1, 21, True, 2.0, "2"])
def test_max_reasks_must_be_an_int_in_range(max_reasks: Any) -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        ask_human_typed(int, name="n" * 70, max_reasks=max_reasks)
    assert str(info.value) == f"tool {'n' * 64}: max_reasks must be an int in 0..20"


def test_a_typed_ask_refuses_a_bad_name() -> None:
    with pytest.raises(InvalidToolDefinitionError):
        ask_human_typed(int, name="no spaces allowed")


def test_executing_a_typed_ask_outside_an_agent_is_refused() -> None:
    made = ask_human_typed(bool)
    with pytest.raises(PauseOutsideAgentError) as info:
        made.execute({"question": "ok?"}, ToolContext())
    assert str(info.value) == "a typed ask pauses the run; it only runs inside an agent loop"
