"""What travels with an answer, as the record holds it: findings, coverage, validation, negatives, standing.

The answer-contract options (an extension) write these keys in the run's committed state; the Agent's doors read
them back from the last run as detached copies (a caller may keep or mutate them), None when nothing ran.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import thaw

FINDINGS_KEY = "findings_ledger"
COVERAGE_DECLARED_KEY = "coverage_declared"
ANSWER_COVERAGE_KEY = "answer_coverage"
ANSWER_VALIDATION_KEY = "answer_validation"
ANSWER_NEGATIVES_KEY = "answer_negatives"
ANSWER_STANDING_KEY = "answer_standing"
SCRIPT_KEY = "answer_script"
CLAIM_CHECKS_KEY = "claim_checks"


class CoverageItem(BaseModel):
    """One entry of a coverage list: what, and (for a limit) why."""

    model_config = ConfigDict(extra="forbid")

    what: str
    why: str | None = None


class AssumedValue(BaseModel):
    """A value a tool's rule filled in because the model did not send it (the inputs layer)."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str
    tool_call_id: str
    argument: str
    value: Any = None


class PeriodEntry(BaseModel):
    """The period one call's result declared its read covered."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str
    tool_call_id: str
    queried: list[str]
    held: list[str] | None = None
    read_at: str | None = None


class AnswerCoverage(BaseModel):
    """The limits of a typed answer, folded across the run (duplicates said once, every entry kept)."""

    model_config = ConfigDict(extra="forbid")

    checked: list[CoverageItem] = Field(default_factory=list)
    not_checked: list[CoverageItem] = Field(default_factory=list)
    cannot_cover: list[CoverageItem] = Field(default_factory=list)
    assumed: list[AssumedValue] = Field(default_factory=list)
    periods: list[PeriodEntry] = Field(default_factory=list)


class AnswerCheck(BaseModel):
    """One terminal check's verdict on the answer."""

    model_config = ConfigDict(extra="forbid")

    id: str
    passed: bool
    reason: str | None = None


class AnswerValidationReport(BaseModel):
    """The last run's answer checks; ``blocked`` when the ``block`` posture refused the answer."""

    model_config = ConfigDict(extra="forbid")

    posture: Literal["flag", "block"]
    checks: list[AnswerCheck]
    passed: bool
    blocked: bool = False


class NegativeStatement(BaseModel):
    """A negative statement the library composed from a tool's ``absent()``, with the limits it was recorded with."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str
    tool_call_id: str
    what: str
    statement: str
    checked: list[CoverageItem] = Field(default_factory=list)
    not_checked: list[CoverageItem] = Field(default_factory=list)
    cannot_cover: list[CoverageItem] = Field(default_factory=list)
    try_instead: str | None = None


class AnswerNegatives(BaseModel):
    """Every negative statement of the last run (``.negative_claims()``)."""

    model_config = ConfigDict(extra="forbid")

    statements: list[NegativeStatement]


class AnswerStanding(BaseModel):
    """How far the answer stands, folded from its record (``.answer_layer()``): never from how sure it sounded."""

    model_config = ConfigDict(extra="forbid")

    standing: Literal["known", "consistent", "not-sure", "not-assessed"]
    reasons: list[str] = Field(default_factory=list)


class AnswerValidationError(AgentFootprintError, ValueError):
    """The ``block`` posture refused an answer that failed a check; ``answer_validation()`` reads the report."""

    code = "ERR_ANSWER_VALIDATION"

    def __init__(self, failed: list[str]) -> None:
        super().__init__(f"the answer failed {len(failed)} check(s): {', '.join(f[:80] for f in failed[:20])}")
        self.failed = failed


def _value(state: Mapping[str, Any] | None, key: str) -> Any:
    value = (state or {}).get(key)
    return copy.deepcopy(thaw(value)) if value is not None else None


def findings_of(state: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    rows = _value(state, FINDINGS_KEY)
    return list(rows) if rows else None


def coverage_of(state: Mapping[str, Any] | None) -> AnswerCoverage | None:
    value = _value(state, ANSWER_COVERAGE_KEY)
    return AnswerCoverage.model_validate(value) if isinstance(value, Mapping) else None


def validation_of(state: Mapping[str, Any] | None) -> AnswerValidationReport | None:
    value = _value(state, ANSWER_VALIDATION_KEY)
    return AnswerValidationReport.model_validate(value) if isinstance(value, Mapping) else None


def negatives_of(state: Mapping[str, Any] | None) -> AnswerNegatives | None:
    value = _value(state, ANSWER_NEGATIVES_KEY)
    return AnswerNegatives.model_validate(value) if isinstance(value, Mapping) else None


def claims_of(state: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    rows = _value(state, CLAIM_CHECKS_KEY)
    return list(rows) if rows else None


def script_of(state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    value = _value(state, SCRIPT_KEY)
    return dict(value) if isinstance(value, Mapping) else None


def standing_of(state: Mapping[str, Any] | None) -> AnswerStanding | None:
    value = _value(state, ANSWER_STANDING_KEY)
    return AnswerStanding.model_validate(value) if isinstance(value, Mapping) else None


__all__ = [
    "ANSWER_COVERAGE_KEY",
    "ANSWER_NEGATIVES_KEY",
    "ANSWER_STANDING_KEY",
    "ANSWER_VALIDATION_KEY",
    "CLAIM_CHECKS_KEY",
    "COVERAGE_DECLARED_KEY",
    "FINDINGS_KEY",
    "SCRIPT_KEY",
    "AnswerCheck",
    "AnswerCoverage",
    "AnswerNegatives",
    "AnswerStanding",
    "AnswerValidationError",
    "AnswerValidationReport",
    "AssumedValue",
    "CoverageItem",
    "NegativeStatement",
    "PeriodEntry",
    "claims_of",
    "coverage_of",
    "findings_of",
    "negatives_of",
    "script_of",
    "standing_of",
    "validation_of",
]
