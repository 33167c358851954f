"""The doors that take a checkpoint back, before anything runs: seal, shape, consistency, whose run it is, which
redaction covered it, and whether a consent decision answers the request the run is paused on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentfootprint.agent._checkpoints import load_conversation, load_pause_checkpoint
from agentfootprint.agent._integrity import PauseFacts, check_pause
from agentfootprint.agent._tool_calls import check_decision
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import (
    ConversationMismatchError,
    ResumeDecisionError,
    ResumeIdentityConflictError,
    ResumeRedactionError,
)
from agentfootprint.agent.models import AgentPauseCheckpoint, AgentStamp, ConversationCheckpoint, RunRedaction
from agentfootprint.flow import FlowChart, FlowCheckpoint, InvalidCheckpointError, RedactionPolicy
from agentfootprint.identity import Identity, coerce_identity
from agentfootprint.tools import Tool


def caller(identity: Any) -> Identity | None:
    """The caller's identity, or None when there is none (an identity naming nothing is no identity)."""
    ident = coerce_identity(identity)
    if ident is None or not ident.model_dump(exclude_none=True):
        return None
    return ident


def pattern_ref(pattern: str) -> str:
    """How a checkpoint names a redaction pattern without carrying it."""
    return "sha256:" + hashlib.sha256(pattern.encode("utf-8", "surrogatepass")).hexdigest()


def run_redaction(policy: RedactionPolicy) -> RunRedaction | None:
    """The redaction a pause carries: the run's key names, and a reference to each of its patterns."""
    if policy.empty:
        return None
    return RunRedaction.model_construct(
        keys=sorted(policy.keys), patterns=sorted(pattern_ref(p) for p in policy.patterns)
    )


def resume_policy(config: AgentConfig, carried: RunRedaction | None, given: RedactionPolicy | None) -> RedactionPolicy:
    """The resumed leg's redaction: the agent's, the resume's and the paused run's. A pattern the paused run was
    covered by is never compiled from the checkpoint: the resume must have it (given, or declared on the agent)."""
    base = config.redaction.union(given)
    if carried is None:
        return base
    have = {pattern_ref(p) for p in base.patterns}
    missing = [ref for ref in carried.patterns if ref not in have]
    if missing:
        raise ResumeRedactionError("unknown-pattern", missing=len(missing))
    return base.union(RedactionPolicy(keys=frozenset(carried.keys)))


def stamp(config: AgentConfig) -> AgentStamp | None:
    return AgentStamp.model_construct(id=config.id) if config.id is not None else None


def check_stamp(config: AgentConfig, stored: AgentStamp | None, door: str) -> None:
    """A checkpoint stamped by an agent whose id was chosen is refused by an agent that chose another id."""
    if stored is not None and config.id is not None and stored.id != config.id:
        raise ConversationMismatchError(door, stored_agent_id=stored.id, agent_id=config.id)


def stored_conversation(config: AgentConfig, value: Any, door: str) -> ConversationCheckpoint:
    """A conversation handed back (``continue_from``, ``resume_on_error``), checked before anything runs."""
    conv = load_conversation(value, key=config.checkpoint_key, door=door)
    check_stamp(config, conv.agent, door)
    return conv


@dataclass(frozen=True, slots=True)
class PreparedResume:
    """A pause checkpoint that passed every check, and what the resumed leg runs with."""

    checkpoint: AgentPauseCheckpoint
    flow: FlowCheckpoint
    facts: PauseFacts
    identity: Identity | None
    policy: RedactionPolicy
    digest: str


def prepare_resume(
    config: AgentConfig,
    chart: FlowChart,
    tools: Mapping[str, Tool],
    value: Any,
    answer: Any,
    identity: Any,
    given: RedactionPolicy | None,
    door: str,
) -> PreparedResume:
    """Every check a resume makes, in order, before any model call or tool: the seal (with a key), the shape, the
    engine's record, the turn's consistency, the agent's id, the caller, the redaction, the answer."""
    cp = load_pause_checkpoint(value, key=config.checkpoint_key, door=door)
    try:
        flow = chart.load_checkpoint(cp.flow)
    except InvalidCheckpointError as err:
        raise InvalidCheckpointError(f"{door}: {err}", field=f"flow.{err.field}") from None
    gates = bool(config.hooks.wrap_tool_call)
    facts = check_pause(cp, flow, chart, tools, config.max_iterations, extension_gates=gates)
    check_stamp(config, cp.agent, door)
    paused_for = caller(facts.identity)
    if identity is not None and caller(identity) != paused_for:
        raise ResumeIdentityConflictError(door)
    policy = resume_policy(config, cp.redaction, given)
    try:
        json.dumps(answer)
    except (TypeError, ValueError):
        raise InvalidCheckpointError(
            f"answer must be JSON-serialisable, got {type(answer).__name__}", field="answer"
        ) from None
    if facts.kind == "check_in":
        check_decision(answer, facts.request_id)
        if config.ledger().is_spent(facts.request_id):
            raise ResumeDecisionError("spent", request_id=facts.request_id)
    digest = hashlib.sha256(json.dumps(dict(value), sort_keys=True, default=str).encode()).hexdigest()
    return PreparedResume(checkpoint=cp, flow=flow, facts=facts, identity=paused_for, policy=policy, digest=digest)


__all__ = [
    "PreparedResume",
    "caller",
    "check_stamp",
    "pattern_ref",
    "prepare_resume",
    "resume_policy",
    "run_redaction",
    "stamp",
    "stored_conversation",
]
