"""Redaction: the recorded world (log, narrative, events, served snapshots) shows a placeholder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

REDACTED = "[REDACTED]"
_MAX_PATTERN_INPUT = 1_000_000
_MIN_SECRET_LEN = 4


class RedactionPolicy(BaseModel):
    """Which values never reach a recorded surface: ``keys`` (state keys and field names at any depth),
    ``patterns`` (regexes over recorded strings)."""

    model_config = ConfigDict(frozen=True)

    keys: frozenset[str] = Field(default_factory=frozenset)
    patterns: tuple[str, ...] = ()

    @classmethod
    def of(cls, keys: Iterable[str] = (), patterns: Iterable[str] = ()) -> RedactionPolicy:
        for p in patterns:
            re.compile(p)  # refuse a bad regex at definition time, naming nothing secret
        return cls(keys=frozenset(keys), patterns=tuple(patterns))

    def union(self, other: RedactionPolicy | None) -> RedactionPolicy:
        """Policies only ever add names: the union of both."""
        if other is None:
            return self
        return RedactionPolicy(
            keys=self.keys | other.keys, patterns=tuple(dict.fromkeys(self.patterns + other.patterns))
        )

    @property
    def empty(self) -> bool:
        return not self.keys and not self.patterns


class Redactor:
    """Applies a policy to values; remembers secret strings it saw so copies inside longer strings vanish too."""

    __slots__ = ("_compiled", "_secrets", "counts", "policy")

    def __init__(self, policy: RedactionPolicy) -> None:
        self.policy = policy
        self._compiled = [re.compile(p) for p in policy.patterns]
        self._secrets: set[str] = set()
        self.counts: dict[str, int] = {}

    @property
    def active(self) -> bool:
        return not self.policy.empty

    def key_redacted(self, key: str) -> bool:
        return key in self.policy.keys

    def observe(self, key: str, value: Any) -> None:
        """Learn the secret strings under a redacted key so they are scrubbed wherever they reappear
        (also inside JSON text, e.g. a tool result serialised into a message)."""
        if key in self.policy.keys:
            self._collect(value)
        elif isinstance(value, dict | list | str) and self.policy.keys:
            self._walk_for_fields(value, 0)

    def _walk_for_fields(self, value: Any, depth: int) -> None:
        if depth > 64:
            return
        if isinstance(value, str):
            text = value.lstrip()
            if text[:1] in ("{", "[") and len(text) <= _MAX_PATTERN_INPUT and any(k in text for k in self.policy.keys):
                try:
                    parsed = json.loads(text)
                except ValueError:
                    return
                self._walk_for_fields(parsed, depth + 1)
            return
        if isinstance(value, dict):
            for k, v in value.items():
                if k in self.policy.keys:
                    self._collect(v)
                else:
                    self._walk_for_fields(v, depth + 1)
        elif isinstance(value, list):
            for v in value:
                self._walk_for_fields(v, depth + 1)

    def _collect(self, value: Any, depth: int = 0) -> None:
        if depth > 64:
            return
        if isinstance(value, str):
            if len(value) >= _MIN_SECRET_LEN:
                self._secrets.add(value)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, int | float):
            s = str(value)
            if len(s) >= _MIN_SECRET_LEN:
                self._secrets.add(s)
        elif isinstance(value, dict):
            for v in value.values():
                self._collect(v, depth + 1)
        elif isinstance(value, list | tuple):
            for v in value:
                self._collect(v, depth + 1)

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def scrub_text(self, text: str) -> str:
        """Replace pattern matches and known secret strings inside a string."""
        if len(text) > _MAX_PATTERN_INPUT:
            text = text[:_MAX_PATTERN_INPUT]
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
                self._count("value")
        for rx in self._compiled:
            text, n = rx.subn(REDACTED, text)
            if n:
                self._count(f"pattern:{rx.pattern}")
        return text

    def redact(self, value: Any, key: str | None = None, _depth: int = 0) -> Any:
        """Return a redacted copy of ``value`` (the original is untouched)."""
        if key is not None and key in self.policy.keys:
            self._count(f"key:{key}")
            return REDACTED
        if _depth > 64:
            return "[TOO DEEP]"
        if isinstance(value, str):
            return self.scrub_text(value) if (self._compiled or self._secrets) else value
        if isinstance(value, dict):
            return {k: self.redact(v, k if isinstance(k, str) else None, _depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact(v, None, _depth + 1) for v in value]
        if isinstance(value, BaseModel):
            return self.redact(value.model_dump(mode="json"), None, _depth + 1)
        if self._secrets and isinstance(value, int | float) and not isinstance(value, bool):
            if str(value) in self._secrets:
                self._count("value")
                return REDACTED
        return value

    def report(self) -> dict[str, Any]:
        """What was redacted and how often — names and counts, never values."""
        return {
            "keys": sorted(self.policy.keys),
            "patterns": list(self.policy.patterns),
            "counts": dict(self.counts),
        }
