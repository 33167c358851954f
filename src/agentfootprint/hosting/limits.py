"""Per-caller admission: turns per minute and per hour, and turns running at once; over a limit is a 429.

Counted in this host process (each replica counts its own). A caller is its tenant and principal, or for an
anonymous caller the client address. Windows slide: at most N turns in any 60 s (or 3,600 s)."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.hosting.refusal import WireRequestRefusal

__all__ = ["Admission", "AdmissionLimits", "Ticket"]


class AdmissionLimits(BaseModel):
    """How much one caller may ask of this host: None means no limit of that kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns_per_minute: int | None = Field(default=None, ge=1, le=100_000)
    turns_per_hour: int | None = Field(default=None, ge=1, le=1_000_000)
    concurrent_turns: int | None = Field(default=None, ge=1, le=10_000)
    max_callers: int = Field(default=100_000, ge=1, le=10_000_000)
    """How many callers' recent turns are remembered; past it the least recently seen idle caller is forgotten."""

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return any(v is not None for v in (self.turns_per_minute, self.turns_per_hour, self.concurrent_turns))


@dataclass
class _Caller:
    starts: deque[float] = field(default_factory=deque)
    running: int = 0


class Ticket:
    """One admitted turn: ``refund()`` if it never ran, ``done()`` when it ends (idempotent)."""

    __slots__ = ("_admission", "_at", "_key", "_open")

    def __init__(self, admission: Admission | None, key: str, at: float) -> None:
        self._admission = admission
        self._key = key
        self._at = at
        self._open = admission is not None

    def done(self) -> None:
        """The turn ended: its running slot is free (its start still counts in the windows)."""
        if self._open and self._admission is not None:
            self._open = False
            self._admission._finish(self._key, None)

    def refund(self) -> None:
        """The turn never ran: neither its start nor its slot counts."""
        if self._open and self._admission is not None:
            self._open = False
            self._admission._finish(self._key, self._at)


class Admission:
    """Admits turns per caller under ``AdmissionLimits``; ``admit(key)`` → a ``Ticket`` or a 429 refusal."""

    def __init__(self, limits: AdmissionLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._callers: OrderedDict[str, _Caller] = OrderedDict()
        self._window = 3600.0 if limits.turns_per_hour is not None else 60.0

    def __len__(self) -> int:
        return len(self._callers)

    def admit(self, key: str) -> Ticket:
        """Count one turn for ``key`` now, or refuse 429 with ``Retry-After`` (whole seconds, at least 1)."""
        limits = self.limits
        if not limits.active:
            return Ticket(None, key, 0.0)
        now = self._clock()
        caller = self._callers.get(key)
        if caller is None:
            caller = self._callers[key] = _Caller()
            self._forget_idle()
        else:
            self._callers.move_to_end(key)
        starts = caller.starts
        while starts and starts[0] <= now - self._window:
            starts.popleft()
        if limits.concurrent_turns is not None and caller.running >= limits.concurrent_turns:
            raise _too_many("ERR_AGUI_TOO_MANY_RUNNING", 1.0)
        for limit, window in ((limits.turns_per_minute, 60.0), (limits.turns_per_hour, 3600.0)):
            if limit is None:
                continue
            inside = _count_since(starts, now - window)
            if inside >= limit:
                oldest = starts[len(starts) - inside]
                raise _too_many("ERR_AGUI_RATE_LIMITED", oldest + window - now)
        starts.append(now)
        caller.running += 1
        return Ticket(self, key, now)

    def _finish(self, key: str, refund_at: float | None) -> None:
        caller = self._callers.get(key)
        if caller is None:
            return
        caller.running = max(0, caller.running - 1)
        if refund_at is not None:
            try:
                caller.starts.remove(refund_at)
            except ValueError:
                pass

    def _forget_idle(self) -> None:
        excess = len(self._callers) - self.limits.max_callers
        if excess <= 0:
            return
        idle: list[str] = []
        for key, caller in self._callers.items():
            if len(idle) >= excess:
                break
            if caller.running == 0:
                idle.append(key)
        for key in idle:
            del self._callers[key]


def _count_since(starts: deque[float], since: float) -> int:
    """How many starts are after ``since`` (they are in time order)."""
    count = 0
    for at in reversed(starts):
        if at <= since:
            break
        count += 1
    return count


def _too_many(reason: str, wait: float) -> WireRequestRefusal:
    seconds = max(1, math.ceil(wait))
    return WireRequestRefusal(reason, None, headers={"Retry-After": str(seconds)})
