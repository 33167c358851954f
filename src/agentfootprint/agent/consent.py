"""Consent: a check-in pause is answered by a decision that names its request, and a request is spent once.

A consent request's id is derived from what the person is asked to allow (the turn, the iteration, the tool call
and its exact arguments), so a decision binds to that call and nothing else. Answered requests are spent in a
``DecisionLedger``: one process-wide by default, pluggable (``Agent.create(decision_ledger=...)``) so a host can
keep it in SQLite (``SQLiteDecisionLedger``), PostgreSQL (``PostgresDecisionLedger``) or its own database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentfootprint.stores.ledger import (
    DecisionLedger,
    InMemoryDecisionLedger,
    PostgresDecisionLedger,
    SQLiteDecisionLedger,
)

APPROVE: Literal["approve"] = "approve"
DECLINE: Literal["decline"] = "decline"


class ConsentDecision(BaseModel):
    """A person's answer to one consent request: ``approve`` runs the paused tool once, ``decline`` never runs it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: Literal["approve", "decline"]
    request_id: str | None = Field(default=None, max_length=200)
    by: str | None = Field(default=None, max_length=200)
    note: str | None = Field(default=None, max_length=2000)

    @property
    def approved(self) -> bool:
        return self.decision == APPROVE


def consent_request_id(turn_id: str, iteration: int, tool_call_id: str, tool_name: str, args: Any) -> str:
    """The id of the request to run ``tool_name`` with exactly ``args`` at this point of this turn."""
    body = json.dumps(
        [turn_id, iteration, tool_call_id, tool_name, args], sort_keys=True, separators=(",", ":"), default=str
    )
    return "req_" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def request_id_of(request: Any) -> str | None:
    """The request id named by ``request``: an id, a paused ``RunResult``, its checkpoint, or an evidence pack."""
    if request is None:
        return None
    if isinstance(request, str):
        return request
    direct = getattr(request, "request_id", None)
    if isinstance(direct, str):
        return direct
    checkpoint = getattr(request, "checkpoint", None)
    if isinstance(checkpoint, Mapping):
        return request_id_of(checkpoint)
    if isinstance(request, Mapping):
        found = request.get("request_id")
        if isinstance(found, str):
            return found
        flow = request.get("flow")
        data = flow.get("pause_data") if isinstance(flow, Mapping) else None
        found = data.get("request_id") if isinstance(data, Mapping) else None
        return found if isinstance(found, str) else None
    return None


def _decision(kind: Literal["approve", "decline"], request: Any, by: str | None, note: str | None) -> dict[str, Any]:
    decision = ConsentDecision.model_construct(decision=kind, request_id=request_id_of(request), by=by, note=note)
    return decision.model_dump(mode="json")


def check_in_approved(request: Any = None, *, by: str | None = None) -> dict[str, Any]:
    """Consent that runs the paused tool exactly once: ``resume(checkpoint, check_in_approved(paused, by="ann"))``.

    ``request`` names what is approved: the paused ``RunResult``, its checkpoint, the evidence pack or the id."""
    return _decision(APPROVE, request, by, None)


def check_in_declined(request: Any = None, *, by: str | None = None, note: str | None = None) -> dict[str, Any]:
    """Consent refused: the tool never runs and the model sees ``note`` as the result."""
    return _decision(DECLINE, request, by, note)


def read_decision(answer: Any) -> ConsentDecision | None:
    """``answer`` as a decision, or None when it is not one (a bare "yes", a bool, a dict of something else)."""
    if isinstance(answer, ConsentDecision):
        return answer
    if not isinstance(answer, Mapping) or "decision" not in answer:
        return None
    try:
        return ConsentDecision.model_validate(dict(answer))
    except ValidationError:
        return None


_PROCESS_LEDGER = InMemoryDecisionLedger()


def process_decision_ledger() -> InMemoryDecisionLedger:
    """The ledger every agent that names none spends its consent requests in."""
    return _PROCESS_LEDGER


__all__ = [
    "APPROVE",
    "DECLINE",
    "ConsentDecision",
    "DecisionLedger",
    "InMemoryDecisionLedger",
    "PostgresDecisionLedger",
    "SQLiteDecisionLedger",
    "check_in_approved",
    "check_in_declined",
    "consent_request_id",
    "process_decision_ledger",
    "read_decision",
    "request_id_of",
]
