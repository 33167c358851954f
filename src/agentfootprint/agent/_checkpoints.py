"""Reading checkpoints back: stored conversations and paused turns are untrusted JSON, validated field by field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agentfootprint.agent.errors import InvalidConversationError
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint
from agentfootprint.context.window import FoldedSpan
from agentfootprint.errors import validation_field
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.providers import Message


def load_conversation(value: Any) -> ConversationCheckpoint:
    """Validate a stored conversation (untrusted JSON); errors name the field, never the value."""
    if not isinstance(value, Mapping):
        raise InvalidConversationError(f"conversation must be a dict, got {type(value).__name__}", field="checkpoint")
    try:
        conv = ConversationCheckpoint.model_validate(dict(value))
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None
    for i, entry in enumerate(conv.history):
        _message(entry, f"history.{i}")
    for i, span in enumerate(conv.folded or ()):
        try:
            FoldedSpan.model_validate(span)
        except ValidationError as err:
            field = f"folded.{i}.{validation_field(err)}"
            raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None
        for k, entry in enumerate(span.get("messages") or ()):
            _message(entry, f"folded.{i}.messages.{k}")
    return conv


def _message(entry: Any, where: str) -> None:
    try:
        Message.model_validate(entry)
    except ValidationError as err:
        field = f"{where}.{validation_field(err)}"
        raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None


def load_pause_checkpoint(value: Any) -> AgentPauseCheckpoint:
    """Validate a paused turn's checkpoint (untrusted JSON); errors name the field, never the value."""
    if not isinstance(value, Mapping):
        raise InvalidCheckpointError(f"checkpoint must be a dict, got {type(value).__name__}", field="checkpoint")
    try:
        return AgentPauseCheckpoint.model_validate(dict(value))
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidCheckpointError(f"checkpoint field '{field[:120]}' is invalid", field=field) from None


__all__ = ["load_conversation", "load_pause_checkpoint"]
