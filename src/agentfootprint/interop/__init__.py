"""Interop: import other frameworks' OpenTelemetry traces (GenAI conventions, OpenInference) as recordings that
backtrack, report and step localization read like our own runs."""

from agentfootprint.interop._build import CONVENTIONS, import_trace
from agentfootprint.interop._sample import sample_trace
from agentfootprint.interop._spans import to_otlp_json
from agentfootprint.interop._step import ForeignStep, localize_context_bug, localize_sync, rerun_step
from agentfootprint.interop.errors import CAPTURE_SETTINGS, InvalidTraceError, TraceContentMissingError

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
    "sample_trace",
    "to_otlp_json",
]
