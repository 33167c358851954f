"""The body door: size cap, strict JSON, plain-JSON copies, and the refusal's JSON form."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentfootprint.errors import AgentFootprintError
from agentfootprint.hosting import REFUSALS, WireRequestRefusal
from agentfootprint.hosting._body import (
    DEFAULT_MAX_BODY_BYTES,
    check_content_length,
    check_json_value,
    parse_json_body,
    plain_json_copy,
    read_body_capped,
)


def test_default_cap_is_one_mebibyte() -> None:
    assert DEFAULT_MAX_BODY_BYTES == 1024 * 1024


def test_parses_an_object() -> None:
    assert parse_json_body(b'{"a": [1, 2.5, null, true]}') == {"a": [1, 2.5, None, True]}


def test_accepts_a_body_exactly_at_the_cap() -> None:
    raw = json.dumps({"k": "x" * 100}).encode()
    assert parse_json_body(raw, max_bytes=len(raw)) == {"k": "x" * 100}


def test_refuses_a_body_over_the_cap_with_413() -> None:
    raw = json.dumps({"k": "x" * 100}).encode()
    with pytest.raises(WireRequestRefusal) as info:
        parse_json_body(raw, max_bytes=len(raw) - 1)
    assert (info.value.status, info.value.reason, info.value.field) == (413, "ERR_AGUI_BODY_TOO_LARGE", None)


def test_str_body_is_measured_in_utf8_bytes() -> None:
    text = json.dumps({"k": "é" * 10}, ensure_ascii=False)
    with pytest.raises(WireRequestRefusal) as info:
        parse_json_body(text, max_bytes=len(text))
    assert info.value.status == 413


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"not json", b"{'a': 1}", b'{"a": NaN}', b'{"a": Infinity}', b"\xff\xfe{}", b'{"a":1} trailing'],
)
def test_refuses_non_json_with_400(raw: bytes) -> None:
    with pytest.raises(WireRequestRefusal) as info:
        parse_json_body(raw)
    assert (info.value.status, info.value.reason) == (400, "ERR_AGUI_NOT_JSON")


def test_refuses_repeated_keys() -> None:
    with pytest.raises(WireRequestRefusal) as info:
        parse_json_body(b'{"threadId": "a", "threadId": "b"}')
    assert info.value.reason == "ERR_AGUI_DUPLICATE_KEY"


def test_refuses_nesting_too_deep_for_the_parser() -> None:
    raw = b"[" * 200_000 + b"]" * 200_000
    with pytest.raises(WireRequestRefusal) as info:
        parse_json_body(raw, max_bytes=10**6)
    assert info.value.reason == "ERR_AGUI_TOO_DEEP"


def test_content_length_header() -> None:
    check_content_length(None)
    check_content_length("1048576")
    with pytest.raises(WireRequestRefusal) as info:
        check_content_length("1048577")
    assert info.value.status == 413
    for bad in ("-1", "abc", "1e9", "١٢", "9" * 40):
        with pytest.raises(WireRequestRefusal) as info:
            check_content_length(bad)
        assert info.value.status in (400, 413)


def test_read_body_capped_stops_reading_at_the_cap() -> None:
    pulled: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(10_000):
            pulled.append(i)
            yield b"x" * 1024

    with pytest.raises(WireRequestRefusal) as info:
        asyncio.run(read_body_capped(chunks(), max_bytes=4096))
    assert info.value.status == 413
    assert len(pulled) == 5


def test_read_body_capped_joins_chunks() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"a":'
        yield b"1}"

    assert asyncio.run(read_body_capped(chunks())) == b'{"a":1}'


class Live:
    """An object that is not JSON."""


def test_plain_json_copy_drops_live_objects() -> None:
    original: dict[str, Any] = {"a": [1, {"b": "c"}]}
    copy = plain_json_copy(original)
    assert copy == original and copy is not original and copy["a"] is not original["a"]
    for bad in ({"a": Live()}, {"a": float("nan")}, {1: "a", "1": "b"}):
        with pytest.raises(WireRequestRefusal) as info:
            plain_json_copy(bad)
        assert info.value.status == 400
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(WireRequestRefusal):
        plain_json_copy(cyclic)


def test_check_json_value_depth_and_text() -> None:
    deep: Any = "leaf"
    for _ in range(70):
        deep = [deep]
    with pytest.raises(WireRequestRefusal) as info:
        check_json_value(deep, "state")
    assert (info.value.reason, info.value.field) == ("ERR_AGUI_TOO_DEEP", "state")
    check_json_value({"a": ["ok", "é"]}, "state")
    with pytest.raises(WireRequestRefusal) as info:
        check_json_value({"a": ["\ud800"]}, "state")
    assert info.value.reason == "ERR_AGUI_TEXT_INVALID"
    with pytest.raises(WireRequestRefusal):
        check_json_value({"\udfff": 1}, "state")


def test_refusal_json_shape_and_base_class() -> None:
    refusal = WireRequestRefusal("ERR_AGUI_ID_TOO_LONG", "threadId")
    assert isinstance(refusal, AgentFootprintError)
    assert refusal.status == 400
    assert refusal.to_json() == {
        "error": {
            "code": "ERR_INVALID_RUN_INPUT",
            "field": "threadId",
            "message": REFUSALS["ERR_AGUI_ID_TOO_LONG"][1],
            "reason": "ERR_AGUI_ID_TOO_LONG",
        }
    }
    json.dumps(refusal.to_json())
    assert "ERR_AGUI_ID_TOO_LONG" in repr(refusal)


def test_custom_refusal_and_status_guard() -> None:
    refusal = WireRequestRefusal("ERR_GATEWAY_BODY", "messages", status=422, message="the gateway body is wrong")
    assert (refusal.status, refusal.reason, refusal.message) == (422, "ERR_GATEWAY_BODY", "the gateway body is wrong")
    for status in (200, 500, 399, True):
        with pytest.raises(ValueError):
            WireRequestRefusal("ERR_X", status=status)


def test_every_refusal_is_4xx_with_a_fixed_message() -> None:
    for code, (status, message) in REFUSALS.items():
        assert code.startswith("ERR_AGUI_") and 400 <= status <= 499
        assert message and "{" not in message
