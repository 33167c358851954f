"""Values made JCS-representable for export, and the doubles view of big integers, exactly."""

from __future__ import annotations

import dataclasses
import datetime
import math
from enum import Enum
from typing import Any

from pydantic import BaseModel

from agentfootprint.audit._canonical import (
    EXPORT_MAX_DEPTH,
    MAX_SAFE_INT,
    TOO_DEEP,
    ZERO_HASH,
    as_doubles,
    canonical_bytes,
    jsonable,
    record_hash,
)


class Color(Enum):
    RED = "red"


class Point(BaseModel):
    x: int
    tags: set[str]


class Opaque:
    def __repr__(self) -> str:
        return "<opaque " + "x" * 300 + ">"


def test_scalars() -> None:
    assert [jsonable(v) for v in (None, True, False, 0, -5, 1.5)] == [None, True, False, 0, -5, 1.5]
    assert jsonable(MAX_SAFE_INT) == MAX_SAFE_INT and jsonable(-MAX_SAFE_INT) == -MAX_SAFE_INT
    assert jsonable(MAX_SAFE_INT + 1) == "9007199254740992" and jsonable(-MAX_SAFE_INT - 1) == "-9007199254740992"
    assert [jsonable(v) for v in (math.nan, math.inf, -math.inf)] == ["NaN", "Infinity", "-Infinity"]
    assert jsonable("ok") == "ok" and jsonable("a\ud800b") == "a\ufffdb"


def test_containers_and_objects() -> None:
    assert jsonable({1: "a", "k\udfff": (1, 2)}) == {"1": "a", "k\ufffd": [1, 2]}
    assert jsonable({"b", "a", "c"}) == ["a", "b", "c"] and jsonable(frozenset({2, 1})) == [1, 2]
    assert jsonable(Point(x=1, tags={"z", "y"})) == {"x": 1, "tags": ["y", "z"]}
    assert jsonable(Color.RED) == "red"
    assert jsonable(datetime.date(2026, 1, 2)) == "2026-01-02"
    assert jsonable(Opaque()) == "<opaque " + "x" * 192
    assert jsonable(b"\xff") == "b'\\xff'"  # bytes that are not UTF-8 keep their repr


def test_depth_is_cut_with_a_marker() -> None:
    value: Any = "leaf"
    for _ in range(EXPORT_MAX_DEPTH + 1):
        value = [value]
    out = jsonable(value)
    for _ in range(EXPORT_MAX_DEPTH + 1):
        out = out[0]
    assert out == TOO_DEEP
    value = "leaf"
    for _ in range(EXPORT_MAX_DEPTH):
        value = [value]
    out = jsonable(value)
    for _ in range(EXPORT_MAX_DEPTH):
        out = out[0]
    assert out == "leaf"


def test_doubles_and_hashes() -> None:
    assert as_doubles({"a": [2**60, MAX_SAFE_INT, True], "b": 10**400}) == {
        "a": [float(2**60), MAX_SAFE_INT, True],
        "b": 10**400,
    }
    assert as_doubles(-(2**60)) == -float(2**60) and as_doubles(-MAX_SAFE_INT) == -MAX_SAFE_INT
    assert canonical_bytes({"b": 1, "a": [1.0, "x"]}) == b'{"a":[1,"x"],"b":1}'
    assert record_hash({"a": 1, "hash": "ignored"}) == record_hash({"a": 1})
    assert record_hash({"a": 1}) == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    assert ZERO_HASH == "0" * 64


def test_sets_are_ordered_by_repr_whatever_their_item_types() -> None:
    assert jsonable({10, 9}) == [10, 9]  # by repr: "10" < "9"
    assert jsonable({1, "a"}) == ["a", 1]  # mixed types cannot be compared, their reprs can
    assert jsonable(frozenset({(2, 1), (1, 2)})) == [[1, 2], [2, 1]]


def test_depth_counts_through_objects_models_and_converted_values() -> None:
    @dataclasses.dataclass
    class Row:
        x: int

    assert jsonable({"k": 1}, EXPORT_MAX_DEPTH - 1) == {"k": 1}
    assert jsonable({"k": 1}, EXPORT_MAX_DEPTH) == {"k": TOO_DEEP}
    assert jsonable(Point(x=1, tags=set()), EXPORT_MAX_DEPTH - 2) == {"x": 1, "tags": []}
    assert jsonable(Point(x=1, tags=set()), EXPORT_MAX_DEPTH - 1) == {"x": TOO_DEEP, "tags": TOO_DEEP}
    assert jsonable(Row(x=1), EXPORT_MAX_DEPTH - 2) == {"x": 1}
    assert jsonable(Row(x=1), EXPORT_MAX_DEPTH - 1) == {"x": TOO_DEEP}
    nested: Any = "leaf"
    for _ in range(EXPORT_MAX_DEPTH + 1):
        nested = {"k": nested}
    out = jsonable(nested)
    for _ in range(EXPORT_MAX_DEPTH + 1):
        out = out["k"]
    assert out == TOO_DEEP


def test_as_doubles_keeps_safe_integers_as_integers() -> None:
    for safe in (0, 5, -5, MAX_SAFE_INT, -MAX_SAFE_INT):
        out = as_doubles(safe)
        assert type(out) is int and out == safe
    for unsafe in (MAX_SAFE_INT + 1, -MAX_SAFE_INT - 1):
        out = as_doubles(unsafe)
        assert type(out) is float and out == float(unsafe)
    assert as_doubles([True, "x", None, 1.5]) == [True, "x", None, 1.5]
    assert type(as_doubles({"a": [3]})["a"][0]) is int
