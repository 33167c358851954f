"""Completed stages' commits and engine writes are built directly: equal, field for field and in the fields-set,
to what the validated ``Write(...)`` and the trusted ``record(...)`` path build."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import RedactionPolicy, flow_chart
from agentfootprint.flow._frozen import FrozenDict, FrozenList
from agentfootprint.flow._state import _NO_ITEMS, RunState
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.scope import _write

VALUES = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=3).map(FrozenList),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2).map(FrozenDict),
)


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    assert a == b
    assert list(a.__dict__) == list(b.__dict__)
    assert [type(v) for v in a.__dict__.values()] == [type(v) for v in b.__dict__.values()]
    assert a.model_fields_set == b.model_fields_set
    assert list(a.model_fields_set) == list(b.model_fields_set)
    assert a.__pydantic_extra__ is b.__pydantic_extra__ is None
    assert a.__pydantic_private__ is b.__pydantic_private__ is None
    assert a.model_dump_json() == b.model_dump_json()


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=8), st.sampled_from(["set", "append", "merge", "delete"]), VALUES)
def test_a_direct_write_is_the_validated_write(path: str, verb: str, value: Any) -> None:
    _same(_write(path, verb, value), Write(path=path, verb=verb, value=value))


async def _state() -> RunState:
    chart = flow_chart("S", lambda s: None, id="s").build()
    rs = RunState(
        chart,
        run_id="r",
        args=None,
        initial_state=None,
        recorders=(),
        redaction=RedactionPolicy.of(["secret"]),
        cancel=None,
        timeout=None,
    )
    return rs


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["stage", "decider", "selector"]),
    st.dictionaries(st.text(min_size=1, max_size=3), st.one_of(st.none(), st.integers(0, 9)), max_size=3),
    st.one_of(st.none(), st.dictionaries(st.text(min_size=1, max_size=3), st.integers(), max_size=2)),
    st.lists(st.sampled_from(["a", "secret", "b"]), max_size=3),
    st.one_of(st.none(), st.text(max_size=5)),
    st.booleans(),
    st.one_of(st.none(), st.just({"kind": "decide", "chosen": ["x"]})),
    st.one_of(st.none(), st.integers(0, 5)),
    st.integers(1, 4),
)
async def test_a_completed_stage_commit_is_what_record_builds(
    kind: str,
    reads: dict[str, Any],
    read_values: dict[str, Any] | None,
    paths: list[str],
    brk: str | None,
    used_args: bool,
    decision: dict[str, Any] | None,
    control_idx: int | None,
    visit: int,
) -> None:
    rs = await _state()
    node = rs.chart.nodes[rs.chart.root]
    writes = [_write(p, "set", 1) for p in paths]
    named = {
        "kind": kind,
        "reads": reads,
        "read_values": read_values,
        "writes": writes,
        "emits": [{"name": "e", "payload": None}],
        "parent_runtime_stage_id": "p#1",
        "visit": visit,
        "break_reason": brk,
        "used_args": used_args,
        "decision": decision,
        "control_idx": control_idx,
    }
    fast = rs.record_stage(node, "s#0", "", *named.values())  # its parameters come in record's keyword order
    slow = rs.record(node, "s#0", "", **{**named, "writes": writes or _NO_ITEMS})  # an empty list: the shared one
    assert (fast.idx, slow.idx) == (0, 1)
    assert fast.redacted_paths == [p for p in paths if p == "secret"]
    _same(fast.model_copy(update={"idx": 1}), slow.model_copy(update={"idx": 1}))
    assert rs.log == [fast, slow]


async def test_a_run_records_the_same_commits_through_either_path() -> None:
    def stage(s: Any) -> None:
        s["a"] = [1]
        s.append("l", 2)
        s.merge("d", {"k": 1})
        del s["gone"]

    r = await flow_chart("S", stage, id="s").build().run({"gone": 1, "l": [1], "d": {}})
    c = r.commit_log[0]
    assert [(w.path, w.verb, w.value) for w in c.writes] == [
        ("a", "set", [1]),
        ("l", "append", [2]),
        ("d", "merge", {"k": 1}),
        ("gone", "delete", None),
    ]
    assert c.model_fields_set == set(Commit.model_fields) - {"failed", "paused", "error", "fork_branch", "sources"}
    assert all(w.model_fields_set == {"path", "verb", "value"} for w in c.writes)


async def test_a_commit_keeps_no_empty_list_and_no_names_set_of_its_own() -> None:
    async def quiet(s: Any) -> None:
        s.get("a")

    r = await flow_chart("A", quiet, id="a").then("B", quiet, id="b").build().run({"a": 1})
    a, b = r.commit_log
    assert (a.writes, a.emits, a.redacted_paths) == ([], [], [])
    assert a.writes is a.emits is a.redacted_paths is b.writes is _NO_ITEMS
    assert a.model_fields_set is b.model_fields_set
    assert a.model_dump()["writes"] == [] and '"emits":[]' in a.model_dump_json()
    with pytest.raises(TypeError):
        a.writes.append(_write("x", "set", 1))
    copied = a.model_copy(update={"error": "e"})
    assert "error" in copied.model_fields_set and "error" not in b.model_fields_set
    assert a.model_copy(deep=True).writes == [] and type(a.model_copy(deep=True).writes) is list
