"""Conditional: the first predicate that holds picks the runner; the decision and its evidence are recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentfootprint.compose._base import (
    Composition,
    CompositionBuildError,
    check_runner,
    checked_output,
    composition_key,
    keyed,
    member_deps,
    member_id,
    mount_input,
    mount_output,
    seed_stage,
)
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import CompositionRouteDecided
from agentfootprint.flow import FlowChart, Scope, decide, flow_chart

Predicate = Callable[[Any], bool]


class RunInputText(str):
    """The message a predicate sees: a ``str`` that also reads like the run input (``x["message"]``, ``x.message``)."""

    __slots__ = ()

    @property
    def message(self) -> str:
        return str(self)

    def __getitem__(self, key: Any) -> Any:
        if key == "message":
            return str(self)
        return str.__getitem__(self, key)


class Conditional(Composition):
    """Routes the message to the first ``when`` whose predicate holds, else to ``otherwise``."""

    kind = "Conditional"

    def __init__(
        self, name: str, members: list[tuple[str, Any]], predicates: dict[str, Predicate], fallback: str | None
    ) -> None:
        self._predicates = predicates
        self._fallback = fallback
        super().__init__(name, members)

    @classmethod
    def create(cls, name: str = "conditional", *, checkpoint_key: str | bytes | None = None) -> ConditionalBuilder:
        """A builder; with ``checkpoint_key`` every pause checkpoint is sealed and ``resume`` checks the seal first."""
        return ConditionalBuilder(name, checkpoint_key=checkpoint_key)

    def _build_chart(self) -> FlowChart:
        taken: set[str] = set()
        ids = {name: member_id(name, i, taken) for i, (name, _) in enumerate(self.members)}
        rules = []
        for name, _ in self.members:
            predicate = self._predicates.get(name)
            if predicate is not None:
                rules.append(
                    {
                        "when": (lambda s, p=predicate: bool(p(RunInputText(s["input"])))),
                        "then": ids[name],
                        "label": name,
                    }
                )
        default = ids[self._fallback] if self._fallback else None

        def route(scope: Scope) -> Any:
            decision = decide(scope, rules, default)
            self._emit(
                ev.COMPOSITION_ROUTE_DECIDED,
                lambda: CompositionRouteDecided(composition=self.name, chosen=decision.branch),
                scope.run_id or "",
            )
            return decision

        builder = flow_chart(self.name, seed_stage, id="seed", description="Take the pipeline's input").decider(
            "Route", route, id="route", description="Pick the branch whose condition holds"
        )
        for name, runner in self.members:
            builder = builder.branch(
                ids[name],
                name,
                runner.chart,
                input_map=mount_input(lambda p: str(p["input"])),
                output_map=checked_output(runner, ids[name], mount_output("answer")),
                deps=member_deps(runner),
            )
        return builder.end().build()

    def _rebuilt(self, members: list[tuple[str, Any]]) -> Conditional:
        return Conditional(self.name, members, self._predicates, self._fallback)


class ConditionalBuilder:
    def __init__(self, name: str, *, checkpoint_key: str | bytes | None = None) -> None:
        self._name = name
        self._key = composition_key(checkpoint_key)
        self._members: list[tuple[str, Any]] = []
        self._predicates: dict[str, Predicate] = {}
        self._fallback: str | None = None

    def _add(self, name: str, runner: Any) -> None:
        if any(n == name for n, _ in self._members):
            raise CompositionBuildError(f"Conditional '{self._name}' has two branches named '{name}'")
        self._members.append((name, check_runner(runner, f"branch '{name}'")))

    def when(self, name: str, predicate: Predicate, runner: Any) -> ConditionalBuilder:
        """``predicate(message) -> bool``; evaluated in declaration order, first match wins."""
        if not callable(predicate):
            raise CompositionBuildError(f"when('{name}') needs a callable predicate")
        self._add(name, runner)
        self._predicates[name] = predicate
        return self

    def otherwise(self, name: str, runner: Any) -> ConditionalBuilder:
        self._add(name, runner)
        self._fallback = name
        return self

    def build(self) -> Conditional:
        if not self._predicates:
            raise CompositionBuildError(f"Conditional '{self._name}' needs at least one when(...)")
        return keyed(Conditional(self._name, self._members, self._predicates, self._fallback), self._key)
