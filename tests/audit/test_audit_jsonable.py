"""Values made JCS-representable for export, and the doubles view of big integers, exactly."""

from __future__ import annotations

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
