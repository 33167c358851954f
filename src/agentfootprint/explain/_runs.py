"""What-if's reading of a run: its snapshot (any run-like input, hostile input refused by code), a commit's read
values, and values with their per-run noise (run ids, timings) taken out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain._targets import as_target
from agentfootprint.flow import Commit, FlowSnapshot

_NOISE_KEYS = frozenset({"run_id"})


class WhatIfError(AgentFootprintError, ValueError):
    """A what-if verb given something that is not a run, or a source the run never had; never quotes the value."""

    code = "ERR_WHATIF"


def snapshot_of_run(run: Any, role: str) -> FlowSnapshot:
    """The record of ``run`` (a result, a recording, a snapshot, an agent, a snapshot's JSON), else ``WhatIfError``."""
    from agentfootprint.explain.backtrack import BacktrackError, _snapshot_of
    from agentfootprint.explain.recording import InvalidRecordingError

    record = as_target(run)  # a result with no record raises NoRunRecordError (ERR_NO_RUN_RECORD)
    try:
        return _snapshot_of(record)
    except (BacktrackError, InvalidRecordingError, ValidationError, TypeError, AttributeError):
        raise WhatIfError(
            f"{role} is not a run: pass a RunResult or a recording", code="ERR_WHATIF_NOT_A_RUN"
        ) from None


def quiet(value: Any) -> Any:
    """``value`` without what differs between two runs of the same thing (run ids, ``*_ms`` timings)."""
    if isinstance(value, Mapping):
        return {str(k): quiet(v) for k, v in value.items() if k not in _NOISE_KEYS and not str(k).endswith("_ms")}
    if isinstance(value, list | tuple):
        return [quiet(v) for v in value]
    return value


def read_value(snap: FlowSnapshot, commit: Commit, key: str) -> Any:
    """The value ``commit`` saw when it read ``key`` (its recorded value under full tracking, else rebuilt)."""
    if commit.read_values is not None and key in commit.read_values:
        return commit.read_values[key]
    idx = commit.reads.get(key)
    if idx is None or not 0 <= idx < len(snap.commit_log):
        return snap.initial_state.get(key) if commit.namespace == "" else None
    return snap.value_at(key, idx, snap.commit_log[idx].namespace)


def final_answer_commit(snap: FlowSnapshot) -> Commit | None:
    """The root commit that wrote the run's answer (the last one), or None for a run that gave none."""
    return next(
        (c for c in reversed(snap.commit_log) if c.namespace == "" and c.applied and "answer" in c.keys_written()),
        None,
    )
