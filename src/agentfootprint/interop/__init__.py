"""Interop: import other frameworks' OpenTelemetry traces (GenAI conventions, OpenInference) as recordings that
backtrack, report and step localization read like our own runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentfootprint.interop._spans import to_otlp_json
from agentfootprint.interop._step import ForeignStep, localize_context_bug, localize_sync, rerun_step
from agentfootprint.interop.errors import CAPTURE_SETTINGS, InvalidTraceError, TraceContentMissingError

if TYPE_CHECKING:
    from agentfootprint.explain.recording import Recording

CONVENTIONS = ("auto", "genai", "openinference")


def import_trace(source: Any, *, convention: str = "auto", trace_id: str | None = None) -> Recording:
    """A foreign run as a ``Recording``: ``source`` is a list of ``ReadableSpan``s, an OTLP/JSON mapping, or a path
    to an OTLP/JSON file, JSON lines of such documents, or OTLP protobuf; ``trace_id`` picks one of several traces."""
    from agentfootprint.interop._build import build_recording
    from agentfootprint.interop._spans import read_spans

    if convention not in CONVENTIONS:
        raise InvalidTraceError("convention must be 'auto', 'genai' or 'openinference'", code="ERR_TRACE_CONVENTION")
    if trace_id is not None and not isinstance(trace_id, str):
        raise InvalidTraceError("trace_id must be a hex string", code="ERR_TRACE_NOT_FOUND")
    return build_recording(read_spans(source), convention=convention, trace_id=trace_id)


__all__ = [
    "CAPTURE_SETTINGS",
    "CONVENTIONS",
    "ForeignStep",
    "InvalidTraceError",
    "TraceContentMissingError",
    "import_trace",
    "localize_context_bug",
    "localize_sync",
    "rerun_step",
    "to_otlp_json",
]
