"""The commit log: one record per executed stage, with the exact commit each read saw."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.flow._frozen import EMPTY_DICT, EMPTY_LIST

WriteVerb = Literal["set", "merge", "append", "delete"]
CommitKind = Literal["stage", "decider", "selector", "join", "subflow-enter", "subflow-exit", "branch"]


class Write(BaseModel):
    """One net state change: ``append`` holds only the added items, ``merge`` only the changed fields."""

    model_config = ConfigDict(frozen=True)

    path: str
    verb: WriteVerb
    value: Any = None
    read_keys: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    """The keys the stage had read before this write (only under ``write_provenance="reads-prefix"``)."""


class Commit(BaseModel):
    """What one stage execution read and wrote; ``reads`` maps each key to the idx of the commit it saw."""

    model_config = ConfigDict(frozen=True)

    idx: int
    stage_id: str
    runtime_stage_id: str
    stage_name: str = ""
    kind: CommitKind = "stage"
    namespace: str = ""
    reads: dict[str, int | None] = Field(default_factory=dict)
    read_values: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    """The value each read saw (only under ``read_tracking="full"``; a key read while absent is left out)."""
    writes: list[Write] = Field(default_factory=list)
    failed: bool = False
    paused: bool = False
    error: str | None = None
    redacted_paths: list[str] = Field(default_factory=list)
    decision: dict[str, Any] | None = None
    emits: list[dict[str, Any]] = Field(default_factory=list)
    parent_runtime_stage_id: str | None = None
    fork_branch: str | None = None
    control_idx: int | None = None
    sources: dict[str, list[int]] = Field(default_factory=dict)
    visit: int = 1
    break_reason: str | None = None
    used_args: bool = False
    description: str | None = None

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Commit:
        """A deep copy whose every field is its own plain value (the shared empties become fresh lists and dicts)."""
        copied = super().__deepcopy__(memo)
        fields = copied.__dict__
        for name, value in fields.items():
            if value is EMPTY_LIST:
                fields[name] = []
            elif value is EMPTY_DICT:
                fields[name] = {}
        return copied

    @property
    def applied(self) -> bool:
        """Whether this commit's writes are part of the state (failed and paused commits are evidence only)."""
        return not (self.failed or self.paused)

    def keys_written(self) -> list[str]:
        return [w.path for w in self.writes]
