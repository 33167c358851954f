"""Each event to its own run: the agent's one ``*`` listener hands an event to the log and listener of the run
that emitted it (``keep_events``, ``on_event``), so concurrent runs never see each other's events."""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

from agentfootprint.agent._run import AgentRun
from agentfootprint.agent.record import EventLog
from agentfootprint.events import AgentEvent, DelayedListener, EventDispatcher
from agentfootprint.flow import Redactor


class Route(EventLog):
    """One run's own events (when kept) and its own listener, reached by the agent's router."""

    __slots__ = ("held", "keep", "listener")

    def __init__(self, keep: bool, listener: Callable[[AgentEvent], Any] | None) -> None:
        super().__init__()
        self.keep = keep
        self.listener = listener
        self.held: list[AgentEvent] | None = [] if isinstance(listener, DelayedListener) else None
        """A delayed listener's events, held until the leg ends (``None`` once released, or never held)."""


class RunRoutes:
    """The routes of an agent's runs, by run id and turn id (held weakly: a route lives as long as its record)."""

    __slots__ = ("_dispatcher", "_keep", "_latest", "_routes", "_routing")

    def __init__(self, dispatcher: EventDispatcher, keep_events: bool, latest: Callable[[], EventLog | None]) -> None:
        self._dispatcher = dispatcher
        self._keep = keep_events
        self._latest = latest
        """The latest run's log: where an event of no run goes (an abandoned pause)."""
        self._routes: weakref.WeakValueDictionary[str, Route] = weakref.WeakValueDictionary()
        self._routing = False
        if keep_events:
            self._install()

    def _install(self) -> None:
        """Listen to every event once, from the first run that needs routing on."""
        if not self._routing:
            self._routing = True
            self._dispatcher.on("*", self.route)

    def route(self, event: AgentEvent) -> Any:
        """The dispatcher's listener: ``event`` to its run's log and listener."""
        run_id = event.meta.run_id
        route = self._routes.get(run_id) if run_id is not None else self._latest_route()
        if route is None:
            return None
        if route.keep:
            route.append(event)
        if route.held is not None:
            route.held.append(event)
            return None
        return route.listener(event) if route.listener is not None else None

    def _latest_route(self) -> Route | None:
        latest = self._latest()
        return latest if isinstance(latest, Route) else None

    def open(self, run: AgentRun, listener: Callable[[AgentEvent], Any] | None) -> Route | None:
        """This run's own event log (and listener), routed by its run id and turn id; None when nothing keeps them."""
        if not self._keep and listener is None:
            return None
        route = Route(self._keep, listener)
        self._routes[run.run_id] = route
        self._routes[run.turn_id] = route
        self._install()
        return route


def rescrub(log: EventLog, redactor: Redactor) -> None:
    """Kept events are redacted again with everything the run learned (a secret typed before it was known)."""
    for event in log:
        redactor.observe("", event.payload)
    log[:] = [e.model_copy(update={"payload": redactor.redact(e.payload)}) for e in log]


async def release(route: Route, redactor: Redactor, dispatcher: EventDispatcher) -> None:
    """A delayed listener's held events, redacted with every secret the run learned, delivered in order."""
    held, route.held = route.held or [], None
    listener = route.listener
    if listener is None:
        return
    if redactor.active:
        for event in held:
            redactor.observe("", event.payload)
        held = [e.model_copy(update={"payload": redactor.redact(e.payload)}) for e in held]
    for event in held:
        try:
            result = listener(event)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:  # kept like any listener failure, never stopping the others
            dispatcher._record(event.type, listener, exc)
