"""The registry of known event types: every name is ``agentfootprint.<domain>.<name>``, one per catalogue class
(``agentfootprint.events.catalogue``); the constants below are those classes' ``event_type``."""

from __future__ import annotations

from typing import Final

from agentfootprint.events import catalogue as _c

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

AGENT_TURN_START: Final[str] = _c.AgentTurnStart.event_type
AGENT_TURN_END: Final[str] = _c.AgentTurnEnd.event_type
AGENT_ITERATION_START: Final[str] = _c.AgentIterationStart.event_type
AGENT_ITERATION_END: Final[str] = _c.AgentIterationEnd.event_type
AGENT_ROUTE_DECIDED: Final[str] = _c.AgentRouteDecided.event_type
AGENT_BUDGET_EXHAUSTED: Final[str] = _c.AgentBudgetExhausted.event_type
AGENT_RUN_CONFIGURED: Final[str] = _c.AgentRunConfigured.event_type
STREAM_LLM_START: Final[str] = _c.StreamLlmStart.event_type
STREAM_LLM_END: Final[str] = _c.StreamLlmEnd.event_type
STREAM_TOKEN: Final[str] = _c.StreamToken.event_type
STREAM_TOOL_START: Final[str] = _c.StreamToolStart.event_type
STREAM_TOOL_END: Final[str] = _c.StreamToolEnd.event_type
CONTEXT_EVALUATED: Final[str] = _c.ContextEvaluated.event_type
CONTEXT_INJECTED: Final[str] = _c.ContextInjected.event_type
CONTEXT_SLOT_COMPOSED: Final[str] = _c.ContextSlotComposed.event_type
PAUSE_REQUESTED: Final[str] = _c.PauseRequested.event_type
PAUSE_RESUMED: Final[str] = _c.PauseResumed.event_type
ERROR_TOOL: Final[str] = _c.ErrorTool.event_type
WARNING_TOOL_RAISED: Final[str] = _c.WarningToolRaised.event_type
ERROR_PROVIDER: Final[str] = _c.ErrorProvider.event_type
ERROR_RUN: Final[str] = _c.ErrorRun.event_type
COST_USAGE: Final[str] = _c.CostUsage.event_type
COST_BUDGET_WARNING: Final[str] = _c.CostBudgetWarning.event_type
CONTEXT_BUDGET_PRESSURE: Final[str] = _c.ContextBudgetPressure.event_type
CONTEXT_EVICTED: Final[str] = _c.ContextEvicted.event_type
MEMORY_WRITTEN: Final[str] = _c.MemoryWritten.event_type
COMPOSITION_FORK_START: Final[str] = _c.CompositionForkStart.event_type
COMPOSITION_BRANCH_COMPLETE: Final[str] = _c.CompositionBranchComplete.event_type
COMPOSITION_ROUTE_DECIDED: Final[str] = _c.CompositionRouteDecided.event_type
COMPOSITION_ITERATION_START: Final[str] = _c.CompositionIterationStart.event_type
VALIDATION_ARGS_INVALID: Final[str] = _c.ValidationArgsInvalid.event_type
PERMISSION_CHECK: Final[str] = _c.PermissionCheck.event_type
PERMISSION_HALT: Final[str] = _c.PermissionHalt.event_type
CHECKIN_REQUEST: Final[str] = _c.CheckinRequest.event_type
CHECKIN_DECISION: Final[str] = _c.CheckinDecision.event_type
SKILL_ACTIVATED: Final[str] = _c.SkillActivated.event_type
SKILL_GRAPH_DECLARED: Final[str] = _c.SkillGraphDeclared.event_type
COMPOSITION_ENTER: Final[str] = _c.CompositionEnter.event_type
COMPOSITION_EXIT: Final[str] = _c.CompositionExit.event_type
MIDDLEWARE_DECISION: Final[str] = _c.MiddlewareDecision.event_type
TOOLS_OFFERED: Final[str] = _c.ToolsOffered.event_type
TOOLS_REPEATED_CALL: Final[str] = _c.ToolsRepeatedCall.event_type
TOOLS_SESSION_STARTED: Final[str] = _c.ToolsSessionStarted.event_type
TOOLS_SESSION_REUSED: Final[str] = _c.ToolsSessionReused.event_type
TOOLS_SESSION_CLOSED: Final[str] = _c.ToolsSessionClosed.event_type
TOOLS_SESSION_CLOSE_FAILED: Final[str] = _c.ToolsSessionCloseFailed.event_type
RELIABILITY_RETRIED: Final[str] = _c.ReliabilityRetried.event_type
RELIABILITY_RECOVERED: Final[str] = _c.ReliabilityRecovered.event_type
RELIABILITY_FAIL_FAST: Final[str] = _c.ReliabilityFailFast.event_type
RELIABILITY_CIRCUIT_OPENED: Final[str] = _c.ReliabilityCircuitOpened.event_type
RELIABILITY_CIRCUIT_CLOSED: Final[str] = _c.ReliabilityCircuitClosed.event_type
RELIABILITY_CIRCUIT_REJECTED: Final[str] = _c.ReliabilityCircuitRejected.event_type
CREDENTIAL_REQUESTED: Final[str] = _c.CredentialRequested.event_type
CREDENTIAL_ACQUIRED: Final[str] = _c.CredentialAcquired.event_type
CREDENTIAL_AUTHORIZATION_REQUIRED: Final[str] = _c.CredentialAuthorizationRequired.event_type
CREDENTIAL_FAILED: Final[str] = _c.CredentialFailed.event_type
ARTIFACTS_MINTED: Final[str] = _c.ArtifactsMinted.event_type
ARTIFACTS_REFUSED: Final[str] = _c.ArtifactsRefused.event_type
INTEGRITY_CONTEXT_ERROR: Final[str] = _c.IntegrityContextError.event_type
INTEGRITY_DISPOSITION: Final[str] = _c.IntegrityDisposition.event_type
MCP_TOOLS_LISTED: Final[str] = _c.McpToolsListed.event_type

KNOWN_EVENT_TYPES: frozenset[str] = frozenset(c.event_type for c in _c.payload_classes())


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
