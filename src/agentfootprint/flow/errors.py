"""Typed errors of the flowchart engine; each has a stable ``code``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentfootprint.errors import AgentFootprintError

if TYPE_CHECKING:
    from agentfootprint.flow.snapshot import FlowSnapshot


class FlowError(AgentFootprintError):
    """Base class of engine errors."""

    code = "ERR_FLOW"


class ChartBuildError(FlowError, ValueError):
    """The chart is malformed (unknown or duplicate id, decider without branches, ...); names the culprit."""

    code = "ERR_CHART_BUILD"


class InvalidStateKeyError(FlowError, TypeError):
    """A state key that is not a non-empty string of reasonable length."""

    code = "ERR_INVALID_STATE_KEY"


class LoopLimitError(FlowError, RuntimeError):
    """A node was visited more times than its iteration limit allows."""

    code = "ERR_LOOP_LIMIT"

    def __init__(self, node_id: str, limit: int) -> None:
        super().__init__(f"maximum loop iterations ({limit}) exceeded for node '{node_id}'")
        self.node_id = node_id
        self.limit = limit


class UnknownBranchError(FlowError, RuntimeError):
    """A decider or selector chose a branch id the chart does not have (and no default applies)."""

    code = "ERR_UNKNOWN_BRANCH"


class ParallelMergeConflictError(FlowError, RuntimeError):
    """Two parallel branches wrote one key and no merge function was given."""

    code = "ERR_PARALLEL_CONFLICT"

    def __init__(self, key: str, branches: list[str]) -> None:
        super().__init__(
            f"parallel branches {', '.join(branches)} all wrote key '{key[:100]}'; pass merge= to combine them"
        )
        self.key = key
        self.branches = branches


class ParallelBranchError(FlowError, RuntimeError):
    """One or more parallel branches failed; ``errors`` maps each failed branch id to its exception."""

    code = "ERR_PARALLEL_BRANCH"

    def __init__(self, errors: dict[str, BaseException]) -> None:
        names = ", ".join(f"{k} ({type(v).__name__})" for k, v in errors.items())
        super().__init__(f"parallel branch(es) failed: {names}")
        self.errors = errors


class FlowCancelledError(FlowError, RuntimeError):
    """The run was cancelled or timed out; names the stage boundary where it stopped."""

    code = "ERR_FLOW_CANCELLED"

    def __init__(self, message: str, *, stage_id: str | None = None, reason: str = "cancelled") -> None:
        super().__init__(message)
        self.stage_id = stage_id
        self.reason = reason


class InvalidCheckpointError(FlowError, ValueError):
    """A checkpoint that is malformed, foreign to this chart, or of an unknown version; names the field."""

    code = "ERR_INVALID_CHECKPOINT"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class PauseNotAllowedError(FlowError, RuntimeError):
    """``pause()`` called where the engine cannot resume (outside a stage, inside a parallel branch)."""

    code = "ERR_PAUSE_NOT_ALLOWED"


class PendingAnswersError(FlowError, ValueError):
    """A resume of several pending questions (parallel branches) whose answer is not a dict of pending branch ids."""

    code = "ERR_PENDING_ANSWERS"

    def __init__(self, message: str, *, pending: list[str]) -> None:
        super().__init__(f"{message}; pending branches: {', '.join(b[:80] for b in pending[:20])}")
        self.pending = pending


class NotSerializableError(FlowError, TypeError):
    """A checkpoint needs JSON values; names the key whose value is not."""

    code = "ERR_NOT_SERIALIZABLE"


RAW_STATE_ATTR = "_agentfootprint_raw_state"


def attach_snapshot(
    error: BaseException, snapshot: FlowSnapshot, stage: str | None, raw_state: dict[str, Any] | None = None
) -> None:
    """Attach the run's served snapshot (and the failing stage id) to a stage's own exception.

    ``raw_state`` (real values, for runtimes such as the Agent's crash checkpoint) goes on a private attribute."""
    err: Any = error
    try:
        err.snapshot = snapshot
        if raw_state is not None:
            setattr(err, RAW_STATE_ATTR, raw_state)
        if stage is not None and not hasattr(err, "stage_id"):
            err.stage_id = stage
    except AttributeError:  # exceptions with __slots__ cannot take attributes
        pass
