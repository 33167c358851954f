"""Cache policy per injection → provider-agnostic cache markers; ``anthropic_cache_control`` applies them.

A slot's cacheable prefix runs from its first record up to (not including) the first ``never`` record. A marker
ends the leading run of ``always`` records (the base system prompt is ``always``), and a second one ends the whole
cacheable prefix when ``while-active`` records extend it. So at most two markers per slot, four per request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentfootprint.context.injection import InvalidInjectionError
from agentfootprint.providers._anthropic_cache import ANTHROPIC_MAX_BREAKPOINTS, anthropic_cache_control

CACHE_POLICIES = ("always", "never", "while-active")
SYSTEM_SEPARATOR = "\n\n"


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


__all__ = [
    "ANTHROPIC_MAX_BREAKPOINTS",
    "CACHE_POLICIES",
    "SYSTEM_SEPARATOR",
    "anthropic_cache_control",
    "check_cache_policy",
    "compute_cache_markers",
]
