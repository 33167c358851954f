"""The one door every runner's ``run()`` input goes through: a bare str is adapted, anything else not a
message is refused by name (``InvalidRunInputError``) before anything runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow._trusted import trusted

__all__ = ["InvalidRunInputError", "RunInput", "describe_received", "normalize_run_input"]

_MAX_RECEIVED = 200
_MAX_KEY = 40
_ACCEPTED = 'pass a str or {"message": str}'


class InvalidRunInputError(AgentFootprintError, ValueError):
    """A runner input that is not a message; ``received`` describes its shape, never its value."""

    code = "ERR_INVALID_RUN_INPUT"

    def __init__(self, *, runner: str, received: str, hint: str) -> None:
        self.runner = runner
        self.received = received
        self.hint = hint
        text = f"{runner}: expected a message — {_ACCEPTED}; received {received}"
        super().__init__(f"{text}. {hint}" if hint else text)


class RunInput(BaseModel):
    """A normalized run input: the message plus the caller's other keys, untouched."""

    model_config = ConfigDict(frozen=True)

    message: str
    extra: dict[str, Any] = Field(default_factory=dict)


_run_input = trusted(RunInput)  # model_construct, planned once


def _clean_key(key: object) -> str:
    if not isinstance(key, str):
        return f"<{type(key).__name__} key>"
    text = "".join(ch if ch.isprintable() else "?" for ch in key[: _MAX_KEY + 1])
    return text if len(text) <= _MAX_KEY else text[: _MAX_KEY - 1] + "…"


def _cap(text: str) -> str:
    return text if len(text) <= _MAX_RECEIVED else text[: _MAX_RECEIVED - 1] + "…"


def describe_received(value: object) -> str:
    """A short, non-leaking description of ``value``: its type, or a mapping's keys; never the value."""
    if isinstance(value, str):
        return "empty string" if not value.strip() else "str"
    if isinstance(value, Mapping):
        if not value:
            return "object with no keys"
        parts: list[str] = []
        length = 0
        for key in value:
            part = _clean_key(key)
            parts.append(part)
            length += len(part) + 2
            if length > _MAX_RECEIVED:
                break
        return _cap("object with keys: " + ", ".join(parts))
    if value is None:
        return "None"
    return _cap(type(value).__name__)


def normalize_run_input(value: Any, runner: str) -> RunInput:
    """Normalize a runner input to ``RunInput(message, extra)`` or raise ``InvalidRunInputError``."""
    if isinstance(value, RunInput):
        return value
    if isinstance(value, str):
        if not value.strip():
            raise InvalidRunInputError(
                runner=runner,
                received="empty string",
                hint="The message is blank; put the instruction in the message.",
            )
        return _run_input(message=value, extra={})
    if isinstance(value, Mapping):
        received = describe_received(value)
        if "message" not in value:
            raise InvalidRunInputError(
                runner=runner, received=received, hint='A dict input needs a "message" key holding a str.'
            )
        message = value["message"]
        if not isinstance(message, str):
            raise InvalidRunInputError(
                runner=runner,
                received=received,
                hint=f'"message" must be a str, got {_cap(type(message).__name__)}.',
            )
        if not message.strip():
            raise InvalidRunInputError(
                runner=runner,
                received=received,
                hint='"message" is blank; put the instruction in the message.',
            )
        extra = {k: v for k, v in value.items() if k != "message"}
        return _run_input(message=message, extra=extra)
    raise InvalidRunInputError(runner=runner, received=describe_received(value), hint="")
