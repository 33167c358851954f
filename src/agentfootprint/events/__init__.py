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
    EVENT_PREFIX,
    KNOWN_DOMAINS,
    KNOWN_EVENT_TYPES,
    domain_of,
    full_event_type,
    is_known_event_type,
)

__all__ = [
    "EVENT_PREFIX",
    "KNOWN_DOMAINS",
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
    "domain_of",
    "full_event_type",
    "is_known_event_type",
    "types",
]
