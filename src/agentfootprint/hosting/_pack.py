"""A thread's JSON texts packed so each long string is kept once: a repeat becomes a short reference to one table.

A turn's text reaches the AG-UI messages, the conversation checkpoint and the recording several times over;
packed, the row holds it once. The strings to share are named by the caller (the thread's message texts); each
occurrence of one's JSON literal becomes ``"\\u0000<index>"``, and a string of the data that starts with
``\\u0000`` gets one more, so nothing of the data is read as a reference. Every packed text is checked to unpack to
exactly its input; one that would not is kept unshared."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MIN_SHARED_CHARS", "JsonText", "Packed", "load_strings", "long_strings", "pack", "unpack"]

MIN_SHARED_CHARS = 64
"""Strings at least this long are kept once per thread, in its table."""

_NUL = '"\\u0000'
_MARKED = re.compile(r'"\\u0000(?:(\d+)"|\\u0000)')
"""A reference ``"\\u0000<n>"``, or the extra ``\\u0000`` that escapes a data string starting with one."""


class JsonText(str):
    """A value already in JSON text: packed as it is, not dumped again."""

    __slots__ = ()


class Packed:
    """Packed fields as JSON texts (None where the value is None), and the table's JSON text (or None)."""

    __slots__ = ("fields", "strings")

    def __init__(self, fields: dict[str, str | None], strings: str | None) -> None:
        self.fields = fields
        self.strings = strings


def long_strings(*values: Any) -> list[str]:
    """The distinct strings of at least ``MIN_SHARED_CHARS`` characters in JSON values (keys aside), in order."""
    found: dict[str, None] = {}
    stack = list(values)
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= MIN_SHARED_CHARS:
                found[item] = None
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return list(found)


def pack(values: Mapping[str, Any], shared: Iterable[str] = ()) -> Packed:
    """Pack JSON values (or ``JsonText``) sharing one table of the ``shared`` strings (None stays None)."""
    strings = [s for s in dict.fromkeys(shared) if len(s) >= MIN_SHARED_CHARS and not s.startswith("\x00")]
    literals = sorted(((json.dumps(s, ensure_ascii=False), s) for s in strings), key=lambda p: -len(p[0]))
    index: dict[str, int] = {}
    table: list[str] = []
    fields: dict[str, str | None] = {}
    for name, value in values.items():
        if value is None:
            fields[name] = None
            continue
        text = str(value) if isinstance(value, JsonText) else json.dumps(value, ensure_ascii=False)
        fields[name] = _pack_text(text, literals, index, table)
    return Packed(fields, json.dumps(table, ensure_ascii=False) if table else None)


def _unescaped(text: str, at: int) -> bool:
    """Whether the quote at ``at`` is not escaped (an even run of backslashes before it)."""
    before = at
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 0


def _escape(text: str) -> str:
    """Mark each data string that starts with ``\\u0000`` with one more (an unescaped ``"\\u0000`` opens one)."""
    if _NUL not in text:
        return text
    parts: list[str] = []
    last = 0
    at = text.find(_NUL)
    while at != -1:
        if _unescaped(text, at):
            parts += (text[last : at + 1], "\\u0000")
            last = at + 1
        at = text.find(_NUL, at + 1)
    parts.append(text[last:])
    return "".join(parts)


def _pack_text(raw: str, literals: list[tuple[str, str]], index: dict[str, int], table: list[str]) -> str:
    """``raw`` with its NUL-led strings marked and the shared strings as references, if that unpacks to ``raw``."""
    text = _escape(raw)
    spans: list[tuple[int, int, str]] = []
    for literal, value in literals:
        at = text.find(literal)
        while at != -1:
            if _unescaped(text, at):
                spans.append((at, at + len(literal), value))
            at = text.find(literal, at + 1)
    if not spans:
        return text
    spans.sort()
    parts: list[str] = []
    last = 0
    for start, end, value in spans:
        if start < last:
            continue
        slot = index.get(value)
        if slot is None:
            slot = index[value] = len(table)
            table.append(value)
        parts += (text[last:start], f'"\\u0000{slot}"')
        last = end
    parts.append(text[last:])
    packed = "".join(parts)
    try:
        same = _restore(packed, [json.dumps(s, ensure_ascii=False) for s in table]) == raw
    except ValueError:
        same = False
    return packed if same else text


def load_strings(text: str | bytes | None) -> list[str] | None:
    """The table's strings as JSON literals, from its stored text; ValueError if it is not a list of strings."""
    if text is None:
        return None
    table = json.loads(text)
    if not isinstance(table, list) or not all(isinstance(item, str) for item in table):
        raise ValueError("the string table is not a list of strings")
    return [json.dumps(item, ensure_ascii=False) for item in table]


def _restore(text: str, literals: list[str]) -> str:
    def restore(match: re.Match[str]) -> str:
        if not _unescaped(text, match.start()):
            return match.group()
        reference = match.group(1)
        if reference is None:
            return _NUL
        if not reference.isascii() or int(reference) >= len(literals):
            raise ValueError("a packed reference points nowhere")
        return literals[int(reference)]

    return _MARKED.sub(restore, text)


def unpack(text: str | bytes | None, strings: list[str] | None) -> Any:
    """A packed field back as its JSON value; ``strings`` is the loaded table (None: the row has none)."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if _NUL in text:
        text = _restore(text, strings or [])
    return json.loads(text)
