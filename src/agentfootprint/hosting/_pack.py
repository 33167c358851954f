"""A thread's JSON values packed so each long string is kept once: a repeat becomes a short reference to one table.

A turn's text reaches the AG-UI messages, the conversation checkpoint and the recording several times over;
packed, the row holds it once. References are ``"\\x00<index>"``; a string of the data that starts with ``"\\x00"``
is escaped with one more, so no value of the data is ever read as a reference."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MIN_SHARED_CHARS", "Packed", "load_strings", "pack", "unpack"]

MIN_SHARED_CHARS = 64
"""Strings at least this long are kept once per thread, in its string table."""

_MARK = "\x00"


class Packed:
    """Packed fields as JSON texts (None where the value is None), and the string table's JSON text (or None)."""

    __slots__ = ("fields", "strings")

    def __init__(self, fields: dict[str, str | None], strings: str | None) -> None:
        self.fields = fields
        self.strings = strings


class _Packer:
    __slots__ = ("escaped", "index", "order")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.order: list[str] = []
        self.escaped = False

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            if len(value) >= MIN_SHARED_CHARS:
                at = self.index.get(value)
                if at is None:
                    at = self.index[value] = len(self.order)
                    self.order.append(value)
                return f"{_MARK}{at}"
            if value[:1] == _MARK:
                self.escaped = True
                return _MARK + value
            return value
        if isinstance(value, dict):
            return {key: self.walk(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.walk(item) for item in value]
        return value


def pack(values: Mapping[str, Any]) -> Packed:
    """Pack JSON values that share one string table (a value of None stays None)."""
    packer = _Packer()
    fields: dict[str, str | None] = {}
    for name, value in values.items():
        fields[name] = None if value is None else json.dumps(packer.walk(value), ensure_ascii=False)
    strings = json.dumps(packer.order, ensure_ascii=False) if packer.order or packer.escaped else None
    return Packed(fields, strings)


def unpack(text: str | bytes | None, strings: list[str] | None) -> Any:
    """A packed field back as its JSON value; ``strings`` is the loaded table (None: the field holds no reference)."""
    if text is None:
        return None
    value = json.loads(text)
    return value if strings is None else _Unpacker(strings).walk(value)


def load_strings(text: str | bytes | None) -> list[str] | None:
    """The string table from its stored JSON text (None if the row has none); raises ValueError if unreadable."""
    if text is None:
        return None
    table = json.loads(text)
    if not isinstance(table, list) or not all(isinstance(item, str) for item in table):
        raise ValueError("the string table is not a list of strings")
    return table


class _Unpacker:
    __slots__ = ("strings",)

    def __init__(self, strings: list[str]) -> None:
        self.strings = strings

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            if value[:1] != _MARK:
                return value
            if value[1:2] == _MARK:
                return value[1:]
            at = value[1:]
            if not (at.isascii() and at.isdigit()) or int(at) >= len(self.strings):
                raise ValueError("a packed reference points nowhere")
            return self.strings[int(at)]
        if isinstance(value, dict):
            return {key: self.walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.walk(item) for item in value]
        return value
