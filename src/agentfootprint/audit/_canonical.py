"""RFC 8785 (JCS) canonical bytes and SHA-256 record hashes; values made JCS-representable on export."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import rfc8785
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

ZERO_HASH = "0" * 64
RECORD_FIELDS = frozenset({"seq", "timestamp", "type", "payload", "meta", "prev_hash", "hash"})
MAX_SAFE_INT = 2**53 - 1
EXPORT_MAX_DEPTH = 100
TOO_DEEP = "[TOO DEEP]"


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical UTF-8 JSON of ``value``; raises ``ValueError`` when it is not representable."""
    return rfc8785.dumps(value)


def record_hash(record: Mapping[str, Any]) -> str:
    """Hex SHA-256 over the canonical JSON of every field of ``record`` except ``hash``."""
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(canonical_bytes(body)).hexdigest()


def as_doubles(value: Any) -> Any:
    """Integers beyond ±2^53−1 as the doubles JSON numbers are (JCS writes ``2.0**60`` as ``1152921504606846976``)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
        try:
            return float(value)  # the nearest double, as any JSON parser following RFC 8785 reads it
        except OverflowError:
            return value
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    return value


def _clean_str(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be UTF-8; keep the rest readable
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JCS-representable copy: str keys, finite floats, integers beyond ±2^53−1 as decimal strings."""
    if depth > EXPORT_MAX_DEPTH:
        return TOO_DEEP
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, Mapping):
        return {_clean_str(k if isinstance(k, str) else str(k)): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [jsonable(v, depth + 1) for v in items]
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(), depth + 1)
    try:
        converted = to_jsonable_python(value)
    except Exception:
        return _clean_str(repr(value)[:200])
    return jsonable(converted, depth + 1) if converted is not value else _clean_str(repr(value)[:200])
