"""Workflow: named steps with explicit data flow; each step reads only the outputs it names, values keep shape."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentfootprint.compose._base import (
    Composition,
    CompositionBuildError,
    checked_output,
    composition_key,
    keyed,
    member_deps,
    member_id,
    seed_stage,
)
from agentfootprint.compose._dataflow import (
    INPUT,
    FunctionStep,
    MessageFn,
    StepSpec,
    as_text,
    check_output,
    declare_step,
    message_for,
    out_key,
    read_values,
    with_members,
)
from agentfootprint.flow import FlowChart, FlowChartBuilder, Scope, flow_chart, thaw


class Workflow(Composition):
    """Steps run in order; step N reads the outputs it declares (default: the previous step's) and nothing else."""

    kind = "Workflow"

    def __init__(self, name: str, specs: list[StepSpec], output: str) -> None:
        self._specs = specs
        self._output = output
        super().__init__(name, [(s.name, s.runner) for s in specs])

    @classmethod
    def create(cls, name: str = "workflow", *, checkpoint_key: str | bytes | None = None) -> WorkflowBuilder:
        """A builder; with ``checkpoint_key`` every pause checkpoint is sealed and ``resume`` checks the seal first."""
        return WorkflowBuilder(name, checkpoint_key=checkpoint_key)

    @property
    def steps(self) -> list[str]:
        return [s.name for s in self._specs]

    def _build_chart(self) -> FlowChart:
        taken: set[str] = set()
        builder: FlowChartBuilder = flow_chart(
            self.name, seed_stage, id="seed", description="Take the workflow's input"
        )
        previous = INPUT
        for index, spec in enumerate(self._specs):
            names = spec.inputs or (previous,)
            builder = mount_step(builder, self.name, spec, names, member_id(spec.name, index, taken))
            previous = spec.name
        output = self._output

        def finish(scope: Scope) -> None:
            value = thaw(scope.get(out_key(output)))
            scope["output"] = value
            scope["answer"] = as_text(value)

        return builder.then("Finish", finish, id="final", description=f"Hand over {output}'s output").build()

    def _rebuilt(self, members: list[tuple[str, Any]]) -> Workflow:
        return Workflow(self.name, with_members(self._specs, members), self._output)


def mount_step(
    builder: FlowChartBuilder,
    owner: str,
    spec: StepSpec,
    names: Sequence[str],
    stage_id: str,
    *,
    present_only: bool = False,
) -> FlowChartBuilder:
    """Add one step: a function as a stage, a runner as a mount; either reads exactly ``names``."""
    if isinstance(spec.runner, FunctionStep):
        return builder.then(spec.name, function_stage(owner, spec, names, present_only), id=stage_id)
    return builder.subflow(
        stage_id,
        spec.runner.chart,
        name=spec.name,
        input_map=member_input(spec, names, present_only),
        output_map=checked_output(spec.runner, stage_id, member_output(spec.name)),
        deps=member_deps(spec.runner),
    )


def function_stage(
    owner: str, spec: StepSpec, names: Sequence[str] | Callable[[Scope], Sequence[str]], present_only: bool = False
) -> Callable[[Scope], Any]:
    step: FunctionStep = spec.runner

    async def run(scope: Scope) -> None:
        wanted = names(scope) if callable(names) else names
        value = await step.call(read_values(scope, wanted, present_only))
        scope[out_key(spec.name)] = check_output(owner, spec.name, value)

    return run


def member_input(
    spec: StepSpec, names: Sequence[str] | Callable[[Scope], Sequence[str]], present_only: bool = False
) -> Callable[[Scope], dict[str, Any]]:
    def in_map(parent: Scope) -> dict[str, Any]:
        wanted = names(parent) if callable(names) else names
        return {"member_message": message_for(spec, read_values(parent, wanted, present_only))}

    return in_map


def member_output(name: str) -> Callable[[Scope], dict[str, Any]]:
    """A mounted runner's output: a Workflow/Graph member's structured output when it has one, else its answer."""

    def out_map(sub: Scope) -> dict[str, Any]:
        value = sub.get("output")
        return {out_key(name): thaw(value) if value is not None else sub.get("answer", "")}

    return out_map


class WorkflowBuilder:
    def __init__(self, name: str, *, checkpoint_key: str | bytes | None = None) -> None:
        self._name = name
        self._key = composition_key(checkpoint_key)
        self._specs: list[StepSpec] = []
        self._output: str | None = None

    def step(
        self,
        name: str,
        runner: Any,
        *,
        inputs: Sequence[str] | None = None,
        message: MessageFn | None = None,
    ) -> WorkflowBuilder:
        """Add a step: an Agent or composition (fed a message) or a function ``fn(values) -> value``.

        ``inputs`` names the earlier steps (or ``"input"``) it reads; default: the previous step.
        ``message(values) -> str`` shapes a runner's message from those values."""
        owner = f"Workflow '{self._name}'"
        spec = declare_step(owner, "step", name, runner, inputs, message, self._specs)
        earlier = {INPUT, *(s.name for s in self._specs)}
        for n in spec.inputs or ():
            if n not in earlier:
                raise CompositionBuildError(
                    f"step '{name}' reads '{n[:80]}', which is not an earlier step of {owner} (nor 'input')"
                )
        self._specs.append(spec)
        return self

    def output(self, name: str) -> WorkflowBuilder:
        """The step whose output is the workflow's answer (default: the last step)."""
        self._output = name
        return self

    def build(self) -> Workflow:
        if not self._specs:
            raise CompositionBuildError(f"Workflow '{self._name}' needs at least one step")
        output = self._output or self._specs[-1].name
        if output not in {s.name for s in self._specs}:
            raise CompositionBuildError(f"Workflow '{self._name}' has no step named '{output[:80]}' to output")
        return keyed(Workflow(self._name, list(self._specs), output), self._key)
