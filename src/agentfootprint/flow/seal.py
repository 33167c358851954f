"""Sealed checkpoints: an HMAC-SHA256 over a checkpoint's RFC 8785 form, kept under its top-level ``"seal"``.

Any layer that hands out or takes back a checkpoint (the agent, compositions, the host) seals and checks with this."""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Mapping
from typing import Any

import rfc8785

from agentfootprint.flow.errors import InvalidCheckpointError

SEAL = "seal"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MAX_SAFE_INT = 2**53 - 1
_TAG = "\u0000agentfootprint"


class CheckpointSealError(InvalidCheckpointError):
    """A checkpoint handed to an agent that has a ``checkpoint_key`` whose seal is missing or wrong (``field ==
    "seal"``); nothing has run."""

    code = "ERR_CHECKPOINT_SEAL"

    def __init__(self, door: str, problem: str) -> None:
        super().__init__(f"{door}: the checkpoint's seal is {problem}; nothing ran", field=SEAL)
        self.door = door


class SealKey:
    """The agent's checkpoint key (bytes); never shown by ``repr``."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        self._key = key

    def __repr__(self) -> str:
        return "SealKey(<hidden>)"

    def digest(self, checkpoint: Mapping[str, Any]) -> str:
        body = {k: v for k, v in checkpoint.items() if k != SEAL}
        return hmac.new(self._key, rfc8785.dumps(_sealable(body, 0)), hashlib.sha256).hexdigest()


def _sealable(value: Any, depth: int) -> Any:
    """A JCS-representable copy that keeps every distinction JSON can carry (big integers, non-finite floats and
    lone surrogates are tagged, never rounded), so two different checkpoints never share a seal."""
    if depth > 1000:
        raise ValueError("too deep")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return {_TAG: "str", "v": value.encode("utf-8", "surrogatepass").hex()}
        return value
    if isinstance(value, int):
        return value if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT else {_TAG: "int", "v": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {_TAG: "float", "v": repr(value)}
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError("non-string key")
            out[k] = _sealable(v, depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [_sealable(v, depth + 1) for v in value]
    raise ValueError("not JSON")


def seal(checkpoint: dict[str, Any], key: SealKey | None) -> dict[str, Any]:
    """``checkpoint`` with its ``"seal"`` (unchanged when the agent has no key)."""
    if key is None:
        return checkpoint
    body = {k: v for k, v in checkpoint.items() if k != SEAL}
    body[SEAL] = key.digest(body)
    return body


def check_seal(value: Any, key: SealKey | None, door: str) -> None:
    """With a key, refuse (``field == "seal"``) anything that is not a checkpoint carrying this key's seal."""
    if key is None:
        return
    if not isinstance(value, Mapping):
        raise CheckpointSealError(door, "missing (the checkpoint is not a dict)")
    given = value.get(SEAL)
    if not isinstance(given, str) or _HEX64.match(given) is None:
        raise CheckpointSealError(door, "missing or malformed")
    try:
        expected = key.digest(value)
    except (ValueError, TypeError, RecursionError, OverflowError):
        raise CheckpointSealError(door, "not verifiable (the checkpoint is not plain JSON)") from None
    if not hmac.compare_digest(expected, given):
        raise CheckpointSealError(door, "wrong: the checkpoint was changed, or sealed with another key")


def seal_key(key: str | bytes | None) -> SealKey | None:
    """The agent's key from ``Agent.create(checkpoint_key=...)``: a ``str`` means its UTF-8 bytes."""
    if key is None:
        return None
    raw = key.encode("utf-8") if isinstance(key, str) else key
    if not isinstance(raw, bytes | bytearray) or not raw:
        raise TypeError("checkpoint_key must be a non-empty str or bytes")
    return SealKey(bytes(raw))


__all__ = ["SEAL", "CheckpointSealError", "SealKey", "check_seal", "seal", "seal_key"]
