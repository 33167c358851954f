"""Record payloads, exactly: bounded keeps names, types and sizes (never values); verbatim keeps served values."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint.audit._payload import (
    IDENTITY_FIELDS,
    PAYLOAD_MODES,
    commit_payload,
    event_payload,
    shape,
    state_payload,
)
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.redaction import REDACTED


class _Point(BaseModel):
    x: int
    label: str


class AVeryLongClassNameThatGoesOnAndOnAndOnAndOnAndOnPastSixtyFourCharactersXYZ:
    pass


# -- shape --------------------------------------------------------------------------------------------------------
def test_shape_of_each_scalar_names_its_type_only() -> None:
    assert shape(None) == {"type": "null"}
    assert shape(True) == {"type": "bool"}
    assert shape(False) == {"type": "bool"}
    assert shape(0) == {"type": "int"}
    assert shape(-7) == {"type": "int"}
    assert shape(0.0) == {"type": "float"}
    assert shape(2.5) == {"type": "float"}


def test_shape_of_a_string_is_its_size_and_marks_the_redaction_marker() -> None:
    assert shape("") == {"type": "str", "size": 0}
    assert shape("Ada") == {"type": "str", "size": 3}
    assert shape(REDACTED) == {"type": "str", "size": len(REDACTED), "redacted": True}
    assert shape(REDACTED + " ") == {"type": "str", "size": len(REDACTED) + 1}


def test_shape_of_an_object_lists_its_key_names_in_order() -> None:
    assert shape({}) == {"type": "object", "size": 0, "keys": []}
    assert shape({"b": 1, "a": 2}) == {"type": "object", "size": 2, "keys": ["b", "a"]}
    assert shape({"k": 1}) == {"type": "object", "size": 1, "keys": ["k"]}
    assert shape({1: "x", None: "y"}) == {"type": "object", "size": 2, "keys": ["1", "None"]}


def test_shape_of_an_object_caps_key_names_at_64_chars_and_50_keys() -> None:
    long_key = "k" * 65
    assert shape({long_key: 1, "k" * 64: 2}) == {"type": "object", "size": 2, "keys": ["k" * 64, "k" * 64]}
    many = {f"key{i:03d}": i for i in range(51)}
    out = shape(many)
    assert out["size"] == 51
    assert out["keys"] == [f"key{i:03d}" for i in range(50)]


def test_shape_of_a_model_is_the_shape_of_its_dump() -> None:
    assert shape(_Point(x=1, label="secret")) == {"type": "object", "size": 2, "keys": ["x", "label"]}


def test_shape_of_each_sequence_kind_is_an_array_with_its_size() -> None:
    assert shape([]) == {"type": "array", "size": 0}
    assert shape([1, "a", None]) == {"type": "array", "size": 3}
    assert shape((1, 2)) == {"type": "array", "size": 2}
    assert shape({1, 2, 3, 4}) == {"type": "array", "size": 4}
    assert shape(frozenset({"a"})) == {"type": "array", "size": 1}


def test_shape_of_anything_else_is_its_type_name_capped_at_64() -> None:
    assert shape(b"abc") == {"type": "bytes"}
    assert shape(object()) == {"type": "object"}
    long = AVeryLongClassNameThatGoesOnAndOnAndOnAndOnAndOnPastSixtyFourCharactersXYZ()
    assert shape(long) == {"type": type(long).__name__[:64]}
    assert len(type(long).__name__) > 64


@given(st.text(max_size=300))
def test_shape_of_any_string_never_holds_it(text: str) -> None:
    out = shape(text)
    assert out["size"] == len(text)
    assert set(out) == ({"type", "size", "redacted"} if text == REDACTED else {"type", "size"})


# -- commit payloads ----------------------------------------------------------------------------------------------
def _commit(**fields: Any) -> Commit:
    base: dict[str, Any] = {"idx": 3, "stage_id": "s", "runtime_stage_id": "s#3", "stage_name": "Stage"}
    return Commit(**{**base, **fields})


def test_verbatim_commit_payload_is_the_served_commit() -> None:
    commit = _commit(writes=[Write(path="a", verb="set", value={"n": 2**60})], error="KeyError: 'x'")
    out = commit_payload(commit, "verbatim")
    assert out == {**commit.model_dump(), "writes": [{"path": "a", "verb": "set", "value": {"n": str(2**60)}}]}


def test_bounded_commit_payload_replaces_each_value_by_its_shape() -> None:
    commit = _commit(
        writes=[
            Write(path="name", verb="set", value="Ada Lovelace"),
            Write(path="tags", verb="append", value=["a", "b"], read_keys=["name", "x"]),
            Write(path="gone", verb="delete"),
        ],
        read_values={"name": "Ada", "score": 5},
        emits=[{"name": "sent", "payload": {"to": "ada"}}, {"name": "n" * 70, "payload": "x"}],
        error="ValueError: account 42 locked",
        break_reason="limit hit at 99",
    )
    out = commit_payload(commit, "bounded")
    assert out["writes"] == [
        {"path": "name", "verb": "set", "shape": {"type": "str", "size": 12}},
        {"path": "tags", "verb": "append", "shape": {"type": "array", "size": 2}, "read_keys": ["name", "x"]},
        {"path": "gone", "verb": "delete", "shape": {"type": "null"}},
    ]
    assert out["read_values"] == {"name": {"type": "str", "size": 3}, "score": {"type": "int"}}
    assert out["emits"] == [
        {"name": "sent", "shape": {"type": "object", "size": 1, "keys": ["to"]}},
        {"name": "n" * 64, "shape": {"type": "str", "size": 1}},
    ]
    assert out["error"] == {"exception": "ValueError", "size": len("ValueError: account 42 locked")}
    assert out["break_reason"] == {"type": "str", "size": len("limit hit at 99")}
    assert out["decision"] is None
    untouched = {k: v for k, v in commit.model_dump().items() if k not in {"writes", "read_values", "emits"}}
    untouched |= {"error": out["error"], "break_reason": out["break_reason"]}
    assert {k: out[k] for k in untouched} == untouched
    assert "Ada" not in str(out) and "42" not in str(out) and "99" not in str(out)


def test_bounded_commit_payload_without_optional_parts() -> None:
    out = commit_payload(_commit(), "bounded")
    assert out["writes"] == [] and out["emits"] == []
    assert "read_values" not in out
    assert out["error"] is None and out["break_reason"] is None and out["decision"] is None
    assert out["idx"] == 3 and out["runtime_stage_id"] == "s#3"


def test_bounded_error_name_is_the_exception_only_when_it_is_an_identifier() -> None:
    def err(text: str) -> Any:
        return commit_payload(_commit(error=text), "bounded")["error"]

    assert err("KeyError") == {"exception": "KeyError", "size": 8}
    assert err("  KeyError  : gone") == {"exception": "KeyError", "size": 18}
    assert err("no such key: gone") == {"exception": "error", "size": 17}
    assert err("a:b:c") == {"exception": "a", "size": 5}
    assert err("") == {"exception": "error", "size": 0}
    long = "E" * 70
    assert err(long + ": x") == {"exception": "E" * 64, "size": 73}


def test_bounded_decision_keeps_rule_structure_and_drops_inputs() -> None:
    decision = {
        "kind": "decider",
        "chosen": ("reject",),
        "default": "approve",
        "default_used": False,
        "secret": "not kept",
        "rules": [
            "not a rule",
            {
                "index": 0,
                "type": "filter",
                "branch": "reject",
                "label": "Has profile",
                "matched": True,
                "conditions": [
                    {"key": "profile", "op": "ne", "result": True, "redacted": False, "actual": "Ada", "threshold": 1},
                    "not a condition",
                ],
                "inputs": [{"k": "v"}, {"k": "w"}],
                "error": "TypeError: bad 'Ada'",
                "extra": "dropped",
            },
            {"index": 1},
        ],
    }
    out = commit_payload(_commit(kind="decider", decision=decision), "bounded")["decision"]
    assert out == {
        "kind": "decider",
        "chosen": ["reject"],
        "default": "approve",
        "default_used": False,
        "rules": [
            {
                "index": 0,
                "type": "filter",
                "branch": "reject",
                "label": "Has profile",
                "matched": True,
                "conditions": [{"key": "profile", "op": "ne", "result": True, "redacted": False}],
                "inputs": 2,
                "error": {"exception": "TypeError", "size": len("TypeError: bad 'Ada'")},
            },
            {
                "index": 1,
                "type": None,
                "branch": None,
                "label": None,
                "matched": None,
                "conditions": [],
                "inputs": 0,
                "error": None,
            },
        ],
    }


def test_bounded_decision_with_nothing_in_it() -> None:
    out = commit_payload(_commit(kind="decider", decision={}), "bounded")["decision"]
    assert out == {"kind": None, "chosen": [], "default": None, "default_used": None, "rules": []}


# -- event payloads -----------------------------------------------------------------------------------------------
def test_bounded_event_keeps_identity_fields_and_shapes_the_rest() -> None:
    payload = {
        "tool_name": "lookup",
        "iteration": 2,
        "ok": True,
        "latency_ms": 1.5,
        "status": None,
        "arguments": {"ssn": "123"},
        "content": "Customer 123",
        "model": ["not", "a", "scalar"],
    }
    assert event_payload(payload, "bounded") == {
        "tool_name": "lookup",
        "iteration": 2,
        "ok": True,
        "latency_ms": 1.5,
        "status": None,
        "arguments": {"type": "object", "size": 1, "keys": ["ssn"]},
        "content": {"type": "str", "size": 12},
        "model": {"type": "array", "size": 3},
    }


def test_bounded_identity_strings_are_kept_up_to_200_chars() -> None:
    assert event_payload({"id": "i" * 200}, "bounded") == {"id": "i" * 200}
    assert event_payload({"id": "i" * 201}, "bounded") == {"id": {"type": "str", "size": 201}}


def test_bounded_event_key_names_are_capped_at_64_and_stringified() -> None:
    out = event_payload({"x" * 70: "v", 5: 1}, "bounded")
    assert out == {"x" * 64: {"type": "str", "size": 1}, "5": {"type": "int"}}


def test_event_payload_that_is_not_an_object_is_wrapped_as_value() -> None:
    assert event_payload("hello", "bounded") == {"value": {"type": "str", "size": 5}}
    assert event_payload("hello", "verbatim") == {"value": "hello"}
    assert event_payload(None, "verbatim") == {"value": None}


def test_event_payload_of_a_model_is_its_dump() -> None:
    point = _Point(x=4, label="Ada")
    assert event_payload(point, "verbatim") == {"x": 4, "label": "Ada"}
    assert event_payload(point, "bounded") == {"x": {"type": "int"}, "label": {"type": "str", "size": 3}}


def test_verbatim_event_payload_is_made_json_representable() -> None:
    assert event_payload({"n": float("nan"), "big": 2**60, 3: (1, 2)}, "verbatim") == {
        "n": "NaN",
        "big": str(2**60),
        "3": [1, 2],
    }


# -- state payloads -----------------------------------------------------------------------------------------------
def test_state_payload_verbatim_and_bounded() -> None:
    state = {"applicant": "Ada", "score": 580, "k" * 70: [1, 2]}
    assert state_payload(state, "verbatim") == {"applicant": "Ada", "score": 580, "k" * 70: [1, 2]}
    assert state_payload(state, "bounded") == {
        "applicant": {"type": "str", "size": 3},
        "score": {"type": "int"},
        "k" * 64: {"type": "array", "size": 2},
    }


def test_the_modes_and_identity_fields_are_pinned() -> None:
    assert PAYLOAD_MODES == ("bounded", "verbatim")
    assert {"tool_name", "model", "iteration", "status", "id", "latency_ms"} <= IDENTITY_FIELDS
    assert not {"content", "arguments", "message", "answer", "value"} & IDENTITY_FIELDS


_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(min_size=1, max_size=20).map(lambda t: "VAL-" + t),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


@given(st.dictionaries(_KEYS.filter(lambda k: k not in IDENTITY_FIELDS), _VALUES, max_size=5))
def test_bounded_payloads_never_carry_a_value(payload: dict[str, Any]) -> None:
    for out in (state_payload(payload, "bounded"), event_payload(payload, "bounded")):
        text = repr(out)
        assert not [s for s in _strings(payload) if s in text]
        assert set(out) == {k[:64] for k in payload}
