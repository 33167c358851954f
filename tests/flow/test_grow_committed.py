"""Growing a committed list by its new items records exactly what writing the grown list back records."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.flow import RecordingDials, flow_chart
from agentfootprint.flow.scope import Scope


class Writes:
    """A recorder that keeps every write event with its value."""

    id = "writes"

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    def on_write(self, frame: Any, key: str, verb: str, value: Any) -> None:
        self.events.append((key, verb, value))


def _rewrite(scope: Scope, key: str, items: list[Any]) -> None:
    scope[key] = [*scope.get(key, ()), *items]


def _grow(scope: Scope, key: str, items: list[Any]) -> None:
    base = scope.get(key, ())
    if not scope._grow_committed(key, tuple(items)):
        scope[key] = [*base, *items]


Op = tuple[str, Any]


def _chart(stages: list[list[Op]], grow: Any) -> Any:
    def stage_of(ops: list[Op]) -> Any:
        def run(scope: Scope) -> None:
            for verb, payload in ops:
                if verb == "grow":
                    grow(scope, "rows", payload)
                elif verb == "set":
                    scope["rows"] = payload
                elif verb == "append":
                    scope.append("rows", *payload)
                elif verb == "read":
                    scope.get("other")
                else:
                    del scope["rows"]

        return run

    builder = flow_chart("S0", stage_of(stages[0]), id="s0")
    for i, ops in enumerate(stages[1:], start=1):
        builder = builder.then(f"S{i}", stage_of(ops), id=f"s{i}")
    return builder.build()


async def _record(stages: list[list[Op]], grow: Any, dials: RecordingDials, watch: bool) -> Any:
    recorder = Writes()
    result = await _chart(stages, grow).run(recorders=[recorder] if watch else [], recording=dials)
    return (
        [c.model_dump() for c in result.commit_log],
        result.state,
        [(type(v).__name__, k, verb, v) for k, verb, v in recorder.events],
    )


async def test_a_grown_list_commits_the_append_of_its_new_items_and_the_read() -> None:
    stages: list[list[Op]] = [[("grow", [{"n": 0}])], [("grow", [{"n": 1}, {"n": 2}])], [("grow", [])]]
    result = await _chart(stages, _grow).run()
    log = result.commit_log
    assert [(w.path, w.verb, w.value) for w in log[0].writes] == [("rows", "set", [{"n": 0}])]
    assert [(w.path, w.verb, w.value) for w in log[1].writes] == [("rows", "append", [{"n": 1}, {"n": 2}])]
    assert log[1].reads == {"rows": 0}
    assert log[2].writes == [] and log[2].reads == {"rows": 1}
    assert result.state == {"rows": [{"n": 0}, {"n": 1}, {"n": 2}]}


async def test_a_watched_write_is_not_grown_in_place_so_the_recorder_sees_the_whole_list() -> None:
    stages: list[list[Op]] = [[("grow", [1])], [("grow", [2])]]
    dials = RecordingDials()
    assert await _record(stages, _grow, dials, True) == await _record(stages, _rewrite, dials, True)
    recorder = Writes()
    await _chart(stages, _grow).run(recorders=[recorder])
    assert recorder.events == [("rows", "set", [1]), ("rows", "set", [1, 2])]


async def test_a_key_holding_no_list_is_written_as_before() -> None:
    stages: list[list[Op]] = [[("set", {"a": 1})], [("grow", [2])]]
    result = await _chart(stages, _grow).run()
    assert result.state == {"rows": ["a", 2]}
    assert [(w.verb, w.value) for w in result.commit_log[1].writes] == [("set", ["a", 2])]


async def test_an_item_nested_too_deep_is_refused_like_a_rewrite() -> None:
    deep: Any = 0
    for _ in range(200):
        deep = [deep]
    stages: list[list[Op]] = [[("grow", [1])], [("grow", [deep])]]
    for grow in (_grow, _rewrite):
        with pytest.raises(ValueError, match="nested more than 200 levels"):
            await _chart(stages, grow).run()


_ITEM = st.one_of(
    st.integers(-3, 3),
    st.booleans(),
    st.text(max_size=2),
    st.dictionaries(st.text(max_size=1), st.integers(0, 2), max_size=2),
)
_OP = st.one_of(
    st.tuples(st.just("grow"), st.lists(_ITEM, max_size=3)),
    st.tuples(st.just("set"), st.one_of(st.lists(_ITEM, max_size=3), st.integers(0, 2))),
    st.tuples(st.just("append"), st.lists(_ITEM, max_size=2)),
    st.tuples(st.just("read"), st.none()),
    st.tuples(st.just("delete"), st.none()),
)
_DIALS = st.builds(
    RecordingDials,
    read_tracking=st.sampled_from(["summary", "full"]),
    commit_values=st.sampled_from(["delta", "full"]),
    write_provenance=st.sampled_from(["off", "reads-prefix"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_OP, min_size=1, max_size=3), min_size=1, max_size=5), _DIALS, st.booleans())
async def test_any_run_records_the_same_as_writing_the_grown_list_back(
    stages: list[list[Op]], dials: RecordingDials, watch: bool
) -> None:
    try:
        expected = await _record(stages, _rewrite, dials, watch)
    except Exception as exc:  # an op the state refuses (append onto a non-list): refused the same way, same record
        with pytest.raises(type(exc)) as got:
            await _record(stages, _grow, dials, watch)
        assert [c.model_dump() for c in got.value.snapshot.commit_log] == [  # type: ignore[attr-defined]
            c.model_dump()
            for c in exc.snapshot.commit_log  # type: ignore[attr-defined]
        ]
        return
    assert await _record(stages, _grow, dials, watch) == expected
