"""CLI for foreign traces: ``explain``/``report``/``diff`` read OTLP files as runs; ``import-trace`` saves one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentfootprint.errors import AgentFootprintError

if TYPE_CHECKING:
    import typer as typer_types

PROTOBUF_SUFFIXES = (".pb", ".binpb", ".otlp", ".protobuf")
_SNIFF = 1 << 16


class TraceOutputError(AgentFootprintError):
    """The recording cannot be written where asked (a missing folder, a folder in its place, a refused write)."""

    code = "ERR_CLI_INPUT"


def _write(output: str, body: str) -> Path:
    target = Path(output)
    if not target.parent.is_dir() or target.is_dir():
        raise TraceOutputError(f"cannot write the recording to {target}: no such folder, or it is a folder")
    try:
        target.write_text(body, encoding="utf-8")
    except OSError as exc:
        raise TraceOutputError(f"cannot write the recording to {target}: {type(exc).__name__}") from None
    return target


def is_trace_file(path: str | Path) -> bool:
    """Whether ``path`` looks like an OTLP trace (protobuf by suffix, or JSON naming ``resourceSpans`` early on)."""
    source = Path(path)
    if not source.is_file():
        return False
    if source.suffix.lower() in PROTOBUF_SUFFIXES:
        return True
    try:
        with source.open("rb") as f:
            head = f.read(_SNIFF)
    except OSError:
        return False
    return b'"resourceSpans"' in head


def foreign_recording(path: str, run_id: str | None) -> Any:
    """The imported run of an OTLP trace file (``run_id`` picks a trace id), or None when it is no trace file."""
    if not is_trace_file(path):
        return None
    from agentfootprint.interop import import_trace

    return import_trace(path, trace_id=run_id)


def register(app: typer_types.Typer) -> None:
    """Add ``agentfootprint import-trace``."""
    import typer

    @app.command("import-trace")
    def import_trace_cmd(
        trace: str = typer.Argument(..., help="An OTLP trace: JSON, JSON lines, or protobuf (.pb)."),
        output: str = typer.Option("run.json", "--output", "-o", help="Where to write the recording (.json)."),
        convention: str = typer.Option("auto", "--convention", help="auto, genai or openinference."),
        trace_id: str = typer.Option(None, "--trace-id", help="With several traces in the file: this one."),
    ) -> None:
        """Import another framework's trace (OTel GenAI or OpenInference) as a recording explain can read."""
        from agentfootprint.interop import import_trace

        rec = import_trace(trace, convention=convention, trace_id=trace_id)
        target = _write(output, rec.model_dump_json(indent=1))
        calls = sum(1 for c in rec.snapshot.commit_log if c.stage_id == "call-llm")
        print(f"wrote {target}: {calls} model call(s) of trace {rec.snapshot.run_id}")


__all__ = ["PROTOBUF_SUFFIXES", "TraceOutputError", "foreign_recording", "is_trace_file", "register"]
