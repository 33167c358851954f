"""Typed events: the catalogue of payload classes (one per known type), the ``AgentEvent`` envelope and the
``EventDispatcher``."""

from agentfootprint.events import catalogue, types
from agentfootprint.events._delayed import DelayedListener, delayed
from agentfootprint.events.catalogue import *  # noqa: F403  (the payload classes, one per known event type)
from agentfootprint.events.catalogue import (
    CustomEventPayload,
    EventPayload,
    parse_payload,
    payload_class,
    payload_classes,
)
from agentfootprint.events.dispatcher import (
    EventDispatcher,
    EventSink,
    InvalidListenerError,
    Listener,
    ListenerError,
    PayloadArg,
)
from agentfootprint.events.errors import InvalidEventPayloadError, UnknownEventTypeError
from agentfootprint.events.model import AgentEvent, EventMeta
from agentfootprint.events.types import (
    KNOWN_EVENT_TYPES,
)

__all__ = [
    "KNOWN_EVENT_TYPES",
    "AgentEvent",
    "CustomEventPayload",
    "DelayedListener",
    "EventDispatcher",
    "EventMeta",
    "EventPayload",
    "EventSink",
    "InvalidEventPayloadError",
    "InvalidListenerError",
    "Listener",
    "ListenerError",
    "PayloadArg",
    "UnknownEventTypeError",
    "catalogue",
    "delayed",
    "parse_payload",
    "payload_class",
    "payload_classes",
    "types",
]
__all__ += [name for name in catalogue.__all__ if name not in __all__]  # every payload class, one per known type
