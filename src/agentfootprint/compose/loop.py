"""Loop: repeat a runner on its own last answer until a predicate holds; a budget is mandatory."""

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
    mount_input,
    seed_stage,
)
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import CompositionIterationStart
from agentfootprint.flow import FlowChart, Scope, decide, flow_chart

HARD_CEILING = 500
Until = Callable[[str], bool]


class Loop(Composition):
    """``repeat(runner).until(pred).times(n)``: each pass feeds the previous answer back as the message."""

    kind = "Loop"

    def __init__(self, name: str, members: list[tuple[str, Any]], until: Until | None, times: int) -> None:
        self._until = until
        self._times = times
        super().__init__(name, members)

    @classmethod
    def create(cls, name: str = "loop", *, checkpoint_key: str | bytes | None = None) -> LoopBuilder:
        """A builder; with ``checkpoint_key`` every pause checkpoint is sealed and ``resume`` checks the seal first."""
        return LoopBuilder(name, checkpoint_key=checkpoint_key)

    def _build_chart(self) -> FlowChart:
        _, runner = self.members[0]
        until = self._until
        times = self._times

        def message_of(parent: Scope) -> str:
            self._emit(
                ev.COMPOSITION_ITERATION_START,
                lambda: CompositionIterationStart(composition=self.name, pass_=parent.get("passes", 0) + 1),
                parent.run_id or "",
            )
            previous = parent.get("answer")
            return str(previous) if previous is not None else str(parent["input"])

        def out(sub: Scope) -> dict[str, Any]:
            return {"answer": sub.get("answer", "")}

        def count(scope: Scope) -> None:
            scope["passes"] = scope.get("passes", 0) + 1
            if until is not None:
                scope["done"] = bool(until(str(scope.get("answer", ""))))

        def check(scope: Scope) -> Any:
            return decide(
                scope,
                [
                    {"when": {"done": {"eq": True}}, "then": "finish", "label": "until() holds"},
                    {"when": {"passes": {"gte": times}}, "then": "finish", "label": f"budget of {times} passes spent"},
                ],
                "again",
            )

        return (
            flow_chart(self.name, seed_stage, id="seed", description="Take the loop's input", max_iterations=times + 2)
            .subflow(
                "body",
                runner.chart,
                name=self.members[0][0],
                input_map=message_of_map(message_of),
                output_map=checked_output(runner, "body", out),
                deps=member_deps(runner),
            )
            .then("Count", count, id="count", description="Count the pass and test until()")
            .decider("Check", check, id="check", description="Stop or go again")
            .branch("again", "Again", lambda s: None, loop_to="body")
            .branch("finish", "Finish", lambda s: None)
            .end()
            .build()
        )

    def _rebuilt(self, members: list[tuple[str, Any]]) -> Loop:
        return Loop(self.name, members, self._until, self._times)


def message_of_map(message_of: Callable[[Scope], str]) -> Callable[[Scope], dict[str, Any]]:
    return mount_input(message_of)


class LoopBuilder:
    def __init__(self, name: str, *, checkpoint_key: str | bytes | None = None) -> None:
        self._name = name
        self._key = composition_key(checkpoint_key)
        self._runner: Any = None
        self._until: Until | None = None
        self._times: int | None = None

    def repeat(self, runner: Any, name: str = "body") -> LoopBuilder:
        self._runner = (name, check_runner(runner, "repeat()"))
        return self

    def until(self, predicate: Until) -> LoopBuilder:
        """Stop once ``predicate(answer)`` holds."""
        self._until = predicate
        return self

    def times(self, n: int) -> LoopBuilder:
        """The pass budget (mandatory; at most 500)."""
        if not isinstance(n, int) or not 1 <= n <= HARD_CEILING:
            raise CompositionBuildError(f"Loop '{self._name}' times() must be an int in 1..{HARD_CEILING}")
        self._times = n
        return self

    def build(self) -> Loop:
        if self._runner is None:
            raise CompositionBuildError(f"Loop '{self._name}' needs repeat(runner)")
        if self._times is None:
            raise CompositionBuildError(f"Loop '{self._name}' needs a budget: .times(n) (at most {HARD_CEILING})")
        return keyed(Loop(self._name, [self._runner], self._until, self._times), self._key)
