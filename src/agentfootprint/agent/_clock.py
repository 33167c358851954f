"""The time layer: ``.time(zone=)`` on the builder and ``time=`` on a door. A turn's clock (its ``now`` and the
person's zone) is read once at the door and committed at the turn's start; a paused turn keeps its clock on resume
(a differing ``time`` is recorded as a ``clock-on-resume`` row, never applied). No zone anywhere is an unknown
zone, never the server's."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agentfootprint.agent._options import InvalidRunOptionError
from agentfootprint.agent.errors import AgentBuildError

_MAX_ZONE = 64


class InvalidTimeError(AgentBuildError):
    """``.time(zone=...)`` names no known time zone (the zone is never quoted)."""

    code = "ERR_INVALID_TIME"


def known_zone(zone: Any) -> bool:
    if not isinstance(zone, str) or not zone or len(zone) > _MAX_ZONE or zone.startswith(("/", ".")) or ".." in zone:
        return False
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def builder_zone(zone: Any) -> str | None:
    """The fallback zone ``.time()`` was given, checked (None: the person's zone is unknown until a run says)."""
    if zone is not None and not known_zone(zone):
        raise InvalidTimeError("time(zone=...) must name an IANA time zone such as 'Europe/Paris'")
    return zone  # type: ignore[no-any-return]


def read_time(door: str, value: Any) -> dict[str, Any] | None:
    """A door's ``time``: an aware ``datetime``, or ``{"now"?: datetime | ISO-8601 str, "zone"?: IANA name}``."""
    if value is None:
        return None
    if isinstance(value, datetime):
        value = {"now": value}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value) or set(value) - {"now", "zone"}:
        raise InvalidRunOptionError(door, "time", 'must be a datetime or {"now": ..., "zone": ...}')
    out: dict[str, Any] = {}
    zone = value.get("zone")
    if zone is not None:
        if not known_zone(zone):
            raise InvalidRunOptionError(door, "time.zone", "must name an IANA time zone such as 'Europe/Paris'")
        out["zone"] = zone
    now = value.get("now")
    if now is not None:
        if isinstance(now, str) and len(now) <= 64:
            try:
                now = datetime.fromisoformat(now)
            except ValueError:
                raise InvalidRunOptionError(door, "time.now", "must be an ISO-8601 date-time") from None
        if not isinstance(now, datetime):
            raise InvalidRunOptionError(door, "time.now", "must be a datetime or an ISO-8601 string")
        if now.tzinfo is None:
            if zone is None:
                raise InvalidRunOptionError(door, "time.now", "has no offset and no zone to read it in")
            now = now.replace(tzinfo=ZoneInfo(zone))
        out["now"] = now.astimezone(UTC).isoformat()
    return out


def clock_for(passed: dict[str, Any] | None, zone: str | None) -> dict[str, Any]:
    """The turn's clock: the run's ``time`` where it said, else the builder's zone and the turn's start."""
    passed = passed or {}
    now = passed.get("now")
    chosen = passed.get("zone") or zone
    return {
        "now": now or datetime.now(UTC).isoformat(),
        "now_source": "run" if now else "default",
        "zone": chosen,
        "zone_source": "run" if passed.get("zone") else ("builder" if zone else "unknown"),
    }


def differs(passed: Mapping[str, Any], kept: Mapping[str, Any]) -> bool:
    """Whether a resume's ``time`` says something else than the paused turn's clock."""
    return any(key in passed and passed[key] != kept.get(key) for key in ("now", "zone"))


__all__ = ["InvalidTimeError", "builder_zone", "clock_for", "differs", "known_zone", "read_time"]
