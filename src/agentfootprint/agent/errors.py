"""Typed refusals of the Agent runner; each has a stable ``code``."""

from __future__ import annotations

from typing import Any

from agentfootprint.errors import AgentFootprintError


class AgentBuildError(AgentFootprintError, ValueError):
    """The agent cannot be built as configured (duplicate names, bad limits, ...); names the culprit."""

    code = "ERR_AGENT_BUILD"


class RunInFlightError(AgentFootprintError, RuntimeError):
    """This agent instance is already running a turn; one instance runs one turn at a time."""

    code = "ERR_RUN_IN_FLIGHT"


class PendingQuestionError(AgentFootprintError, RuntimeError):
    """The last run paused to ask a person something; answer it with ``resume`` or drop it with ``abandon_pause``."""

    code = "ERR_PENDING_QUESTION"

    def __init__(self, message: str, *, question: str | None, tool_call_id: str | None) -> None:
        super().__init__(message)
        self.question = question
        self.tool_call_id = tool_call_id


class NoConversationError(AgentFootprintError, RuntimeError):
    """``follow_up`` needs a completed run on this agent to continue."""

    code = "ERR_NO_CONVERSATION"


class InvalidConversationError(AgentFootprintError, ValueError):
    """A ``continue_from`` / ``resume_on_error`` conversation that is malformed; names the field."""

    code = "ERR_INVALID_CONVERSATION"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class RunCheckpointError(AgentFootprintError):
    """A run crashed mid-way; ``checkpoint`` is the last good conversation for ``resume_on_error``.

    The raised object is also an instance of the original error's class, so ``except ProviderError`` still works."""

    code = "ERR_RUN_CHECKPOINT"
    checkpoint: dict[str, Any]
    cause: BaseException | None


class OutputSchemaError(AgentFootprintError, ValueError):
    """The answer did not match the output schema; ``issues`` name each path and what was expected."""

    code = "ERR_OUTPUT_SCHEMA"

    def __init__(self, message: str, *, issues: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.issues = issues


class PolicyHaltError(AgentFootprintError, RuntimeError):
    """A permission checker answered ``halt``: the turn ends here."""

    code = "ERR_POLICY_HALT"


class UnknownSourceError(AgentFootprintError, KeyError):
    """``agent.without(...)`` named an id that is not one of the agent's context sources or tools."""

    code = "ERR_UNKNOWN_SOURCE"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.code


class MemberIdentityError(AgentFootprintError, RuntimeError):
    """An agent's chart is running where no run reaches it (mounted by a foreign executor with no run)."""

    code = "ERR_MEMBER_NO_IDENTITY"

    def __init__(self) -> None:
        super().__init__(
            "an agent's chart ran with no run to serve: mount agents through a composition (Sequence, Parallel, "
            "Conditional, Loop) or call agent.run(); it never runs under its instance's last run"
        )


class ParentRunRefusedError(AgentFootprintError, PermissionError):
    """A ``parent_run`` that is not a live link this process issued (forged, copied, or already closed)."""

    code = "ERR_PARENT_RUN_REFUSED"

    def __init__(self, door: str, reason: str = "parent_run is not a live run link") -> None:
        super().__init__(f"{door}: {reason}; a member never runs under a run it cannot prove")


_COMBINED: dict[type[BaseException], type[BaseException]] = {}


def as_run_checkpoint_error(exc: BaseException, checkpoint: dict[str, Any]) -> BaseException:
    """The crash as a ``RunCheckpointError`` that is still an instance of the original error's class."""
    cls = type(exc)
    try:
        combined = _COMBINED.get(cls)
        if combined is None:
            combined = type(cls.__name__, (cls, RunCheckpointError), {"__module__": cls.__module__})
            _COMBINED[cls] = combined
        err: Any = cls.__new__(combined, *exc.args)
        err.__dict__.update(getattr(exc, "__dict__", {}))
        if "__notes__" in err.__dict__:
            err.__dict__["__notes__"] = list(err.__dict__["__notes__"])
        err.args = exc.args
    except Exception:
        err = RunCheckpointError(f"run failed: {type(exc).__name__}: {str(exc)[:300]}")
    err.checkpoint = checkpoint
    err.cause = exc
    err.__cause__ = exc
    err.__traceback__ = exc.__traceback__
    if isinstance(err, RunCheckpointError) and type(err) is RunCheckpointError:
        for note in list(getattr(exc, "__notes__", [])):
            err.add_note(note)
    return err  # type: ignore[no-any-return]


class MessageRoleError(AgentFootprintError, ValueError):
    """A messages-slot injection declares a role the provider cannot carry; refused at run start, before any call."""

    code = "ERR_MESSAGE_ROLE"

    def __init__(self, *, role: str, source_id: str, provider: str) -> None:
        super().__init__(
            f"context '{source_id[:80]}' lands in the messages slot as role '{role[:20]}', which provider "
            f"'{provider[:80]}' cannot carry in its message list; use the system_prompt slot or another role"
        )
        self.role = role
        self.source_id = source_id
        self.provider = provider
