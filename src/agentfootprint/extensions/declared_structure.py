"""Declared structure: what the operator declares and the run records beside the answer.

``.tool_choice(classifier)`` picks (and by default narrows) the tools offered for the turn, ``.ontology(map)``
states how the domain's things relate (a frozen run constant, and a fact the model reads), ``.claims(contract)``
checks a typed answer's fields against the facts tools settled (``semantic()``), ``.recipe(r)`` records which
recipes built the agent, and ``.script_travels_with_the_answer()`` carries the script a tool ran (``script()``)
with the answer. ``.maps()`` is refused at build (see docs/agent.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint.agent import AgentBuildError, Extension, RunContext, RunOutcome, ToolCallRequest
from agentfootprint.agent._answer import CLAIM_CHECKS_KEY, SCRIPT_KEY
from agentfootprint.agent.config import READ_SKILL
from agentfootprint.agent.extension import CallModel, CallTool
from agentfootprint.flow import thaw
from agentfootprint.providers import LLMRequest, LLMResponse
from agentfootprint.tools import Tool, ToolOutcome

if TYPE_CHECKING:
    from agentfootprint.agent.config import AgentConfig

__all__ = [
    "CLAIM_CHECKS_KEY",
    "CLAIM_FACTS_KEY",
    "ONTOLOGY_KEY",
    "RECIPES_KEY",
    "TOOL_CHOICE_KEY",
    "DeclaredStructure",
    "ToolClassifier",
    "render_ontology",
    "resolve_ontology",
]

TOOL_CHOICE_KEY = "tool_choice"
ONTOLOGY_KEY = "ontology"
RECIPES_KEY = "agent_recipes"
CLAIM_FACTS_KEY = "claim_facts"
ToolClassifier = Callable[[str, list[str]], Any]
_ALWAYS_OFFERED = frozenset({READ_SKILL, "file_finding"})
_MAX = 200
_NON_READINGS = (None, "unknown", "")


def _err(message: str, code: str) -> AgentBuildError:
    return AgentBuildError(message, code=code)


def resolve_ontology(spec: Any) -> dict[str, Any]:
    """The ontology as frozen JSON: ``{"entities": {name: description}, "relations": [{from, to, name?, via?}]}``."""
    if not isinstance(spec, Mapping):
        raise _err("ontology() takes {'entities': {...}, 'relations': [...]}", "ERR_ONTOLOGY")
    entities = spec.get("entities")
    if not isinstance(entities, Mapping) or not entities or len(entities) > _MAX:
        raise _err(f"ontology entities must be a non-empty mapping of at most {_MAX} names", "ERR_ONTOLOGY")
    ents: dict[str, str] = {}
    for name, description in entities.items():
        if not isinstance(name, str) or not name.strip() or not isinstance(description, str):
            raise _err("each ontology entity maps a name to a description (str)", "ERR_ONTOLOGY")
        ents[name[:80]] = description[:300]
    rels: list[dict[str, str]] = []
    raw = spec.get("relations") or []
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence) or len(raw) > _MAX:
        raise _err(f"ontology relations must be a list of at most {_MAX} entries", "ERR_ONTOLOGY")
    for i, rel in enumerate(raw):
        if not isinstance(rel, Mapping) or rel.get("from") not in ents or rel.get("to") not in ents:
            raise _err(f"ontology relations[{i}] must join two declared entities (from, to)", "ERR_ONTOLOGY")
        row = {"from": str(rel["from"]), "to": str(rel["to"]), "name": str(rel.get("name") or "relates_to")[:80]}
        if rel.get("via") is not None:
            if not isinstance(rel["via"], str):
                raise _err(f"ontology relations[{i}].via must name a tool", "ERR_ONTOLOGY")
            row["via"] = rel["via"][:64]
        rels.append(row)
    unknown = set(spec) - {"entities", "relations"}
    if unknown:
        raise _err("ontology takes only 'entities' and 'relations'", "ERR_ONTOLOGY")
    frozen: dict[str, Any] = json.loads(json.dumps({"entities": ents, "relations": rels}))
    return frozen


def render_ontology(ontology: Mapping[str, Any]) -> str:
    """The ontology as the text the model reads."""
    lines = ["Ontology (how this domain's things relate; declared by the operator):"]
    lines += [f"- {name}: {text}" for name, text in ontology["entities"].items()]
    if ontology["relations"]:
        lines.append("Relations:")
        for r in ontology["relations"]:
            via = f" (via tool {r['via']})" if "via" in r else ""
            lines.append(f"- {r['from']} --{r['name']}--> {r['to']}{via}")
    return "\n".join(lines)


def _same(claimed: Any, settled: Any) -> bool:
    if claimed == settled and type(claimed) is type(settled):
        return True
    if isinstance(claimed, str) and isinstance(settled, int | float) and not isinstance(settled, bool):
        try:
            return float(claimed) == float(settled)
        except ValueError:
            return False
    return bool(claimed == settled and not isinstance(claimed, bool) and not isinstance(settled, bool))


class DeclaredStructure(Extension):
    """Tool choice by classifier, the ontology run constant, claim checks, recipe rows and script travel."""

    name = "declared_structure"

    def __init__(self) -> None:
        self.classifier: ToolClassifier | None = None
        self.serve: Literal["narrow", "hint"] = "narrow"
        self.ontology: dict[str, Any] | None = None
        self.claims: dict[str, tuple[str, str]] = {}
        self.recipes: list[dict[str, str]] = []
        self.script_travel = False

    # -- options ------------------------------------------------------------------------------------------------
    def arm_tool_choice(self, classifier: Any, serve: str) -> None:
        if not callable(classifier):
            raise _err("tool_choice() takes a classifier fn(message, tool_names) -> names", "ERR_TOOL_CHOICE")
        if serve not in ("narrow", "hint"):
            raise _err("tool_choice serve must be 'narrow' or 'hint'", "ERR_TOOL_CHOICE")
        if self.classifier is not None:
            raise _err("tool_choice() was already called on this builder", "ERR_TOOL_CHOICE")
        self.classifier, self.serve = classifier, serve  # type: ignore[assignment]

    def arm_ontology(self, spec: Any) -> str:
        """Freeze the ontology; returns the text the model reads (the builder lands it as the ``ontology`` fact)."""
        if self.ontology is not None:
            raise _err("ontology() was already called; an agent has one ontology", "ERR_ONTOLOGY")
        self.ontology = resolve_ontology(spec)
        return render_ontology(self.ontology)

    def arm_claims(self, contract: Any) -> None:
        if not isinstance(contract, Mapping) or not contract:
            raise _err("claims() takes {answer_field: {'entity': ..., 'field': ...}}", "ERR_CLAIMS")
        table: dict[str, tuple[str, str]] = {}
        for answer_field, target in contract.items():
            if (
                not isinstance(answer_field, str)
                or not isinstance(target, Mapping)
                or not isinstance(target.get("entity"), str)
                or not isinstance(target.get("field"), str)
            ):
                raise _err("each claim maps an answer field to {'entity': str, 'field': str}", "ERR_CLAIMS")
            table[answer_field] = (target["entity"], target["field"])
        self.claims = {**self.claims, **table}

    def add_recipe(self, row: dict[str, str]) -> None:
        self.recipes.append(dict(row))

    def arm_script(self) -> None:
        self.script_travel = True

    def check_build(self, config: AgentConfig) -> None:
        if self.claims and config.output_schema is None:
            raise _err(
                "claims() checks a TYPED answer's fields: add .output_schema(Model) (prose has no typed fields)",
                "ERR_CLAIMS_NEED_SCHEMA",
            )
        if self.ontology is not None:
            names = {t.name for t in config.all_tools()} | {t.name for s in config.skills for t in s.tools}
            for rel in self.ontology["relations"]:
                if "via" in rel and rel["via"] not in names:
                    raise _err(f"ontology relation via '{rel['via']}' names no tool of this agent", "ERR_ONTOLOGY_VIA")

    # -- run constants ----------------------------------------------------------------------------------------
    async def on_input(self, ctx: RunContext, message: str) -> str:
        if self.ontology is not None:
            ctx.record(ONTOLOGY_KEY, self.ontology)
        if self.recipes:
            ctx.record(RECIPES_KEY, list(self.recipes))
        return message

    # -- tool choice --------------------------------------------------------------------------------------------
    async def filter_tools(self, ctx: RunContext, tools: Sequence[Tool]) -> Sequence[Tool]:
        if self.classifier is None:
            return tools
        pick = ctx.state.get("pick")
        offered = [t.name for t in tools if t.name not in _ALWAYS_OFFERED]
        if pick is None:
            row: dict[str, Any] = {"kind": "pick", "iteration": ctx.iteration, "offered": offered, "serve": self.serve}
            try:
                chosen = self.classifier(str(ctx.turn.user_message) if ctx.turn is not None else "", list(offered))
                names = [chosen] if isinstance(chosen, str) else list(chosen or [])
                pick = [n for n in dict.fromkeys(names) if isinstance(n, str) and n in offered]
                row |= {"picked": pick, "unknown": sum(1 for n in names if n not in offered)}
            except Exception as exc:  # a broken classifier narrows nothing: it is a choice aid, not a permission
                pick = []
                row |= {"picked": [], "error": type(exc).__name__}
            ctx.state["pick"] = pick
            ctx.record(TOOL_CHOICE_KEY, [*thaw(ctx.recorded(TOOL_CHOICE_KEY, ())), row])
        if self.serve == "hint" or not pick:
            return tools
        return [t for t in tools if t.name in pick or t.name in _ALWAYS_OFFERED]

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        response = await call_next(request)
        pick = ctx.state.get("pick")
        if self.classifier is not None and pick is not None and ctx.turn is not None:
            called = [c.name for c in response.tool_calls]
            outcome = "answered" if not called else ("picked" if all(n in pick for n in called) else "other")
            row = {"kind": "outcome", "iteration": ctx.iteration, "outcome": outcome, "called": called}
            ctx.record(TOOL_CHOICE_KEY, [*thaw(ctx.recorded(TOOL_CHOICE_KEY, ())), row])
        return response

    # -- settled facts and scripts ------------------------------------------------------------------------------
    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        outcome = await call_next(call)
        value = outcome.value if isinstance(outcome.value, Mapping) else {}
        if self.claims and isinstance(value.get("af_facts"), list):
            rows = [
                {
                    "entity": f["entity"],
                    "field": k,
                    "value": v,
                    "tool_name": call.name,
                    "tool_call_id": call.tool_call_id,
                    "iteration": ctx.iteration,
                }
                for f in value["af_facts"]
                if isinstance(f, Mapping)
                for k, v in (f.get("fields") or {}).items()
            ]
            ctx.record(CLAIM_FACTS_KEY, [*thaw(ctx.recorded(CLAIM_FACTS_KEY, ())), *rows][-2000:])
        if self.script_travel and isinstance(value.get("af_script"), Mapping):
            ctx.record(
                SCRIPT_KEY, {**thaw(value["af_script"]), "tool_name": call.name, "tool_call_id": call.tool_call_id}
            )
        return outcome

    async def on_answer(self, ctx: RunContext, answer: str) -> str:
        if self.claims:
            self._check_claims(ctx, answer)
        if self.script_travel and ctx.config.output_schema is None and answer:
            declared = thaw(ctx.recorded(SCRIPT_KEY, None))
            if isinstance(declared, Mapping):
                fence = "`" * 3
                answer = (
                    f"{answer.rstrip()}\n\n---\n\nScript that produced this answer ({declared['tool_name']}):\n\n"
                    f"{fence}{declared['language']}\n{declared['code'].rstrip()}\n{fence}"
                )
        return answer

    def _check_claims(self, ctx: RunContext, answer: str) -> None:
        try:
            data = json.loads(answer)
        except (ValueError, RecursionError):
            data = None
        facts = [dict(r) for r in thaw(ctx.recorded(CLAIM_FACTS_KEY, ()))]
        checks = []
        for answer_field, (entity, field) in self.claims.items():
            base: dict[str, Any] = {"claim": answer_field, "entity": entity, "field": field}
            rows = [r for r in facts if r["entity"] == entity and r["field"] == field]
            if not isinstance(data, Mapping) or answer_field not in data:
                checks.append({**base, "verdict": "not-applicable"})
                continue
            claimed = data[answer_field]
            if not rows:
                checks.append({**base, "verdict": "unreachable", "claimed": claimed})
                continue
            last, quoted = rows[-1], [r["tool_call_id"] for r in rows[:-1]]
            witness = {"settled": last["value"], "tool_call_id": last["tool_call_id"], "quoted": quoted}
            if _same(claimed, last["value"]) or (claimed is None and last["value"] is None):
                checks.append({**base, **witness, "verdict": "checked-pass", "claimed": claimed})
            elif claimed in _NON_READINGS:
                checks.append({**base, **witness, "verdict": "checked-fail", "advisory": True, "claimed": claimed})
            else:
                checks.append({**base, **witness, "verdict": "checked-fail", "advisory": False, "claimed": claimed})
        ctx.record(CLAIM_CHECKS_KEY, checks)

    def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
        if not self.recipes:
            return None
        return {"recipes": list(self.recipes)}
