"""The hash is SHA-256 over RFC 8785 (JCS) bytes: recomputed here by hand, independently of the library."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agentfootprint.audit import ZERO_HASH, canonical_bytes, export_audit, record_hash, verify_audit
from agentfootprint.flow import flow_chart


def _hand_canonical(value: Any) -> str:
    """A minimal independent JCS for str/int/bool/null/object/array: UTF-16 key order, no whitespace."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(_hand_canonical(k) + ":" + _hand_canonical(value[k]) for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_hand_canonical(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    assert isinstance(value, int)
    return str(value)


def test_a_simple_record_hash_by_hand() -> None:
    record = {
        "seq": 0,
        "timestamp": None,
        "type": "agentfootprint.audit.genesis",
        "payload": {"run_id": "r1", "b": [1, True, None], "a": "é"},
        "meta": {"kind": "genesis"},
        "prev_hash": ZERO_HASH,
    }
    text = (
        '{"meta":{"kind":"genesis"},"payload":{"a":"é","b":[1,true,null],"run_id":"r1"},'
        f'"prev_hash":"{ZERO_HASH}","seq":0,"timestamp":null,"type":"agentfootprint.audit.genesis"}}'
    )
    assert _hand_canonical(record) == text
    assert record_hash(record) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_exported_commit_record_hash_by_hand() -> None:
    snapshot = flow_chart("S", lambda s: s.set("k", "v"), id="s").build().run_sync({}).snapshot
    record = export_audit(snapshot, payload_mode="verbatim")[1]
    body = {k: v for k, v in record.items() if k != "hash"}
    assert hashlib.sha256(_hand_canonical(body).encode("utf-8")).hexdigest() == record["hash"]


def test_keys_sort_by_utf16_code_units_not_code_points() -> None:
    # U+FB01 sorts after the surrogate pair of U+1F600 in UTF-16, before it by code point (Python's sort).
    value = {"\ufb01": 1, "\U0001f600": 2}
    assert sorted(value) == ["\ufb01", "\U0001f600"]
    assert canonical_bytes(value).decode("utf-8") == '{"\U0001f600":2,"\ufb01":1}'
    assert _hand_canonical(value) == canonical_bytes(value).decode("utf-8")


def test_rfc8785_number_and_string_forms() -> None:
    # Examples from RFC 8785 section 3.2.2 (numbers as ECMAScript writes doubles; minimal string escapes).
    assert canonical_bytes([1e21, 1e-7, 333333333.3333333, -0.0, 1.0, 1e23]) == (
        b"[1e+21,1e-7,333333333.3333333,0,1,1e+23]"
    )
    assert canonical_bytes('\u20ac$\u000f\nA\'B"\\\\"/') == '"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"'.encode()


def test_a_record_written_with_any_key_order_and_whitespace_verifies() -> None:
    snapshot = flow_chart("S", lambda s: s.set("k", [1, 2]), id="s").build().run_sync({}).snapshot
    records = export_audit(snapshot, payload_mode="verbatim")
    pretty = "\n".join(json.dumps(r, sort_keys=False, indent=None, separators=(", ", ": ")) for r in records)
    assert verify_audit(pretty).valid
