"""What travels with an answer: findings, coverage, negatives, answer checks and the honesty layers.

One extension (``answer_contract``) carries seed 004's answer-validation options; each builder method arms one
part and an unarmed part costs nothing:

- ``.findings()``: the model files its own standings on its tool results (``file_finding``) and may say what a
  call is for (``_basis`` on every tool) before it runs; ``agent.findings()`` reads the ledger.
- ``.limits_travel_with_the_answer()``: what tools declared with ``coverage()`` / ``absent()`` is appended to a
  prose answer as a block, or committed beside a typed answer (``agent.answer_coverage()``).
- ``.negative_claims()``: each ``absent()`` becomes a library-composed negative statement
  (``agent.answer_negatives()``).
- ``.answer_validation(*checks, posture=)``: terminal checks on the answer (``agent.answer_validation()``).
- ``.inputs_layer(rules)``, ``.results_layer(periods)``, ``.answer_layer(standing_line=)``: argument, period and
  standing rows (honesty layers 2-4).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint.agent import AgentBuildError, Extension, RunContext, RunOutcome, ToolCallRequest
from agentfootprint.agent._answer import (
    ANSWER_COVERAGE_KEY,
    ANSWER_NEGATIVES_KEY,
    ANSWER_STANDING_KEY,
    ANSWER_VALIDATION_KEY,
    COVERAGE_DECLARED_KEY,
    FINDINGS_KEY,
    AnswerValidationError,
)
from agentfootprint.agent.extension import CallTool
from agentfootprint.flow import thaw
from agentfootprint.tools import Tool, ToolOutcome, define_tool

if TYPE_CHECKING:
    from agentfootprint.agent.config import AgentConfig

__all__ = [
    "COVERAGE_BLOCK_HEADING",
    "FINDING_TOOL",
    "STANDINGS",
    "AnswerCheckFn",
    "AnswerContract",
    "AnswerView",
    "ArgumentRule",
    "answer_check",
    "ask",
    "assume",
]

COVERAGE_BLOCK_HEADING = "Coverage of this answer"
TOOLS_ABSENT = "agentfootprint.tools.absent"
TOOLS_COVERAGE_DECLARED = "agentfootprint.tools.coverage_declared"
FINDING_TOOL = "file_finding"
BASIS_ARG = "_basis"
STANDINGS = ("fact", "open", "ruled-out", "noise")
_MAX_SECTION = 12
_MAX_TEXT = 500
_MAX_ROWS = 2000


@dataclass(frozen=True)
class ArgumentRule:
    """What the inputs layer does when the model leaves a ruled argument out: ``assume`` a default or ``ask``."""

    kind: Literal["assume", "ask"]
    value: Any = None


def assume(value: Any) -> ArgumentRule:
    """Fill the argument with ``value`` when the model leaves it out (recorded as ``source: default``)."""
    return ArgumentRule("assume", value)


def ask() -> ArgumentRule:
    """Never assume the argument: a call without it is not run and the model is told to ask the person."""
    return ArgumentRule("ask")


@dataclass(frozen=True)
class AnswerView:
    """What an answer check can read: the answer, the user's message and the run's tool results."""

    answer: str
    user_message: str
    tool_results: tuple[Mapping[str, Any], ...]
    typed: bool


AnswerCheckFn = Callable[[AnswerView], Any]


@dataclass(frozen=True)
class _Check:
    id: str
    fn: AnswerCheckFn


def answer_check(id: str, fn: AnswerCheckFn) -> _Check:
    """A named terminal check: ``fn(view)`` returns True/None (pass), False or a reason str (fail); raising fails."""
    if not isinstance(id, str) or not id.strip() or len(id) > 80 or not callable(fn):
        raise AgentBuildError(
            "answer_check(id, fn) takes a non-empty id (<= 80 chars) and a function", code="ERR_ANSWER_CHECK"
        )
    return _Check(id, fn)


def _short(value: Any) -> str:
    return str(value)[:_MAX_TEXT]


def _turn_number(ctx: RunContext) -> int:
    turn = ctx.turn
    history = thaw(turn.history) if turn is not None else []
    return sum(1 for m in history if isinstance(m, Mapping) and m.get("role") == "user") or 1


def _merge(lists: Iterable[Iterable[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, str | None]] = set()
    out: list[dict[str, Any]] = []
    for items in lists:
        for item in items:
            key = (str(item.get("what")), item.get("why"))
            if key not in seen:
                seen.add(key)
                out.append({"what": key[0], **({"why": key[1]} if key[1] is not None else {})})
    return out


def _section(label: str, items: list[dict[str, Any]]) -> str:
    shown = items[:_MAX_SECTION]
    lines = [f"- {i['what']}" + (f" — {i['why']}" if i.get("why") else "") for i in shown]
    if len(items) > len(shown):
        lines.append(f"- … and {len(items) - len(shown)} more (in the run record)")
    return f"{label}:\n" + "\n".join(lines)


def coverage_block(declared: Sequence[Mapping[str, Any]]) -> str | None:
    """The one block the run's declarations fold into (None when they say nothing)."""
    sections = []
    for key, label in (("checked", "Checked"), ("not_checked", "Not checked"), ("cannot_cover", "Cannot cover")):
        items = _merge(d.get(key, ()) for d in declared)
        if items:
            sections.append(_section(label, items))
    if not sections:
        return None
    return f"{COVERAGE_BLOCK_HEADING} — declared by the tools that produced it, not by the model:\n\n" + "\n\n".join(
        sections
    )


def _period_state(queried: Sequence[str], held: Sequence[str] | None) -> str:
    if held is None:
        return "not-held"
    try:
        if held[0] <= queried[0] and held[1] >= queried[1]:
            return "covered"
        if held[1] < queried[0] or held[0] > queried[1]:
            return "not-held"
        return "partly-held"
    except (TypeError, IndexError):
        return "unknown"


def _with_basis(tool: Tool) -> Tool:
    schema = dict(tool.input_schema)
    props = dict(schema.get("properties") or {})
    if BASIS_ARG in props:
        return tool
    props[BASIS_ARG] = {"type": "string", "description": "Optional: what this call is for, said before it runs."}
    schema["properties"] = props
    return replace(tool, input_schema=schema)


def _finding_tool() -> Tool:
    return define_tool(
        name=FINDING_TOOL,
        description=(
            "File your standing on an earlier tool result: 'fact' (you stand on it; list the assertions), 'open', "
            "'ruled-out' or 'noise'. The last standing per tool_call_id is the current one."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "tool_call_id": {"type": "string"},
                "standing": {"type": "string", "enum": list(STANDINGS)},
                "assertions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"about": {"type": "string"}, "value": {"type": "string"}},
                        "required": ["about", "value"],
                    },
                },
            },
            "required": ["tool_call_id", "standing"],
        },
        execute=lambda args, ctx: "filed",
    )


class AnswerContract(Extension):
    """Findings, coverage, negatives, answer checks and the honesty layers (each part armed by its option)."""

    name = "answer_contract"
    event_types = (TOOLS_ABSENT, TOOLS_COVERAGE_DECLARED)

    def __init__(self) -> None:
        self.findings_on = False
        self.limits_on = False
        self.negatives_on = False
        self.negatives_append = False
        self.checks: tuple[_Check, ...] = ()
        self.posture: Literal["flag", "block"] = "flag"
        self.validation_on = False
        self.rules: dict[str, dict[str, ArgumentRule]] = {}
        self.inputs_on = False
        self.periods: dict[str, tuple[str, str]] = {}
        self.results_on = False
        self.standing_on = False
        self.standing_line: Literal["never", "not-sure", "always"] = "never"
        self._finding = _finding_tool()

    # -- options (builder sugar calls these once each) ---------------------------------------------------------
    def arm_findings(self) -> None:
        self.findings_on = True

    def arm_limits(self) -> None:
        self.limits_on = True

    def arm_negatives(self, append: bool = False) -> None:
        if not isinstance(append, bool):
            raise AgentBuildError("negative_claims(append=) must be True or False", code="ERR_ANSWER_CONTRACT")
        self.negatives_on, self.negatives_append = True, append

    def arm_validation(self, checks: Sequence[Any], posture: str) -> None:
        if posture not in ("flag", "block"):
            raise AgentBuildError("answer_validation posture must be 'flag' or 'block'", code="ERR_ANSWER_CHECK")
        made: list[_Check] = []
        for c in checks:
            if isinstance(c, _Check):
                made.append(c)
            elif callable(c):
                made.append(answer_check(str(getattr(c, "__name__", "check"))[:80], c))
            else:
                raise AgentBuildError("answer_validation takes answer_check(...) or functions", code="ERR_ANSWER_CHECK")
        if not made:
            raise AgentBuildError("answer_validation needs at least one check", code="ERR_ANSWER_CHECK")
        ids = [c.id for c in made]
        if len(set(ids)) != len(ids):
            raise AgentBuildError("two answer checks share an id", code="ERR_ANSWER_CHECK")
        self.checks, self.posture, self.validation_on = tuple(made), posture, True  # type: ignore[assignment]

    def arm_inputs(self, rules: Mapping[str, Mapping[str, ArgumentRule]] | None) -> None:
        table: dict[str, dict[str, ArgumentRule]] = {}
        for tool_name, args in (rules or {}).items():
            if not isinstance(tool_name, str) or not isinstance(args, Mapping):
                raise AgentBuildError(
                    "inputs_layer rules map a tool name to {argument: assume(v) | ask()}", code="ERR_ANSWER_CONTRACT"
                )
            for arg, rule in args.items():
                if not isinstance(arg, str) or not isinstance(rule, ArgumentRule):
                    raise AgentBuildError(
                        "inputs_layer rules map each argument to assume(value) or ask()", code="ERR_ANSWER_CONTRACT"
                    )
            table[tool_name] = dict(args)
        self.rules, self.inputs_on = table, True

    def arm_results(self, periods: Mapping[str, Sequence[str]] | None) -> None:
        table: dict[str, tuple[str, str]] = {}
        for tool_name, pair in (periods or {}).items():
            if not isinstance(tool_name, str) or isinstance(pair, str) or len(list(pair)) != 2:
                raise AgentBuildError(
                    "results_layer periods map a tool name to its (from, to) argument names", code="ERR_ANSWER_CONTRACT"
                )
            a, b = list(pair)
            table[tool_name] = (str(a), str(b))
        self.periods, self.results_on = table, True

    def arm_standing(self, standing_line: bool | str = False) -> None:
        lines: dict[Any, Literal["never", "not-sure", "always"]] = {
            False: "never",
            True: "not-sure",
            "not-sure": "not-sure",
            "always": "always",
        }
        line = lines.get(standing_line) if isinstance(standing_line, bool | str) else None
        if line is None:
            raise AgentBuildError(
                "answer_layer standing_line must be False, True, 'not-sure' or 'always'", code="ERR_ANSWER_CONTRACT"
            )
        self.standing_on, self.standing_line = True, line

    def check_build(self, config: AgentConfig) -> None:
        """Rules and periods must name tools the agent has (a rule on no tool protects nothing)."""
        known = {t.name for t in config.all_tools()}
        for name in [*self.rules, *self.periods]:
            if name not in known:
                raise AgentBuildError(
                    f"inputs/results layer names tool '{name[:64]}', which this agent does not have",
                    code="ERR_ANSWER_CONTRACT",
                )

    # -- the seam --------------------------------------------------------------------------------------------
    def tools(self) -> Sequence[Tool]:
        return [self._finding] if self.findings_on else []

    async def filter_tools(self, ctx: RunContext, tools: Sequence[Tool]) -> Sequence[Tool]:
        if not self.findings_on:
            return tools
        return [t if t.name == FINDING_TOOL else _with_basis(t) for t in tools]

    def _file(self, ctx: RunContext, *rows: dict[str, Any]) -> None:
        ledger = list(thaw(ctx.recorded(FINDINGS_KEY, ())))
        ctx.record(FINDINGS_KEY, (ledger + list(rows))[-_MAX_ROWS:])

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        turn = _turn_number(ctx)
        if self.findings_on and call.name == FINDING_TOOL:
            return self._file_finding(ctx, call, turn)
        args = dict(call.args) if isinstance(call.args, Mapping) else {}
        if self.findings_on and BASIS_ARG in args:
            basis = args.pop(BASIS_ARG)
            call = call.with_args(args)
            if isinstance(basis, str) and basis.strip():
                self._file(
                    ctx,
                    {
                        "kind": "basis",
                        "tool_call_id": call.tool_call_id,
                        "tool_name": call.name,
                        "basis": _short(basis),
                        "turn": turn,
                    },
                )
        if self.inputs_on and call.name in self.rules:
            refused, call = self._inputs(ctx, call, turn)
            if refused is not None:
                return refused
        outcome = await call_next(call)
        self._results(ctx, call, outcome, turn)
        return outcome

    def _file_finding(self, ctx: RunContext, call: ToolCallRequest, turn: int) -> ToolOutcome:
        args = call.args if isinstance(call.args, Mapping) else {}
        target, standing = args.get("tool_call_id"), args.get("standing")
        if not isinstance(target, str) or standing not in STANDINGS:
            return ToolOutcome(
                content=f"Error: file_finding needs tool_call_id (str) and standing ({', '.join(STANDINGS)})",
                is_error=True,
                error_code="ERR_FINDING",
            )
        assertions = [
            {"about": _short(a.get("about")), "value": _short(a.get("value"))}
            for a in (args.get("assertions") or [])[:50]
            if isinstance(a, Mapping)
        ]
        row = {
            "kind": "standing",
            "tool_call_id": target[:128],
            "standing": standing,
            "assertions": assertions,
            "turn": turn,
        }
        ledger = list(thaw(ctx.recorded(FINDINGS_KEY, ())))
        current = {r["tool_call_id"]: r for r in ledger if r.get("kind") == "standing"}
        current[row["tool_call_id"]] = row
        conflicts = []
        if standing == "fact":
            known = {(tuple(r.get("witnesses", ()))) for r in ledger if r.get("kind") == "conflict"}
            for other in current.values():
                if other is row or other.get("standing") != "fact":
                    continue
                for mine in assertions:
                    for theirs in other.get("assertions", ()):
                        if mine["about"] == theirs["about"] and mine["value"] != theirs["value"]:
                            witnesses = (other["tool_call_id"], row["tool_call_id"])
                            if witnesses not in known:
                                known.add(witnesses)
                                conflicts.append(
                                    {
                                        "kind": "conflict",
                                        "about": mine["about"],
                                        "witnesses": list(witnesses),
                                        "turn": turn,
                                    }
                                )
        self._file(ctx, row, *conflicts)
        return ToolOutcome(content=f"filed: {standing} on {row['tool_call_id']}")

    def _inputs(self, ctx: RunContext, call: ToolCallRequest, turn: int) -> tuple[ToolOutcome | None, ToolCallRequest]:
        args = dict(call.args) if isinstance(call.args, Mapping) else {}
        rows: list[dict[str, Any]] = []
        for arg, rule in self.rules[call.name].items():
            base = {
                "kind": "argument",
                "tool_call_id": call.tool_call_id,
                "tool_name": call.name,
                "argument": arg,
                "turn": turn,
            }
            if arg not in args or args[arg] is None:
                if rule.kind == "ask":
                    self._file(ctx, *rows, {**base, "source": "asked"})
                    return ToolOutcome(
                        content=f"Error: argument '{arg}' of {call.name} is not assumed: ask the person for it, "
                        "then call again",
                        is_error=True,
                        error_code="ERR_ARGUMENT_ASK",
                    ), call
                args[arg] = rule.value
                rows.append({**base, "source": "default", "value": rule.value})
            elif not self._traced(ctx, args[arg]):
                rows.append({**base, "source": "model"})
        if rows:
            self._file(ctx, *rows)
        return None, call.with_args(args)

    @staticmethod
    def _traced(ctx: RunContext, value: Any) -> bool:
        """Whether the value appears in what the record holds: the user's messages or an earlier tool result."""
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if not text.strip():
            return True
        turn = ctx.turn
        if turn is None:
            return False
        for m in thaw(turn.history):
            if isinstance(m, Mapping) and m.get("role") in ("user", "tool") and text in str(m.get("content", "")):
                return True
        return any(text in str(r.get("content", "")) for r in thaw(turn.tool_results))

    def _results(self, ctx: RunContext, call: ToolCallRequest, outcome: ToolOutcome, turn: int) -> None:
        value = outcome.value
        declared = value if isinstance(value, Mapping) else {}
        if (self.limits_on or self.negatives_on) and ("af_coverage" in declared or "af_absent" in declared):
            kind = "absent" if "af_absent" in declared else "coverage"
            body = declared["af_absent"] if kind == "absent" else declared["af_coverage"]
            if isinstance(body, Mapping):
                row = {"kind": kind, "tool_name": call.name, "tool_call_id": call.tool_call_id, **thaw(body)}
                ctx.record(COVERAGE_DECLARED_KEY, [*thaw(ctx.recorded(COVERAGE_DECLARED_KEY, ())), row][-_MAX_ROWS:])
                ctx.emit(TOOLS_ABSENT if kind == "absent" else TOOLS_COVERAGE_DECLARED, row)
        if not self.results_on:
            return
        if isinstance(declared.get("af_period"), Mapping):
            p = declared["af_period"]
            queried, held = list(p.get("queried") or []), p.get("held")
            self._file(
                ctx,
                {
                    "kind": "period",
                    "tool_call_id": call.tool_call_id,
                    "tool_name": call.name,
                    "state": _period_state(queried, held),
                    "queried": queried,
                    "held": list(held) if held is not None else None,
                    "read_at": p.get("read_at"),
                    "turn": turn,
                },
            )
        elif call.name in self.periods and not outcome.is_error:
            a, b = self.periods[call.name]
            args = call.args if isinstance(call.args, Mapping) else {}
            queried = [str(args.get(a)), str(args.get(b))] if a in args and b in args else []
            self._file(
                ctx,
                {
                    "kind": "period",
                    "tool_call_id": call.tool_call_id,
                    "tool_name": call.name,
                    "state": "undeclared",
                    "queried": queried,
                    "held": None,
                    "read_at": None,
                    "turn": turn,
                },
            )

    async def restore(self, ctx: RunContext, data: Any) -> None:
        rows = data.get("findings") if isinstance(data, Mapping) else None
        if isinstance(rows, list) and rows:
            ctx.record(FINDINGS_KEY, [dict(r) for r in rows if isinstance(r, Mapping)][-_MAX_ROWS:])

    def checkpoint(self, ctx: RunContext) -> Any:
        rows = thaw(ctx.recorded(FINDINGS_KEY, ()))
        return {"findings": list(rows)} if rows else None

    # -- the answer -------------------------------------------------------------------------------------------
    async def on_answer(self, ctx: RunContext, answer: str) -> str:
        typed = ctx.config.output_schema is not None
        declared = [dict(r) for r in thaw(ctx.recorded(COVERAGE_DECLARED_KEY, ()))]
        findings = [dict(r) for r in thaw(ctx.recorded(FINDINGS_KEY, ()))]
        appended: list[str] = []
        if self.limits_on:
            answer = self._limits(ctx, answer, typed, declared, findings, appended)
        if self.negatives_on:
            self._negatives(ctx, typed, declared, appended)
        if self.validation_on:
            answer = self._validate(ctx, answer, typed)
        if self.standing_on:
            self._standing(ctx, typed, findings, appended)
        if appended and not typed and answer:
            answer = answer.rstrip() + "\n\n---\n\n" + "\n\n".join(appended)
        return answer

    def _limits(
        self,
        ctx: RunContext,
        answer: str,
        typed: bool,
        declared: list[dict[str, Any]],
        findings: list[dict[str, Any]],
        appended: list[str],
    ) -> str:
        assumed = [
            {
                "tool_name": r["tool_name"],
                "tool_call_id": r["tool_call_id"],
                "argument": r["argument"],
                "value": ctx.redactor.redact(r.get("value")) if ctx.redactor.active else r.get("value"),
            }
            for r in findings
            if r.get("kind") == "argument" and r.get("source") == "default"
        ]
        periods = [
            {
                "tool_name": r["tool_name"],
                "tool_call_id": r["tool_call_id"],
                "queried": r["queried"],
                "held": r.get("held"),
                "read_at": r.get("read_at"),
            }
            for r in findings
            if r.get("kind") == "period" and r.get("queried")
        ]
        if typed:
            folded = {
                key: _merge(d.get(key, ()) for d in declared) for key in ("checked", "not_checked", "cannot_cover")
            }
            if any(folded.values()) or assumed or periods:
                ctx.record(ANSWER_COVERAGE_KEY, {**folded, "assumed": assumed, "periods": periods})
            return answer
        block = coverage_block(declared)
        if block is not None:
            appended.append(block)
        if assumed:
            appended.append(
                "Assumed:\n" + "\n".join(f"- {a['tool_name']}.{a['argument']} = {a['value']}" for a in assumed)
            )
        if periods:
            appended.append(
                "Period:\n"
                + "\n".join(
                    f"- {p['tool_name']}: asked {p['queried'][0]}..{p['queried'][1]}, "
                    + (f"held {p['held'][0]}..{p['held'][1]}" if p["held"] else "held nothing")
                    for p in periods
                )
            )
        return answer

    def _negatives(self, ctx: RunContext, typed: bool, declared: list[dict[str, Any]], appended: list[str]) -> None:
        statements = []
        for d in declared:
            if d.get("kind") != "absent":
                continue
            checked = [i["what"] for i in d.get("checked", ())]
            where = f" in {', '.join(checked)}" if checked else ""
            statements.append(
                {
                    "tool_name": d["tool_name"],
                    "tool_call_id": d["tool_call_id"],
                    "what": d["what"],
                    "statement": f"Looked for {d['what']}{where}: none found.",
                    "checked": d.get("checked", []),
                    "not_checked": d.get("not_checked", []),
                    "cannot_cover": d.get("cannot_cover", []),
                    "try_instead": d.get("try_instead"),
                }
            )
        if statements:
            ctx.record(ANSWER_NEGATIVES_KEY, {"statements": statements})
            if self.negatives_append and not typed:
                lines = []
                for s in statements:
                    limits = [*s["not_checked"], *s["cannot_cover"]]
                    tail = f" (not covered: {'; '.join(i['what'] for i in limits)})" if limits else ""
                    lines.append(f"- {s['statement']}{tail}")
                appended.append("Not found:\n" + "\n".join(lines))

    def _validate(self, ctx: RunContext, answer: str, typed: bool) -> str:
        turn = ctx.turn
        view = AnswerView(
            answer=answer,
            user_message=str(turn.user_message) if turn is not None else "",
            tool_results=tuple(dict(r) for r in thaw(turn.tool_results)) if turn is not None else (),
            typed=typed,
        )
        results = []
        for check in self.checks:
            try:
                verdict = check.fn(view)
            except Exception as exc:
                results.append({"id": check.id, "passed": False, "reason": f"check raised {type(exc).__name__}"})
                continue
            if verdict is None or verdict is True:
                results.append({"id": check.id, "passed": True, "reason": None})
            else:
                reason = verdict if isinstance(verdict, str) else None
                results.append({"id": check.id, "passed": False, "reason": _short(reason) if reason else None})
        passed = all(r["passed"] for r in results)
        blocked = not passed and self.posture == "block"
        ctx.record(
            ANSWER_VALIDATION_KEY, {"posture": self.posture, "checks": results, "passed": passed, "blocked": blocked}
        )
        return "" if blocked else answer

    def _standing(self, ctx: RunContext, typed: bool, findings: list[dict[str, Any]], appended: list[str]) -> None:
        reasons: list[str] = []
        current = {r["tool_call_id"]: r for r in findings if r.get("kind") == "standing"}
        reasons += [f"conflict on {r['about']}" for r in findings if r.get("kind") == "conflict"]
        reasons += [f"open finding on {cid}" for cid, r in current.items() if r.get("standing") == "open"]
        reasons += [
            f"period {r['state']} for {r['tool_name']}"
            for r in findings
            if r.get("kind") == "period" and r.get("state") != "covered"
        ]
        reasons += [
            f"{r['tool_name']}.{r['argument']} came from the model, untraced"
            for r in findings
            if r.get("kind") == "argument" and r.get("source") == "model"
        ]
        reasons += [
            f"{r['tool_name']}.{r['argument']} was assumed"
            for r in findings
            if r.get("kind") == "argument" and r.get("source") == "default"
        ]
        report = thaw(ctx.recorded(ANSWER_VALIDATION_KEY, None))
        if isinstance(report, Mapping) and not report.get("passed", True):
            reasons += [f"check {c['id']} failed" for c in report.get("checks", ()) if not c.get("passed")]
        if reasons:
            standing = "not-sure"
        elif any(r.get("standing") == "fact" for r in current.values()) and not any(
            r.get("standing") in ("open",) for r in current.values()
        ):
            standing = "known"
        elif findings or isinstance(report, Mapping):
            standing = "consistent"
        else:
            standing = "not-assessed"
        ctx.record(ANSWER_STANDING_KEY, {"standing": standing, "reasons": reasons})
        if not typed and (self.standing_line == "always" or (self.standing_line == "not-sure" and reasons)):
            line = f"Standing: {standing}" + (f" ({'; '.join(reasons[:5])})" if reasons else "")
            appended.append(line)

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        if outcome.status != "completed" or not self.validation_on:
            return
        report = outcome.state.get(ANSWER_VALIDATION_KEY)
        if isinstance(report, Mapping) and report.get("blocked"):
            raise AnswerValidationError([c["id"] for c in report.get("checks", ()) if not c.get("passed")])
