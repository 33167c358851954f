"""``EventDispatcher``: subscribe by exact type, ``domain.*`` or ``*``; zero cost when nobody listens.

Async listeners: a listener that returns an awaitable has it scheduled as a task on the running loop at once
(or, with no running loop, kept until ``drain()``); ``await dispatcher.drain()`` waits for all of them. A
raising listener (sync or async) never reaches the emitter: it is recorded in ``listener_errors``.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from agentfootprint._sync import run_sync
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events.catalogue import EventPayload, payload_mapping
from agentfootprint.events.errors import UnknownEventTypeError
from agentfootprint.events.model import AgentEvent, EventMeta
from agentfootprint.events.types import EVENT_PREFIX, KNOWN_DOMAINS, KNOWN_EVENT_TYPES, full_event_type

__all__ = [
    "EventDispatcher",
    "EventSink",
    "InvalidListenerError",
    "Listener",
    "ListenerError",
    "PayloadArg",
    "UnknownEventTypeError",
]

Listener = Callable[[AgentEvent], Any]
PayloadArg = EventPayload | Mapping[str, Any] | Callable[[], EventPayload | Mapping[str, Any]] | None
"""What an emitter hands over: a catalogue payload object (what the library builds), a mapping, or a zero-argument
factory of either (called only when someone listens)."""
_SHAPE = re.compile(r"^agentfootprint\.[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
_MAX_ERRORS = 1000
_MAX_TEXT = 500


class InvalidListenerError(AgentFootprintError, TypeError):
    """A listener that is not callable."""

    code = "ERR_INVALID_LISTENER"


class ListenerError(NamedTuple):
    """A listener failure kept for inspection: event type, listener, exception type name, message (capped)."""

    type: str
    listener: str
    error_type: str
    message: str


@dataclass(eq=False, slots=True)
class _Subscription:
    kind: str  # "all" | "domain" | "exact"
    key: str
    fn: Listener

    def matches(self, full_type: str) -> bool:
        if self.kind == "all":
            return True
        if self.kind == "exact":
            return full_type == self.key
        return full_type.startswith(self.key)


def _describe_listener(fn: object) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    text = name if isinstance(name, str) else type(fn).__name__
    return text[:120]


def _safe_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        return ""
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


class EventSink(Protocol):
    """Anything events are emitted through: a dispatcher, a run's redacting view of one, a tee of several."""

    def has_listeners(self, event_type: str) -> bool: ...

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
    ) -> AgentEvent | None: ...

    def is_known(self, event_type: str) -> bool: ...

    def register_type(self, event_type: str) -> str: ...


class EventDispatcher:
    """Typed event fan-out with a redaction hook; listeners are isolated from emitters and from each other."""

    def __init__(self, redact: Callable[[Any], Any] | None = None, *, max_listener_errors: int = _MAX_ERRORS):
        self.redact = redact
        self.listener_errors: list[ListenerError] = []
        self.dropped_listener_errors = 0
        self._max_errors = max_listener_errors
        self._subs: list[_Subscription] = []
        self._routes: dict[str, tuple[Listener, ...]] = {}
        self._known: set[str] = set(KNOWN_EVENT_TYPES)
        self._domains: set[str] = set(KNOWN_DOMAINS)
        self._seq = 0
        self._pending: set[asyncio.Future[Any]] = set()
        self._orphans: list[tuple[str, Listener, Awaitable[Any]]] = []

    # ------------------------------------------------------------ subscribe

    def on(self, type_or_glob: str, fn: Listener) -> Callable[[], None]:
        """Subscribe ``fn(event)`` to an exact type (full or short), ``domain.*`` or ``*``; -> unsubscribe."""
        if not callable(fn):
            raise InvalidListenerError(f"listener must be callable, got {type(fn).__name__}")
        sub = self._parse(type_or_glob, fn)
        self._subs.append(sub)
        self._routes = {}

        def unsubscribe() -> None:
            try:
                self._subs.remove(sub)
            except ValueError:
                return
            self._routes = {}

        return unsubscribe

    def copy_listeners_to(self, other: EventDispatcher, *, skip: Listener | None = None) -> None:
        """Subscribe every listener of this dispatcher (but ``skip``) on ``other`` too (same patterns, same order)."""
        for sub in self._subs:
            if skip is None or sub.fn != skip:
                other._subs.append(_Subscription(sub.kind, sub.key, sub.fn))
        other._known |= self._known
        other._routes = {}

    def _parse(self, pattern: object, fn: Listener) -> _Subscription:
        if not isinstance(pattern, str):
            raise UnknownEventTypeError(pattern)
        if pattern in ("*", "agentfootprint.*"):
            return _Subscription("all", "", fn)
        if pattern.endswith(".*"):
            domain = pattern[:-2].removeprefix(EVENT_PREFIX)
            if domain not in self._domains:
                raise UnknownEventTypeError(pattern)
            return _Subscription("domain", f"{EVENT_PREFIX}{domain}.", fn)
        full = full_event_type(pattern)
        if full not in self._known:
            raise UnknownEventTypeError(pattern)
        return _Subscription("exact", full, fn)

    def register_type(self, event_type: str) -> str:
        """Add a custom ``agentfootprint.<domain>.<name>`` (or short form) type to this dispatcher."""
        full = full_event_type(event_type) if isinstance(event_type, str) else ""
        if not _SHAPE.match(full):
            raise UnknownEventTypeError(event_type)
        self._known.add(full)
        self._domains.add(full.split(".")[1])
        self._routes = {}
        return full

    def is_known(self, event_type: str) -> bool:
        """Whether this dispatcher accepts ``event_type`` (registry plus registered custom types)."""
        return isinstance(event_type, str) and full_event_type(event_type) in self._known

    def clear(self) -> None:
        """Remove every listener."""
        self._subs.clear()
        self._routes = {}

    # ------------------------------------------------------------ emit

    @property
    def has_any_listeners(self) -> bool:
        """True when at least one listener is subscribed to anything."""
        return bool(self._subs)

    def has_listeners(self, event_type: str) -> bool:
        """Whether emitting ``event_type`` would reach anyone (a dict lookup once warm)."""
        if not self._subs:
            return False
        routes = self._routes.get(event_type)
        if routes is None:
            routes = self._route(event_type)
        return bool(routes)

    def _route(self, event_type: str) -> tuple[Listener, ...]:
        full = full_event_type(event_type) if isinstance(event_type, str) else ""
        routes = tuple(s.fn for s in self._subs if s.matches(full))
        if len(self._routes) < 4096:
            self._routes[event_type] = routes
        return routes

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
        """Deliver an event; returns it, or None when nobody listens (then nothing is built).

        ``payload`` is a catalogue object or a mapping, or a zero-argument factory of either, called only when
        someone listens; ``event.payload`` is its mapping. ``redact`` replaces the
        dispatcher's own redaction for this event (a run passes its run-wide policy). ``meta`` adds the run's
        ``session_id`` / ``correlation_id`` / ``trace_id`` to the event's meta.
        """
        if not self._subs:
            return None
        listeners = self._routes.get(event_type)
        if listeners is None:
            listeners = self._route(event_type)
        if not listeners:
            return None
        full = full_event_type(event_type)
        if full not in self._known:
            raise UnknownEventTypeError(event_type)
        data = self._payload(full, payload, redact or self.redact)
        if data is None:
            return None
        self._seq += 1
        stamped = EventMeta.model_construct(
            run_id=run_id,
            runtime_stage_id=runtime_stage_id,
            iteration=iteration,
            timestamp=time.time() if timestamp is None else timestamp,
            seq=self._seq,
            session_id=meta.get("session_id") if meta else None,
            correlation_id=meta.get("correlation_id") if meta else None,
            trace_id=meta.get("trace_id") if meta else None,
        )
        event = AgentEvent.model_construct(type=full, payload=data, meta=stamped)
        for fn in listeners:
            try:
                result = fn(event)
            except Exception as exc:
                self._record(full, fn, exc)
                continue
            if result is not None and inspect.isawaitable(result):
                self._schedule(full, fn, result)
        return event

    def _payload(self, full: str, payload: PayloadArg, redact: Callable[[Any], Any] | None) -> dict[str, Any] | None:
        try:
            data: Any = payload_mapping(full, payload() if callable(payload) else payload)
            if redact is not None:
                data = redact(data)
                if not isinstance(data, dict):
                    raise TypeError(f"redact returned {type(data).__name__}, expected dict")
        except Exception as exc:  # fail closed: an event we cannot build (or redact) is not delivered
            self._record(full, "<payload>" if redact is None else "<payload or redact>", exc)
            return None
        return typing.cast(dict[str, Any], data)

    # ------------------------------------------------------------ async listeners

    def _schedule(self, full: str, fn: Listener, awaitable: Awaitable[Any]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._orphans.append((full, fn, awaitable))
            return
        self._track(loop, full, fn, awaitable)

    def _track(self, loop: asyncio.AbstractEventLoop, full: str, fn: Listener, awaitable: Awaitable[Any]) -> None:
        try:
            task = asyncio.ensure_future(awaitable, loop=loop)
        except Exception as exc:
            self._record(full, fn, exc)
            return
        self._pending.add(task)

        def done(finished: asyncio.Future[Any]) -> None:
            self._pending.discard(finished)
            if finished.cancelled():
                return
            exc = finished.exception()
            if exc is not None:
                self._record(full, fn, exc)

        task.add_done_callback(done)

    @property
    def pending(self) -> int:
        """Async listener calls not finished yet."""
        return len(self._pending) + len(self._orphans)

    async def drain(self, timeout: float | None = None) -> int:
        """Await outstanding async listeners (up to ``timeout`` seconds); returns how many still pend."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            orphans, self._orphans = self._orphans, []
            for full, fn, awaitable in orphans:
                self._track(loop, full, fn, awaitable)
            stale = {t for t in self._pending if t.get_loop() is not loop}
            self._pending -= stale
            waiting = {t for t in self._pending if not t.done()}
            if not waiting:
                return 0
            remaining = None if deadline is None else max(0.0, deadline - loop.time())
            if remaining == 0.0:
                return len(waiting)
            _, not_done = await asyncio.wait(waiting, timeout=remaining)
            if not_done:
                return len(not_done) + len(self._orphans)

    def drain_sync(self, timeout: float | None = None) -> int:
        """``drain`` where no event loop is running."""
        return run_sync(self.drain(timeout), "await dispatcher.drain(...)")

    # ------------------------------------------------------------ errors

    def _record(self, full: str, fn: object, exc: BaseException) -> None:
        if len(self.listener_errors) >= self._max_errors:
            self.dropped_listener_errors += 1
            return
        who = fn if isinstance(fn, str) else _describe_listener(fn)
        self.listener_errors.append(ListenerError(full, who, type(exc).__name__, _safe_text(exc)))
