"""Recordings: JSON or SQLite rows, read back by run id or newest; every unreadable file refused by name."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agentfootprint import Agent, define_fact
from agentfootprint.explain import InvalidRecordingError, load_recording, save_recording
from agentfootprint.explain.recording import Recording, recording_of
from agentfootprint.flow import flow_chart
from agentfootprint.providers import mock


async def ran(reply: str) -> Agent:
    agent = (
        Agent.create(provider=mock(reply=reply), model="m-1", name="helper")
        .fact(define_fact(id="f1", data="x"))
        .build()
    )
    await agent.run("q")
    return agent


async def test_json_round_trip_keeps_agent_model_and_sources(tmp_path: Path) -> None:
    agent = await ran("a")
    path = save_recording(agent, tmp_path / "run.json")
    assert path == tmp_path / "run.json" and json.loads(path.read_text())["format"] == "agentfootprint.recording"
    rec = load_recording(path)
    assert (rec.agent, rec.model, rec.version) == ("helper", "m-1", 1)
    assert rec.sources == agent.config.source_ids() and "f1" in rec.sources
    assert rec.last_snapshot() == agent.last_snapshot()


async def test_sqlite_holds_a_row_per_run_and_reads_newest_or_by_id(tmp_path: Path) -> None:
    first, second = await ran("one"), await ran("two")
    for suffix in ("sqlite", "db", "sqlite3"):
        path = tmp_path / f"runs.{suffix}"
        save_recording(first, path)
        save_recording(second, path)
        save_recording(second, path)  # the same run again replaces its row
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM recordings").fetchone() == (2,)
        run1 = first.last_snapshot().run_id  # type: ignore[union-attr]
        assert load_recording(path, run_id=run1).snapshot.run_id == run1
        assert load_recording(path).snapshot.state["answer"] == "two"
        with pytest.raises(InvalidRecordingError, match="the SQLite file holds no such recording"):
            load_recording(path, run_id="nope")


async def test_a_bare_snapshot_file_and_a_snapshot_are_recordings(tmp_path: Path) -> None:
    r = await flow_chart("A", lambda s: s.set("a", 1), id="a").build().run()
    bare = tmp_path / "snap.json"
    bare.write_text(r.snapshot.model_dump_json())
    assert load_recording(bare).snapshot == r.snapshot
    rec = recording_of(r.snapshot)
    assert (rec.agent, rec.model, rec.sources) == ("agent", "", {})


async def test_nothing_to_record() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    with pytest.raises(InvalidRecordingError, match="nothing to record: run the agent first"):
        recording_of(agent)
    with pytest.raises(InvalidRecordingError):
        recording_of(42)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", b"{not json", "cannot read recording: JSONDecodeError"),
        ("bad.json", b"\xff\xfe", "cannot read recording: UnicodeDecodeError"),
        ("bad.db", b"not a database at all, just text....", "cannot read recording: DatabaseError"),
        ("wrong.json", b'{"format": "other", "snapshot": {}}', "recording field 'format' is invalid"),
        ("wrong.json", b'{"snapshot": 3}', "recording field 'snapshot' is invalid"),
        ("wrong.json", b"[1]", "recording field 'recording' is invalid"),
    ],
)
def test_unreadable_files_are_refused_by_name(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InvalidRecordingError) as info:
        load_recording(path)
    assert str(info.value) == message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidRecordingError) as info:
        load_recording(tmp_path / "none.json")
    assert str(info.value) == f"no recording file at {tmp_path / 'none.json'}"
    assert Recording.model_fields["format"].default == "agentfootprint.recording"


async def test_a_json_recording_is_written_with_one_space_indents(tmp_path: Path) -> None:
    agent = await ran("a")
    text = save_recording(agent, tmp_path / "run.json").read_text()
    assert text.startswith('{\n "format": "agentfootprint.recording",\n "version": 1,\n "agent": "helper",')


async def test_recording_something_that_never_ran_is_refused_and_a_runner_without_a_model_records_none() -> None:
    from types import SimpleNamespace

    with pytest.raises(InvalidRecordingError) as err:
        recording_of(SimpleNamespace(last_snapshot=lambda: None))
    assert str(err.value) == "nothing to record: run the agent first"
    snap = (await ran("a")).last_snapshot()
    runner = SimpleNamespace(last_snapshot=lambda: snap, config=SimpleNamespace(source_ids=lambda: {"f": "fact"}))
    rec = recording_of(runner)
    assert (rec.agent, rec.model, rec.sources) == ("agent", "", {"f": "fact"})
