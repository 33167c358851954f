"""CLI for integrity: ``agentfootprint errors RUN.json`` lists every integrity finding of a stored run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer


def render(found: Any, *, as_json: bool) -> str:
    """The findings as text lines (kind, stage, source, message) or as a JSON list."""
    if as_json:
        return json.dumps([e.model_dump() for e in found], indent=1)
    if not found:
        return "no context errors"
    lines = [f"{len(found)} context error(s)"]
    for e in found:
        where = e.stage_id or "-"
        source = f" [{e.source_id}]" if e.source_id else ""
        lines.append(f"  {e.kind:<20} {where:<18}{source} {e.message}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add ``agentfootprint errors``."""
    import typer

    @app.command("errors")
    def errors_cmd(
        recording: str = typer.Argument(..., help="A recording: .json, or .sqlite/.db (one row per run)."),
        run_id: str = typer.Option(None, "--run-id", help="In a SQLite recording: this run (default: the newest)."),
        as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
        strict: bool = typer.Option(False, "--strict", help="Exit 1 when the run has any context error."),
    ) -> None:
        """List every integrity finding of a stored run (dangling references, wire mismatches, ...)."""
        from agentfootprint.explain import find_context_errors, load_recording

        found = find_context_errors(load_recording(recording, run_id=run_id))
        print(render(found, as_json=as_json))
        if strict and found:
            raise typer.Exit(1)


__all__ = ["register", "render"]
