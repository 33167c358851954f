"""Seed 000 (the run-input door every runner uses): one behaviour probe per rule, each quoting its rule id."""

from __future__ import annotations

from typing import Any

import pytest

import agentfootprint
from agentfootprint import Agent, InvalidRunInputError
from agentfootprint.agent import normalize_run_input
from agentfootprint.compose import Parallel, Sequence
from agentfootprint.providers import LLMRequest, mock


class Counting:
    """A scripted model that counts its calls and keeps what it was sent."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> str:
        self.requests.append(request)
        return "ok"


def _agent(model: Counting | None = None) -> Agent:
    return Agent.create(provider=mock(respond=model or Counting()), model="m", name="bot").build()


def _refused(value: Any, runner: Agent | None = None) -> tuple[InvalidRunInputError, Counting]:
    model = Counting()
    agent = runner or _agent(model)
    with pytest.raises(InvalidRunInputError) as err:
        agent.run_sync(value)
    return err.value, model


def test_R000_01_a_bare_string_is_adapted_to_a_message() -> None:
    """R000-01: a bare string run input is adapted to {message: str}."""
    model = Counting()
    assert _agent(model).run_sync("hello").answer == "ok"
    assert model.requests[0].messages[-1].content == "hello"
    assert normalize_run_input("hello", "Agent.run").message == "hello"


def test_R000_02_an_empty_object_is_refused_by_name_before_any_model_call() -> None:
    """R000-02: {} is refused by name (InvalidRunInputError) and no model call is made."""
    error, model = _refused({})
    assert type(error) is InvalidRunInputError and model.requests == []


def test_R000_03_a_none_message_is_refused() -> None:
    """R000-03: {message: None} is refused."""
    error, model = _refused({"message": None})
    assert "NoneType" in str(error) and model.requests == []


def test_R000_04_a_non_string_message_is_refused_without_echoing_it() -> None:
    """R000-04: {message: 42xx} is refused and the value is never echoed."""
    error, _ = _refused({"message": 4242})
    assert "4242" not in str(error) and "4242" not in error.received and "int" in str(error)


def test_R000_05_none_is_refused() -> None:
    """R000-05: None input is refused."""
    error, model = _refused(None)
    assert error.received == "None" and model.requests == []


def test_R000_06_the_empty_string_is_refused() -> None:
    """R000-06: '' is refused."""
    error, _ = _refused("")
    assert error.received == "empty string"


@pytest.mark.parametrize("value", ["   ", "\n\t", {"message": "  "}, {"message": "\n"}])
def test_R000_07_whitespace_only_messages_are_refused(value: Any) -> None:
    """R000-07: whitespace-only messages (bare or in a dict) are refused."""
    error, model = _refused(value)
    assert "blank" in error.hint and model.requests == []


def test_R000_08_a_refusal_fires_before_the_run_starts() -> None:
    """R000-08: no model call, no turn_start event, no snapshot."""
    model = Counting()
    agent = _agent(model)
    events: list[str] = []
    agent.on("*", lambda e: events.append(e.type))
    with pytest.raises(InvalidRunInputError):
        agent.run_sync({"text": "hi"})
    assert model.requests == [] and events == [] and agent.last_snapshot() is None


def test_R000_09_the_refusal_is_an_exception_class_with_its_code() -> None:
    """R000-09: the refusal carries code ERR_INVALID_RUN_INPUT and is an exception class."""
    error, _ = _refused(7)
    assert isinstance(error, Exception) and issubclass(InvalidRunInputError, ValueError)
    assert error.code == "ERR_INVALID_RUN_INPUT"


def test_R000_10_received_is_a_short_description_never_a_value() -> None:
    """R000-10: `received` is the type, and for an object its keys, never a value."""
    error, _ = _refused({"msg": "secret-text", "token": "sk-live-1"})
    assert error.received == "object with keys: msg, token"
    assert "secret-text" not in str(error) and "sk-live-1" not in str(error)
    assert _refused(3.5)[0].received == "float"
    assert len(_refused({f"k{i}": i for i in range(500)})[0].received) <= 200


def test_R000_11_the_refusal_names_the_runner() -> None:
    """R000-11: `runner` names which runner refused ('Agent.run')."""
    error, _ = _refused(None)
    assert error.runner == "Agent.run" and str(error).startswith("Agent.run:")


def test_R000_12_the_refusal_says_what_arrived_and_both_accepted_forms() -> None:
    """R000-12: the message says what arrived and spells out both accepted forms."""
    error, _ = _refused([1, 2])
    assert 'pass a str or {"message": str}' in str(error) and "received list" in str(error)


def test_R000_13_a_blank_message_names_how_to_run_with_only_the_system_prompt() -> None:
    """R000-13: an empty/blank message refusal says to put the instruction in the message."""
    for value in ("", {"message": " "}):
        assert "put the instruction in the message" in str(_refused(value)[0])


def test_R000_14_extra_fields_ride_through_untouched() -> None:
    """R000-14: extra fields of an object input ride through (identity reaches the run; normalize keeps extras)."""
    marker = object()
    normalized = normalize_run_input({"message": "hi", "identity": {"tenant": "t1"}, "x": marker}, "Agent.run")
    assert normalized.extra == {"identity": {"tenant": "t1"}, "x": marker}
    agent = _agent()
    agent.run_sync({"message": "hi", "identity": {"tenant": "t1", "principal": "p1"}})
    identity = agent.last_run_input()["identity"]
    assert (identity.tenant, identity.principal) == ("t1", "p1")


@pytest.mark.parametrize("kind", ["Sequence", "Parallel"])
def test_R000_15_compositions_go_through_the_same_door_naming_themselves(kind: str) -> None:
    """R000-15: compositions refuse through the same door, naming themselves, before any member runs."""
    model = Counting()
    member = _agent(model)
    composition: Any = (
        Sequence.create("s").step("a", member).build()
        if kind == "Sequence"
        else Parallel.create("p").branch("a", member).build()
    )
    with pytest.raises(InvalidRunInputError) as err:
        composition.run_sync({})
    assert err.value.runner == f"{kind}.run" and model.requests == []


def test_R000_18_normalize_run_input_is_public() -> None:
    """R000-18: normalize_run_input is a seed export (agentfootprint and agentfootprint.agent): it normalizes a str or
    dict to {message, ...rest} or refuses naming the runner."""
    assert agentfootprint.normalize_run_input is normalize_run_input
    assert "normalize_run_input" in agentfootprint.__all__
    assert normalize_run_input({"message": "m", "k": 1}, "X.run").model_dump() == {"message": "m", "extra": {"k": 1}}
    with pytest.raises(InvalidRunInputError) as err:
        normalize_run_input({"k": 1}, "X.run")
    assert err.value.runner == "X.run"
