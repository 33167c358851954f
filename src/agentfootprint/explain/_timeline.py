"""Time travel over a finished run: a read-only cursor (state at a step, what changed since, one key's writes) that
reads a pause and its resumes as one axis, each leg checked to continue the one before it."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.explain._runs import WhatIfError, snapshot_of_run
from agentfootprint.flow import Commit, FlowSnapshot, thaw

_ABSENT: Any = object()


class TimelineError(WhatIfError):
    """A cursor given a step its run never took, or legs that are not one run; never quotes the value."""

    code = "ERR_TIMELINE"


class ForeignLegError(TimelineError):
    """A leg that does not continue the leg before it (another run's resume, or a different history)."""

    code = "ERR_TIMELINE_FOREIGN_LEG"


class TimelineStep(BaseModel):
    """One step on the axis: its position, runtime stage id, what ran, and the leg (run id) that ran it."""

    model_config = ConfigDict(frozen=True)

    index: int
    runtime_stage_id: str
    stage_id: str
    kind: str
    namespace: str = ""
    leg: str
    """The run id of the leg that executed this step (a resumed run's earlier steps belong to the paused leg)."""
    paused: bool = False
    failed: bool = False


class KeyWrite(BaseModel):
    """One write of a key: the step that made it, the verb, the value written (an append's or merge's part only),
    and the key's whole value right after it."""

    model_config = ConfigDict(frozen=True)

    runtime_stage_id: str
    index: int
    leg: str
    verb: str
    written: Any = None
    value: Any = None


class KeyChange(BaseModel):
    """How a key moved between two steps: its value before and after, and the steps that wrote it in between."""

    model_config = ConfigDict(frozen=True)

    key: str
    before: Any = None
    after: Any = None
    existed_before: bool = True
    exists_after: bool = True
    writers: list[str] = Field(default_factory=list)


def _legs_of(snap: FlowSnapshot) -> list[tuple[int, str]]:
    """(first index, run id) of each leg this snapshot knows: the leg it resumed from (when recorded), then itself."""
    origin = snap.resumed_from or {}
    before, commits = origin.get("run_id"), origin.get("commits")
    if isinstance(before, str) and isinstance(commits, int) and 0 < commits <= len(snap.commit_log):
        return [(0, before), (commits, snap.run_id)]
    return [(0, snap.run_id)]


def _same_step(a: Commit, b: Commit) -> bool:
    """The same recorded step: what ran and what it wrote (values compared where neither copy was redacted)."""
    shape = (a.idx, a.runtime_stage_id, a.stage_id, a.namespace, a.kind, a.paused, a.failed, a.keys_written())
    if shape != (b.idx, b.runtime_stage_id, b.stage_id, b.namespace, b.kind, b.paused, b.failed, b.keys_written()):
        return False
    return bool(a.redacted_paths or b.redacted_paths) or a.writes == b.writes


def _continues(earlier: FlowSnapshot, later: FlowSnapshot) -> bool:
    """Whether ``later`` is the resume of ``earlier``: it names it, and its log starts with exactly ``earlier``'s."""
    origin = later.resumed_from or {}
    named = origin.get("run_id")
    if named is None and later.run_id != earlier.run_id:
        return False
    if named is not None and named != earlier.run_id:
        return False
    n = len(earlier.commit_log)
    if origin.get("commits", n) != n or len(later.commit_log) <= n:
        return False
    return all(_same_step(a, b) for a, b in zip(earlier.commit_log, later.commit_log[:n], strict=True))


def _chain(legs: list[FlowSnapshot]) -> list[tuple[int, str]]:
    """The legs' boundaries on the last leg's axis; ``ForeignLegError`` when one does not continue the one before."""
    bounds = _legs_of(legs[0])
    for n, (earlier, later) in enumerate(pairwise(legs), start=2):
        if not _continues(earlier, later):
            raise ForeignLegError(
                f"leg {n} does not continue leg {n - 1}: it resumes another run or its history differs"
            )
        if later.run_id != bounds[-1][1]:
            bounds.append((len(earlier.commit_log), later.run_id))
    return bounds


class RunTimeline:
    """A read-only cursor over a finished run. Steps are runtime stage ids (``call-llm#5``) or positions on the
    axis (``0`` is the first step, ``-1`` the last); values are the served (redacted) ones."""

    def __init__(self, snapshot: FlowSnapshot, legs: list[tuple[int, str]]) -> None:
        self._snap = snapshot
        self._legs = legs
        self._steps = [self._step_of(c) for c in snapshot.commit_log]

    def _leg_at(self, index: int) -> str:
        return next(run_id for start, run_id in reversed(self._legs) if start <= index)

    def _step_of(self, c: Commit) -> TimelineStep:
        return TimelineStep(
            index=c.idx,
            runtime_stage_id=c.runtime_stage_id,
            stage_id=c.stage_id,
            kind=c.kind,
            namespace=c.namespace,
            leg=self._leg_at(c.idx),
            paused=c.paused,
            failed=c.failed,
        )

    # -- the axis ----------------------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        """The run id of the last leg (the one that finished)."""
        return self._snap.run_id

    @property
    def legs(self) -> list[str]:
        """The run ids of the legs on this axis, oldest first (one for a run that never paused)."""
        return [run_id for _, run_id in self._legs]

    @property
    def steps(self) -> list[TimelineStep]:
        return list(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    def __iter__(self) -> Iterator[TimelineStep]:
        return iter(list(self._steps))

    def __repr__(self) -> str:
        return f"<RunTimeline {len(self._steps)} steps over {len(self._legs)} leg(s)>"

    def step(self, step: str | int) -> TimelineStep:
        """The step a runtime stage id (its last record: a member's exit) or a position names."""
        return self._steps[self._index(step)]

    def _index(self, step: Any) -> int:
        if isinstance(step, bool) or not isinstance(step, int | str):
            raise TimelineError("a step is a runtime stage id (str) or a position (int)", code="ERR_TIMELINE_STEP")
        if isinstance(step, int):
            n = len(self._steps)
            if not -n <= step < n:
                raise TimelineError(f"no step at that position: the run has {n} steps", code="ERR_TIMELINE_STEP")
            return step % n
        commit = self._snap.commit(step)
        if commit is None:
            raise TimelineError("this run took no step with that runtime stage id", code="ERR_TIMELINE_STEP")
        return commit.idx

    # -- reading ---------------------------------------------------------------------------------------------------
    def state_at(self, step: str | int, *, namespace: str | None = None) -> dict[str, Any]:
        """The state right after ``step`` (of the root, or of ``namespace``: a member's own state)."""
        idx = self._index(step)
        return self._snap.state_at(idx, self._namespace(namespace))

    def value_at(self, key: str, step: str | int, *, namespace: str | None = None, default: Any = None) -> Any:
        """One key's value right after ``step``."""
        return self._snap.value_at(key, self._index(step), self._namespace(namespace), default)

    def changed_since(
        self, step: str | int, until: str | int | None = None, *, namespace: str | None = None
    ) -> dict[str, KeyChange]:
        """The keys whose value differs between right after ``step`` and right after ``until`` (default: the end)."""
        start = self._index(step)
        end = len(self._steps) - 1 if until is None else self._index(until)
        if end < start:
            raise TimelineError("until must not come before step", code="ERR_TIMELINE_STEP")
        ns = self._namespace(namespace)
        before, after = self._snap.state_at(start, ns), self._snap.state_at(end, ns)
        writers: dict[str, list[str]] = {}
        for c in self._snap.commit_log[start + 1 : end + 1]:
            if c.namespace == ns and c.applied:
                for w in c.writes:
                    ids = writers.setdefault(w.path, [])
                    if c.runtime_stage_id not in ids:
                        ids.append(c.runtime_stage_id)
        out: dict[str, KeyChange] = {}
        for key in [*before, *(k for k in after if k not in before)]:
            old, new = before.get(key, _ABSENT), after.get(key, _ABSENT)
            if old == new and (old is _ABSENT) == (new is _ABSENT):
                continue
            out[key] = KeyChange(
                key=key,
                before=None if old is _ABSENT else old,
                after=None if new is _ABSENT else new,
                existed_before=old is not _ABSENT,
                exists_after=new is not _ABSENT,
                writers=writers.get(key, []),
            )
        return out

    def key_timeline(self, key: str, *, namespace: str | None = None) -> list[KeyWrite]:
        """Every applied write of ``key``, in order, with the step (runtime stage id) and leg that made it."""
        if not isinstance(key, str) or not key:
            raise TimelineError("key must be a non-empty string", code="ERR_TIMELINE_KEY")
        ns = self._namespace(namespace)
        out: list[KeyWrite] = []
        for c in self._snap.commit_log:
            if c.namespace != ns or not c.applied:
                continue
            for w in c.writes:
                if w.path == key:
                    out.append(
                        KeyWrite(
                            runtime_stage_id=c.runtime_stage_id,
                            index=c.idx,
                            leg=self._leg_at(c.idx),
                            verb=w.verb,
                            written=thaw(w.value),
                            value=self._snap.value_at(key, c.idx, ns),
                        )
                    )
        return out

    def _namespace(self, namespace: str | None) -> str:
        if namespace is None or namespace == "":
            return ""
        if not isinstance(namespace, str) or not any(c.namespace == namespace for c in self._snap.commit_log):
            raise TimelineError("this run has no member with that namespace", code="ERR_TIMELINE_NAMESPACE")
        return namespace


def timeline(*legs: Any) -> RunTimeline:
    """A read-only cursor over a finished run (a ``RunResult`` or a recording). Give a paused run and its resumes,
    oldest first, to read them as one axis; a leg that does not continue the one before is ``ForeignLegError``."""
    if not legs:
        raise TimelineError("timeline() needs a run: pass a RunResult or a recording", code="ERR_TIMELINE_NO_RUN")
    snaps = [snapshot_of_run(leg, f"leg {n}") for n, leg in enumerate(legs, start=1)]
    return RunTimeline(snaps[-1], _chain(snaps))


__all__ = ["ForeignLegError", "KeyChange", "KeyWrite", "RunTimeline", "TimelineError", "TimelineStep", "timeline"]
