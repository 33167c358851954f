"""``decide`` (first match) and ``select`` (all matches) with per-condition evidence, nothing short-circuited."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint._text import summarize_value
from agentfootprint.flow._trusted import shape
from agentfootprint.flow.redaction import REDACTED

if TYPE_CHECKING:
    from agentfootprint.flow.scope import Scope

OPS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in")
_MAX_IN_ITEMS = 1000
_MISSING = object()


class ConditionEvidence(BaseModel):
    """One ``key op threshold`` check and its outcome."""

    key: str
    op: str
    threshold: Any = None
    actual: str
    result: bool
    redacted: bool = False


class RuleEvidence(BaseModel):
    """How one rule evaluated: its conditions (filter) or the keys it read (callable)."""

    index: int
    type: str
    branch: str
    label: str
    matched: bool
    conditions: list[ConditionEvidence] = Field(default_factory=list)
    inputs: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None


class DecisionEvidence(BaseModel):
    """Every rule's evaluation and what was chosen; ``default_used`` when no rule matched."""

    kind: str
    rules: list[RuleEvidence]
    chosen: list[str]
    default: str | None = None
    default_used: bool = False


class DecisionResult(BaseModel):
    """What a decider/selector stage returns: the chosen branch id(s) plus the evidence."""

    model_config = ConfigDict(frozen=True)

    branches: tuple[str, ...]
    evidence: DecisionEvidence

    @property
    def branch(self) -> str | None:
        return self.branches[0] if self.branches else None


_CONDITION_FIELDS = ("key", "op", "threshold", "actual", "result", "redacted")
_RULE_FIELDS = ("index", "type", "branch", "label", "matched")
_EVIDENCE_FIELDS = ("kind", "rules", "chosen", "default", "default_used")
_RESULT_FIELDS = ("branches", "evidence")
"""The fields each evidence record is given, in the order it is given them (built directly: already valid)."""
_build_condition = shape(ConditionEvidence, _CONDITION_FIELDS)
_build_rule = shape(RuleEvidence, _RULE_FIELDS)
_build_evidence = shape(DecisionEvidence, _EVIDENCE_FIELDS)
_build_result = shape(DecisionResult, _RESULT_FIELDS)


def _compare(op: str, actual: Any, threshold: Any) -> bool:
    if op == "eq":
        return _eq_fix(actual, threshold)
    if op == "ne":
        return not _eq_fix(actual, threshold)
    if op == "gt":
        return bool(actual > threshold)
    if op == "gte":
        return bool(actual >= threshold)
    if op == "lt":
        return bool(actual < threshold)
    if op == "lte":
        return bool(actual <= threshold)
    if op in ("in", "not_in"):
        if not isinstance(threshold, list | tuple | set | frozenset):
            found = False
        else:
            if len(threshold) > _MAX_IN_ITEMS:
                raise ValueError(f"'{op}' list has more than {_MAX_IN_ITEMS} items")
            found = any(_eq_fix(actual, t) for t in threshold)
        return found if op == "in" else not found
    raise ValueError(f"unknown operator '{op[:40]}'")


def _eq_fix(actual: Any, threshold: Any) -> bool:
    if isinstance(actual, bool) or isinstance(threshold, bool):
        return type(actual) is type(threshold) and actual == threshold
    try:
        return bool(actual == threshold)
    except Exception:
        return False


def _safe_threshold(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value if not isinstance(value, str) else value[:200]
    if isinstance(value, list | tuple):
        return [_safe_threshold(v) for v in list(value)[:50]]
    return summarize_value(value)


_UNSHOWN = object()
"""A check's shown threshold not worked out yet: ``_safe_threshold`` of it, unless the key is redacted."""


def _key_conditions(
    scope: Scope, key: str, checks: Iterable[tuple[str, Any, Any]]
) -> tuple[list[dict[str, Any]], bool, str | None]:
    """One filter key's ``(op, threshold, shown threshold)`` checks against the scope: each condition's evidence JSON,
    whether all held, and the last error a check raised (recorded, never propagated)."""
    actual = scope.get(key, _MISSING)
    redacted = scope._is_redacted(key)
    shown = "undefined" if actual is _MISSING else (REDACTED if redacted else summarize_value(actual))
    conditions: list[dict[str, Any]] = []
    all_true = True
    error: str | None = None
    for op, threshold, shown_threshold in checks:
        try:
            if op not in OPS:
                raise ValueError(f"unknown operator '{op[:40]}'")
            ok = False if actual is _MISSING else _compare(op, actual, threshold)
        except Exception as exc:  # a rule that raises is recorded, never propagated
            ok = False
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
        if redacted:
            shown_threshold = REDACTED
        elif shown_threshold is _UNSHOWN:
            shown_threshold = _safe_threshold(threshold)
        conditions.append(
            {"key": key, "op": op, "threshold": shown_threshold, "actual": shown, "result": ok, "redacted": redacted}
        )
        all_true = all_true and ok
    return conditions, all_true, error


def _eval_filter(scope: Scope, when: Mapping[Any, Any], ev: RuleEvidence) -> bool:
    if not when:
        ev.error = "empty filter never matches"
        return False
    all_true = True
    for key, ops in when.items():
        if not isinstance(key, str):
            ev.error = f"filter key must be a string, got {type(key).__name__}"
            all_true = False
            continue
        if not isinstance(ops, Mapping) or not ops:
            ev.error = f"filter for '{key[:80]}' must be a non-empty dict of operators"
            all_true = False
            continue
        conditions, ok, error = _key_conditions(scope, key, ((str(op), t, _UNSHOWN) for op, t in ops.items()))
        # every value already valid (the read refused any key that is not exactly a str): built directly
        ev.conditions.extend(_build_condition(c) for c in conditions)
        if error is not None:
            ev.error = error
        all_true = all_true and ok
    return all_true and ev.error is None


def _eval_rule(scope: Scope, index: int, rule: Mapping[str, Any]) -> RuleEvidence:
    branch = rule.get("then")
    label = str(rule.get("label") or f"Rule {index}")
    when = rule.get("when")
    ev = _build_rule(
        {
            "index": index,
            "type": "function" if callable(when) else "filter",
            "branch": str(branch) if branch is not None else "",
            "label": label,
            "matched": False,
            "conditions": [],
            "inputs": [],
            "error": None,
        }
    )
    if not isinstance(branch, str) or not branch:
        ev.error = "rule has no 'then' branch id"
        return ev
    if callable(when):
        captured: list[str] = []
        try:
            with scope._capture_reads(captured):
                ev.matched = bool(when(scope))
        except Exception as exc:
            ev.matched = False
            ev.error = f"{type(exc).__name__}: {str(exc)[:200]}"
        for key in dict.fromkeys(captured):
            redacted = scope._is_redacted(key)
            value = scope.get(key, _MISSING)
            ev.inputs.append(
                {
                    "key": key,
                    "value": "undefined" if value is _MISSING else (REDACTED if redacted else summarize_value(value)),
                    "redacted": redacted,
                }
            )
        return ev
    if isinstance(when, Mapping):
        ev.matched = _eval_filter(scope, when, ev)
        return ev
    ev.error = "rule 'when' must be a filter dict or a callable"
    return ev


def _check_rules(rules: Any) -> Sequence[Mapping[str, Any]]:
    if not isinstance(rules, list | tuple):
        raise TypeError(f"rules must be a list of dicts, got {type(rules).__name__}")
    for i, r in enumerate(rules):
        if not isinstance(r, Mapping):
            raise TypeError(f"rule {i} must be a dict with 'when' and 'then', got {type(r).__name__}")
    return rules


def decide(scope: Scope, rules: Sequence[Mapping[str, Any]], default: str | None = None) -> DecisionResult:
    """Evaluate every rule (evidence for all), choose the first that matched, else ``default``."""
    evidence = [_eval_rule(scope, i, r) for i, r in enumerate(_check_rules(rules))]
    chosen = next((e.branch for e in evidence if e.matched), None)
    default_used = chosen is None
    if chosen is None:
        chosen = default
    if default is not None and type(default) is not str:  # pydantic decides what becomes of it, as before
        return DecisionResult(
            branches=(chosen,) if chosen is not None else (),
            evidence=DecisionEvidence(
                kind="decide",
                rules=evidence,
                chosen=[chosen] if chosen else [],
                default=default,
                default_used=default_used and default is not None,
            ),
        )
    used = default_used and default is not None
    data: dict[str, Any] = {"kind": "decide", "rules": evidence, "chosen": [chosen] if chosen else []}
    data.update(default=default, default_used=used)
    found = _build_evidence(data)
    return _build_result({"branches": (chosen,) if chosen is not None else (), "evidence": found})


_PLANNED_THRESHOLD = frozenset({int, str, bool, type(None)})
"""Threshold types a plan takes: each one's evidence form (``_safe_threshold``) is itself JSON, as dumped."""


class PlannedDecision:
    """What a :class:`DecisionPlan` returns: the chosen branch and the evidence as the JSON ``DecisionResult``'s
    evidence dumps to (what a decider's commit records); the evidence models are built only when read."""

    __slots__ = ("_chosen", "_default", "_default_used", "_rules", "branches")

    def __init__(self, branches: tuple[str, ...], rules: list[dict[str, Any]], default: str | None, used: bool):
        self.branches = branches
        self._rules = rules
        self._chosen = [branches[0]] if branches and branches[0] else []
        self._default = default
        self._default_used = used

    @property
    def branch(self) -> str | None:
        return self.branches[0] if self.branches else None

    def evidence_json(self) -> dict[str, Any]:
        """``decide(...).evidence.model_dump(mode="json")``: a fresh top level over the rules' JSON."""
        return {
            "kind": "decide",
            "rules": self._rules,
            "chosen": list(self._chosen),
            "default": self._default,
            "default_used": self._default_used,
        }

    @property
    def evidence(self) -> DecisionEvidence:
        """The evidence models ``decide`` builds (equal field for field and in fields-set)."""
        rules: list[RuleEvidence] = []
        for r in self._rules:
            rule = _build_rule({**r, "conditions": [_build_condition(dict(c)) for c in r["conditions"]], "inputs": []})
            if r["error"] is not None:  # ``decide`` assigns it, and pydantic counts an assigned field as set
                rule.__pydantic_fields_set__.add("error")
            rules.append(rule)
        data: dict[str, Any] = {"kind": "decide", "rules": rules, "chosen": list(self._chosen)}
        data.update(default=self._default, default_used=self._default_used)
        return _build_evidence(data)


class DecisionPlan:
    """``decide(scope, rules, default)`` for filter rules fixed when the chart is built: every rule's shape is
    checked once, so a call only reads, compares and writes the evidence JSON (``plan`` says which rules qualify)."""

    __slots__ = ("_default", "_rules")

    def __init__(self, rules: list[tuple[str, str, list[tuple[str, list[tuple[str, Any, Any]]]]]], default: str | None):
        self._rules = rules
        self._default = default

    @staticmethod
    def plan(rules: Sequence[Mapping[str, Any]], default: str | None = None) -> DecisionPlan | None:
        """A plan of ``rules`` (copied now: later edits to them are not seen), or None when a rule is not a plain
        filter (a callable, an unknown operator, a threshold other than int/str/bool/None, no branch)."""
        if default is not None and type(default) is not str:
            return None
        planned: list[tuple[str, str, list[tuple[str, list[tuple[str, Any, Any]]]]]] = []
        for index, rule in enumerate(_check_rules(rules)):
            branch, when = rule.get("then"), rule.get("when")
            if type(branch) is not str or not branch or not isinstance(when, Mapping) or not when:
                return None
            keys: list[tuple[str, list[tuple[str, Any, Any]]]] = []
            for key, ops in when.items():
                if type(key) is not str or not isinstance(ops, Mapping) or not ops:
                    return None
                checks: list[tuple[str, Any, Any]] = []
                for op, threshold in ops.items():
                    if type(op) is not str or op not in OPS or type(threshold) not in _PLANNED_THRESHOLD:
                        return None
                    checks.append((op, threshold, _safe_threshold(threshold)))
                keys.append((key, checks))
            planned.append((branch, str(rule.get("label") or f"Rule {index}"), keys))
        return DecisionPlan(planned, default)

    def __call__(self, scope: Scope) -> PlannedDecision:
        """Evaluate every rule (evidence for all, the same reads in the same order), choose the first match."""
        rules: list[dict[str, Any]] = []
        chosen: str | None = None
        for index, (branch, label, keys) in enumerate(self._rules):
            error: str | None = None
            all_true = True
            conditions: list[dict[str, Any]] = []
            for key, checks in keys:
                found, ok, failed = _key_conditions(scope, key, checks)
                conditions.extend(found)
                if failed is not None:
                    error = failed
                all_true = all_true and ok
            matched = all_true and error is None
            if matched and chosen is None:
                chosen = branch
            rules.append(
                {
                    "index": index,
                    "type": "filter",
                    "branch": branch,
                    "label": label,
                    "matched": matched,
                    "conditions": conditions,
                    "inputs": [],
                    "error": error,
                }
            )
        default = self._default
        used = chosen is None and default is not None
        if chosen is None:
            chosen = default
        return PlannedDecision((chosen,) if chosen is not None else (), rules, default, used)


def select(scope: Scope, rules: Sequence[Mapping[str, Any]]) -> DecisionResult:
    """Evaluate every rule and choose all that matched (possibly none)."""
    evidence = [_eval_rule(scope, i, r) for i, r in enumerate(_check_rules(rules))]
    chosen = list(dict.fromkeys(e.branch for e in evidence if e.matched))
    return DecisionResult(
        branches=tuple(chosen), evidence=DecisionEvidence(kind="select", rules=evidence, chosen=chosen)
    )


RuleWhen = Mapping[str, Mapping[str, Any]] | Callable[["Scope"], bool]
