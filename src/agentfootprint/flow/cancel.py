"""A cancel signal a caller can fire from anywhere (another task or thread) to stop a run."""

from __future__ import annotations

import asyncio
import threading


class CancelToken:
    """``cancel(reason)`` stops every run using this token at its next stage boundary, or mid-await."""

    def __init__(self) -> None:
        self._reason: str | None = None
        self._lock = threading.Lock()
        self._tasks: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[object]]] = []

    @property
    def cancelled(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def cancel(self, reason: str = "cancelled") -> None:
        with self._lock:
            if self._reason is None:
                self._reason = str(reason)[:500]
            tasks = list(self._tasks)
        try:
            current = asyncio.current_task()
        except RuntimeError:
            current = None
        for loop, task in tasks:
            # the run calling cancel() (a tool, a listener) stops at its next stage boundary by itself
            if not task.done() and task is not current:
                loop.call_soon_threadsafe(self._cancel_if_running, task)

    def _cancel_if_running(self, task: asyncio.Task[object]) -> None:
        """Cancel ``task`` only while it still runs a run of this token (never a caller after the run ended)."""
        with self._lock:
            running = any(t is task for _, t in self._tasks)
        if running and not task.done():
            task.cancel()

    def _register(self, task: asyncio.Task[object]) -> None:
        with self._lock:
            self._tasks.append((asyncio.get_running_loop(), task))

    def _unregister(self, task: asyncio.Task[object]) -> None:
        with self._lock:
            self._tasks = [(lp, t) for lp, t in self._tasks if t is not task]
