"""What-if commands: ``export-test`` (a proof or a recording as an offline pytest file) and ``export-dataset`` (stored
runs as JSON lines)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from agentfootprint.errors import AgentFootprintError


class WhatIfCliError(AgentFootprintError):
    """A what-if command given a path it cannot use (missing folder, a folder, a file of the wrong kind)."""

    code = "ERR_CLI_INPUT"


def _writable(path: str, what: str) -> Path:
    target = Path(path)
    if not target.parent.is_dir():
        raise WhatIfCliError(f"cannot write the {what}: its folder does not exist")
    if target.is_dir():
        raise WhatIfCliError(f"cannot write the {what}: the path is a folder")
    return target


def _recordings_at(path: str) -> list[Any]:
    """Every recording a path holds: a ``.json`` recording, or each run of a ``.sqlite``/``.db`` file, oldest first."""
    from agentfootprint.explain import load_recording
    from agentfootprint.stores.recordings import SQLiteRecordingStore

    source = Path(path)
    if source.suffix not in (".sqlite", ".db", ".sqlite3") or not source.is_file():
        return [load_recording(source)]
    store = SQLiteRecordingStore(source, readonly=True)
    try:
        run_ids: list[str] = []
        cursor: str | None = None
        while True:
            page = store.list(limit=100, cursor=cursor)
            run_ids += [m.run_id for m in page.items]
            cursor = page.next_cursor
            if cursor is None:
                break
    finally:
        store.close()
    return [load_recording(source, run_id=r) for r in reversed(run_ids)]


def register(app: typer.Typer) -> None:
    """Add ``export-test`` and ``export-dataset`` to the command group."""

    @app.command("export-test")
    def export_test_cmd(
        source: str = typer.Argument(
            ..., help="A proof (Proof.save: a localization frozen with its reruns) or a recording (.json, .sqlite)."
        ),
        output: str = typer.Option("test_proof.py", "--output", "-o", help="Where to write the pytest file."),
        agent: str = typer.Option(
            None, "--agent", help="module:function building the agent the test replays (default: the proof's)."
        ),
        run_id: str = typer.Option(None, "--run-id", help="In a SQLite recording: this run (default: the newest)."),
    ) -> None:
        """Write an offline pytest file: the recorded answer holds, and flips without each confirmed culprit set."""
        from agentfootprint.explain import export_test, load_proof

        target = _writable(output, "test file")
        proof = load_proof(source, run_id=run_id)
        export_test(proof, target, factory=agent)
        print(f"wrote {target}")

    @app.command("export-dataset")
    def export_dataset_cmd(
        recordings: Annotated[list[str], typer.Argument(help="Recordings: .json files, or .sqlite/.db (every run).")],
        output: str = typer.Option("runs.jsonl", "--output", "-o", help="Where to write the JSON lines."),
    ) -> None:
        """Write one JSON line per run: its input, its answer and the sources that reached it, with their ids."""
        from agentfootprint.explain import export_dataset

        target = _writable(output, "dataset")
        runs = [r for path in recordings for r in _recordings_at(path)]
        export_dataset(runs, target)
        print(f"wrote {len(runs)} run(s) to {target}")


__all__ = ["WhatIfCliError", "register"]
