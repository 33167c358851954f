"""The host's seal on what it stores (``ag_ui_app(checkpoint_key=...)``): an HMAC-SHA256 over a thread's held pause
record, its conversation and its last recording, each with the thread's messages, bound to the thread id and to its
owner (tenant, principal, issuer), checked when the thread is read and before anything runs.

The pause record's seal is its ``seal`` field; the conversation's and the recording's are a top-level ``"host_seal"``
entry that the host removes before anyone sees them (an agent's own ``"seal"``, if it has a key, is kept untouched).
Several keys rotate: the first signs, every one verifies, and the next write re-seals with the first."""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from agentfootprint.flow import CheckpointSealError, SealKey, seal_key
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.hosting.sessions import PauseRecord, ThreadRecord

HOST_SEAL = "host_seal"
CHECKPOINT_KEY_ENV = "AGENTFOOTPRINT_CHECKPOINT_KEY"
"""The environment variable ``serve`` (and ``agentfootprint serve``) reads the host's checkpoint key from; several
keys (newest first) are separated by commas."""

_PAUSE = "agentfootprint.host.pause/2"
_CONVERSATION = "agentfootprint.host.conversation/2"
_RECORDING = "agentfootprint.host.recording/1"
_MAX_KEYS = 16


class HostKeys:
    """The host's seal keys, newest first: the first signs, each verifies; never shown by ``repr``."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Sequence[SealKey]) -> None:
        self._keys = tuple(keys)

    def __repr__(self) -> str:
        return f"HostKeys(<{len(self._keys)} hidden>)"

    def __len__(self) -> int:
        return len(self._keys)

    def digest(self, body: Mapping[str, Any]) -> str:
        """The seal the newest key puts on ``body``."""
        return self._keys[0].digest(body)

    def verify(self, body: Mapping[str, Any], given: Any, door: str) -> int:
        """Which key (0 = newest) sealed ``body`` as ``given``; ``CheckpointSealError`` when none did."""
        if not isinstance(given, str) or len(given) != 64:
            raise CheckpointSealError(door, "missing or malformed")
        try:
            for index, key in enumerate(self._keys):
                if hmac.compare_digest(key.digest(body), given):
                    return index
        except (ValueError, TypeError, RecursionError, OverflowError):
            raise CheckpointSealError(door, "not verifiable (the stored value is not plain JSON)") from None
        raise CheckpointSealError(
            door, "wrong: it was changed behind the host, moved to another owner, or sealed with a key it no longer has"
        )


def host_key(key: str | bytes | Sequence[str | bytes] | None) -> HostKeys | None:
    """The host's keys from ``ag_ui_app(checkpoint_key=...)``: one key, or a list of keys newest first (a ``str``
    means its UTF-8 bytes)."""
    if key is None:
        return None
    listed = [key] if isinstance(key, str | bytes | bytearray) else key
    if not isinstance(listed, Sequence) or not 1 <= len(listed) <= _MAX_KEYS:
        raise HostingConfigError(
            f"checkpoint_key must be a non-empty str or bytes, or a list of 1 to {_MAX_KEYS} of them (newest first)"
        )
    keys: list[SealKey] = []
    for item in listed:
        try:
            made = seal_key(item)
        except TypeError:
            made = None
        if made is None:
            raise HostingConfigError("checkpoint_key must be a non-empty str or bytes, or a list of them") from None
        keys.append(made)
    return HostKeys(keys)


def key_from_env() -> list[str] | None:
    """The keys in ``AGENTFOOTPRINT_CHECKPOINT_KEY`` (comma-separated, newest first; None when unset or empty)."""
    raw = os.environ.get(CHECKPOINT_KEY_ENV) or ""
    keys = [part.strip() for part in raw.split(",") if part.strip()]
    return keys or None


def _pause_body(thread_id: str, owner: str | None, record: ThreadRecord, pause: PauseRecord) -> dict[str, Any]:
    return {
        "kind": _PAUSE,
        "thread_id": thread_id,
        "owner": owner,
        "pause": pause.model_dump(mode="json", exclude={"seal"}),
        "messages": list(record.messages),
    }


def _conversation_body(
    thread_id: str, owner: str | None, record: ThreadRecord, conversation: Mapping[str, Any]
) -> dict[str, Any]:
    body = {k: v for k, v in conversation.items() if k != HOST_SEAL}
    return {
        "kind": _CONVERSATION,
        "thread_id": thread_id,
        "owner": owner,
        "conversation": body,
        "messages": list(record.messages),
    }


def _recording_body(thread_id: str, owner: str | None, recording: Mapping[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in recording.items() if k != HOST_SEAL}
    return {"kind": _RECORDING, "thread_id": thread_id, "owner": owner, "recording": body}


def seal_record(thread_id: str, owner: str | None, record: ThreadRecord, keys: HostKeys | None) -> ThreadRecord:
    """``record`` as the host stores it: with keys, its pause and conversation sealed to the thread and its owner."""
    if keys is None:
        return record
    update: dict[str, Any] = {}
    if record.pause is not None:
        seal = keys.digest(_pause_body(thread_id, owner, record, record.pause))
        update["pause"] = record.pause.model_copy(update={"seal": seal})
    if record.conversation is not None:
        body = _conversation_body(thread_id, owner, record, record.conversation)
        update["conversation"] = {**body["conversation"], HOST_SEAL: keys.digest(body)}
    return record.model_copy(update=update) if update else record


def open_record(thread_id: str, owner: str | None, record: ThreadRecord, keys: HostKeys | None) -> ThreadRecord:
    """``record`` as loaded for ``owner``, its seals checked and removed; a missing or wrong seal (changed, moved to
    another owner, or no key verifies it) raises ``CheckpointSealError`` (``field == "seal"``) before anything runs.
    Without keys, a stored host seal is removed unchecked."""
    conversation = record.conversation
    if keys is not None:
        if conversation is not None:
            body = _conversation_body(thread_id, owner, record, conversation)
            keys.verify(body, conversation.get(HOST_SEAL), "ag_ui stored conversation")
        if record.pause is not None:
            body = _pause_body(thread_id, owner, record, record.pause)
            keys.verify(body, record.pause.seal, "ag_ui stored pause")
        if conversation is None and record.pause is None and record.messages:
            raise CheckpointSealError("ag_ui stored thread", "missing (messages stored with no sealed conversation)")
    update: dict[str, Any] = {}
    if conversation is not None and HOST_SEAL in conversation:
        update["conversation"] = {k: v for k, v in conversation.items() if k != HOST_SEAL}
    if record.pause is not None and record.pause.seal is not None:
        update["pause"] = record.pause.model_copy(update={"seal": None})
    return record.model_copy(update=update) if update else record


def seal_recording(
    thread_id: str, owner: str | None, recording: str | None, keys: HostKeys | None
) -> str | dict[str, Any] | None:
    """The turn's recording as the host stores it: with keys, the object with its seal (bound to thread and owner)."""
    if recording is None or keys is None:
        return recording
    data = json.loads(recording)
    return {**data, HOST_SEAL: keys.digest(_recording_body(thread_id, owner, data))}


def open_recording(thread_id: str, owner: str | None, data: Mapping[str, Any], keys: HostKeys | None) -> dict[str, Any]:
    """A stored recording for ``owner``, its seal checked (``CheckpointSealError`` when missing or wrong) and
    removed; without keys a stored seal is removed unchecked."""
    if keys is not None:
        keys.verify(_recording_body(thread_id, owner, data), data.get(HOST_SEAL), "ag_ui stored recording")
    return {k: v for k, v in data.items() if k != HOST_SEAL}


__all__ = [
    "CHECKPOINT_KEY_ENV",
    "HOST_SEAL",
    "CheckpointSealError",
    "HostKeys",
    "host_key",
    "key_from_env",
    "open_record",
    "open_recording",
    "seal_record",
    "seal_recording",
]
