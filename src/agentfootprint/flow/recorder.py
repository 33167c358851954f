"""Recorders observe a run through optional ``on_*`` hooks; a raising recorder never breaks the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from agentfootprint.flow._frozen import FrozenList
from agentfootprint.flow._namespace import MISSING

if TYPE_CHECKING:
    from agentfootprint.flow._frame import StageFrame
    from agentfootprint.flow.redaction import Redactor

_HOOKS = (
    "on_run_start",
    "on_stage_start",
    "on_read",
    "on_write",
    "on_commit",
    "on_decision",
    "on_fork",
    "on_subflow",
    "on_loop",
    "on_pause",
    "on_resume",
    "on_error",
    "on_run_end",
    "on_emit",
    "on_break",
)


@runtime_checkable
class Recorder(Protocol):
    """Any object with some of the ``on_*`` hooks (``on_run_start``, ``on_stage_start``, ``on_read``, ... ``on_break``);
    hooks are called synchronously in attach order."""


class RecorderFailure(BaseModel):
    """A recorder hook that raised: isolated and reported here instead of breaking the run."""

    recorder: str
    hook: str
    error_type: str
    message: str


class Dispatch:
    """Routes engine events to the hooks recorders define; values are redacted before recorders see them."""

    on_run_start: list[Any]
    on_stage_start: list[Any]
    on_read: list[Any]
    on_write: list[Any]
    on_commit: list[Any]
    on_decision: list[Any]
    on_fork: list[Any]
    on_subflow: list[Any]
    on_loop: list[Any]
    on_pause: list[Any]
    on_resume: list[Any]
    on_error: list[Any]
    on_run_end: list[Any]
    on_emit: list[Any]
    on_break: list[Any]

    def __init__(self, recorders: Any, redactor: Redactor, failures: list[RecorderFailure]) -> None:
        self._redactor = redactor
        self._failures = failures
        self._recorders = list(recorders)
        recorders = self._recorders
        for hook in _HOOKS:  # without recorders every hook list is empty: no comprehension per hook
            bound = [getattr(r, hook) for r in recorders if callable(getattr(r, hook, None))] if recorders else []
            setattr(self, hook, bound)

    def _call(self, hook: str, *args: Any) -> None:
        for fn in getattr(self, hook):
            try:
                fn(*args)
            except Exception as exc:  # isolation: a recorder can never break a run
                owner = getattr(fn, "__self__", fn)
                self._failures.append(
                    RecorderFailure(
                        recorder=str(getattr(owner, "id", type(owner).__name__))[:100],
                        hook=hook,
                        error_type=type(exc).__name__,
                        message=str(exc)[:300],
                    )
                )

    def fire(self, hook: str, *args: Any) -> None:
        if getattr(self, hook):
            self._call(hook, *args)

    def read(self, frame: StageFrame, key: str, value: Any) -> None:
        """Hand ``on_read`` the value as read: None for an absent key; a list is copied (appends grow it in place)."""
        if value is MISSING:
            value = None
        elif isinstance(value, list):
            value = FrozenList(value)
        red = self._redactor
        self._call("on_read", frame, key, red.redact(value, key) if red.active else value)

    def write(self, frame: StageFrame, key: str, verb: str, value: Any) -> None:
        red = self._redactor
        if red.active:
            red.observe(key, value)
            value = red.redact(value, key)
        self._call("on_write", frame, key, verb, value)

    def emit(self, frame: StageFrame, name: str, payload: Any) -> None:
        red = self._redactor
        self._call("on_emit", frame, name, red.redact(payload) if red.active else payload)
