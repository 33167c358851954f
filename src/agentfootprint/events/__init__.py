"""Typed events: the registry of known types, the ``AgentEvent`` envelope and the ``EventDispatcher``."""

from agentfootprint.events import types
from agentfootprint.events.dispatcher import (
    EventDispatcher,
    EventSink,
    InvalidListenerError,
    Listener,
    ListenerError,
    PayloadArg,
    UnknownEventTypeError,
)
from agentfootprint.events.model import AgentEvent, EventMeta
from agentfootprint.events.types import (
    KNOWN_EVENT_TYPES,
)

__all__ = [
    "KNOWN_EVENT_TYPES",
    "AgentEvent",
    "EventDispatcher",
    "EventMeta",
    "EventSink",
    "InvalidListenerError",
    "Listener",
    "ListenerError",
    "PayloadArg",
    "UnknownEventTypeError",
    "types",
]
