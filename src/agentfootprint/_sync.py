"""The one way a blocking ``*_sync`` twin runs its async method: never inside a running event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from agentfootprint.errors import AgentFootprintError

R = TypeVar("R")


class SyncInRunningLoopError(AgentFootprintError, RuntimeError):
    """A ``*_sync`` twin was called inside a running event loop, where it would block that loop."""

    code = "ERR_SYNC_IN_RUNNING_LOOP"


def run_sync(coro: Coroutine[Any, Any, R], twin: str = "the async method") -> R:
    """Run ``coro`` to completion where no loop is running; inside one, refuse and name the async twin to await."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise SyncInRunningLoopError(
        f"a *_sync method was called inside a running event loop; await the async twin instead ({twin})"
    )


__all__ = ["SyncInRunningLoopError", "run_sync"]
