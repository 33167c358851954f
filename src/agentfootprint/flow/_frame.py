"""The running stage as recorders and ``pause()`` see it, and how a paused stage unwinds the driver."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from agentfootprint.flow.pause import _NO_ANSWER, CheckpointFrame

if TYPE_CHECKING:
    from agentfootprint.flow._state import RunState
    from agentfootprint.flow.chart import Node

CURRENT_FRAME: ContextVar[StageFrame | None] = ContextVar("agentfootprint_stage", default=None)
BRANCH_ANSWER: ContextVar[Any] = ContextVar("agentfootprint_branch_answer", default=_NO_ANSWER)
"""The answer a resumed pending branch (one of several paused at once) hands to its paused stage."""
MAX_ERROR_TEXT = 500


def current_frame() -> StageFrame | None:
    """The stage running in this task, if any (used by ``pause()``)."""
    return CURRENT_FRAME.get()


class StageFrame:
    """What recorders and ``pause()`` know about the running stage."""

    __slots__ = (
        "in_branch",
        "namespace",
        "resume_answer",
        "run",
        "runtime_stage_id",
        "stage_id",
        "stage_name",
        "visit",
    )

    def __init__(self, run: RunState, node: Node, rid: str, namespace: str, visit: int, in_branch: bool) -> None:
        self.run = run
        self.stage_id = node.id
        self.stage_name = node.name
        self.runtime_stage_id = rid
        self.namespace = namespace
        self.visit = visit
        self.in_branch = in_branch
        self.resume_answer: Any = _NO_ANSWER

    @property
    def run_id(self) -> str:
        return self.run.run_id


class Paused(Exception):
    """A stage paused: unwinds the driver up to the run, collecting the checkpoint frames on the way."""

    def __init__(self, data: Any, frames: list[CheckpointFrame], rid: str) -> None:
        super().__init__("paused")
        self.data = data
        self.frames = frames
        self.rid = rid


def error_text(exc: BaseException) -> str:
    msg = str(exc)
    text = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    return text[:MAX_ERROR_TEXT]


__all__ = ["BRANCH_ANSWER", "CURRENT_FRAME", "Paused", "StageFrame", "current_frame", "error_text"]
