"""Reading checkpoints back: stored conversations and paused turns are untrusted JSON. With a key the seal is
checked first; then size, shape and consistency, field by field. Refusals name the field, never the value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agentfootprint.agent._integrity import check_bounds, check_history
from agentfootprint.agent._seal import SealKey, check_seal
from agentfootprint.agent.errors import InvalidConversationError
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint
from agentfootprint.context.window import FoldedSpan
from agentfootprint.errors import validation_field
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.identity import coerce_identity
from agentfootprint.providers import Message

_MAX_EXTENSION_NAME = 64


def load_conversation(value: Any, *, key: SealKey | None = None, door: str = "continue_from") -> ConversationCheckpoint:
    """Validate a stored conversation (untrusted JSON); errors name the field, never the value."""
    check_seal(value, key, door)
    if not isinstance(value, Mapping):
        raise InvalidConversationError(f"conversation must be a dict, got {type(value).__name__}", field="checkpoint")
    check_bounds(value, InvalidConversationError)
    if type(value.get("version", 1)) is not int:
        raise InvalidConversationError("conversation field 'version' is invalid", field="version")
    try:
        conv = ConversationCheckpoint.model_validate(dict(value), strict=True)
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None
    check_history(conv.history, "history", InvalidConversationError)
    for i, span in enumerate(conv.folded or ()):
        try:
            FoldedSpan.model_validate(span)
        except ValidationError as err:
            field = f"folded.{i}.{validation_field(err)}"
            raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None
        for k, entry in enumerate(span.get("messages") or ()):
            _message(entry, f"folded.{i}.messages.{k}")
    try:
        coerce_identity(conv.identity)
    except Exception:
        raise InvalidConversationError("conversation field 'identity' is invalid", field="identity") from None
    for name in conv.extensions or {}:
        if not name or len(name) > _MAX_EXTENSION_NAME:
            raise InvalidConversationError("conversation field 'extensions' is invalid", field="extensions")
    if not conv.run_id.strip():
        raise InvalidConversationError("conversation field 'run_id' is invalid", field="run_id")
    return conv


def _message(entry: Any, where: str) -> None:
    try:
        Message.model_validate(entry, strict=True)
    except ValidationError as err:
        field = f"{where}.{validation_field(err)}"
        raise InvalidConversationError(f"conversation field '{field[:120]}' is invalid", field=field) from None


def load_pause_checkpoint(value: Any, *, key: SealKey | None = None, door: str = "resume") -> AgentPauseCheckpoint:
    """Validate a paused turn's checkpoint (untrusted JSON); errors name the field, never the value."""
    check_seal(value, key, door)
    if not isinstance(value, Mapping):
        raise InvalidCheckpointError(f"checkpoint must be a dict, got {type(value).__name__}", field="checkpoint")
    check_bounds(value, InvalidCheckpointError)
    if type(value.get("version", 1)) is not int:
        raise InvalidCheckpointError("checkpoint field 'version' is invalid", field="version")
    try:
        return AgentPauseCheckpoint.model_validate(dict(value), strict=True)
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidCheckpointError(f"checkpoint field '{field[:120]}' is invalid", field=field) from None


__all__ = ["load_conversation", "load_pause_checkpoint"]
