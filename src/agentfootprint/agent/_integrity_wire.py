"""The wire manifest: what crossed to the model on each call, as ids and sha256 digests of every part (system
paragraphs, messages, tool results, tool specs), recorded as the ``wire`` field of the call's ``llm_call``.

A call records only the parts after the prefix it shares with the previous call (``kept`` of them), so a long run's
record grows with what each call adds, not with its whole history; ``full_parts`` rebuilds each call's list."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from agentfootprint._text import json_writer
from agentfootprint.providers import LLMRequest

WIRE_KEY = "wire"
"""The field of each call's ``llm_call`` record holding its manifest."""


def digest(text: str, key: bytes | None = None) -> str:
    """sha256 of ``text`` (UTF-8); keyed (HMAC) when ``key`` is given, so a digest cannot be guessed back."""
    data = text.encode("utf-8", "surrogatepass")
    if key is not None:
        return hmac.new(key, data, hashlib.sha256).hexdigest()
    return hashlib.sha256(data).hexdigest()


_canonical = json_writer(ensure_ascii=True)
"""``json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)``, the encoder built once."""


def part(sha256: str, kind: str, part_id: str) -> str:
    """One part as recorded: ``"<sha256> <kind> <id>"`` (a string keeps a long run's record free of containers)."""
    return f"{sha256} {kind} {part_id}"


def parse_part(text: str) -> tuple[str, str, str] | None:
    """``(sha256, kind, id)`` of a recorded part, or None when it is not one."""
    pieces = text.split(" ", 2) if isinstance(text, str) else []
    return (pieces[0], pieces[1], pieces[2]) if len(pieces) == 3 else None


class WireMemo:
    """A run's digested parts by position and its last call's view: a call digests and hashes only what it adds."""

    __slots__ = (
        "calls",
        "head",
        "head_count",
        "head_system",
        "key",
        "last_count",
        "last_messages",
        "last_specs",
        "last_system",
        "message_parts",
        "messages",
        "spec_parts",
        "specs",
        "system_parts",
        "system_text",
    )

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self.messages: list[Any] = []
        self.message_parts: list[str] = []
        self.specs: list[Any] = []
        self.spec_parts: list[str] = []
        self.system_text: str | None = None
        self.system_parts: list[str] = []
        self.head: Any = None
        """The whole-digest hash over the last call's system parts and first ``head_count`` message parts."""
        self.head_system: list[str] = []
        self.head_count = 0
        self.calls = 0
        """How many calls this memo has seen; from the second on, ``last_*`` describe the previous call's parts."""
        self.last_system: list[str] = []
        self.last_messages: list[str] = []
        self.last_count = 0
        self.last_specs: list[str] = []


def _hasher(key: bytes | None) -> Any:
    return hmac.new(key, digestmod=hashlib.sha256) if key is not None else hashlib.sha256()


def _common(a: list[str], b: list[str]) -> int:
    """The length of the prefix ``a`` and ``b`` share."""
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    n = 0
    while a[n] == b[n]:
        n += 1
    return n


def _whole(system: list[str], messages: list[str], specs: list[str], shared: int, memo: WireMemo) -> str:
    """``digest("".join(p[:64] for p in parts), key)``, hashing only the message parts added since the last call
    (``shared``: how many leading message parts are known unchanged since then)."""
    if memo.head is not None and memo.head_system == system and shared >= memo.head_count:
        head, fresh = memo.head.copy(), messages[memo.head_count :]
    else:
        head, fresh = _hasher(memo.key), [*system, *messages]
    for p in fresh:
        head.update(p[:64].encode("ascii", "surrogatepass"))
    memo.head, memo.head_system, memo.head_count = head.copy(), system, len(messages)
    for p in specs:
        head.update(p[:64].encode("ascii", "surrogatepass"))
    return str(head.hexdigest())


def _kept(system: list[str], messages: list[str], specs: list[str], shared: int, memo: WireMemo) -> int:
    """How many leading parts this call shares with the previous call the memo saw (none before its second)."""
    if not memo.calls:
        return 0
    kept = _common(memo.last_system, system)
    if kept < len(system) or kept < len(memo.last_system):
        return kept
    old = memo.last_messages[: memo.last_count] if shared < memo.last_count else None
    same = shared if old is None else _common(old, messages)
    tail_then = [*(old[same:] if old is not None else ()), *memo.last_specs]
    return kept + same + _common(tail_then, [*messages[same:], *specs])


def _full(previous: list[str], parts: list[str]) -> int:
    if parts[: len(previous)] == previous:  # the usual case: this call extends the last one
        return len(previous)
    return _common(previous, parts)


def wire_manifest(
    request: LLMRequest,
    iteration: int,
    key: bytes | None = None,
    previous: list[str] | None = None,
    memo: WireMemo | None = None,
) -> dict[str, Any]:
    """One call's manifest row: the digest of all its part digests in order, and its parts (each a digest, kind and
    id: ``system#i``, ``message#i``, ``tool:<call id>``, ``tool-spec:<name>``) after the first ``kept`` it shares
    with the previous call: ``previous`` (its full list) when given, else the last call ``memo`` saw."""
    memo = memo if memo is not None and memo.key == key else WireMemo(key)
    system, messages, specs, shared = _parts(request, key, memo)
    whole = _whole(system, messages, specs, shared, memo)
    if previous is not None:
        parts = [*system, *messages, *specs]
        kept = _full(previous, parts) if previous else 0
        tail = parts[kept:]
    else:
        kept = _kept(system, messages, specs, shared, memo)
        cut = kept - len(system)
        if cut < 0:
            tail = [*system[kept:], *messages, *specs]
        else:
            tail = [*messages[cut:], *specs[max(0, cut - len(messages)) :]]
    memo.calls += 1
    memo.last_system, memo.last_messages, memo.last_count, memo.last_specs = system, messages, len(messages), specs
    return {"iteration": iteration, "keyed": key is not None, "sha256": whole, "kept": kept, "parts": tail}


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


def _parts(request: LLMRequest, key: bytes | None, memo: WireMemo) -> tuple[list[str], list[str], list[str], int]:
    """This call's system, message and spec parts, and how many leading message parts are unchanged since the last
    call (history that only grew is extended in place, so a long run digests each message once)."""
    text = request.system_prompt
    if memo.system_text is None or text != memo.system_text:
        paragraphs = [p for p in text.split("\n\n") if p.strip()] if text else []
        memo.system_parts = [part(digest(p, key), "system", f"system#{i}") for i, p in enumerate(paragraphs)]
        memo.system_text = text
    messages, known = request.messages, len(memo.messages)
    if len(messages) >= known and messages[:known] == memo.messages:  # the usual case: history grew
        shared = known
        memo.messages.extend(messages[known:])
        memo.message_parts.extend(_message_part(i, m, key) for i, m in enumerate(messages[known:], start=known))
    else:
        before = memo.message_parts
        memo.message_parts = [
            before[i] if _same(memo.messages, i, m) else _message_part(i, m, key) for i, m in enumerate(messages)
        ]
        shared = _common(before, memo.message_parts)
        memo.messages = list(messages)
    memo.spec_parts = [
        memo.spec_parts[i] if _same(memo.specs, i, spec) else _spec_part(spec, key)
        for i, spec in enumerate(request.tools)
    ]
    memo.specs = list(request.tools)
    return memo.system_parts, memo.message_parts, memo.spec_parts, shared


__all__ = ["WIRE_KEY", "WireMemo", "digest", "full_parts", "parse_part", "part", "wire_manifest"]
