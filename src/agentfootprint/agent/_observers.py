"""Observer delivery: ``inline`` (listeners run as each event is emitted) or ``deferred`` (events are captured into a
bounded queue and delivered after the run returns, one beat behind; ``drain_observers()`` settles them)."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentfootprint.events import AgentEvent, EventDispatcher, PayloadArg
from agentfootprint.events.catalogue import payload_mapping
from agentfootprint.events.types import full_event_type

ObserverDelivery = Literal["inline", "deferred"]


class ObserverDrainResult(BaseModel):
    """What a drain settled: events delivered to listeners, and what is still pending at the deadline (never lost)."""

    model_config = ConfigDict(frozen=True)

    delivered: int = 0
    pending: int = 0
    delivered_inline: int = 0
    """Events delivered as they were emitted because the queue was full (backpressure, not loss)."""


@dataclass(slots=True)
class _Captured:
    event_type: str
    payload: Any
    run_id: str | None
    runtime_stage_id: str | None
    iteration: int | None
    redact: Callable[[Any], Any] | None
    meta: Mapping[str, Any] | None = None


class DeferredSink:
    """An event sink that captures events (payload built and redacted at emit time, as inline delivery would see
    it) into a bounded queue; ``flush`` delivers them to the dispatcher's listeners in order."""

    def __init__(self, dispatcher: EventDispatcher, capacity: int) -> None:
        self._dispatcher = dispatcher
        self._capacity = capacity
        self._queue: collections.deque[_Captured] = collections.deque()
        self.delivered_inline = 0
        self.delivered = 0
        self._task: asyncio.Task[None] | None = None

    def has_listeners(self, event_type: str) -> bool:
        return self._dispatcher.has_listeners(event_type)

    def is_known(self, event_type: str) -> bool:
        return self._dispatcher.is_known(event_type)

    def register_type(self, event_type: str) -> str:
        return self._dispatcher.register_type(event_type)

    def emit(
        self,
        event_type: str,
        payload: PayloadArg = None,
        *,
        run_id: str | None = None,
        runtime_stage_id: str | None = None,
        iteration: int | None = None,
        timestamp: float | None = None,
        redact: Callable[[Any], Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> AgentEvent | None:
        if not self._dispatcher.has_listeners(event_type):
            return None
        raw = payload() if callable(payload) else payload  # what the run looked like when the event happened
        built: Any = payload_mapping(full_event_type(event_type), raw)
        if redact is not None:
            built = redact(built)
        if len(self._queue) >= self._capacity:  # full: deliver the oldest now rather than drop it
            self._deliver(self._queue.popleft())
            self.delivered_inline += 1
        self._queue.append(_Captured(event_type, built, run_id, runtime_stage_id, iteration, None, meta))
        return None

    def _deliver(self, item: _Captured) -> None:
        self._dispatcher.emit(
            item.event_type,
            item.payload,
            run_id=item.run_id,
            runtime_stage_id=item.runtime_stage_id,
            iteration=item.iteration,
            redact=item.redact,
            meta=item.meta,
        )
        self.delivered += 1

    @property
    def pending(self) -> int:
        return len(self._queue)

    def flush_later(self) -> None:
        """Deliver the captured events on the running loop, after the caller gets its result back."""
        if self._queue and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        while self._queue:
            self._deliver(self._queue.popleft())
            await asyncio.sleep(0)  # one event per beat: the caller's own work interleaves

    async def drain(self, timeout: float | None) -> ObserverDrainResult:
        """Deliver what is queued and await async listeners, up to ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self._queue and (deadline is None or loop.time() < deadline):
            self._deliver(self._queue.popleft())
            await asyncio.sleep(0)
        remaining = None if deadline is None else max(0.0, deadline - loop.time())
        waiting = await self._dispatcher.drain(timeout=remaining)
        return ObserverDrainResult(
            delivered=self.delivered, pending=len(self._queue) + waiting, delivered_inline=self.delivered_inline
        )


__all__ = ["DeferredSink", "ObserverDelivery", "ObserverDrainResult"]
