"""Declared invariants of an agent, checked at the composition seam: where a composition mounts the agent, its
answer and record cross into the composition, and each invariant it declared is checked there and filed (a
disposition row per invariant per mount, and a finding per violation) under ``integrity_mount:<mount id>``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MOUNT_KEY = "integrity_mount:"
"""Prefix of the parent-state key a mount files its invariant rows under (one key per mount: branches never clash)."""
INVARIANT_KIND = "invariant-violation"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
_BAD = "invariants() takes {name: check}, each check a function of the member's view returning True, False or None"


@dataclass(frozen=True, slots=True)
class MemberView:
    """What crosses the seam when a composition's member finishes: its answer, typed output, the tools whose results
    it settled on, the message it was given, and where it is mounted."""

    member: str
    mount: str
    answer: str
    output: Any
    tools: tuple[str, ...]
    message: str


Invariant = Callable[[MemberView], "bool | None"]


def declared_invariants(spec: Any) -> dict[str, Invariant]:
    """``{name: check}`` checked and copied; ``check(view)`` says True (holds), False (violated) or None (not
    applicable to this member's output)."""
    if not isinstance(spec, Mapping) or not spec or len(spec) > 64:
        raise ValueError(_BAD)
    out: dict[str, Invariant] = {}
    for name, check in spec.items():
        if not isinstance(name, str) or not _NAME.match(name) or not callable(check):
            raise ValueError(_BAD)
        out[name] = check
    return out


def invariants_of(runner: Any) -> Mapping[str, Invariant] | None:
    """The invariants a mounted runner declared (an agent's integrity ledger holds them), or None."""
    config = getattr(runner, "config", None)
    find = getattr(config, "extension", None)
    ledger = find("integrity") if callable(find) else None
    declared = getattr(ledger, "invariants", None)
    return declared if isinstance(declared, Mapping) and declared else None


def _view(member: str, mount: str, sub: Any) -> MemberView:
    results = sub.get("tool_results", None) or ()
    settled = tuple(
        str(r.get("name")) for r in results if isinstance(r, Mapping) and not r.get("is_error") and r.get("name")
    )
    return MemberView(
        member=member,
        mount=mount,
        answer=str(sub.get("answer", "") or ""),
        output=sub.get("output", None),
        tools=settled,
        message=str(sub.get("member_message", "") or ""),
    )


_NEITHER = "its check answered neither True, False nor None"


def check_mount(member: str, mount: str, invariants: Mapping[str, Invariant], sub: Any) -> dict[str, Any]:
    """Each invariant against the member's view at its mount: ``{"member", "at", "rows", "findings"}`` (a row per
    invariant, ``checked`` / ``not_applicable`` / ``findings``; a check that raises or answers neither True, False
    nor None is a finding too: it did not show the invariant holds)."""
    view = _view(member, mount, sub)
    rows: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for name, check in invariants.items():
        try:
            verdict = check(view)
            why = "" if verdict is True or verdict is None else "it does not hold" if verdict is False else _NEITHER
        except Exception:
            verdict, why = False, "its check failed to run"
        applicable = verdict is not None
        rows.append(
            {
                "check": f"invariant:{name}",
                "seam": "mount",
                "armed": True,
                "checked": int(applicable),
                "findings": int(bool(why)),
                "not_applicable": int(not applicable),
                "disposition": "ran" if applicable else "not-applicable",
            }
        )
        if why:
            findings.append(
                {
                    "kind": INVARIANT_KIND,
                    "seam": "mount",
                    "source_id": name,
                    "member": member[:64],
                    "message": f"member '{member[:64]}' crossed its mount breaking a declared invariant: {why}",
                }
            )
    at = getattr(sub, "runtime_stage_id", None)  # each visit's own (a loop's body files every pass)
    return {"member": member[:64], "at": at if isinstance(at, str) else None, "rows": rows, "findings": findings}


def checked_output(
    runner: Any, mount: str, output_map: Callable[[Any], Mapping[str, Any]]
) -> Callable[[Any], Mapping[str, Any]]:
    """A mount's output map that also checks the member's declared invariants where it crosses into the
    composition (unchanged for a member that declared none)."""
    invariants = invariants_of(runner)
    if invariants is None:
        return output_map
    member = str(getattr(runner, "name", mount))

    def out(sub: Any) -> Mapping[str, Any]:
        mapped = dict(output_map(sub))
        mapped[MOUNT_KEY + mount] = check_mount(member, mount, invariants, sub)
        return mapped

    return out


__all__ = [
    "INVARIANT_KIND",
    "MOUNT_KEY",
    "Invariant",
    "MemberView",
    "check_mount",
    "checked_output",
    "declared_invariants",
    "invariants_of",
]
