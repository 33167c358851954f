"""Property tests: every single tamper is caught at the first affected record; every export verifies."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentfootprint.audit import export_audit, record_hash, to_jsonl, verify_audit
from agentfootprint.flow import flow_chart
from tests.audit._helpers import FakeAgent, loan_chart, make_events

FIELDS = ["seq", "timestamp", "type", "payload", "meta", "prev_hash", "hash"]
_result = loan_chart().run_sync({"credit_score": 612})
BUNDLE = export_audit(FakeAgent(_result.snapshot, make_events(_result.run_id, 3)), payload_mode="verbatim")
N = len(BUNDLE)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
hostile_values = json_values | st.floats() | st.integers() | st.sets(st.integers(), max_size=2)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _leaf_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in _leaf_paths(v, (*path, k))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in _leaf_paths(v, (*path, i))]
    return [path]


def _set_at(root: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        root = root[step]
    root[path[-1]] = value


def _get_at(root: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        root = root[step]
    return root


def _mutate(data: st.DataObject) -> tuple[list[Any], int, str]:
    """One tamper of a fresh copy of BUNDLE; returns the bundle, the index that must be reported, and what was done."""
    records: list[Any] = copy.deepcopy(BUNDLE)
    kind = data.draw(
        st.sampled_from(
            ["field_value", "leaf_value", "field_delete", "field_add", "delete", "move", "insert", "truncate", "rehash"]
        )
    )
    if kind == "field_value":
        k, field = data.draw(st.integers(0, N - 1)), data.draw(st.sampled_from(FIELDS))
        new = data.draw(hostile_values)
        assume(new != records[k][field])
        records[k][field] = new
        return records, k, kind
    if kind == "leaf_value":
        k, field = data.draw(st.integers(0, N - 1)), data.draw(st.sampled_from(["payload", "meta"]))
        path = (field, *data.draw(st.sampled_from(_leaf_paths(records[k][field]))))
        assume(len(path) > 1)
        new = data.draw(hostile_values)
        assume(new != _get_at(records[k], path))
        _set_at(records[k], path, new)
        return records, k, kind
    if kind == "field_delete":
        k, field = data.draw(st.integers(0, N - 1)), data.draw(st.sampled_from(FIELDS))
        del records[k][field]
        return records, k, kind
    if kind == "field_add":
        k, name = data.draw(st.integers(0, N - 1)), data.draw(st.text(min_size=1, max_size=8))
        assume(name not in records[k])
        records[k][name] = data.draw(json_values)
        return records, k, kind
    if kind == "delete":
        k = data.draw(st.integers(0, N - 2))  # deleting the last record is truncation at the end: needs a signature
        del records[k]
        return records, k, kind
    if kind == "move":
        k, j = data.draw(st.integers(0, N - 1)), data.draw(st.integers(0, N - 1))
        assume(k != j)
        records.insert(j, records.pop(k))
        return records, min(k, j), kind
    if kind == "insert":
        j, p = data.draw(st.integers(0, N - 1)), data.draw(st.integers(0, N))
        records.insert(p, copy.deepcopy(BUNDLE[j]))
        return records, p if j != p else p + 1, kind
    if kind == "truncate":
        a = data.draw(st.integers(0, N - 2))
        b = data.draw(st.integers(a + 1, N - 1))
        del records[a:b]
        return records, a, kind
    k = data.draw(st.integers(0, N - 2))  # re-hashing the very last record is undetectable without a signature
    records[k]["payload"][data.draw(st.text(min_size=1, max_size=6))] = data.draw(json_values)
    records[k]["hash"] = record_hash(records[k])
    return records, k, kind


@SETTINGS
@given(st.data())
def test_any_single_tamper_is_detected_at_the_first_affected_record(data: st.DataObject) -> None:
    records, expected, kind = _mutate(data)
    v = verify_audit(records)
    assert v.valid is False, kind
    assert v.broken_at == expected, (kind, v.reason)
    assert v.reason


@SETTINGS
@given(st.data())
def test_any_byte_flip_in_the_jsonl_file_is_detected(data: st.DataObject) -> None:
    lines = to_jsonl(BUNDLE).split("\n")[:-1]
    k = data.draw(st.integers(0, N - 1))
    pos = data.draw(st.integers(0, len(lines[k]) - 1))
    lines[k] = lines[k][:pos] + chr(ord(lines[k][pos]) ^ 1) + lines[k][pos + 1 :]
    v = verify_audit("\n".join(lines) + "\n")
    assert (v.valid, v.broken_at) == (False, k), v.reason


stage_writes = st.dictionaries(
    st.text(min_size=1, max_size=8), json_values | st.floats() | st.integers(), min_size=0, max_size=3
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stages=st.lists(st.tuples(stage_writes, st.booleans()), min_size=1, max_size=5),
    initial=st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=3),
    mode=st.sampled_from(["bounded", "verbatim"]),
)
def test_every_export_of_a_small_chart_verifies(
    stages: list[tuple[dict[str, Any], bool]], initial: dict[str, Any], mode: str
) -> None:
    def make(writes: dict[str, Any], emit: bool) -> Any:
        def fn(scope: Any) -> None:
            for key, value in writes.items():
                scope[key] = value
            if emit:
                scope.emit("note", {"keys": list(writes)})

        return fn

    builder = flow_chart("S0", make(*stages[0]), id="s0")
    for i, (writes, emit) in enumerate(stages[1:], start=1):
        builder = builder.then(f"S{i}", make(writes, emit), id=f"s{i}")
    result = builder.build().run_sync(initial)
    records = export_audit(result, payload_mode=mode)  # type: ignore[arg-type]
    assert len(records) == 1 + len(stages)
    assert json.loads(json.dumps(records)) == records
    assert verify_audit(records).valid
    assert verify_audit(to_jsonl(records)).valid
    assert verify_audit(json.loads(json.dumps(records))).valid
