"""Pause a run from inside a stage, and the versioned JSON checkpoint that resumes it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.flow.commit import Commit
from agentfootprint.flow.errors import PauseNotAllowedError

CHECKPOINT_FORMAT: Literal["agentfootprint.flow.checkpoint"] = "agentfootprint.flow.checkpoint"
CHECKPOINT_VERSION: Literal[1] = 1
_NO_ANSWER: Any = object()


class PauseSignal(BaseException):
    """Raised by ``pause()`` to unwind the stage; the engine turns it into a paused result."""

    def __init__(self, data: Any) -> None:
        super().__init__("flow paused")
        self.data = data


def pause(data: Any = None) -> Any:
    """Pause the run with ``data`` for a person; on resume the stage re-runs and this returns the answer."""
    from agentfootprint.flow._frame import current_frame

    frame = current_frame()
    if frame is None:
        raise PauseNotAllowedError("pause() must be called inside a running stage")
    if frame.in_branch:
        raise PauseNotAllowedError(f"pause() is not supported inside parallel branch '{frame.stage_id}'")
    if frame.resume_answer is not _NO_ANSWER:
        answer = frame.resume_answer
        frame.resume_answer = _NO_ANSWER
        return answer
    raise PauseSignal(data)


def resume_answer() -> tuple[bool, Any]:
    """``(True, answer)`` when this stage is the re-run of a paused stage being resumed, else ``(False, None)``.

    Lets a stage skip work it already did before pausing; ``pause()`` still returns the answer when called."""
    from agentfootprint.flow._frame import current_frame

    frame = current_frame()
    if frame is None or frame.resume_answer is _NO_ANSWER:
        return False, None
    return True, frame.resume_answer


PARALLEL_PAUSE = "parallel"


class CheckpointFrame(BaseModel):
    """One level of the paused position: the node to re-enter in a chart (subflow mounts nest).

    A fork where several branches paused at once holds them in ``pending``: each branch's own frames and data."""

    model_config = ConfigDict(extra="forbid")

    node_id: str = Field(max_length=128)
    namespace: str = Field(max_length=4096)
    mount_runtime_stage_id: str | None = Field(default=None, max_length=4200)
    done_branches: list[str] | None = Field(default=None, max_length=1000)
    pending: dict[str, PendingBranch] | None = Field(default=None, min_length=1, max_length=1000)


class PendingBranch(BaseModel):
    """One paused branch of a fork: where it paused, and what it asked."""

    model_config = ConfigDict(extra="forbid")

    frames: list[CheckpointFrame] = Field(min_length=1, max_length=64)
    pause_data: Any = None
    paused_runtime_stage_id: str = Field(max_length=4200)


CheckpointFrame.model_rebuild()


class NamespaceCheckpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    state: dict[str, Any]
    last_writer: dict[str, int]


class FlowCheckpoint(BaseModel):
    """Everything a paused run needs to continue in another process. Holds REAL (unredacted) values."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["agentfootprint.flow.checkpoint"] = CHECKPOINT_FORMAT
    version: Literal[1] = CHECKPOINT_VERSION
    chart_id: str
    chart_fingerprint: str
    run_id: str = Field(max_length=200)
    counter: int = Field(ge=0)
    visits: dict[str, int]
    frames: list[CheckpointFrame] = Field(min_length=1, max_length=64)
    namespaces: dict[str, NamespaceCheckpoint]
    initial_state: dict[str, Any]
    args: dict[str, Any]
    commit_log: list[Commit]
    pause_data: Any = None
    paused_runtime_stage_id: str
    contains_unredacted_values: bool = True
