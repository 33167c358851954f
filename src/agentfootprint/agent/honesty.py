"""The Agent's seam to answer honesty: builder helpers and read-only folds the Agent methods delegate to."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agentfootprint.agent.assessment import Assessment, assess
from agentfootprint.agent.chat import (
    Explanation,
    RecordedChat,
    SelfExplainBinding,
    explain_answer,
    recorded_chat,
    self_explain_tools,
)
from agentfootprint.agent.checkin import CheckInPack, check_in_pack_of
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.agent.evidence import POSTURES, UnsupportedValues, after_run, verdict_of
from agentfootprint.flow import FlowSnapshot
from agentfootprint.tools import Tool

_MAX_ALLOW = 1000


def with_evidence_gate(config: AgentConfig, posture: str, allow: Iterable[str]) -> AgentConfig:
    """``config`` with the names-and-numbers gate armed; refuses an unknown posture or a non-str allow value."""
    if posture not in POSTURES:
        raise AgentBuildError(f"names_and_numbers_from_evidence posture must be one of {', '.join(POSTURES)}")
    values = tuple(allow)
    if len(values) > _MAX_ALLOW or not all(isinstance(v, str) and v.strip() for v in values):
        raise AgentBuildError(f"allow must be at most {_MAX_ALLOW} non-empty strings")
    return replace(config, evidence_posture=posture, evidence_allow=values)


def with_self_explain(config: AgentConfig) -> tuple[AgentConfig, list[Tool]]:
    """``config`` bound to a fresh self-explain binding, and the trace tools to offer the model."""
    if config.self_explain is not None:
        raise AgentBuildError("self_explain() was already called on this builder")
    binding = SelfExplainBinding()
    return replace(config, self_explain=binding), self_explain_tools(binding)


def unsupported_of(snapshot: FlowSnapshot | None) -> UnsupportedValues | None:
    """The verdict in a served record when it flagged values, else None."""
    verdict = verdict_of(snapshot.state) if snapshot is not None else None
    return verdict if verdict is not None and verdict.values else None


def assessment_of(snapshot: FlowSnapshot | None, output_schema: Any = None) -> Assessment | None:
    """``assess`` of the last record; None before any run, after a failed run or a refused answer."""
    if snapshot is None:
        return None
    verdict = verdict_of(snapshot.state)
    last = snapshot.commit_log[-1] if snapshot.commit_log else None
    if (verdict is not None and verdict.refused) or (last is not None and last.failed):
        return None
    return assess(snapshot, output_schema=output_schema)


def can_explain(config: AgentConfig, snapshot: FlowSnapshot | None) -> bool:
    """True when a completed answer is on record (for a self-explain agent: bound at the end of a run)."""
    binding = config.self_explain
    if isinstance(binding, SelfExplainBinding):
        snapshot = binding.snapshot_for(config)
    if snapshot is None or not snapshot.commit_log:
        return False
    return any(c.namespace == "" and c.applied and "answer" in c.keys_written() for c in snapshot.commit_log)


__all__ = [
    "Assessment",
    "CheckInPack",
    "Explanation",
    "RecordedChat",
    "UnsupportedValues",
    "after_run",
    "assessment_of",
    "can_explain",
    "check_in_pack_of",
    "explain_answer",
    "recorded_chat",
    "unsupported_of",
    "with_evidence_gate",
    "with_self_explain",
]
