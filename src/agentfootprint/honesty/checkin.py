"""Check-in with receipts: the evidence pack a person sees before consenting to a tool call (no model call)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentfootprint._text import one_line
from agentfootprint.agent.consent import APPROVE, DECLINE, check_in_approved, check_in_declined
from agentfootprint.explain.backtrack import BacktrackError, backtrack
from agentfootprint.explain.scoring import LexicalScorer, Scorer
from agentfootprint.flow import FlowResult, FlowSnapshot

PACK_FORMAT: Literal["agentfootprint.check_in"] = "agentfootprint.check_in"
_MAX_READ = 50
_MAX_DRIVERS = 5
_MAX_TRAIL = 50
_EXCERPT = 160
DRIVERS_NOTE = "Drivers are ranked by text overlap with the call (lexical proxy, no model call); not a causal claim."
MINIMAL_NOTE = "Minimal evidence: only what the tool will do (what the run read and what drove the call were not kept)."
Evidence = Literal["standard", "minimal"]
EVIDENCE_PRESETS: tuple[str, ...] = ("standard", "minimal")


class ReadItem(BaseModel):
    """One piece of context the run had consumed when it asked."""

    kind: str
    id: str
    slot: str
    excerpt: str


class Driver(BaseModel):
    """Context that most plausibly drove this call, by lexical overlap with the call's name and arguments."""

    kind: str
    id: str
    score: float
    rank: int
    excerpt: str


class TrailStep(BaseModel):
    """One step of what the run did before asking, in order."""

    iteration: int | None = None
    what: str


class CheckInPack(BaseModel):
    """What the tool will do, what the run read, which context drove the call, and the trail that led here."""

    format: Literal["agentfootprint.check_in"] = PACK_FORMAT
    version: Literal[1] = 1
    tool_name: str
    tool_call_id: str
    request_id: str | None = None
    """The consent request this pack is for (name it in the decision: ``check_in_approved(pack, by=...)``)."""
    args: dict[str, Any] = Field(default_factory=dict)
    will_do: str
    read: list[ReadItem] = Field(default_factory=list)
    drivers: list[Driver] = Field(default_factory=list)
    trail: list[TrailStep] = Field(default_factory=list)
    asked_at: str | None = None
    decided_at: str | None = None
    evidence: Evidence = "standard"
    """``standard`` fills ``read``, ``drivers`` and ``trail``; ``minimal`` only ``will_do``."""
    scorer: str = "lexical"
    note: str = DRIVERS_NOTE


def _args_summary(args: Mapping[str, Any]) -> str:
    parts = []
    for key, value in list(args.items())[:20]:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}={one_line(shown, 60)}")
    return ", ".join(parts) if parts else "no arguments"


def _paused_commit(snapshot: FlowSnapshot) -> Any:
    return next((c for c in reversed(snapshot.commit_log) if c.paused), None)


def _call_args(snapshot: FlowSnapshot, paused: Any, tool_call_id: str) -> dict[str, Any]:
    idx = paused.reads.get("last_response") if paused is not None else None
    if idx is None:
        return {}
    response = snapshot.value_at("last_response", idx, paused.namespace, default={}) or {}
    for call in response.get("tool_calls") or ():
        if isinstance(call, Mapping) and call.get("id") == tool_call_id:
            args = call.get("args")
            return dict(args) if isinstance(args, Mapping) else {}
    return {}


def _description(snapshot: FlowSnapshot, tool_name: str) -> str:
    for spec in snapshot.state.get("tool_specs") or ():
        if isinstance(spec, Mapping) and spec.get("name") == tool_name:
            return str(spec.get("description") or "")
    return ""


def _trail(snapshot: FlowSnapshot, tool_name: str, args: Mapping[str, Any], asked_at: str | None) -> list[TrailStep]:
    steps = [TrailStep(iteration=0, what=f"asked: {one_line(str(snapshot.state.get('user_message', '')), 120)}")]
    for record in snapshot.state.get("tool_results") or ():
        if not isinstance(record, Mapping):
            continue
        args_text = _args_summary(record.get("args") or {})
        outcome = "error" if record.get("is_error") else "ok"
        if record.get("check_in"):
            outcome += f", check-in {record.get('check_in')}"
        steps.append(
            TrailStep(
                iteration=record.get("iteration"),
                what=f"ran {record.get('name')}({args_text}) → {outcome}: {one_line(record.get('content', ''), 80)}",
            )
        )
    where = f" at {asked_at}" if asked_at else ""
    steps.append(TrailStep(iteration=snapshot.state.get("iteration"), what=f"paused{where} to ask before {tool_name}"))
    steps.append(TrailStep(iteration=None, what=f"pending: {tool_name}({_args_summary(args)})"))
    return steps[-_MAX_TRAIL:]


def build_check_in_pack(
    snapshot: FlowSnapshot,
    tool_name: str,
    tool_call_id: str,
    *,
    evidence: Evidence = "standard",
    scorer: Scorer | None = None,
) -> CheckInPack:
    """The pack for a paused check-in, from the served (redacted) record only: nothing here calls a model.

    ``evidence="minimal"`` keeps only what the tool will do; ``scorer`` ranks the drivers (default: lexical)."""
    paused = _paused_commit(snapshot)
    asked_at = paused.runtime_stage_id if paused is not None else None
    args = _call_args(snapshot, paused, tool_call_id)
    description = _description(snapshot, tool_name)
    will_do = f"Run tool '{tool_name}' with {_args_summary(args)}"
    if description:
        will_do += f" — {one_line(description, 160)}"
    ranker: Scorer = scorer if scorer is not None else LexicalScorer()
    if evidence == "minimal":
        return CheckInPack(
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            args=args,
            will_do=will_do,
            asked_at=asked_at,
            evidence="minimal",
            scorer=ranker.name,
            note=MINIMAL_NOTE,
        )
    read: list[ReadItem] = []
    drivers: list[Driver] = []
    decided_at: str | None = None
    try:
        bt = backtrack(snapshot, at=asked_at) if asked_at else backtrack(snapshot)
    except BacktrackError:
        bt = None
    if bt is not None:
        decided_at = bt.trigger
        consumed = [
            s for s in bt.sources if s.slot != "tools" and not (s.kind == "message" and s.id.startswith("assistant"))
        ]
        read = [
            ReadItem(kind=s.kind, id=s.id, slot=s.slot, excerpt=one_line(s.text, _EXCERPT))
            for s in consumed[:_MAX_READ]
        ]
        call_text = " ".join([tool_name.replace("_", " "), *(str(v) for v in args.values())])
        response_text = ""
        if paused is not None and paused.reads.get("last_response") is not None:
            response = snapshot.value_at("last_response", paused.reads["last_response"], paused.namespace) or {}
            response_text = str(response.get("content") or "")
        scored = [(s, float(ranker.score(s.text, f"{call_text} {response_text}"))) for s in consumed]
        scored = [p for p in scored if p[1] > 0]
        scored.sort(key=lambda p: (-p[1], p[0].position))
        drivers = [
            Driver(kind=s.kind, id=s.id, score=score, rank=i + 1, excerpt=one_line(s.text, _EXCERPT))
            for i, (s, score) in enumerate(scored[:_MAX_DRIVERS])
        ]
    return CheckInPack(
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        args=args,
        will_do=will_do,
        read=read,
        drivers=drivers,
        trail=_trail(snapshot, tool_name, args, asked_at),
        asked_at=asked_at,
        decided_at=decided_at,
        scorer=ranker.name,
        note=DRIVERS_NOTE if ranker.name == "lexical" else _scored_note(ranker.name),
    )


def _scored_note(name: str) -> str:
    return f"Drivers are ranked by the {one_line(name, 40)} scorer against the call (a proxy); not a causal claim."


def attach_check_in_pack(
    flow: FlowResult, *, evidence: Evidence = "standard", scorer: Scorer | None = None
) -> CheckInPack | None:
    """On a check-in pause, put the pack into the pause data (served and checkpoint); returns it, else None."""
    data = flow.pause_data if isinstance(flow.pause_data, dict) else None
    if not flow.paused or data is None or data.get("kind") != "check_in":
        return None
    tool_name, call_id = str(data.get("tool_name", "")), str(data.get("tool_call_id", ""))
    pack = build_check_in_pack(flow.snapshot, tool_name, call_id, evidence=evidence, scorer=scorer)
    request_id = data.get("request_id")
    if isinstance(request_id, str):
        pack = pack.model_copy(update={"request_id": request_id})
    dumped = pack.model_dump(mode="json")
    data["evidence"] = dumped
    if flow.checkpoint is not None and isinstance(flow.checkpoint.get("pause_data"), dict):
        flow.checkpoint["pause_data"]["evidence"] = json.loads(json.dumps(dumped))
    return pack


def check_in_pack_of(checkpoint: Mapping[str, Any]) -> CheckInPack | None:
    """The evidence pack inside a paused run's checkpoint (agent or flow shape), or None when it has none."""
    flow = checkpoint.get("flow") if isinstance(checkpoint.get("flow"), Mapping) else checkpoint
    data = flow.get("pause_data") if isinstance(flow, Mapping) else None
    raw = data.get("evidence") if isinstance(data, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    try:
        return CheckInPack.model_validate(dict(raw))
    except ValidationError:
        return None


__all__ = [
    "APPROVE",
    "DECLINE",
    "EVIDENCE_PRESETS",
    "CheckInPack",
    "Driver",
    "ReadItem",
    "TrailStep",
    "attach_check_in_pack",
    "build_check_in_pack",
    "check_in_approved",
    "check_in_declined",
    "check_in_pack_of",
]
