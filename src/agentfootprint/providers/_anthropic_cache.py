"""Anthropic prompt caching on the wire: ``cache_control`` breakpoints placed at provider-agnostic cache markers."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

ANTHROPIC_MAX_BREAKPOINTS = 4
_EPHEMERAL = {"type": "ephemeral"}


def _mark(block: dict[str, Any]) -> None:
    block["cache_control"] = dict(_EPHEMERAL)


def _system_blocks(system: Any, offsets: list[int]) -> Any:
    if isinstance(system, str):
        cuts = sorted({o for o in offsets if 0 < o <= len(system)})
        if not cuts:
            return system
        blocks: list[dict[str, Any]] = []
        start = 0
        for cut in cuts:
            block = {"type": "text", "text": system[start:cut]}
            _mark(block)
            blocks.append(block)
            start = cut
        if start < len(system):
            blocks.append({"type": "text", "text": system[start:]})
        return blocks
    if isinstance(system, list):
        position = 0
        ends: list[int] = []
        for block in system:
            position += len(str(block.get("text", ""))) if isinstance(block, dict) else 0
            ends.append(position)
        for o in offsets:
            hit = next((i for i, end in enumerate(ends) if end >= o), None)
            if hit is not None and isinstance(system[hit], dict):
                _mark(system[hit])
    return system


def anthropic_cache_control(markers: Sequence[Mapping[str, Any]], request_json: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an Anthropic Messages API body with ``cache_control`` breakpoints at the markers (max four).

    A string ``system`` is split into text blocks at the markers' ``char_offset`` (their concatenation is the
    original prompt); a marked message gets its last content block marked. The input is not modified.
    """
    body: dict[str, Any] = copy.deepcopy(dict(request_json))
    budget = ANTHROPIC_MAX_BREAKPOINTS - _count_existing(body)
    chosen = [dict(m) for m in markers][: max(0, budget)]
    offsets = [int(m["char_offset"]) for m in chosen if m.get("slot") == "system_prompt" and "char_offset" in m]
    if offsets and body.get("system"):
        body["system"] = _system_blocks(body["system"], offsets)
    messages = body.get("messages")
    if isinstance(messages, list):
        for m in chosen:
            if m.get("slot") != "messages":
                continue
            index = m.get("message_index")
            if not isinstance(index, int) or not 0 <= index < len(messages) or not isinstance(messages[index], dict):
                continue
            message = messages[index]
            content = message.get("content")
            if isinstance(content, str):
                message["content"] = [{"type": "text", "text": content}]
                _mark(message["content"][0])
            elif isinstance(content, list) and content and isinstance(content[-1], dict):
                _mark(content[-1])
    return body


def _count_existing(body: Mapping[str, Any]) -> int:
    count = 0
    pools: list[Any] = [body.get("system"), body.get("tools")]
    pools.extend(m.get("content") for m in body.get("messages") or () if isinstance(m, dict))
    for pool in pools:
        if isinstance(pool, list):
            count += sum(1 for b in pool if isinstance(b, dict) and "cache_control" in b)
    return count


__all__ = ["ANTHROPIC_MAX_BREAKPOINTS", "anthropic_cache_control"]
