"""Context integrity: deterministic checks where a run can contradict itself, and proof that they ran.

``AgentBuilder.integrity(integrity_posture=, notice_empty_lookups=, notice_prior_turn_evidence=,
check_column_types=, external_grounds=)``. Checks never block: a defect is an ``integrity.context_error`` event and
a row under ``integrity_findings``. Every leg of a run (``run`` and ``resume``) files ONE
``agentfootprint.integrity.disposition`` event (when listened to; it never throws) with one row per check:
``checked``, ``findings``, ``not_applicable``. A check whose option is off files a ``not-armed`` row rather than
nothing. ``.invariants({...})`` are checked where a composition mounts the agent (``agent._invariants``).
``integrity_posture="dev"`` adds a run-start canary (each armed check must catch its own synthetic defect)
and fails a finished run whose armed checks demonstrably never ran with ``CheckerDeadError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentfootprint.agent import CallModel, CallTool, Extension, RunContext, RunOutcome, ToolCallRequest
from agentfootprint.agent._invariants import Invariant, check_mount, declared_invariants
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import IntegrityContextError, IntegrityDisposition
from agentfootprint.extensions._ledger import file_row
from agentfootprint.providers import LLMRequest, LLMResponse
from agentfootprint.tools import ToolOutcome

__all__ = [
    "FINDINGS_KEY",
    "CheckerDeadError",
    "Integrity",
    "column_type_conflicts",
    "dangling_references",
    "declared_maps",
    "is_empty_lookup",
    "numbers_in",
    "unmapped_tools",
    "unsupported_values",
]

FINDINGS_KEY = "integrity_findings"
LEDGER_KEY = "integrity_ledger"
"""Recorded in the final stage (text): the checks the ledger declares, a line per check, the invariants it declares."""
_EMPTY = {"", "[]", "{}", "null", '""', "none"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
_QUOTED = re.compile(r'"([^"\n]{1,200})"')
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)(?!\.\d)")


class CheckerDeadError(AgentFootprintError, RuntimeError):
    """Dev posture: an armed integrity check missed its canary, or never ran on a run that had work for it."""

    code = "ERR_CHECKER_DEAD"

    def __init__(self, check: str, why: str) -> None:
        super().__init__(f"integrity check '{check}' is dead: {why}")
        self.check = check


def declared_maps(spec: Any) -> dict[str, dict[str, tuple[str, ...]]]:
    """``{conclusion: {"from": [tool, ...], "says": [phrase, ...]}}`` checked and frozen (what may be concluded
    from what: a conclusion the answer draws, by one of its phrases, needs a result of each of its tools)."""
    bad = 'maps() takes {conclusion: {"from": [tool names], "says": [phrases]}}'
    if not isinstance(spec, Mapping) or not spec or len(spec) > 200:
        raise ValueError(bad)
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for conclusion, entry in spec.items():
        if not isinstance(conclusion, str) or not _NAME.match(conclusion) or not isinstance(entry, Mapping):
            raise ValueError(bad)
        if set(entry) != {"from", "says"}:
            raise ValueError(bad)
        sources, says = entry["from"], entry["says"]
        for value in (sources, says):
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise ValueError(bad)
        sources, says = tuple(sources), tuple(says)
        if not sources or not says or len(sources) > 64 or len(says) > 64:
            raise ValueError(bad)
        if not all(isinstance(t, str) and _NAME.match(t) for t in sources):
            raise ValueError(bad)
        if not all(isinstance(p, str) and 0 < len(p.strip()) <= 200 for p in says):
            raise ValueError(bad)
        out[conclusion] = {"from": sources, "says": says}
    return out


def dangling_references(
    args: Mapping[str, Any], declared: Mapping[str, tuple[str, ...]], history: Iterable[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """``(argument, why)`` for each declared argument whose value no result of its source tools holds."""
    found = []
    messages = [m for m in history if m.get("role") == "tool"]
    for arg, sources in declared.items():
        if arg not in args:
            continue
        evidence = [str(m.get("content") or "") for m in messages if m.get("tool_name") in sources]
        value = args[arg]
        text = value if isinstance(value, str) else json.dumps(value)
        if not evidence:
            found.append((arg, "the evidence its arguments depend on was never given"))
        elif not any(text in e for e in evidence):
            found.append((arg, "an argument's value is in none of the results it depends on"))
    return found


def unsupported_values(claim: str, evidence: str) -> list[str]:
    """The numbers and quoted names of ``claim`` that ``evidence`` does not hold."""
    loose = sorted(numbers_in(claim) - numbers_in(evidence))
    return loose + [q for q in _QUOTED.findall(claim) if q not in evidence]


def unmapped_tools(sources: Iterable[str], settled: set[str]) -> list[str]:
    """The tools a conclusion is mapped from that produced no result."""
    return [t for t in sources if t not in settled]


def is_empty_lookup(content: str) -> bool:
    """A result that says nothing: empty, ``[]``, ``{}``, ``null``."""
    return content.strip().lower() in _EMPTY


def numbers_in(text: str) -> set[str]:
    """The numbers written in ``text`` (as written)."""
    return set(_NUMBER.findall(text or ""))


def column_type_conflicts(content: str) -> list[str]:
    """Columns of a JSON list of objects whose values have more than one JSON type (nulls aside)."""
    try:
        rows = json.loads(content)
    except ValueError:
        return []
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return []
    kinds: dict[str, set[str]] = {}
    for row in rows:
        for key, value in row.items():
            if value is not None:
                kind = (
                    "number" if isinstance(value, int | float) and not isinstance(value, bool) else type(value).__name__
                )
                kinds.setdefault(str(key), set()).add(kind)
    return sorted(k for k, v in kinds.items() if len(v) > 1)


@dataclass
class _Row:
    check: str
    seam: str
    armed: bool
    checked: int = 0
    findings: int = 0
    not_applicable: int = 0

    @property
    def disposition(self) -> str:
        """``not-armed``, ``ran`` (it checked something), ``not-applicable`` (all it saw was out of scope), ``idle``."""
        if not self.armed:
            return "not-armed"
        return "ran" if self.checked else ("not-applicable" if self.not_applicable else "idle")

    def as_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "seam": self.seam,
            "armed": self.armed,
            "checked": self.checked,
            "findings": self.findings,
            "not_applicable": self.not_applicable,
            "disposition": self.disposition,
        }


class Integrity(Extension):
    """The integrity checks and their per-run disposition ledger."""

    name = "integrity"

    def __init__(
        self,
        *,
        integrity_posture: Literal["observe", "dev"] = "observe",
        notice_empty_lookups: bool = False,
        notice_prior_turn_evidence: bool = False,
        check_column_types: Literal["off", "warn"] = "off",
        external_grounds: Iterable[str] | None = None,
        claims: Callable[[str], Iterable[str]] | None = None,
        maps: Mapping[str, Any] | None = None,
        invariants: Mapping[str, Invariant] | None = None,
    ) -> None:
        if claims is not None and not callable(claims):
            raise ValueError("claims must be a function of the answer returning its claims")
        if integrity_posture not in ("observe", "dev"):
            raise ValueError("integrity_posture must be 'observe' or 'dev'")
        if check_column_types not in ("off", "warn"):
            raise ValueError("check_column_types must be 'off' or 'warn'")
        self.posture = integrity_posture
        self.notice_empty = bool(notice_empty_lookups)
        self.notice_prior = bool(notice_prior_turn_evidence)
        self.columns = check_column_types == "warn"
        self.grounds = None if external_grounds is None else [str(g) for g in external_grounds]
        self.claims = claims
        self.maps = None if maps is None else declared_maps(maps)
        self.invariants = None if invariants is None else declared_invariants(invariants)
        self.implicit = False
        """True when ``.claims(fn)`` made this ledger (a later ``.integrity()`` takes its place and the seam)."""

    def _rows(self, ctx: RunContext) -> dict[str, _Row]:
        rows: dict[str, _Row] | None = ctx.state.get("rows")
        if rows is None:
            rows = {
                "offered-tool": _Row("offered-tool", "wire", True),
                "dangling-reference": _Row(
                    "dangling-reference", "tool", any(t.arguments_from for t in ctx.config.tools)
                ),
                "empty-lookup": _Row("empty-lookup", "write", self.notice_empty),
                "column-types": _Row("column-types", "write", self.columns),
                "prior-turn-evidence": _Row("prior-turn-evidence", "claim", self.notice_prior),
                "external-grounds": _Row("external-grounds", "claim", self.grounds is not None),
                "unsupported-claim": _Row("unsupported-claim", "claim", self.claims is not None),
                "unmapped-conclusion": _Row("unmapped-conclusion", "claim", self.maps is not None),
                # checked where a composition mounts the agent (agent._invariants); never by the agent itself
                "invariants": _Row(
                    "invariants", "mount", bool(self.invariants), not_applicable=int(bool(self.invariants))
                ),
            }
            ctx.state["rows"] = rows
        return rows

    def _find(self, ctx: RunContext, check: str, message: str, **facts: Any) -> None:
        row = self._rows(ctx)[check]
        row.findings += 1
        finding = {"kind": check, "seam": row.seam, "iteration": ctx.iteration, "message": message[:300], **facts}
        file_row(ctx, FINDINGS_KEY, finding, IntegrityContextError)

    # -- run boundaries -------------------------------------------------------------------------------------------
    async def before_run(self, ctx: RunContext) -> None:
        self._rows(ctx)
        if self.posture == "dev":
            self._canary(ctx.config.tools)

    def _canary(self, tools: Iterable[Any] = ()) -> None:
        if self.notice_empty and not is_empty_lookup("[]"):
            raise CheckerDeadError("empty-lookup", "missed its canary")
        if self.columns and column_type_conflicts('[{"a": 1}, {"a": "x"}]') != ["a"]:
            raise CheckerDeadError("column-types", "missed its canary")
        if (self.notice_prior or self.grounds is not None) and numbers_in("costs 42 now") != {"42"}:
            raise CheckerDeadError("prior-turn-evidence", "missed its canary")
        if any(t.arguments_from for t in tools):
            canary = dangling_references({"id": "X-1"}, {"id": ("find",)}, [{"role": "tool", "tool_name": "find"}])
            if [arg for arg, _ in canary] != ["id"]:
                raise CheckerDeadError("dangling-reference", "missed its canary")
        if self.claims is not None and unsupported_values('"A-1" costs 42', '"A-1" costs 41') != ["42"]:
            raise CheckerDeadError("unsupported-claim", "missed its canary")
        if self.maps is not None and unmapped_tools(("a", "b"), {"b"}) != ["a"]:
            raise CheckerDeadError("unmapped-conclusion", "missed its canary")
        if self.invariants and not check_mount("canary", "canary", {"broken": lambda view: False}, {})["findings"]:
            raise CheckerDeadError("invariants", "missed its canary")

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        self._file(ctx, outcome.status)
        if self.posture == "dev" and outcome.status == "completed" and ctx.recorded("llm_call") is not None:
            for row in self._rows(ctx).values():
                if row.armed and row.seam == "wire" and row.checked + row.not_applicable == 0:
                    raise CheckerDeadError(row.check, "a model call happened and the check saw none")

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        self._file(ctx, "failed")

    def _file(self, ctx: RunContext, status: str) -> None:
        try:  # accounting never changes a run's outcome
            rows = [r.as_dict() for r in self._rows(ctx).values()]
            ctx.state["disposition"] = rows
            ctx.emit(
                ev.INTEGRITY_DISPOSITION,
                lambda: IntegrityDisposition(status=status, posture=self.posture, rows=rows),
            )
        except Exception:
            return

    def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
        return {"disposition": ctx.state.get("disposition", [])}

    # -- the checks -----------------------------------------------------------------------------------------------
    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        response = await call_next(request)
        offered = {t.name for t in request.tools}
        row = self._rows(ctx)["offered-tool"]
        if not response.tool_calls:
            row.not_applicable += 1
        for call in response.tool_calls:
            row.checked += 1
            if call.name not in offered:
                self._find(ctx, "offered-tool", "the model called a tool it was not offered", tool=call.name[:64])
        return response

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        self._check_references(ctx, call)
        outcome = await call_next(call)
        rows = self._rows(ctx)
        if outcome.is_error or outcome.paused or outcome.needs_check_in:
            return outcome
        if self.notice_empty:
            rows["empty-lookup"].checked += 1
            if is_empty_lookup(outcome.content):
                self._find(ctx, "empty-lookup", "a lookup returned nothing", tool=call.name)
                notice = f"\n[notice: '{call.name}' returned nothing for these arguments; that is all it shows.]"
                outcome = outcome.model_copy(update={"content": outcome.content + notice})
        if self.columns:
            conflicts = column_type_conflicts(outcome.content)
            if conflicts:
                rows["column-types"].checked += 1
                self._find(
                    ctx,
                    "column-types",
                    "a column holds values of different types",
                    tool=call.name,
                    columns=conflicts[:20],
                )
            elif outcome.content.lstrip().startswith("["):
                rows["column-types"].checked += 1
            else:
                rows["column-types"].not_applicable += 1
        return outcome

    def _check_references(self, ctx: RunContext, call: ToolCallRequest) -> None:
        """Before the call: each argument declared ``arguments_from`` must be a value its sources' results hold."""
        row = self._rows(ctx)["dangling-reference"]
        declared = call.tool.arguments_from if call.tool is not None else None
        if not row.armed:
            return
        if not declared or ctx.turn is None:
            row.not_applicable += 1
            return
        row.checked += 1
        for arg, why in dangling_references(call.args, declared, ctx.turn.history):
            self._find(ctx, "dangling-reference", why, tool=call.name, argument=arg[:64])

    def _check_claims(self, ctx: RunContext, answer: str, history: list[Any], start: int) -> None:
        """The claim seam: each claim the extractor finds must have its numbers and quoted names in this turn's
        evidence (its tool results and the user's message); a claim with neither is not applicable."""
        row = self._rows(ctx)["unsupported-claim"]
        if self.claims is None:
            return
        evidence = " ".join(str(m.get("content") or "") for m in history[start:] if m.get("role") in ("tool", "user"))
        try:
            claims = [str(c) for c in self.claims(answer)][:200]
        except Exception:
            self._find(ctx, "unsupported-claim", "the claim extractor failed; no claim of the answer was checked")
            return
        for i, claim in enumerate(claims):
            numbers, quoted = numbers_in(claim), _QUOTED.findall(claim)
            if not numbers and not quoted:
                row.not_applicable += 1
                continue
            row.checked += 1
            loose = unsupported_values(claim, evidence)
            if loose:
                self._find(
                    ctx,
                    "unsupported-claim",
                    "the answer claims values no tool result of the run holds",
                    source_id=f"claim#{i}",
                    values=len(loose),
                )

    def arm_invariants(self, spec: Any) -> None:
        """Declare invariants checked where a composition mounts the agent (see ``agent._invariants``)."""
        self.invariants = {**(self.invariants or {}), **declared_invariants(spec)}

    def _record_ledger(self, ctx: RunContext) -> None:
        """The ledger as it stands at the answer, recorded as text (cheap to commit) when it arms more than the
        always-on wire check or runs in the dev posture: the checks it declares, one
        ``check/seam/armed/checked/findings/not_applicable`` row per check, the invariants it declares."""
        rows = self._rows(ctx)
        if self.posture != "dev" and sum(r.armed for r in rows.values()) < 2:
            return  # only the always-on wire check: its row is in the result, and the record stays as it was
        filed = " ".join(
            f"{r.check}/{r.seam}/{int(r.armed)}/{r.checked}/{r.findings}/{r.not_applicable}" for r in rows.values()
        )
        ctx.record(
            LEDGER_KEY, {"declared": " ".join(rows), "rows": filed, "invariants": " ".join(self.invariants or ())}
        )

    def arm_maps(self, spec: Any) -> None:
        """Declare what may be concluded from what (see ``declared_maps``)."""
        self.maps = declared_maps(spec)

    def check_build(self, config: Any) -> None:
        """Declared maps name tools of the agent (checked when the agent is built)."""
        names = {t.name for t in config.tools}
        for conclusion, entry in (self.maps or {}).items():
            if not set(entry["from"]) <= names:
                raise AgentBuildError(
                    f"maps(): conclusion '{conclusion}' is drawn from a tool the agent does not have", code="ERR_MAPS"
                )

    def _check_maps(self, ctx: RunContext, answer: str) -> None:
        """Each declared conclusion the answer draws (one of its phrases) needs a result of every tool it is
        mapped from in this turn; the declared maps and each check are recorded (``maps``, ``map_checks``)."""
        if self.maps is None:
            return
        row = self._rows(ctx)["unmapped-conclusion"]
        settled = {
            str(r.get("name"))
            for r in ctx.recorded("tool_results", ()) or ()
            if isinstance(r, Mapping) and not r.get("is_error")
        }
        said = answer.casefold()
        checks: list[dict[str, Any]] = []
        for conclusion, entry in self.maps.items():
            if not any(phrase.casefold() in said for phrase in entry["says"]):
                row.not_applicable += 1
                checks.append({"conclusion": conclusion, "verdict": "not-drawn"})
                continue
            row.checked += 1
            missing = unmapped_tools(entry["from"], settled)
            checks.append(
                {"conclusion": conclusion, "verdict": "unmapped" if missing else "mapped", "missing": missing}
            )
            if missing:
                self._find(
                    ctx,
                    "unmapped-conclusion",
                    "the answer draws a conclusion from evidence the run never produced",
                    source_id=conclusion,
                    missing=missing,
                )
        ctx.record("maps", {k: {"from": list(v["from"]), "says": list(v["says"])} for k, v in self.maps.items()})
        ctx.record("map_checks", checks)

    async def on_answer(self, ctx: RunContext, answer: str) -> str:
        turn = ctx.turn
        if turn is None or not (self.notice_prior or self.grounds is not None or self.claims or self.maps):
            if turn is not None:
                self._record_ledger(ctx)  # e.g. arguments_from, invariants, empty lookups: dead checks in a recording
            return answer
        history = list(turn.history)
        start = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=0)
        prior = " ".join(str(m.get("content") or "") for m in history[:start] if m.get("role") == "tool")
        current = " ".join(str(m.get("content") or "") for m in history[start:] if m.get("role") == "tool")
        said = numbers_in(answer) - numbers_in(str(history[start].get("content") or "") if history else "")
        rows = self._rows(ctx)
        self._check_claims(ctx, answer, history, start)
        self._check_maps(ctx, answer)
        if self.notice_prior:
            rows["prior-turn-evidence"].checked += 1
            stale = sorted(n for n in said if n in numbers_in(prior) and n not in numbers_in(current))
            if stale:
                self._find(
                    ctx, "prior-turn-evidence", "the answer uses values found only in earlier turns", values=len(stale)
                )
        if self.grounds is not None:
            rows["external-grounds"].checked += 1
            grounded = numbers_in(current) | numbers_in(" ".join(self.grounds)) | numbers_in(prior)
            loose = sorted(n for n in said if n not in grounded)
            if loose:
                self._find(
                    ctx,
                    "external-grounds",
                    "the answer states numbers no tool result or ground holds",
                    values=len(loose),
                )
        self._record_ledger(ctx)
        return answer
