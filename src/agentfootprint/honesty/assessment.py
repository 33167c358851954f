"""Assessment: fold a run's committed record into a standing — never from how sure the model sounded."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentfootprint.flow import FlowSnapshot
from agentfootprint.honesty.evidence import verdict_of

Standing = Literal["known", "consistent", "not-sure", "ask", "not-assessed"]
ReasonCode = Literal[
    "unsupported-values", "tool-error-ignored", "stopped-early", "output-contract-unmet", "empty-lookup"
]
_EMPTY_RESULTS = frozenset(
    ["", "[]", "{}", "null", "none", '""', "no results", "not found", "no rows", "0 rows", "no matches"]
)
_ACKNOWLEDGES = re.compile(
    r"\b(error|errors|failed|fail|failure|unable|could not|couldn't|cannot|can't|unavailable|not available|"
    r"did not work|didn't work|went wrong|problem)\b",
    re.IGNORECASE,
)


class AssessmentReason(BaseModel):
    """Why an answer is ``not-sure``: a stable reason code and a plain-words detail."""

    reason: ReasonCode
    detail: str
    tool: str | None = None
    tool_call_id: str | None = None


class Assessment(BaseModel):
    """The standing of one run's answer, folded from its committed record; ``checks`` lists what could be checked."""

    standing: Standing
    reasons: list[AssessmentReason] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)
    run_id: str | None = None
    note: str = ""


def _snapshot(record: Any) -> FlowSnapshot:
    if isinstance(record, FlowSnapshot):
        return record
    inner = getattr(record, "snapshot", None)
    if isinstance(inner, FlowSnapshot):
        return inner
    if isinstance(record, Mapping):
        return FlowSnapshot.model_validate(record.get("snapshot", record))
    raise TypeError(f"assess() takes a FlowSnapshot, a Recording or their JSON, got {type(record).__name__}")


def _empty(content: Any) -> bool:
    return isinstance(content, str) and content.strip().casefold() in _EMPTY_RESULTS


def _contract_unmet(schema: Any, answer: str) -> str | None:
    candidate = answer.strip()
    if candidate.startswith("```"):
        candidate = candidate.strip("`")
        candidate = candidate[candidate.find("{") :] if "{" in candidate else candidate
    try:
        if hasattr(schema, "model_validate_json"):
            schema.model_validate_json(candidate)
        elif isinstance(schema, Mapping):
            from agentfootprint.tools.validation import validate_json

            issues = validate_json(dict(schema), json.loads(candidate))
            if issues:
                return f"{len(issues)} issue(s), first at '{issues[0].path or '(root)'}'"
        return None
    except ValidationError as err:
        errors = err.errors()
        path = ".".join(str(p) for p in errors[0].get("loc", ())) if errors else ""
        path = path or "(root)"
        return f"{len(err.errors())} issue(s), first at '{path}'"
    except (ValueError, TypeError):
        return "the answer is not JSON"


def assess(record: Any, *, output_schema: Any = None) -> Assessment:
    """The standing of a run's answer from its committed record alone: the same recording folds the same way."""
    snap = _snapshot(record)
    state = snap.state
    run_id = snap.run_id
    last = snap.commit_log[-1] if snap.commit_log else None
    if last is not None and last.paused:
        return Assessment(standing="ask", run_id=run_id, note="the run is paused on a question for a person")
    if last is not None and last.failed:
        return Assessment(standing="not-assessed", run_id=run_id, note="the run failed before an answer")
    answered = any(c.namespace == "" and c.applied and "answer" in c.keys_written() for c in snap.commit_log)
    if not answered:
        return Assessment(standing="not-assessed", run_id=run_id, note="no answer was committed")
    verdict = verdict_of(state)
    if verdict is not None and verdict.refused:
        return Assessment(standing="not-assessed", run_id=run_id, note="the answer was refused by the evidence gate")
    answer = str(state.get("answer") or "")
    reasons: list[AssessmentReason] = []
    checks: list[str] = []
    grounded = False
    if verdict is not None:
        checks.append("evidence")
        if verdict.values:
            listed = ", ".join(v.value for v in verdict.values[:10])
            reasons.append(
                AssessmentReason(reason="unsupported-values", detail=f"stated but found in no evidence: {listed}")
            )
        grounded = verdict.checked > 0
    results = [r for r in state.get("tool_results") or () if isinstance(r, Mapping)]
    if results:
        checks.append("tool-results")
    for i, r in enumerate(results):
        name = str(r.get("name"))
        if r.get("is_error"):
            recovered = any(not later.get("is_error") and later.get("name") == name for later in results[i + 1 :])
            if not recovered and r.get("check_in") != "declined" and not _ACKNOWLEDGES.search(answer):
                reasons.append(
                    AssessmentReason(
                        reason="tool-error-ignored",
                        detail=f"{name} returned an error ({r.get('error_code')}) the answer does not mention",
                        tool=name,
                        tool_call_id=r.get("call_id"),
                    )
                )
        elif _empty(r.get("content")):
            reasons.append(
                AssessmentReason(
                    reason="empty-lookup",
                    detail=f"{name} returned nothing; an empty read is not evidence of absence",
                    tool=name,
                    tool_call_id=r.get("call_id"),
                )
            )
    stopped = state.get("stopped_early")
    checks.append("limits")
    if isinstance(stopped, Mapping):
        reasons.append(
            AssessmentReason(
                reason="stopped-early",
                detail=f"stopped by {stopped.get('reason')} at iteration {stopped.get('iteration')}",
            )
        )
    if output_schema is not None:
        checks.append("output-contract")
        problem = _contract_unmet(output_schema, answer)
        if problem is not None:
            reasons.append(AssessmentReason(reason="output-contract-unmet", detail=problem))
    if reasons:
        return Assessment(standing="not-sure", reasons=reasons, checks=checks, run_id=run_id)
    if checks == ["limits"]:
        return Assessment(
            standing="not-assessed", checks=checks, run_id=run_id, note="nothing on the record could be checked"
        )
    if grounded:
        return Assessment(
            standing="known",
            checks=checks,
            run_id=run_id,
            note="every name and number the answer states is on the record (on the record, not proven true)",
        )
    return Assessment(
        standing="consistent", checks=checks, run_id=run_id, note="checks ran and none fired (not verified)"
    )


__all__ = ["Assessment", "AssessmentReason", "ReasonCode", "Standing", "assess"]
