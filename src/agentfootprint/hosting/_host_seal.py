"""The host's seal on what it stores (``ag_ui_app(checkpoint_key=...)``): an HMAC-SHA256 over a thread's held pause
record and its conversation, each with the thread's messages and bound to the thread id, checked when the thread is
loaded and before anything runs.

The pause record's seal is its ``seal`` field; the conversation's is a top-level ``"host_seal"`` entry that the host
removes before the agent sees the conversation (an agent's own ``"seal"``, if it has a key, is kept untouched)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agentfootprint.flow import CheckpointSealError, SealKey, check_seal, seal_key
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.hosting.sessions import PauseRecord, ThreadRecord

HOST_SEAL = "host_seal"
CHECKPOINT_KEY_ENV = "AGENTFOOTPRINT_CHECKPOINT_KEY"
"""The environment variable ``serve`` (and ``agentfootprint serve``) reads the host's checkpoint key from."""

_PAUSE = "agentfootprint.host.pause"
_CONVERSATION = "agentfootprint.host.conversation"


def host_key(key: str | bytes | None) -> SealKey | None:
    """The host's key from ``ag_ui_app(checkpoint_key=...)`` (a ``str`` means its UTF-8 bytes)."""
    try:
        return seal_key(key)
    except TypeError:
        raise HostingConfigError("checkpoint_key must be a non-empty str or bytes") from None


def key_from_env() -> str | None:
    """The key in ``AGENTFOOTPRINT_CHECKPOINT_KEY`` (None when unset or empty)."""
    return os.environ.get(CHECKPOINT_KEY_ENV) or None


def _pause_body(thread_id: str, record: ThreadRecord, pause: PauseRecord) -> dict[str, Any]:
    return {
        "kind": _PAUSE,
        "thread_id": thread_id,
        "pause": pause.model_dump(mode="json", exclude={"seal"}),
        "messages": list(record.messages),
    }


def _conversation_body(thread_id: str, record: ThreadRecord, conversation: Mapping[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in conversation.items() if k != HOST_SEAL}
    return {"kind": _CONVERSATION, "thread_id": thread_id, "conversation": body, "messages": list(record.messages)}


def seal_record(thread_id: str, record: ThreadRecord, key: SealKey | None) -> ThreadRecord:
    """``record`` as the host stores it: with a key, its pause and conversation sealed to ``thread_id``."""
    if key is None:
        return record
    update: dict[str, Any] = {}
    if record.pause is not None:
        seal = key.digest(_pause_body(thread_id, record, record.pause))
        update["pause"] = record.pause.model_copy(update={"seal": seal})
    if record.conversation is not None:
        body = _conversation_body(thread_id, record, record.conversation)
        update["conversation"] = {**body["conversation"], HOST_SEAL: key.digest(body)}
    return record.model_copy(update=update) if update else record


def open_record(thread_id: str, record: ThreadRecord, key: SealKey | None) -> ThreadRecord:
    """``record`` as loaded, its seals checked and the conversation's removed; a missing or wrong seal raises
    ``CheckpointSealError`` (``field == "seal"``) before anything runs. Without a key, a stored host seal is
    removed unchecked."""
    conversation = record.conversation
    if conversation is not None and key is not None:
        body = _conversation_body(thread_id, record, conversation)
        check_seal({**body, "seal": conversation.get(HOST_SEAL)}, key, "ag_ui stored conversation")
    if record.pause is not None and key is not None:
        check_seal(
            {**_pause_body(thread_id, record, record.pause), "seal": record.pause.seal}, key, "ag_ui stored pause"
        )
    update: dict[str, Any] = {}
    if conversation is not None and HOST_SEAL in conversation:
        update["conversation"] = {k: v for k, v in conversation.items() if k != HOST_SEAL}
    if record.pause is not None and record.pause.seal is not None:
        update["pause"] = record.pause.model_copy(update={"seal": None})
    return record.model_copy(update=update) if update else record


__all__ = [
    "CHECKPOINT_KEY_ENV",
    "HOST_SEAL",
    "CheckpointSealError",
    "host_key",
    "key_from_env",
    "open_record",
    "seal_record",
]
