"""Delayed delivery: ``on_event=delayed(fn)`` holds a run's events until its leg ends, then redacts them again with
every secret the run learned (a password typed as free text, named by the model as a tool argument later)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentfootprint.events.dispatcher import InvalidListenerError

__all__ = ["DelayedListener", "delayed"]


class DelayedListener:
    """A listener whose events arrive once the run's leg ends (completed, paused or failed), fully redacted."""

    __slots__ = ("listener",)

    def __init__(self, listener: Callable[[Any], Any]) -> None:
        if not callable(listener):
            raise InvalidListenerError(f"listener must be callable, got {type(listener).__name__}")
        self.listener = listener

    def __call__(self, event: Any) -> Any:
        return self.listener(event)

    def __repr__(self) -> str:
        return f"delayed({getattr(self.listener, '__qualname__', type(self.listener).__name__)})"


def delayed(listener: Callable[[Any], Any]) -> DelayedListener:
    """``agent.run(..., on_event=delayed(fn))``: ``fn`` sees the run's events only after the leg ends, each redacted
    with the secrets the whole run revealed (never one the run named only later)."""
    return DelayedListener(listener)
