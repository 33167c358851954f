"""Explicit data flow for Workflow and Graph: each step names what it reads; values keep their shape."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentfootprint.compose._base import Composition, CompositionBuildError, check_runner
from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import Scope, thaw

INPUT = "input"
MessageFn = Callable[[dict[str, Any]], str]
StepFn = Callable[[dict[str, Any]], Any]


class StepOutputError(AgentFootprintError, TypeError):
    """A function step returned a value that cannot be recorded (not JSON: e.g. a class instance or a set)."""

    code = "ERR_STEP_OUTPUT"

    def __init__(self, composition: str, step: str, type_name: str) -> None:
        super().__init__(
            f"{composition}: step '{step[:80]}' returned a {type_name[:60]}; a step's output must be JSON "
            "(str, number, bool, None, list, dict with str keys) so it can be recorded and resumed"
        )
        self.step = step


class StepMessageError(AgentFootprintError, TypeError):
    """A step's ``message`` function returned something other than a str."""

    code = "ERR_STEP_MESSAGE"

    def __init__(self, step: str, type_name: str) -> None:
        super().__init__(f"the message function of step '{step[:80]}' must return a str, got {type_name[:60]}")
        self.step = step


class FunctionStep:
    """A plain function used as a step: ``fn(values) -> value`` (sync or async), recorded like any stage."""

    def __init__(self, fn: StepFn) -> None:
        self.fn = fn

    async def call(self, values: dict[str, Any]) -> Any:
        out = self.fn(values)
        if inspect.isawaitable(out):
            out = await out
        return out

    def __repr__(self) -> str:
        return f"<FunctionStep {getattr(self.fn, '__name__', type(self.fn).__name__)}>"


@dataclass(frozen=True)
class StepSpec:
    """One step or node: its runner (or function), the names it reads, and how its message is made."""

    name: str
    runner: Any
    inputs: tuple[str, ...] | None
    message: MessageFn | None


def out_key(name: str) -> str:
    """The state key a step's output lands under (one per step; a revisited node overwrites its own)."""
    return f"out:{name}"


def as_text(value: Any) -> str:
    """A value as the text a model sees: a str as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(thaw(value), ensure_ascii=False, default=str)


def default_message(values: dict[str, Any]) -> str:
    """One input: its text. Several: one labelled block per input, in declaration order."""
    if len(values) == 1:
        return as_text(next(iter(values.values())))
    return "\n\n".join(f"[{name}]\n{as_text(value)}" for name, value in values.items())


def check_output(composition: str, step: str, value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise StepOutputError(composition, step, type(value).__name__) from None
    return value


def check_step(owner: str, what: str, name: Any, runner: Any, taken: Iterable[str]) -> str:
    """A step's name and runner, checked at declaration (typed errors naming the step, never its value)."""
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        raise CompositionBuildError(f"{owner}: a {what} name must be a non-blank str of at most 100 characters")
    if name in (INPUT, "END"):
        raise CompositionBuildError(f"{owner}: '{name}' is reserved and cannot name a {what}")
    if name in taken:
        raise CompositionBuildError(f"{owner} has two {what}s named '{name}'")
    if not isinstance(runner, Composition) and not _is_agent(runner) and not callable(runner):
        raise CompositionBuildError(
            f"{what} '{name}' must be an Agent, a composition or a function, got {type(runner).__name__}"
        )
    return name


def _is_agent(runner: Any) -> bool:
    from agentfootprint.agent import Agent

    return isinstance(runner, Agent)


def as_member(runner: Any, name: str) -> Any:
    """What a composition mounts: a runner as is, a plain function wrapped as a :class:`FunctionStep`."""
    if isinstance(runner, Composition) or _is_agent(runner):
        return check_runner(runner, name)
    return FunctionStep(runner)


def check_inputs(owner: str, what: str, name: str, inputs: Any, message: Any) -> tuple[str, ...] | None:
    if message is not None and not callable(message):
        raise CompositionBuildError(f"{what} '{name}': message must be a function of the input values")
    if inputs is None:
        return None
    if isinstance(inputs, str) or not isinstance(inputs, Sequence):
        raise CompositionBuildError(f"{what} '{name}': inputs must be a list of step names")
    names = tuple(inputs)
    if not names or any(not isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise CompositionBuildError(f"{what} '{name}': inputs must be distinct step names (at least one)")
    return names


def read_values(scope: Scope, names: Sequence[str], present_only: bool = False) -> dict[str, Any]:
    """The named outputs (``input`` = the composition's own input), each read tracked in the record."""
    values: dict[str, Any] = {}
    for n in names:
        key = "input" if n == INPUT else out_key(n)
        if present_only and key not in scope:
            continue
        values[n] = thaw(scope.get(key))
    return values


def message_for(spec: StepSpec, values: dict[str, Any]) -> str:
    text = (spec.message or default_message)(values)
    if not isinstance(text, str):
        raise StepMessageError(spec.name, type(text).__name__)
    return text


def declare_step(
    owner: str, what: str, name: Any, runner: Any, inputs: Any, message: Any, taken: Sequence[StepSpec]
) -> StepSpec:
    """One declared step or node, checked: its name, runner, inputs and message function."""
    check_step(owner, what, name, runner, [s.name for s in taken])
    names = check_inputs(owner, what, name, inputs, message)
    member = as_member(runner, f"{what} '{name}'")
    if message is not None and isinstance(member, FunctionStep):
        raise CompositionBuildError(f"{what} '{name}' is a function: it takes the values themselves, not a message")
    return StepSpec(name, member, names, message)


def with_members(specs: Sequence[StepSpec], members: Sequence[tuple[str, Any]]) -> list[StepSpec]:
    """The same steps over other runners (``without`` rebuilds members; edges and data flow stay)."""
    runners = dict(members)
    return [StepSpec(s.name, runners[s.name], s.inputs, s.message) for s in specs]
