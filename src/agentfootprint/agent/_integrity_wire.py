"""The wire manifest: what crossed to the model on each call, as ids and sha256 digests of every part (system
paragraphs, messages, tool results, tool specs), recorded as the ``wire`` field of the call's ``llm_call``."""

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


def wire_manifest(request: LLMRequest, iteration: int, key: bytes | None = None) -> dict[str, Any]:
    """One call's manifest row: each part's digest, kind and id (``system#i``, ``message#i``, ``tool:<call id>``,
    ``tool-spec:<name>``), and the digest of all part digests in order."""
    parts: list[str] = []
    paragraphs = [p for p in request.system_prompt.split("\n\n") if p.strip()] if request.system_prompt else []
    for i, paragraph in enumerate(paragraphs):
        parts.append(part(digest(paragraph, key), "system", f"system#{i}"))
    for i, message in enumerate(request.messages):
        if message.role == "tool":
            parts.append(part(digest(message.content, key), "tool", f"tool:{(message.tool_call_id or '')[:200]}"))
        elif message.role == "assistant" and message.tool_calls:
            calls = [{"id": c.id, "name": c.name, "args": c.args} for c in message.tool_calls]
            text = _canonical({"content": message.content, "tool_calls": calls})
            parts.append(part(digest(text, key), "assistant", f"message#{i}"))
        else:
            parts.append(part(digest(message.content, key), message.role, f"message#{i}"))
    for spec in request.tools:
        parts.append(part(digest(_canonical(spec.model_dump()), key), "tool-spec", f"tool-spec:{spec.name[:64]}"))
    whole = digest("".join(p[:64] for p in parts), key)
    return {"iteration": iteration, "keyed": key is not None, "sha256": whole, "parts": parts}


__all__ = ["WIRE_KEY", "digest", "parse_part", "part", "wire_manifest"]
