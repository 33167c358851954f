"""Trusted records are what ``model_construct`` builds: the same fields, field order, fields set, repr and dump."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentfootprint.flow._trusted import trusted
from agentfootprint.flow.commit import Commit, Write


def _same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b)
    assert list(a.__dict__.items()) == list(b.__dict__.items())
    assert a.model_fields_set == b.model_fields_set
    assert sys.getsizeof(a.model_fields_set) == sys.getsizeof(b.model_fields_set)  # a record costs what it did
    if len(a.__dict__) == len(type(a).model_fields):  # every field present: the engine's only case
        assert sys.getsizeof(a.__dict__) == sys.getsizeof(b.__dict__)
    assert a.__pydantic_extra__ == b.__pydantic_extra__ is None
    assert a.__pydantic_private__ == b.__pydantic_private__ is None
    assert a == b
    assert repr(a) == repr(b)
    assert a.model_dump() == b.model_dump()
    assert a.model_dump_json() == b.model_dump_json()


def test_a_write_equals_model_construct() -> None:
    _same(trusted(Write)(path="k", verb="set", value=[1]), Write.model_construct(path="k", verb="set", value=[1]))


def test_a_write_without_value_takes_the_default() -> None:
    made = trusted(Write)(path="k", verb="delete")
    _same(made, Write.model_construct(path="k", verb="delete"))
    assert made.value is None
    assert made.model_fields_set == {"path", "verb"}


def test_a_commit_gets_fresh_containers_for_its_defaults() -> None:
    make = trusted(Commit)
    first, second = make(idx=0, stage_id="a", runtime_stage_id="a#0"), make(idx=1, stage_id="b", runtime_stage_id="b#1")
    _same(first, Commit.model_construct(idx=0, stage_id="a", runtime_stage_id="a#0"))
    assert first.reads == {} and first.writes == [] and first.emits == []
    assert first.reads is not second.reads and first.writes is not second.writes


def test_a_missing_required_field_is_left_out_as_model_construct_does() -> None:
    _same(trusted(Commit)(stage_id="a"), Commit.model_construct(stage_id="a"))
    assert "idx" not in trusted(Commit)(stage_id="a").__dict__


def test_an_unknown_key_falls_back_to_model_construct() -> None:
    made = trusted(Write)(path="k", verb="set", stray=1)
    _same(made, Write.model_construct(path="k", verb="set", stray=1))
    assert "stray" not in made.__dict__


def test_a_mutable_default_is_copied_per_record() -> None:
    class Holder(BaseModel):
        items: list[int] = [1, 2]

    make = trusted(Holder)
    a, b = make(), make()
    _same(a, Holder.model_construct())
    a.items.append(3)
    assert b.items == [1, 2] and Holder.model_construct().items == [1, 2]


def test_a_frozen_record_stays_frozen() -> None:
    made = trusted(Write)(path="k", verb="set", value=1)
    with pytest.raises(ValidationError):
        made.path = "other"  # type: ignore[misc]
    assert made.path == "k"


def _model(name: str, namespace: dict[str, Any]) -> type[BaseModel]:
    return type(name, (BaseModel,), namespace)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        pytest.param(
            _model("Aliased", {"__annotations__": {"a": int}, "a": Field(alias="b")}),
            "Aliased.a: trusted() supports fields without aliases only",
            id="alias",
        ),
        pytest.param(
            _model("ValidationAliased", {"__annotations__": {"a": int}, "a": Field(validation_alias="b")}),
            "ValidationAliased.a: trusted() supports fields without aliases only",
            id="validation-alias",
        ),
        pytest.param(
            _model("Extra", {"__annotations__": {"a": int}, "model_config": ConfigDict(extra="allow")}),
            "Extra: trusted() supports plain models only",
            id="extra-allow",
        ),
        pytest.param(
            _model(
                "DataFactory",
                {"__annotations__": {"a": int, "b": int}, "b": Field(default_factory=lambda data: data["a"])},
            ),
            "DataFactory.b: trusted() needs argument-free default factories",
            id="factory-taking-data",
        ),
        pytest.param(
            _model("PostInit", {"__annotations__": {"a": int}, "model_post_init": lambda self, ctx: None}),
            "PostInit: trusted() supports plain models only",
            id="post-init",
        ),
    ],
)
def test_models_it_cannot_mirror_are_refused(model: type[BaseModel], message: str) -> None:
    with pytest.raises(TypeError) as info:
        trusted(model)
    assert str(info.value) == message


def test_a_nested_mutable_default_is_deep_copied_per_record() -> None:
    class Nested(BaseModel):
        rows: list[list[int]] = [[1]]

    make = trusted(Nested)
    a, b = make(), make()
    a.rows[0].append(2)
    assert b.rows == [[1]] and make().rows == [[1]] and Nested.model_construct().rows == [[1]]


def test_known_fields_are_built_without_model_construct(monkeypatch: pytest.MonkeyPatch) -> None:
    class Plain(BaseModel):
        a: int
        b: list[int] = []

    make = trusted(Plain)
    expected = Plain.model_construct(a=1)

    def refuse(cls: Any, **values: Any) -> Any:
        raise AssertionError("model_construct called")

    monkeypatch.setattr(Plain, "model_construct", classmethod(refuse))
    _same(make(a=1), expected)  # planned once: a record of known fields never goes through model_construct
    with pytest.raises(AssertionError):
        make(a=1, unknown=2)  # an unknown key is model_construct's to decide


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
_commit_fields: dict[str, Any] = {
    "idx": st.integers(0, 10_000),
    "stage_id": st.text(max_size=8),
    "runtime_stage_id": st.text(max_size=8),
    "stage_name": st.text(max_size=8),
    "kind": st.sampled_from(["stage", "decider", "selector", "join"]),
    "reads": st.dictionaries(st.text(max_size=4), st.none() | st.integers(0, 50), max_size=3),
    "failed": st.booleans(),
    "error": st.none() | st.text(max_size=10),
    "decision": st.none() | st.dictionaries(st.text(max_size=3), _values, max_size=2),
    "visit": st.integers(1, 9),
    "break_reason": st.none() | st.text(max_size=10),
    "used_args": st.booleans(),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({}, optional=_commit_fields), st.lists(st.sampled_from(["set", "append"]), max_size=3))
def test_any_commit_equals_model_construct(fields: dict[str, Any], verbs: list[str]) -> None:
    fields["writes"] = [trusted(Write)(path=f"k{i}", verb=v, value=i) for i, v in enumerate(verbs)]
    _same(trusted(Commit)(**fields), Commit.model_construct(**fields))
