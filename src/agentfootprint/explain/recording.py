"""Recordings: a run stored as JSON (or in SQLite) that explain can replay with no provider and no agent."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentfootprint.errors import AgentFootprintError, validation_field
from agentfootprint.explain._targets import as_target
from agentfootprint.flow import FlowSnapshot
from agentfootprint.stores.recordings import SQLiteRecordingStore

RECORDING_FORMAT: Literal["agentfootprint.recording"] = "agentfootprint.recording"


class InvalidRecordingError(AgentFootprintError, ValueError):
    """A recording file that cannot be read; names what was wrong, never its contents."""

    code = "ERR_INVALID_RECORDING"


class Recording(BaseModel):
    """One run's served (redacted) record plus what the agent declared."""

    format: Literal["agentfootprint.recording"] = RECORDING_FORMAT
    version: Literal[1] = 1
    agent: str = "agent"
    model: str = ""
    sources: dict[str, str] = Field(default_factory=dict)
    snapshot: FlowSnapshot

    def last_snapshot(self) -> FlowSnapshot:
        return self.snapshot


def recording_of(agent: Any) -> Recording:
    """The recording of a run: a ``RunResult`` (its own record), or an agent's latest finished run."""
    target = as_target(agent)
    snap = target.last_snapshot() if hasattr(target, "last_snapshot") else target
    if not isinstance(snap, FlowSnapshot):
        raise InvalidRecordingError("nothing to record: run the agent first")
    agent = getattr(target, "runner", target)  # a record names the runner that made it
    config = getattr(agent, "config", None)
    return Recording(
        agent=getattr(agent, "name", "agent"),
        model=getattr(config, "model", "") if config else "",
        sources=config.source_ids() if config is not None else {},
        snapshot=snap,
    )


def save_recording(agent: Any, path: str | Path) -> Path:
    """Write the last run as a recording: ``.json`` as one document, ``.sqlite``/``.db`` as a row per run."""
    rec = recording_of(agent)
    target = Path(path)
    if target.suffix in (".sqlite", ".db", ".sqlite3"):
        store = SQLiteRecordingStore(target)
        try:
            store.put(rec.snapshot.run_id, rec.model_dump_json(), agent=rec.agent)
        finally:
            store.close()
        return target
    target.write_text(rec.model_dump_json(indent=1))
    return target


def _stored_body(source: Path, run_id: str | None) -> str | None:
    """The body of run ``run_id`` (or of the newest run) in a SQLite recordings file, opened read-only."""
    store = SQLiteRecordingStore(source, readonly=True)
    try:
        if not run_id:
            newest = store.list(limit=1).items
            run_id = newest[0].run_id if newest else None
        return store.get(run_id) if run_id else None
    finally:
        store.close()


def load_recording(path: str | Path, *, run_id: str | None = None) -> Recording:
    """Read a recording (JSON file, or SQLite: ``run_id`` or the newest run)."""
    source = Path(path)
    if not source.exists():
        raise InvalidRecordingError(f"no recording file at {source}")
    try:
        if source.suffix in (".sqlite", ".db", ".sqlite3"):
            body = _stored_body(source, run_id)
            if body is None:
                raise InvalidRecordingError("the SQLite file holds no such recording")
            raw: Any = json.loads(body)
        else:
            raw = json.loads(source.read_text())
    except (OSError, sqlite3.Error, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidRecordingError(f"cannot read recording: {type(exc).__name__}") from None
    if isinstance(raw, dict) and "format" not in raw and "commit_log" in raw:
        raw = {"snapshot": raw}
    try:
        return Recording.model_validate(raw)
    except ValidationError as err:
        loc = validation_field(err, default="recording")
        raise InvalidRecordingError(f"recording field '{loc[:120]}' is invalid") from None
