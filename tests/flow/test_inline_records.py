"""Records built with their values inline (``_trusted.inline``): no ``__dict__`` object per record until something
reads it, and in every pydantic behaviour the same record ``model_construct`` builds."""

from __future__ import annotations

import copy
import gc
import pickle
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frozen import freeze
from agentfootprint.flow._trusted import inline
from agentfootprint.flow.commit import Write
from agentfootprint.flow.scope import _write


def _is_inline(model: BaseModel) -> bool:
    return not any(type(ref) is dict for ref in gc.get_referents(model))


def _same(a: BaseModel, b: BaseModel) -> None:
    """Equal in everything pydantic shows: fields and their order, fields set, eq, repr, dumps, copies, pickle."""
    assert type(a) is type(b)
    assert [getattr(a, n) for n in type(a).model_fields] == [getattr(b, n) for n in type(b).model_fields]
    assert a.model_fields_set == b.model_fields_set
    assert a == b and b == a and not (a != b)
    assert repr(a) == repr(b) and str(a) == str(b)
    assert a.model_dump() == b.model_dump() and a.model_dump(mode="json") == b.model_dump(mode="json")
    assert a.model_dump_json() == b.model_dump_json()
    assert a.model_dump(exclude_unset=True) == b.model_dump(exclude_unset=True)
    for made in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a)), a.model_copy()):
        assert made == b and made.model_fields_set == b.model_fields_set and repr(made) == repr(b)
    assert a.model_copy(update={"path": "other"}) == b.model_copy(update={"path": "other"})
    assert list(a.__dict__.items()) == list(b.__dict__.items())  # read last: this materializes a's dict
    assert a.__pydantic_extra__ is None and a.__pydantic_private__ is None


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(path=st.text(min_size=1, max_size=8), verb=st.sampled_from(["set", "append", "merge", "delete"]), value=VALUES)
def test_property_an_engine_write_equals_model_construct(path: str, verb: str, value: Any) -> None:
    frozen = freeze(value)
    made = _write(path, verb, frozen)
    assert _is_inline(made)
    assert made.value is frozen and made.path is path and made.read_keys is None
    _same(made, Write.model_construct(path=path, verb=verb, value=frozen))
    if not isinstance(frozen, list | dict):  # hashable values: a frozen record hashes as model_construct's does
        assert hash(_write(path, verb, frozen)) == hash(Write.model_construct(path=path, verb=verb, value=frozen))


def test_a_write_stays_frozen_and_its_dict_is_made_only_when_read() -> None:
    made = _write("k", "set", 1)
    with pytest.raises(ValidationError):
        made.path = "other"  # type: ignore[misc]
    assert made.path == "k" and _is_inline(made)
    assert made.__dict__ == {"path": "k", "verb": "set", "value": 1, "read_keys": None}
    assert not _is_inline(made) and made == Write.model_construct(path="k", verb="set", value=1)


def test_a_class_whose_keys_were_spent_falls_back_to_a_dict_per_record() -> None:
    class Late(BaseModel):
        model_config = ConfigDict(frozen=True)
        a: int
        b: list[int] = []

    spent = [Late.model_construct(a=i) for i in range(40)]  # each instance made first shrinks the shared keys
    build = inline(Late, ("a", "b"))
    made = build(1, [2])
    assert len(spent) == 40
    if sys.version_info < (3, 13):  # CPython 3.11/3.12 size a class's shared keys by its first instances
        assert not _is_inline(made)
    fresh = Late.model_construct(a=1, b=[2])
    assert made == fresh and repr(made) == repr(fresh) and made.model_fields_set == fresh.model_fields_set


def test_a_fresh_class_keeps_values_inline_and_a_plain_one_gets_its_own_fields_set() -> None:
    class Fresh(BaseModel):
        x: int
        y: str = ""

    build = inline(Fresh, ("x",))
    first, second = build(1, ""), build(2, "b")
    assert _is_inline(first) and _is_inline(second)
    assert first.model_fields_set == {"x"} and first.model_fields_set is not second.model_fields_set
    first.y = "changed"  # not frozen: assignment works as on any model, the other record untouched
    assert (first.y, second.y) == ("changed", "b")
    assert first == Fresh.model_construct(x=1, y="changed")


async def test_a_run_records_its_writes_inline() -> None:
    def stage(s: Any) -> None:
        s["a"] = {"b": [1]}
        s.append("log", "x")

    result = await flow_chart("S", stage, id="s").build().run({})
    writes = [w for c in result.commit_log for w in c.writes]
    assert [w.path for w in writes] == ["a", "log"] and all(_is_inline(w) for w in writes)
    assert writes[0] == Write.model_construct(path="a", verb="set", value=freeze({"b": [1]}))


def test_records_set_pydantic_slots_through_their_descriptors_and_anything_else_generically() -> None:
    from agentfootprint.flow._trusted import _setter

    for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
        assert getattr(_setter(Write, name), "__self__", None) is vars(BaseModel)[name]
    probe = object.__new__(Write)
    _setter(Write, "path")(probe, "k")  # no descriptor holds a field: set as object.__setattr__ sets it
    assert probe.path == "k"
