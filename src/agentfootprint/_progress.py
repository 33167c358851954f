"""The one progress bar: transient, on the terminal only when asked (or when stderr is one), never in a pipe."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class ProgressBar:
    """Counts ``total`` steps under ``label`` (None: open-ended); ``show=None`` shows it only on a terminal."""

    def __init__(self, label: str, total: int | None, show: bool | None = None) -> None:
        self._bar: Any = None
        self._task: Any = None
        enabled = sys.stderr.isatty() if show is None else show
        if enabled and (total is None or total > 0):
            from rich.progress import Progress

            self._bar = Progress(transient=True)
            self._bar.start()
            self._task = self._bar.add_task(label, total=total)

    def advance(self, steps: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, steps)

    def reached(self, done: int) -> None:
        """Set the count to ``done`` (for callers that report totals rather than steps)."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


__all__ = ["ProgressBar"]
