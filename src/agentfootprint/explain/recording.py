"""Recordings: a run stored as JSON (or in SQLite) that explain can replay with no provider and no agent."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentfootprint.errors import AgentFootprintError, validation_field
from agentfootprint.flow import FlowSnapshot

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
    snap = agent.last_snapshot() if hasattr(agent, "last_snapshot") else agent
    if not isinstance(snap, FlowSnapshot):
        raise InvalidRecordingError("nothing to record: run the agent first")
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
        with sqlite3.connect(target) as db:
            db.execute("CREATE TABLE IF NOT EXISTS recordings (run_id TEXT PRIMARY KEY, created REAL, body TEXT)")
            db.execute(
                "INSERT OR REPLACE INTO recordings VALUES (?, julianday('now'), ?)",
                (rec.snapshot.run_id, rec.model_dump_json()),
            )
        return target
    target.write_text(rec.model_dump_json(indent=1))
    return target


def load_recording(path: str | Path, *, run_id: str | None = None) -> Recording:
    """Read a recording (JSON file, or SQLite: ``run_id`` or the newest run)."""
    source = Path(path)
    if not source.exists():
        raise InvalidRecordingError(f"no recording file at {source}")
    try:
        if source.suffix in (".sqlite", ".db", ".sqlite3"):
            with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as db:
                row = db.execute(
                    "SELECT body FROM recordings WHERE run_id = ?"
                    if run_id
                    else "SELECT body FROM recordings ORDER BY created DESC LIMIT 1",
                    (run_id,) if run_id else (),
                ).fetchone()
            if row is None:
                raise InvalidRecordingError("the SQLite file holds no such recording")
            raw: Any = json.loads(row[0])
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
