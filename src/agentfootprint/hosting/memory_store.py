"""Served threads in this process's memory (the default store): capped by bytes, least recently used dropped first.

Each thread is kept packed as UTF-8 JSON (each long string once) by ``agentfootprint.stores.sessions``. When the
threads pass ``max_bytes``, the least recently used ones that no turn holds are dropped; a dropped thread's id is
remembered (with its owner), so its owner is told it expired (410) instead of silently starting a fresh
conversation under the same id."""

from __future__ import annotations

import time
from typing import Any

from agentfootprint.hosting._row_sessions import RowSessions
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.hosting.sessions import DEFAULT_LEASE_SECONDS, Clock, check_lease_seconds
from agentfootprint.stores.sessions import DEFAULT_MAX_BYTES, MemorySessionRows

__all__ = ["DEFAULT_MAX_BYTES", "MemorySessions", "memory_sessions"]


class MemorySessions(RowSessions):
    """Threads in this process's memory, for the app's lifetime, capped at ``max_bytes`` (LRU by bytes)."""

    backend: MemorySessionRows

    def __init__(
        self,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Clock | None = None,
    ) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 4096:
            raise HostingConfigError("max_bytes must be an int of at least 4096")
        clock = clock or time.time
        rows = MemorySessionRows(lease_seconds=check_lease_seconds(lease_seconds), max_bytes=max_bytes, clock=clock)
        super().__init__(rows, clock)
        self.max_bytes = max_bytes

    @property
    def stored_bytes(self) -> int:
        """What the kept threads and remembered dropped ids cost, as this store counts it."""
        return self.backend.stored_bytes

    @property
    def _rows(self) -> Any:
        return self.backend._rows

    def __len__(self) -> int:
        return len(self.backend)


def memory_sessions(
    *, lease_seconds: float = DEFAULT_LEASE_SECONDS, max_bytes: int = DEFAULT_MAX_BYTES, clock: Clock | None = None
) -> MemorySessions:
    """An in-memory ``SessionStore`` (the default): threads last as long as the app, within ``max_bytes``."""
    return MemorySessions(lease_seconds=lease_seconds, max_bytes=max_bytes, clock=clock)
