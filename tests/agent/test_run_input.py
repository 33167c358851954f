"""The run-input door (seed 000, API.md §2 "Run input"): adapt a str, refuse everything else by name."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.agent._run_input import InvalidRunInputError, RunInput, describe_received, normalize_run_input
from agentfootprint.errors import AgentFootprintError

SECRET = "s3cr3t-VALUE-do-not-echo"


# ---------------------------------------------------------------- accepted


def test_bare_string_is_adapted_to_a_message() -> None:
    got = normalize_run_input("Should order A-1001 be refunded?", "Agent.run")
    assert got == RunInput(message="Should order A-1001 be refunded?", extra={})


def test_dict_with_message_is_accepted() -> None:
    assert normalize_run_input({"message": "hi"}, "Agent.run").message == "hi"


def test_extra_keys_ride_through_untouched() -> None:
    identity = {"tenant": "t1"}
    marker = object()
    got = normalize_run_input({"message": "hi", "identity": identity, "x": marker}, "Agent.run")
    assert got.message == "hi"
    assert got.extra == {"identity": identity, "x": marker}
    assert got.extra["identity"] is identity and got.extra["x"] is marker


def test_message_is_not_stripped() -> None:
    assert normalize_run_input("  go  ", "Agent.run").message == "  go  "
    assert normalize_run_input({"message": " go\n"}, "Agent.run").message == " go\n"


def test_run_input_passes_through() -> None:
    given_input = RunInput(message="x")
    assert normalize_run_input(given_input, "Agent.run") is given_input


# ---------------------------------------------------------------- refused: the table


@pytest.mark.parametrize(
    ("value", "received"),
    [
        ({}, "object with no keys"),
        ({"text": "hello"}, "object with keys: text"),
        ({"a": 1, "b": 2}, "object with keys: a, b"),
        ({"b": 1, "a": 2}, "object with keys: b, a"),
        ("", "empty string"),
        ("   \n\t", "empty string"),
        (None, "None"),
        (42, "int"),
        (1.5, "float"),
        (True, "bool"),
        ([], "list"),
        (["message"], "list"),
        (b"hello", "bytes"),
        (("m",), "tuple"),
        ({"message": None}, "object with keys: message"),
        ({"message": 42}, "object with keys: message"),
        ({"message": ""}, "object with keys: message"),
        ({"message": "   "}, "object with keys: message"),
        ({"message": "", "identity": {}}, "object with keys: message, identity"),
        ({1: "x"}, "object with keys: <int key>"),
        ({("a", "b"): "x", "c": 1}, "object with keys: <tuple key>, c"),
    ],
)
def test_refusal_table(value: Any, received: str) -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(value, "Agent.run")
    err = info.value
    assert err.received == received
    assert err.runner == "Agent.run"
    assert err.code == "ERR_INVALID_RUN_INPUT"
    assert isinstance(err, AgentFootprintError)
    assert str(err).startswith(f'Agent.run: expected a message — pass a str or {{"message": str}}; received {received}')


def test_message_reads_like_the_seed() -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input({"text": "hi"}, "Agent.run")
    assert str(info.value).startswith(
        'Agent.run: expected a message — pass a str or {"message": str}; received object with keys: text'
    )
    assert info.value.hint


def test_runner_names_the_door() -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(None, "Sequence.run")
    assert info.value.runner == "Sequence.run"
    assert str(info.value).startswith("Sequence.run:")


def test_blank_message_hint_says_so_without_the_value() -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input({"message": "   "}, "Agent.run")
    assert "blank" in info.value.hint


def test_non_str_message_hint_names_the_type() -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input({"message": 12345}, "Agent.run")
    assert "int" in info.value.hint
    assert "12345" not in str(info.value)


# ---------------------------------------------------------------- never quote a value


@pytest.mark.parametrize(
    "value",
    [
        {"text": SECRET},
        {"message": [SECRET]},
        {"message": {"inner": SECRET}},
        {"data": SECRET, "more": SECRET},
        [SECRET],
        (SECRET,),
        SECRET.encode(),
        {"message": SECRET.encode()},
    ],
)
def test_refusals_never_quote_the_value(value: Any) -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(value, "Agent.run")
    err = info.value
    for text in (str(err), err.received, err.hint, repr(err)):
        assert SECRET not in text


def test_received_is_capped() -> None:
    huge = {f"key_{i:04d}": i for i in range(1000)}
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(huge, "Agent.run")
    assert len(info.value.received) <= 200
    assert info.value.received.startswith("object with keys: key_0000, key_0001")


def test_long_and_control_char_keys_are_cleaned() -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input({"x" * 5000: 1, "a\nb": 2}, "Agent.run")
    received = info.value.received
    assert len(received) <= 200
    assert "\n" not in received


def test_hostile_objects_do_not_crash() -> None:
    class Weird:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

        __str__ = __repr__

    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(Weird(), "Agent.run")
    assert info.value.received == "Weird"
    with pytest.raises(InvalidRunInputError) as info2:
        normalize_run_input({Weird(): 1}, "Agent.run")
    assert info2.value.received == "object with keys: <Weird key>"


def test_describe_received_for_a_non_blank_str_names_the_type() -> None:
    assert describe_received("hello") == "str"


# ---------------------------------------------------------------- properties


@given(st.text().filter(lambda s: s.strip() != ""))
def test_any_non_blank_string_is_its_own_message(text: str) -> None:
    assert normalize_run_input(text, "Agent.run").message == text


@given(st.text().filter(lambda s: s.strip() == ""))
def test_any_blank_string_is_refused_as_empty(text: str) -> None:
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(text, "Agent.run")
    assert info.value.received == "empty string"


_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).filter(lambda k: k != "message")


@given(st.dictionaries(_keys, st.text(min_size=0, max_size=30), max_size=6), st.text(min_size=6, max_size=20))
def test_dicts_without_message_are_refused_listing_keys_never_values(values: dict[str, str], salt: str) -> None:
    secret = f"§{salt}§"
    payload = {k: f"{secret}{v}" for k, v in values.items()}
    with pytest.raises(InvalidRunInputError) as info:
        normalize_run_input(payload, "Agent.run")
    err = info.value
    expected = "object with keys: " + ", ".join(payload) if payload else "object with no keys"
    assert err.received == expected[:200] or len(expected) > 200
    assert secret not in str(err)


@given(
    st.text().filter(lambda s: s.strip() != ""),
    st.dictionaries(_keys, st.integers() | st.text() | st.none(), max_size=5),
)
def test_extra_keys_always_survive(message: str, extra: dict[str, Any]) -> None:
    got = normalize_run_input({"message": message, **extra}, "Agent.run")
    assert got.message == message
    assert got.extra == extra
