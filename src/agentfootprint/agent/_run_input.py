"""The one door every runner's ``run()`` input goes through: a bare str is adapted, anything else not a
message is refused by name (``InvalidRunInputError``) before anything runs; ``TurnInput`` is what a turn's first
stage then takes, typed, from ``run()`` to the seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow._trusted import trusted
from agentfootprint.identity import Identity

if TYPE_CHECKING:
    from agentfootprint.agent.models import ConversationCheckpoint
    from agentfootprint.agent.turn import HistoryEntry

__all__ = ["InvalidRunInputError", "RunInput", "TurnInput", "describe_received", "normalize_run_input"]

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


class TurnInput(BaseModel):
    """What one turn starts from, built once by the agent and read by the seed stage: the message, the conversation
    before it (or a stored history replayed as it stands), who asks, and what a continued conversation carries."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: str
    run_id: str
    prior: list[dict[str, Any]] = Field(default_factory=list)
    """The conversation before ``message``."""
    replay: list[dict[str, Any]] | None = None
    """A stored history retried as it stands (it already ends with the user's message), or None."""
    session_id: str | None = None
    identity: dict[str, Any] | None = None
    """The caller as the run records it (``Identity`` without its unset fields), or None."""
    seed: int | None = None
    time: dict[str, Any] | None = None
    folded: list[dict[str, Any]] | None = None
    window_measure: dict[str, int] | None = None

    @classmethod
    def for_turn(
        cls,
        message: str,
        prior: list[dict[str, Any]],
        *,
        run_id: str,
        session_id: str | None,
        identity: Identity | None,
        seed: int | None = None,
        replay: list[dict[str, Any]] | None = None,
        time: dict[str, Any] | None = None,
        conversation: ConversationCheckpoint | None = None,
    ) -> TurnInput:
        """The turn's input from what ``run()`` (or a continue, or a replay) resolved; nothing is copied."""
        return _turn_input(
            message=message,
            run_id=run_id,
            prior=prior,
            replay=replay,
            session_id=session_id,
            identity=(identity.model_dump(exclude_none=True) or None) if identity is not None else None,
            seed=seed,
            time=time,
            folded=conversation.folded if conversation is not None and conversation.folded else None,
            window_measure=conversation.window_measure
            if conversation is not None and conversation.window_measure
            else None,
        )

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> TurnInput:
        """The seed stage's typed read of the run's recorded args (what :meth:`args` wrote)."""
        complete = bool(args.get("history_complete"))
        history = args.get("history", ())
        return _turn_input(
            message=args["message"],
            run_id=args["run_id"],
            prior=[] if complete else history,
            replay=history if complete else None,
            session_id=args.get("session_id"),
            identity=args.get("identity"),
            time=args.get("time"),
            folded=args.get("folded"),
            window_measure=args.get("window_measure"),
        )

    def args(self) -> dict[str, Any]:
        """The engine's run args: the JSON form a snapshot and a checkpoint keep (optional keys only when set)."""
        args: dict[str, Any] = {
            "message": self.message,
            "history": self.replay if self.replay is not None else self.prior,
            "history_complete": self.replay is not None,
            "run_id": self.run_id,
            "session_id": self.session_id,
            "identity": self.identity,
        }
        if self.time is not None:
            args["time"] = self.time
        if self.folded:
            args["folded"] = self.folded
        if self.window_measure:
            args["window_measure"] = self.window_measure
        return args

    def opening_history(self, message: str) -> list[HistoryEntry]:
        """The conversation the turn starts with, ``message`` being the user's message as the input hooks left it."""
        if self.replay is not None:
            return cast("list[HistoryEntry]", list(self.replay))
        return cast("list[HistoryEntry]", [*self.prior, {"role": "user", "content": message}])

    def run_input(self) -> dict[str, Any]:
        """What the run's record keeps to rerun this turn (``agent.last_run_input()``)."""
        return {
            "message": self.message,
            "history": self.prior,
            "identity": Identity.model_validate(self.identity) if self.identity is not None else None,
            "session_id": self.session_id,
            "seed": self.seed,
        }


_turn_input = trusted(TurnInput)  # model_construct, planned once: the agent built (or recorded) these values
