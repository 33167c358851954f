"""Cache policy per injection → provider-agnostic cache markers; ``anthropic_cache_control`` applies them.

A slot's cacheable prefix runs from its first record up to (not including) the first ``never`` record. A marker
ends the leading run of ``always`` records (the base system prompt is ``always``), and a second one ends the whole
cacheable prefix when ``while-active`` records extend it. So at most two markers per slot, four per request.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from agentfootprint.context.injection import InvalidInjectionError

CACHE_POLICIES = ("always", "never", "while-active")
SYSTEM_SEPARATOR = "\n\n"
ANTHROPIC_MAX_BREAKPOINTS = 4
_EPHEMERAL = {"type": "ephemeral"}


def check_cache_policy(cache: Any, injection_id: str) -> None:
    """Refuse a cache policy that is not ``always``, ``never`` or ``while-active``."""
    if cache not in CACHE_POLICIES:
        raise InvalidInjectionError(f"cache of '{injection_id}' must be 'always', 'never' or 'while-active'")


def _prefix_markers(records: Sequence[Mapping[str, Any]], policies: Mapping[str, str]) -> list[tuple[int, str]]:
    """(record index, policy) of each breakpoint: end of the leading ``always`` run, end of the cacheable prefix."""
    last_always = -1
    last_cacheable = -1
    only_always = True
    for i, record in enumerate(records):
        policy = policies.get(str(record.get("source_id")), "while-active")
        if policy == "never":
            break
        last_cacheable = i
        if policy == "always" and only_always:
            last_always = i
        else:
            only_always = False
    out: list[tuple[int, str]] = []
    if last_always >= 0:
        out.append((last_always, "always"))
    if last_cacheable > last_always:
        out.append((last_cacheable, "while-active"))
    return out


def compute_cache_markers(
    system_records: Sequence[Mapping[str, Any]],
    message_records: Sequence[Mapping[str, Any]],
    policies: Mapping[str, str],
) -> list[dict[str, Any]]:
    """Markers for one model call: where each cacheable prefix ends in the system prompt and injected messages.

    ``policies`` maps source id → cache policy (the base system prompt, id ``system``, is ``always``). A
    system-prompt marker carries ``char_offset`` (end of that record in the composed prompt, records joined by
    blank lines); a messages marker carries ``message_index`` (injected messages come first in the request).
    """
    table = {"system": "always", **policies}
    markers: list[dict[str, Any]] = []
    ends: list[int] = []
    offset = 0
    for i, record in enumerate(system_records):
        offset += len(str(record.get("text", ""))) + (len(SYSTEM_SEPARATOR) if i else 0)
        ends.append(offset)
    for index, policy in _prefix_markers(system_records, table):
        markers.append(
            {
                "slot": "system_prompt",
                "source_id": str(system_records[index].get("source_id")),
                "record_index": index,
                "char_offset": ends[index],
                "policy": policy,
            }
        )
    for index, policy in _prefix_markers(message_records, table):
        markers.append(
            {
                "slot": "messages",
                "source_id": str(message_records[index].get("source_id")),
                "record_index": index,
                "message_index": index,
                "policy": policy,
            }
        )
    return markers


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


__all__ = [
    "ANTHROPIC_MAX_BREAKPOINTS",
    "CACHE_POLICIES",
    "SYSTEM_SEPARATOR",
    "anthropic_cache_control",
    "check_cache_policy",
    "compute_cache_markers",
]
