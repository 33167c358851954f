"""How one commit's writes apply to a namespace: each verb, last writers, and appends that grow an owned list."""

from __future__ import annotations

from typing import Any

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frozen import FrozenList
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow.commit import Write


def w(path: str, verb: Any, value: Any = None) -> Write:
    return Write(path=path, verb=verb, value=value)


def test_each_verb_applies_and_records_its_writer() -> None:
    ns = Namespace("", {"d": {"x": 1}, "gone": 1})
    ns.apply(0, [w("a", "set", 1), w("xs", "append", [1, 2]), w("d", "merge", {"y": 2}), w("gone", "delete")])
    assert ns.state == {"a": 1, "xs": [1, 2], "d": {"x": 1, "y": 2}}
    assert ns.last_writer == {"a": 0, "xs": 0, "d": 0, "gone": 0}
    assert isinstance(ns.state["xs"], FrozenList)


def test_deleting_an_absent_key_is_a_no_op() -> None:
    ns = Namespace("", {"a": 1})
    ns.apply(3, [w("never", "delete")])
    assert ns.state == {"a": 1} and ns.last_writer == {"never": 3}


def test_an_append_onto_a_value_that_is_no_list_starts_a_list() -> None:
    ns = Namespace("", {"n": 5, "d": {"a": 1}})
    ns.apply(0, [w("n", "append", [1]), w("d", "append", [2])])
    assert ns.state == {"n": [1], "d": [2]}


def test_a_merge_onto_a_value_that_is_no_dict_starts_a_dict() -> None:
    ns = Namespace("", {"n": 5})
    ns.apply(0, [w("n", "merge", {"a": 1}), w("new", "merge", {"b": 2})])
    assert ns.state == {"n": {"a": 1}, "new": {"b": 2}}


def test_the_state_owns_a_list_it_grew_and_extends_it_in_place() -> None:
    start = FrozenList([0])
    ns = Namespace("", {"xs": start})
    ns.apply(0, [w("xs", "append", [1])])
    grown = ns.state["xs"]
    assert grown == [0, 1] and grown is not start and start == [0]  # the initial list is not the state's to grow
    ns.apply(1, [w("xs", "append", [2])])
    assert ns.state["xs"] is grown and grown == [0, 1, 2]  # no copy of the whole list per append


def test_a_list_set_from_outside_is_copied_before_it_grows() -> None:
    ns = Namespace("", {})
    ns.apply(0, [w("xs", "append", [1])])
    given = FrozenList([7])
    ns.apply(1, [w("xs", "set", given)])
    ns.apply(2, [w("xs", "append", [8])])
    assert ns.state["xs"] == [7, 8] and given == [7]


async def test_stages_receive_the_runs_deps_untracked() -> None:
    handle = object()
    seen: list[Any] = []
    r = await flow_chart("A", lambda s: seen.append(s.deps), id="a").build().run(deps=handle)
    assert seen == [handle] and r.state == {}
    assert Namespace("n", deps=handle).deps is handle and Namespace("n").deps is None
