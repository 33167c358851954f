"""Typed refusals of the trace importer: they name what was wrong, never a value from the trace."""

from __future__ import annotations

from agentfootprint.errors import AgentFootprintError

CAPTURE_SETTINGS = (
    "OpenTelemetry GenAI instrumentations: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; "
    "pydantic-ai: Agent(capabilities=[Instrumentation(InstrumentationSettings(include_content=True))]) or "
    "Agent.instrument_all(InstrumentationSettings(include_content=True)) (content is included by default); "
    "OpenInference (LangChain/LangGraph, OpenAI Agents SDK): leave OPENINFERENCE_HIDE_INPUTS, "
    "OPENINFERENCE_HIDE_OUTPUTS, OPENINFERENCE_HIDE_INPUT_MESSAGES and OPENINFERENCE_HIDE_OUTPUT_MESSAGES unset "
    "(or TraceConfig(hide_inputs=False, hide_outputs=False))"
)
"""What turns message capture on, per framework (named by ``TraceContentMissingError``)."""


class InvalidTraceError(AgentFootprintError, ValueError):
    """A trace that cannot be read: names the file kind or field that was wrong, never its contents."""

    code = "ERR_INVALID_TRACE"


class TraceContentMissingError(AgentFootprintError, ValueError):
    """LLM spans recorded without their messages: backtracking them would be an empty chain, so they are refused."""

    code = "ERR_TRACE_CONTENT_MISSING"

    def __init__(self, missing: int, total: int, convention: str) -> None:
        where = {
            "genai": "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (pydantic-ai: "
            "InstrumentationSettings(include_content=True), given through Agent(capabilities=[Instrumentation(...)]) "
            "or Agent.instrument_all(...))",
            "openinference": "unset OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_INPUT_MESSAGES "
            "(and their OUTPUT twins), or pass TraceConfig(hide_inputs=False, hide_outputs=False)",
        }.get(convention, CAPTURE_SETTINGS)
        super().__init__(
            f"{missing} of {total} LLM span(s) carry no message content, so nothing can be backtracked; "
            f"turn content capture on and record the run again: {where}"
        )
        self.missing = missing
        self.total = total
        self.convention = convention


__all__ = ["CAPTURE_SETTINGS", "InvalidTraceError", "TraceContentMissingError"]
