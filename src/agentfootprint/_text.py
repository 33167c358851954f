"""Small text helpers every layer shares: cutting, one-line excerpts, value summaries, content words."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

MAX_VALUE_LENGTH = 80
_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_STOP = frozenset(
    "a an and are as at be been but by can do does for from has have he her his i if in into is it its me my no "
    "not of on or our she so than that the their them then there these they this to was we were what when which "
    "who will with you your".split()
)


def ellipsize(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one an ellipsis when anything was cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def one_line(text: object, limit: int) -> str:
    """``text`` with its whitespace runs folded to single spaces, then cut to ``limit`` with an ellipsis."""
    return ellipsize(" ".join(str(text).split()), limit)


def summarize_value(value: Any, max_length: int = MAX_VALUE_LENGTH) -> str:
    """Strings quoted and cut at ``max_length``; lists as ``(3 items)``; dicts as ``{a, b, ... (9 keys)}``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if len(value) > max_length:
            return json.dumps(value[:max_length], ensure_ascii=False)[:-1] + '..."'
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        n = len(value)
        return f"({n} item{'s' if n != 1 else ''})"
    if isinstance(value, dict):
        keys = [str(k)[:40] for k in list(value)[:5]]
        if len(value) > 4:
            return "{" + ", ".join(keys[:4]) + f", ... ({len(value)} keys)}}"
        return "{" + ", ".join(keys) + "}"
    text = repr(value)
    return text[:max_length] + ("..." if len(text) > max_length else "")


def content_tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stop words (digits kept: ids and amounts matter)."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


def json_writer(*, ensure_ascii: bool) -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ensure_ascii, default=str)`` with the
    C encoder built once and without a marker table (it keeps no state: threads share it); only a value that
    recursed too deep is encoded again with the cycle check, so a cycle is refused as ``json.dumps`` refuses it."""
    slow = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=ensure_ascii, default=str)
    if c_make_encoder is None:
        return slow.encode
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    fast = c_make_encoder(None, str, quote, None, ":", ",", True, False, True)

    def write(value: Any) -> str:
        if isinstance(value, str):
            return slow.encode(value)
        try:
            return "".join(fast(value, 0))
        except RecursionError:
            return "".join(c_make_encoder({}, str, quote, None, ":", ",", True, False, True)(value, 0))

    return write


__all__ = ["MAX_VALUE_LENGTH", "content_tokens", "ellipsize", "json_writer", "one_line", "summarize_value"]
