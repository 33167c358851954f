"""The request body as bytes: a size cap, strict JSON parsing, and a plain-JSON copy of a reader's answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from typing import Any

from agentfootprint.hosting.refusal import WireRequestRefusal

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "MAX_JSON_DEPTH",
    "check_content_length",
    "check_json_value",
    "check_text",
    "parse_json_body",
    "plain_json_copy",
    "read_body_capped",
]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
"""The largest request body read by default (1 MiB); larger is refused with 413."""

MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects read inside one request field."""


class _DuplicateKey(ValueError):
    pass


def _no_constant(_: str) -> Any:
    raise ValueError("NaN and Infinity are not JSON")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey
    return result


def _loads(text: str | bytes) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_no_constant)
    except _DuplicateKey:
        raise WireRequestRefusal("ERR_AGUI_DUPLICATE_KEY") from None
    except RecursionError:
        raise WireRequestRefusal("ERR_AGUI_TOO_DEEP") from None
    except (ValueError, TypeError):
        raise WireRequestRefusal("ERR_AGUI_NOT_JSON") from None


def check_content_length(value: str | None, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
    """Refuse early when a declared ``Content-Length`` is over the cap (or not a length at all)."""
    if value is None:
        return
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise WireRequestRefusal("ERR_AGUI_BAD_CONTENT_LENGTH")
    if int(text) > max_bytes:
        raise WireRequestRefusal("ERR_AGUI_BODY_TOO_LARGE")


async def read_body_capped(chunks: AsyncIterable[bytes], max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> bytes:
    """Collect a streamed body, refusing (413) as soon as it passes ``max_bytes`` — never buffering more."""
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > max_bytes:
            raise WireRequestRefusal("ERR_AGUI_BODY_TOO_LARGE")
        parts.append(chunk)
    return b"".join(parts)


def parse_json_body(raw: bytes | bytearray | str, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Any:
    """Parse a body as strict JSON (UTF-8, no NaN, no repeated keys): 413 over the cap, 400 otherwise."""
    size = len(raw.encode("utf-8", "surrogatepass")) if isinstance(raw, str) else len(raw)
    if size > max_bytes:
        raise WireRequestRefusal("ERR_AGUI_BODY_TOO_LARGE")
    if isinstance(raw, bytearray):
        raw = bytes(raw)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise WireRequestRefusal("ERR_AGUI_NOT_JSON") from None
    return _loads(raw)


def plain_json_copy(value: Any) -> Any:
    """A plain-JSON copy (dumps then loads) of what a reader produced: no live object survives it."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except RecursionError:
        raise WireRequestRefusal("ERR_AGUI_TOO_DEEP") from None
    except Exception:
        raise WireRequestRefusal("ERR_AGUI_UNREADABLE") from None
    try:
        return _loads(text)
    except WireRequestRefusal as refusal:
        if refusal.code == "ERR_AGUI_NOT_JSON":
            raise WireRequestRefusal("ERR_AGUI_UNREADABLE") from None
        raise


def check_json_value(value: Any, field: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse (by ``field``) a parsed JSON value nested deeper than ``limit`` or holding a non-Unicode string."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            check_text(item, field)
            continue
        if isinstance(item, dict):
            for key in item:
                check_text(key, field)
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise WireRequestRefusal("ERR_AGUI_TOO_DEEP", field)
        stack.extend((child, depth + 1) for child in children if isinstance(child, str | dict | list))


def check_text(value: str, field: str) -> None:
    """Refuse (by ``field``) a string that is not valid Unicode (a lone surrogate from a ``\\ud800`` escape)."""
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise WireRequestRefusal("ERR_AGUI_TEXT_INVALID", field) from None
