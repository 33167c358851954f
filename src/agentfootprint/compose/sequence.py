"""Sequence: step → step; each step's answer is the next one's message unless a mapper says otherwise."""

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
    seed_stage,
)
from agentfootprint.flow import FlowChart, Scope, flow_chart

Mapper = Callable[[str, dict[str, str]], str]


class Sequence(Composition):
    """Runs its steps in order over one run; the last step's answer is the pipeline's answer."""

    kind = "Sequence"

    def __init__(self, name: str, members: list[tuple[str, Any]], mappers: dict[str, Mapper]) -> None:
        self._mappers = mappers
        super().__init__(name, members)

    @classmethod
    def create(cls, name: str = "sequence", *, checkpoint_key: str | bytes | None = None) -> SequenceBuilder:
        """A builder; with ``checkpoint_key`` every pause checkpoint is sealed and ``resume`` checks the seal first."""
        return SequenceBuilder(name, checkpoint_key=checkpoint_key)

    def _build_chart(self) -> FlowChart:
        taken: set[str] = set()
        builder = flow_chart(self.name, seed_stage, id="seed", description="Take the pipeline's input")
        for index, (name, runner) in enumerate(self.members):
            sid = member_id(name, index, taken)
            mapper = self._mappers.get(name)

            names_before = [n for n, _ in self.members[:index]]

            def message_of(
                parent: Scope, mapper: Mapper | None = mapper, names_before: list[str] = names_before
            ) -> str:
                previous = parent.get("answer")
                current = str(previous) if previous is not None else str(parent["input"])
                if mapper is None:
                    return current
                answers = {n: str(parent.get(f"step:{n}", "")) for n in names_before}
                return str(mapper(current, answers))

            def out(sub: Scope, step_key: str = name) -> dict[str, Any]:
                answer = sub.get("answer", "")
                return {"answer": answer, f"step:{step_key}": answer}

            builder = builder.subflow(
                sid,
                runner.chart,
                name=name,
                input_map=mount_input(message_of),
                output_map=checked_output(runner, sid, out),
                deps=member_deps(runner),
            )
        return builder.build()

    def _rebuilt(self, members: list[tuple[str, Any]]) -> Sequence:
        return Sequence(self.name, members, self._mappers)


class SequenceBuilder:
    def __init__(self, name: str, *, checkpoint_key: str | bytes | None = None) -> None:
        self._name = name
        self._key = composition_key(checkpoint_key)
        self._members: list[tuple[str, Any]] = []
        self._mappers: dict[str, Mapper] = {}

    def step(self, name: str, runner: Any, *, mapper: Mapper | None = None) -> SequenceBuilder:
        """Add a step; ``mapper(previous_answer, answers_by_step) -> message`` shapes its input."""
        if any(n == name for n, _ in self._members):
            raise CompositionBuildError(f"Sequence '{self._name}' has two steps named '{name}'")
        self._members.append((name, check_runner(runner, f"step '{name}'")))
        if mapper is not None:
            self._mappers[name] = mapper
        return self

    def build(self) -> Sequence:
        return keyed(Sequence(self._name, self._members, self._mappers), self._key)
