"""The wire manifest: what crossed to the model on each call, as ids and sha256 digests of every part (system
paragraphs, messages, tool results, tool specs), recorded as the ``wire`` field of the call's ``llm_call``.

A call records only the parts after the prefix it shares with the previous call (``kept`` of them), so a long run's
record grows with what each call adds, not with its whole history; ``full_parts`` rebuilds each call's list."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from agentfootprint.providers import LLMRequest

WIRE_KEY = "wire"
"""The field of each call's ``llm_call`` record holding its manifest."""


def digest(text: str, key: bytes | None = None) -> str:
    """sha256 of ``text`` (UTF-8); keyed (HMAC) when ``key`` is given, so a digest cannot be guessed back."""
    data = text.encode("utf-8", "surrogatepass")
    if key is not None:
        return hmac.new(key, data, hashlib.sha256).hexdigest()
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def part(sha256: str, kind: str, part_id: str) -> str:
    """One part as recorded: ``"<sha256> <kind> <id>"`` (a string keeps a long run's record free of containers)."""
    return f"{sha256} {kind} {part_id}"


def parse_part(text: str) -> tuple[str, str, str] | None:
    """``(sha256, kind, id)`` of a recorded part, or None when it is not one."""
    pieces = text.split(" ", 2) if isinstance(text, str) else []
    return (pieces[0], pieces[1], pieces[2]) if len(pieces) == 3 else None


class WireMemo:
    """A run's digested messages and tool specs by position: a call re-digests only what changed since the last."""

    __slots__ = ("head", "head_messages", "head_system", "key", "message_parts", "messages", "spec_parts", "specs")

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self.messages: list[Any] = []
        self.message_parts: list[str] = []
        self.specs: list[Any] = []
        self.spec_parts: list[str] = []
        self.head: Any = None
        """The whole-digest hash over the last call's system and message parts (extended, never redone)."""
        self.head_system: list[str] = []
        self.head_messages: list[str] = []


def _hasher(key: bytes | None) -> Any:
    return hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()


def _whole(system: list[str], messages: list[str], specs: list[str], memo: WireMemo) -> str:
    """``digest("".join(p[:64] for p in parts), key)``, hashing only the message parts added since the last call."""
    known = len(memo.head_messages)
    if memo.head is not None and memo.head_system == system and messages[:known] == memo.head_messages:
        head, fresh = memo.head.copy(), messages[known:]
    else:
        head, fresh = _hasher(memo.key), [*system, *messages]
    for p in fresh:
        head.update(p[:64].encode("ascii", "surrogatepass"))
    memo.head, memo.head_system, memo.head_messages = head.copy(), system, messages
    for p in specs:
        head.update(p[:64].encode("ascii", "surrogatepass"))
    return str(head.hexdigest())


def wire_manifest(
    request: LLMRequest,
    iteration: int,
    key: bytes | None = None,
    previous: list[str] | None = None,
    memo: WireMemo | None = None,
) -> dict[str, Any]:
    """One call's manifest row: the digest of all its part digests in order, and its parts (each a digest, kind and
    id: ``system#i``, ``message#i``, ``tool:<call id>``, ``tool-spec:<name>``) after the first ``kept`` it shares
    with ``previous`` (the last call's full list)."""
    memo = memo if memo is not None and memo.key == key else WireMemo(key)
    system, messages, specs = _parts(request, key, memo)
    parts = [*system, *messages, *specs]
    whole = _whole(system, messages, specs, memo)
    kept = 0
    if previous and parts[: len(previous)] == previous:  # the usual case: this call extends the last one
        kept = len(previous)
    elif previous:
        limit = min(len(previous), len(parts))
        while kept < limit and previous[kept] == parts[kept]:
            kept += 1
    return {"iteration": iteration, "keyed": key is not None, "sha256": whole, "kept": kept, "parts": parts[kept:]}


def full_parts(rows: list[Any]) -> list[list[str] | None]:
    """Each row's full part list, rebuilt in call order from the kept prefixes (None for a row that cannot be)."""
    out: list[list[str] | None] = []
    previous: list[str] = []
    for row in rows:
        parts = row.get("parts") if isinstance(row, dict) else None
        kept = row.get("kept", 0) if isinstance(row, dict) else None
        if not isinstance(parts, list) or isinstance(kept, bool) or not isinstance(kept, int):
            out.append(None)
            continue
        if not 0 <= kept <= len(previous):
            out.append(None)
            continue
        previous = [*previous[:kept], *parts]
        out.append(previous)
    return out


def _message_part(i: int, message: Any, key: bytes | None) -> str:
    if message.role == "tool":
        return part(digest(message.content, key), "tool", f"tool:{(message.tool_call_id or '')[:200]}")
    if message.role == "assistant" and message.tool_calls:
        calls = [{"id": c.id, "name": c.name, "args": c.args} for c in message.tool_calls]
        text = _canonical({"content": message.content, "tool_calls": calls})
        return part(digest(text, key), "assistant", f"message#{i}")
    return part(digest(message.content, key), message.role, f"message#{i}")


def _spec_part(spec: Any, key: bytes | None) -> str:
    return part(digest(_canonical(spec.model_dump()), key), "tool-spec", f"tool-spec:{spec.name[:64]}")


def _same(before: list[Any], i: int, item: Any) -> bool:
    return i < len(before) and (before[i] is item or before[i] == item)


def _parts(request: LLMRequest, key: bytes | None, memo: WireMemo) -> tuple[list[str], list[str], list[str]]:
    parts: list[str] = []
    paragraphs = [p for p in request.system_prompt.split("\n\n") if p.strip()] if request.system_prompt else []
    for i, paragraph in enumerate(paragraphs):
        parts.append(part(digest(paragraph, key), "system", f"system#{i}"))
    messages, known = request.messages, len(memo.messages)
    if known and len(messages) >= known and messages[:known] == memo.messages:  # the usual case: history grew
        fresh = [_message_part(i, m, key) for i, m in enumerate(messages[known:], start=known)]
        message_parts = [*memo.message_parts, *fresh]
    else:
        message_parts = [
            memo.message_parts[i] if _same(memo.messages, i, m) else _message_part(i, m, key)
            for i, m in enumerate(messages)
        ]
    spec_parts = [
        memo.spec_parts[i] if _same(memo.specs, i, spec) else _spec_part(spec, key)
        for i, spec in enumerate(request.tools)
    ]
    memo.messages, memo.message_parts = list(request.messages), message_parts
    memo.specs, memo.spec_parts = list(request.tools), spec_parts
    return parts, message_parts, spec_parts


__all__ = ["WIRE_KEY", "WireMemo", "digest", "full_parts", "parse_part", "part", "wire_manifest"]
