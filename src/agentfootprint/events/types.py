"""The registry of known event types: every name is ``agentfootprint.<domain>.<name>``."""

from __future__ import annotations

__all__ = [
    "AGENT_BUDGET_EXHAUSTED",
    "AGENT_ITERATION_END",
    "AGENT_ITERATION_START",
    "AGENT_ROUTE_DECIDED",
    "AGENT_RUN_CONFIGURED",
    "AGENT_TURN_END",
    "AGENT_TURN_START",
    "ARTIFACTS_MINTED",
    "ARTIFACTS_REFUSED",
    "CHECKIN_DECISION",
    "CHECKIN_REQUEST",
    "COMPOSITION_BRANCH_COMPLETE",
    "COMPOSITION_ENTER",
    "COMPOSITION_EXIT",
    "COMPOSITION_FORK_START",
    "COMPOSITION_ITERATION_START",
    "COMPOSITION_ROUTE_DECIDED",
    "CONTEXT_BUDGET_PRESSURE",
    "CONTEXT_EVALUATED",
    "CONTEXT_EVICTED",
    "CONTEXT_INJECTED",
    "CONTEXT_SLOT_COMPOSED",
    "COST_BUDGET_WARNING",
    "COST_USAGE",
    "CREDENTIAL_ACQUIRED",
    "CREDENTIAL_AUTHORIZATION_REQUIRED",
    "CREDENTIAL_FAILED",
    "CREDENTIAL_REQUESTED",
    "ERROR_PROVIDER",
    "ERROR_RUN",
    "ERROR_TOOL",
    "EVENT_PREFIX",
    "INTEGRITY_CONTEXT_ERROR",
    "INTEGRITY_DISPOSITION",
    "KNOWN_DOMAINS",
    "KNOWN_EVENT_TYPES",
    "MCP_TOOLS_LISTED",
    "MEMORY_WRITTEN",
    "MIDDLEWARE_DECISION",
    "PAUSE_REQUESTED",
    "PAUSE_RESUMED",
    "PERMISSION_CHECK",
    "PERMISSION_HALT",
    "RELIABILITY_CIRCUIT_CLOSED",
    "RELIABILITY_CIRCUIT_OPENED",
    "RELIABILITY_CIRCUIT_REJECTED",
    "RELIABILITY_FAIL_FAST",
    "RELIABILITY_RECOVERED",
    "RELIABILITY_RETRIED",
    "SKILL_ACTIVATED",
    "SKILL_GRAPH_DECLARED",
    "STREAM_LLM_END",
    "STREAM_LLM_START",
    "STREAM_TOKEN",
    "STREAM_TOOL_END",
    "STREAM_TOOL_START",
    "TOOLS_OFFERED",
    "TOOLS_REPEATED_CALL",
    "TOOLS_SESSION_CLOSED",
    "TOOLS_SESSION_CLOSE_FAILED",
    "TOOLS_SESSION_REUSED",
    "TOOLS_SESSION_STARTED",
    "VALIDATION_ARGS_INVALID",
    "WARNING_TOOL_RAISED",
    "domain_of",
    "full_event_type",
    "is_known_event_type",
]

EVENT_PREFIX = "agentfootprint."

AGENT_TURN_START = "agentfootprint.agent.turn_start"
AGENT_TURN_END = "agentfootprint.agent.turn_end"
AGENT_ITERATION_START = "agentfootprint.agent.iteration_start"
AGENT_ITERATION_END = "agentfootprint.agent.iteration_end"
AGENT_ROUTE_DECIDED = "agentfootprint.agent.route_decided"
AGENT_BUDGET_EXHAUSTED = "agentfootprint.agent.budget_exhausted"
AGENT_RUN_CONFIGURED = "agentfootprint.agent.run_configured"
STREAM_LLM_START = "agentfootprint.stream.llm_start"
STREAM_LLM_END = "agentfootprint.stream.llm_end"
STREAM_TOKEN = "agentfootprint.stream.token"
STREAM_TOOL_START = "agentfootprint.stream.tool_start"
STREAM_TOOL_END = "agentfootprint.stream.tool_end"
CONTEXT_EVALUATED = "agentfootprint.context.evaluated"
CONTEXT_INJECTED = "agentfootprint.context.injected"
CONTEXT_SLOT_COMPOSED = "agentfootprint.context.slot_composed"
PAUSE_REQUESTED = "agentfootprint.pause.requested"
PAUSE_RESUMED = "agentfootprint.pause.resumed"
ERROR_TOOL = "agentfootprint.error.tool"
WARNING_TOOL_RAISED = "agentfootprint.warning.tool_raised"
ERROR_PROVIDER = "agentfootprint.error.provider"
ERROR_RUN = "agentfootprint.error.run"
COST_USAGE = "agentfootprint.cost.usage"
COST_BUDGET_WARNING = "agentfootprint.cost.budget_warning"
CONTEXT_BUDGET_PRESSURE = "agentfootprint.context.budget_pressure"
CONTEXT_EVICTED = "agentfootprint.context.evicted"
MEMORY_WRITTEN = "agentfootprint.memory.written"
COMPOSITION_FORK_START = "agentfootprint.composition.fork_start"
COMPOSITION_BRANCH_COMPLETE = "agentfootprint.composition.branch_complete"
COMPOSITION_ROUTE_DECIDED = "agentfootprint.composition.route_decided"
COMPOSITION_ITERATION_START = "agentfootprint.composition.iteration_start"
VALIDATION_ARGS_INVALID = "agentfootprint.validation.args_invalid"
PERMISSION_CHECK = "agentfootprint.permission.check"
PERMISSION_HALT = "agentfootprint.permission.halt"
CHECKIN_REQUEST = "agentfootprint.checkin.request"
CHECKIN_DECISION = "agentfootprint.checkin.decision"
SKILL_ACTIVATED = "agentfootprint.skill.activated"
SKILL_GRAPH_DECLARED = "agentfootprint.skill.graph_declared"
COMPOSITION_ENTER = "agentfootprint.composition.enter"
COMPOSITION_EXIT = "agentfootprint.composition.exit"
MIDDLEWARE_DECISION = "agentfootprint.middleware.decision"
TOOLS_OFFERED = "agentfootprint.tools.offered"
TOOLS_REPEATED_CALL = "agentfootprint.tools.repeated_call"
TOOLS_SESSION_STARTED = "agentfootprint.tools.session_started"
TOOLS_SESSION_REUSED = "agentfootprint.tools.session_reused"
TOOLS_SESSION_CLOSED = "agentfootprint.tools.session_closed"
TOOLS_SESSION_CLOSE_FAILED = "agentfootprint.tools.session_close_failed"
RELIABILITY_RETRIED = "agentfootprint.reliability.retried"
RELIABILITY_RECOVERED = "agentfootprint.reliability.recovered"
RELIABILITY_FAIL_FAST = "agentfootprint.reliability.fail_fast"
RELIABILITY_CIRCUIT_OPENED = "agentfootprint.reliability.circuit_opened"
RELIABILITY_CIRCUIT_CLOSED = "agentfootprint.reliability.circuit_closed"
RELIABILITY_CIRCUIT_REJECTED = "agentfootprint.reliability.circuit_rejected"
CREDENTIAL_REQUESTED = "agentfootprint.credential.requested"
CREDENTIAL_ACQUIRED = "agentfootprint.credential.acquired"
CREDENTIAL_AUTHORIZATION_REQUIRED = "agentfootprint.credential.authorization_required"
CREDENTIAL_FAILED = "agentfootprint.credential.failed"
ARTIFACTS_MINTED = "agentfootprint.artifacts.minted"
ARTIFACTS_REFUSED = "agentfootprint.artifacts.refused"
INTEGRITY_CONTEXT_ERROR = "agentfootprint.integrity.context_error"
INTEGRITY_DISPOSITION = "agentfootprint.integrity.disposition"
MCP_TOOLS_LISTED = "agentfootprint.mcp.tools_listed"

KNOWN_EVENT_TYPES: frozenset[str] = frozenset(
    {
        AGENT_TURN_START,
        AGENT_TURN_END,
        AGENT_ITERATION_START,
        AGENT_ITERATION_END,
        AGENT_ROUTE_DECIDED,
        AGENT_BUDGET_EXHAUSTED,
        AGENT_RUN_CONFIGURED,
        STREAM_LLM_START,
        STREAM_LLM_END,
        STREAM_TOKEN,
        STREAM_TOOL_START,
        STREAM_TOOL_END,
        CONTEXT_EVALUATED,
        CONTEXT_INJECTED,
        CONTEXT_SLOT_COMPOSED,
        PAUSE_REQUESTED,
        PAUSE_RESUMED,
        ERROR_TOOL,
        WARNING_TOOL_RAISED,
        ERROR_PROVIDER,
        ERROR_RUN,
        COST_USAGE,
        COST_BUDGET_WARNING,
        VALIDATION_ARGS_INVALID,
        PERMISSION_CHECK,
        PERMISSION_HALT,
        CHECKIN_REQUEST,
        CHECKIN_DECISION,
        SKILL_ACTIVATED,
        SKILL_GRAPH_DECLARED,
        COMPOSITION_ENTER,
        COMPOSITION_EXIT,
        CONTEXT_BUDGET_PRESSURE,
        CONTEXT_EVICTED,
        MEMORY_WRITTEN,
        COMPOSITION_FORK_START,
        COMPOSITION_BRANCH_COMPLETE,
        COMPOSITION_ROUTE_DECIDED,
        COMPOSITION_ITERATION_START,
        MIDDLEWARE_DECISION,
        TOOLS_OFFERED,
        TOOLS_REPEATED_CALL,
        TOOLS_SESSION_STARTED,
        TOOLS_SESSION_REUSED,
        TOOLS_SESSION_CLOSED,
        TOOLS_SESSION_CLOSE_FAILED,
        RELIABILITY_RETRIED,
        RELIABILITY_RECOVERED,
        RELIABILITY_FAIL_FAST,
        RELIABILITY_CIRCUIT_OPENED,
        RELIABILITY_CIRCUIT_CLOSED,
        RELIABILITY_CIRCUIT_REJECTED,
        CREDENTIAL_REQUESTED,
        CREDENTIAL_ACQUIRED,
        CREDENTIAL_AUTHORIZATION_REQUIRED,
        CREDENTIAL_FAILED,
        ARTIFACTS_MINTED,
        ARTIFACTS_REFUSED,
        INTEGRITY_CONTEXT_ERROR,
        INTEGRITY_DISPOSITION,
        MCP_TOOLS_LISTED,
    }
)


def domain_of(event_type: str) -> str:
    """The ``<domain>`` of ``agentfootprint.<domain>.<name>`` (``""`` when the shape is wrong)."""
    parts = event_type.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "agentfootprint" else ""


KNOWN_DOMAINS: frozenset[str] = frozenset(domain_of(t) for t in KNOWN_EVENT_TYPES)


def full_event_type(event_type: str) -> str:
    """``"stream.llm_start"`` → ``"agentfootprint.stream.llm_start"``; a full name is returned unchanged."""
    return event_type if event_type.startswith(EVENT_PREFIX) else EVENT_PREFIX + event_type


def is_known_event_type(event_type: object) -> bool:
    """Whether ``event_type`` (full or short form) is in the registry."""
    return isinstance(event_type, str) and full_event_type(event_type) in KNOWN_EVENT_TYPES
