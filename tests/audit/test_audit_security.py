"""Hostile bundles: verify_audit never raises, names the first bad record, and never echoes values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint.audit import export_audit, record_hash, to_jsonl, verify_audit
from agentfootprint.audit import verify as verify_module
from tests.audit._helpers import loan_chart


@pytest.fixture
def jsonl() -> str:
    return to_jsonl(export_audit(loan_chart().run_sync({})))


def _lines(text: str) -> list[str]:
    return text.splitlines()


HOSTILE_LINES = [
    "not json",
    "[1, 2, 3]",
    "[]",
    "42",
    '"a string"',
    "null",
    "true",
    "{",
    '{"seq": NaN}',
    '{"seq": Infinity}',
    '{"seq": -Infinity}',
    "NaN",
    "1e999",
    "9" * 100_000,
    '{"seq": ' + "9" * 5000 + "}",
    "[" * 10_000 + "]" * 10_000,
    '{"a":' * 10_000 + "1" + "}" * 10_000,
    '{"seq": 0, "seq": 1}',
    "\x00\x01\x02",
    '{"\ud800": 1}',
]


@pytest.mark.parametrize("line", HOSTILE_LINES, ids=range(len(HOSTILE_LINES)))
@pytest.mark.parametrize("position", [0, 2])
def test_hostile_line_is_reported_at_its_index(jsonl: str, line: str, position: int) -> None:
    lines = _lines(jsonl)
    lines[position] = line
    v = verify_audit("\n".join(lines))
    assert v.valid is False
    assert v.broken_at == position
    assert v.reason
    assert len(v.reason) < 200


@pytest.mark.parametrize("line", HOSTILE_LINES, ids=range(len(HOSTILE_LINES)))
def test_hostile_line_alone(line: str) -> None:
    v = verify_audit(line)
    assert (v.valid, v.broken_at) == (False, 0)


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = {"a": value}
    return value


class _Weird:
    def __repr__(self) -> str:
        raise RuntimeError("boom")


def _cyclic() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


def _fan_out_cycle() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["a"] = d
    d["b"] = d
    d["c"] = [d, d, d]
    return d


@pytest.mark.parametrize(
    "payload",
    [
        _deep(10_000),
        _cyclic(),
        _fan_out_cycle(),
        {"x": {1, 2}},
        {"x": b"bytes"},
        {"x": _Weird()},
        {"x": float("nan")},
        {"x": 2**64},
        {1: "int key"},
        {"x": "\ud800"},
    ],
    ids=["deep", "cyclic", "fan-out-cycle", "set", "bytes", "object", "nan", "bigint", "intkey", "surrogate"],
)
def test_hostile_python_values(payload: Any) -> None:
    records = export_audit(loan_chart().run_sync({}))
    records[1]["payload"] = payload
    v = verify_audit(records)
    assert (v.valid, v.broken_at) == (False, 1)


@pytest.mark.parametrize(
    "bundle",
    [None, 42, 4.2, {"seq": 0}, object(), b"\xff\xfe", bytearray(b"[]"), ["x"], [None], [[1]], (1, 2), _Weird()],
    ids=range(12),
)
def test_garbage_never_raises(bundle: Any) -> None:
    v = verify_audit(bundle)
    assert (v.valid, v.broken_at) == (False, 0)
    assert v.reason


def test_generator_and_other_iterables_are_refused_not_raised() -> None:
    v = verify_audit(x for x in range(3))
    assert (v.valid, v.broken_at) == (False, 0)


def test_huge_input_is_refused_without_reading(monkeypatch: pytest.MonkeyPatch, jsonl: str) -> None:
    monkeypatch.setattr(verify_module, "MAX_BUNDLE_CHARS", 100)
    v = verify_audit(jsonl)
    assert (v.valid, v.broken_at, v.reason) == (False, 0, "bundle is too large to verify")
    assert not verify_audit(jsonl.encode()).valid


def test_many_records_of_garbage_stop_at_the_first() -> None:
    v = verify_audit("{}\n" * 50_000)
    assert (v.valid, v.broken_at) == (False, 0)


def test_self_consistent_last_record_with_a_broken_link_names_the_earliest_candidate() -> None:
    forged: dict[str, Any] = {
        "seq": 0,
        "timestamp": None,
        "type": "agentfootprint.audit.genesis",
        "payload": {},
        "meta": {},
        "prev_hash": "0" * 64,
    }
    forged["hash"] = record_hash(forged)
    assert verify_audit([forged]).valid  # a lone well-formed genesis is a valid (empty) chain
    second: dict[str, Any] = {
        "seq": 1,
        "timestamp": None,
        "type": "x",
        "payload": {},
        "meta": {},
        "prev_hash": "f" * 64,
    }
    second["hash"] = record_hash(second)
    v = verify_audit([forged, second])
    assert (v.valid, v.broken_at) == (False, 0)  # genesis re-hashed, or the last record forged: earliest named
    assert "record 1 forged" in (v.reason or "")
    second["seq"] = 5
    second["hash"] = record_hash(second)
    assert verify_audit([forged, second]).broken_at == 1


def test_unicode_line_separators_inside_strings_do_not_split_records() -> None:
    def stage(s: Any) -> None:
        s["text"] = "a\u2028b\u2029c\x85d"

    from agentfootprint.flow import flow_chart

    records = export_audit(flow_chart("S", stage, id="s").build().run_sync({}), payload_mode="verbatim")
    text = to_jsonl(records)
    assert verify_audit(text).valid
    assert json.loads(text.split("\n")[1])["payload"]["writes"][0]["value"] == "a\u2028b\u2029c\x85d"
