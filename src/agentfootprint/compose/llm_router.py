"""LLM router: a model picks the route; the choice, its reason and the roster it read are recorded and ablatable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentfootprint.agent import Agent
from agentfootprint.compose._base import (
    Composition,
    CompositionBuildError,
    check_runner,
    checked_output,
    member_deps,
    member_id,
    seed_stage,
)
from agentfootprint.compose._choice import ModelChoiceError, check_route_id, chooser_agent, parse_choice
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import CompositionRouteDecided
from agentfootprint.flow import FlowChart, Scope, decide, flow_chart
from agentfootprint.providers import Provider

_CHOOSER = "choose"


class LLMRouter(Composition):
    """The chooser agent answers ``{"route", "reason", "message"}``; the chosen runner gets the message."""

    kind = "LLMRouter"

    def __init__(self, name: str, members: list[tuple[str, Any]], fallback: str | None) -> None:
        self._fallback = fallback
        super().__init__(name, members)

    @property
    def routes(self) -> list[str]:
        return [n for n, _ in self.members[1:]]

    @property
    def chooser(self) -> Agent:
        """The agent that makes the choice (its roster lines are facts ``route:<id>``)."""
        runner: Agent = self.members[0][1]
        return runner

    def _build_chart(self) -> FlowChart:
        taken: set[str] = {_CHOOSER, "parse"}
        ids = {n: member_id(n, i, taken) for i, (n, _) in enumerate(self.members[1:])}
        known = set(ids)
        fallback = self._fallback

        def parse(scope: Scope) -> None:
            text = str(scope.get("out:choose") or "")
            choice = parse_choice(self.name, text)
            route = choice["route"]
            if route not in known:
                if fallback is None:
                    raise ModelChoiceError(self.name, "unknown-route", text)
                choice = {**choice, "route": fallback, "fallback_from_unknown": True}
            scope["choice"] = choice
            scope["chosen"] = choice["route"]
            self._emit(
                ev.COMPOSITION_ROUTE_DECIDED,
                lambda: CompositionRouteDecided(
                    composition=self.name, chosen=choice["route"], reason=choice.get("reason")
                ),
                scope.run_id or "",
            )

        def route(scope: Scope) -> Any:
            rules = [{"when": {"chosen": {"eq": n}}, "then": ids[n], "label": f"the model chose {n}"} for n in ids]
            return decide(scope, rules, None)

        def chosen_input(parent: Scope) -> dict[str, Any]:
            choice = parent.get("choice") or {}
            message = choice.get("message")
            return {"member_message": message if message else parent["input"]}

        builder = (
            flow_chart(self.name, seed_stage, id="seed", description="Take the request")
            .subflow(
                _CHOOSER,
                self.chooser.chart,
                name="Choose a route",
                input_map=lambda p: {"member_message": p["input"]},
                output_map=lambda s: {"out:choose": s.get("answer", "")},
                deps=member_deps(self.chooser),
            )
            .then("Read the choice", parse, id="parse", description="Validate the model's JSON choice")
            .decider("Route", route, id="route", description="Go where the model chose")
        )
        for name, runner in self.members[1:]:
            builder = builder.branch(
                ids[name],
                name,
                runner.chart,
                input_map=chosen_input,
                output_map=checked_output(runner, ids[name], lambda s: {"answer": s.get("answer", "")}),
                deps=member_deps(runner),
            )
        return builder.end().build()

    def _rebuilt(self, members: list[tuple[str, Any]]) -> LLMRouter:
        return LLMRouter(self.name, members, self._fallback)


def llm_router(
    provider: Provider,
    routes: Mapping[str, tuple[str, Any]],
    *,
    model: str = "",
    instruction: str | None = None,
    fallback: str | None = None,
    name: str = "llm_router",
) -> LLMRouter:
    """``routes = {id: (what it handles, runner)}``; the model reads the roster and picks one route.

    Each roster line is a fact ``route:<id>`` (so ``without("route:<id>")`` drops the option in a rerun). A choice
    that is not JSON, or names no route while ``fallback`` is None, raises :class:`ModelChoiceError`."""
    owner = f"llm_router '{name[:80]}'"
    if not routes:
        raise CompositionBuildError(f"{owner} needs at least one route")
    roster: dict[str, str] = {}
    members: list[tuple[str, Any]] = []
    for route, entry in routes.items():
        check_route_id(owner, route)
        if not isinstance(entry, tuple) or len(entry) != 2 or not isinstance(entry[0], str) or not entry[0].strip():
            raise CompositionBuildError(f"{owner}: route '{route}' must be (description, runner)")
        roster[route] = entry[0]
        members.append((route, check_runner(entry[1], f"route '{route}'")))
    if fallback is not None and fallback not in roster:
        raise CompositionBuildError(f"{owner}: fallback names no route")
    if instruction is not None and (not isinstance(instruction, str) or not instruction.strip()):
        raise CompositionBuildError(f"{owner}: instruction must be a non-blank str")
    chooser = chooser_agent(f"{name}-chooser", provider, model, roster, instruction=instruction)
    return LLMRouter(name, [(_CHOOSER, chooser), *members], fallback)
