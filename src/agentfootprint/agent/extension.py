"""The one extension seam: ``AgentBuilder.use(extension)``.

An ``Extension`` overrides only the hooks it needs; every hook receives an explicit ``RunContext``. Hooks run in
``.use()`` order; for the wrapping hooks the first extension used is the outermost.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, runtime_checkable

from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import PayloadArg
from agentfootprint.flow import FlowResult, FlowSnapshot, Redactor
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, LLMResponse, Usage
from agentfootprint.tools import Tool, ToolOutcome

if TYPE_CHECKING:
    from agentfootprint.agent._run import AgentRun
    from agentfootprint.agent.agent import Agent
    from agentfootprint.agent.config import AgentConfig
    from agentfootprint.agent.turn import Turn, UsageTotal

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class ExtensionError(AgentFootprintError, ValueError):
    """An extension used wrongly (bad name, a write to a key the agent owns, a write outside a stage)."""

    code = "ERR_EXTENSION"


class InvalidExtensionError(AgentBuildError):
    """``use()`` was handed something that is not a usable extension; ``field`` says what: ``type`` (not an
    ``Extension`` object: a name, a class, a number) or ``name`` (not lower_snake_case). Never quotes it."""

    code = "ERR_INVALID_EXTENSION"

    def __init__(self, message: str, *, field: Literal["type", "name"]) -> None:
        super().__init__(message)
        self.field = field


class DuplicateExtensionError(AgentBuildError):
    """A second extension under a name this builder already uses (an agent has one extension per name)."""

    code = "ERR_DUPLICATE_EXTENSION"

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


class InputRefusedError(AgentFootprintError, ValueError):
    """An ``on_input`` hook refused the user's message; the run ends before any model call."""

    code = "ERR_INPUT_REFUSED"

    def __init__(self, message: str, *, extension: str | None = None) -> None:
        super().__init__(message)
        self.extension = extension


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One tool call on its way to dispatch: who asked, which tool, with which arguments."""

    tool_call_id: str
    name: str
    args: dict[str, Any]
    tool: Tool | None = None
    """The tool that will run (None: the model named a tool that is not offered)."""

    def with_args(self, args: Mapping[str, Any]) -> ToolCallRequest:
        """The same call with other arguments (they are validated again before the tool runs)."""
        return replace(self, args=dict(args))


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How one leg of a run (``run`` or ``resume``) ended, for ``after_run`` and ``result``."""

    status: Literal["completed", "paused"]
    answer: str | None
    flow: FlowResult = field(repr=False)
    """The engine's result: ``.snapshot`` (served, redacted), ``.checkpoint`` and ``.pause_data`` when paused."""

    @property
    def snapshot(self) -> FlowSnapshot:
        return self.flow.snapshot

    @property
    def state(self) -> dict[str, Any]:
        """The served (redacted) final state."""
        return self.flow.state


CallModel = Callable[[LLMRequest], Awaitable[LLMResponse]]
CallTool = Callable[[ToolCallRequest], Awaitable[ToolOutcome]]


class RunContext:
    """What a hook knows about the run it serves, handed to it explicitly (never looked up from globals).

    ``state`` is the extension's scratch for this leg of the run (not recorded); ``agent_state`` lives as long as
    the agent instance; ``record``/``recorded`` write and read recorded state (inside a stage only)."""

    __slots__ = ("_ext", "_run", "_turn")

    def __init__(self, run: AgentRun, extension: Extension, turn: Turn | None = None) -> None:
        self._run = run
        self._ext = extension
        self._turn = turn

    # -- who and what -----------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self._run.run_id

    @property
    def turn_id(self) -> str:
        """The turn this leg serves: its first leg's run id (a resumed leg has a fresh ``run_id``, the same turn)."""
        return self._run.turn_id

    @property
    def identity(self) -> Identity | None:
        return self._run.identity

    @property
    def session_id(self) -> str | None:
        return self._run.session_id

    @property
    def seed(self) -> int | None:
        return self._run.seed

    @property
    def agent_name(self) -> str:
        return self._run.config.name

    @property
    def model(self) -> str:
        return self._run.config.model

    @property
    def resumed(self) -> bool:
        """True on the resumed leg of a paused run."""
        return self._run.resumed

    @property
    def config(self) -> AgentConfig:
        """The agent's configuration (provider, model, temperature, tools, injections, extensions)."""
        return self._run.config

    @property
    def redactor(self) -> Redactor:
        """The run's redaction (agent policy joined with the run's): scrub what an extension shows or stores."""
        return self._run.redactor

    @property
    def iteration(self) -> int:
        """The model-call iteration this hook runs in (0 before the first model call)."""
        if self._turn is not None:
            value = self._turn.scope.get("iteration", None)  # unset in the seed stage: before the first call
            if isinstance(value, int):
                return value
        return self._run.last_completed_iteration

    @property
    def answer_rewritten_by(self) -> tuple[str, ...]:
        """In the final stage: the extensions whose ``on_answer`` changed the answer before this hook, in order."""
        return tuple(self._run.answer_rewrites)

    # -- state ------------------------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """This extension's scratch for the current leg of the run (not recorded, gone after the run)."""
        return self._run.ext_state.setdefault(self._ext.name, {})

    @property
    def agent_state(self) -> dict[str, Any]:
        """This extension's state on the agent instance: survives across the agent's runs."""
        return self._run.agent_state.setdefault(self._ext.name, {})

    @property
    def turn(self) -> Turn | None:
        """Typed view of the turn state the current stage sees (None outside a stage: before/after the run)."""
        return self._turn

    def record(self, key: str, value: Any) -> None:
        """Write ``value`` (JSON) under recorded state ``key``: it is evidence (log, snapshots, checkpoints)."""
        from agentfootprint.agent.turn import TURN_KEYS

        if self._turn is None:
            raise ExtensionError(f"extension '{self._ext.name}' can record state only inside a stage hook")
        if key in TURN_KEYS:
            raise ExtensionError(f"extension '{self._ext.name}' cannot write '{key[:80]}': the agent owns that key")
        self._turn.scope[key] = value

    def record_append(self, key: str, *items: Any) -> None:
        """Grow the recorded list ``key`` by ``items``: records exactly what ``record(key, [*recorded(key, ()),
        *items])`` records, at the cost of the new items only (a long run does not re-write its whole list)."""
        from agentfootprint.agent.turn import TURN_KEYS

        base = self.recorded(key, ())
        if self._turn is None or key in TURN_KEYS or not self._turn.scope._grow_committed(key, items):
            self.record(key, [*base, *items])

    def recorded(self, key: str, default: Any = None) -> Any:
        """Read recorded state (a tracked read inside a stage; the final served state after the run)."""
        if self._turn is not None:
            return self._turn.scope.get(key, default)
        flow = self._run.final_flow
        return flow.state.get(key, default) if flow is not None else default

    # -- acting -----------------------------------------------------------------------------------------
    async def call_model(self, request: LLMRequest) -> LLMResponse:
        """Call the model through every extension's ``wrap_model_call`` (use ``call_next`` inside that hook);
        inside a stage its tokens count in the turn's usage."""
        response = await self._run.call_model(request)
        if self._turn is not None:
            total = self._turn.usage_total
            usage = Usage(**total) + response.usage
            self._turn.usage_total = cast("UsageTotal", usage.model_dump())
        return response

    def listen(self, type_or_glob: str, fn: Callable[[Any], Any]) -> Callable[[], None]:
        """Listen to the run's events (redacted) from now on; call the returned function to stop."""
        return self._run.events.listen(type_or_glob, fn)

    def offer_to_tools(self, name: str, service: Any) -> None:
        """Hand tools a service for this leg of the run: a tool reads it as ``ctx.service(name)``."""
        self._run.tool_services[name] = service

    def emit(self, event_type: str, payload: PayloadArg = None) -> None:
        """Emit an event (register custom types on ``agent.events`` first); redacted like the run's own. ``payload``:
        a catalogue object, a mapping, or a factory of either (called only when someone listens)."""
        self._run.emit(event_type, payload, iteration=self.iteration or None)


class Extension:
    """Base of every extension: override the hooks you need; the defaults do nothing and cost nothing.

    ``name`` (lower_snake_case, unique per agent) keys the extension's state, its ``RunResult.extensions`` entry
    and its part of a conversation checkpoint."""

    name: str = "extension"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:  # default: the class name in snake_case (``AuditLog`` -> ``audit_log``)
            cls.name = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    # -- what it offers ---------------------------------------------------------------------------------
    def tools(self) -> Sequence[Tool]:
        """Tools offered on every model call (validated at build, ablatable with ``agent.without``)."""
        return ()

    async def provide_tools(self, ctx: RunContext) -> Sequence[Tool]:
        """Tools offered on this iteration's model call (``ctx.iteration``); a tool provider's seam."""
        return ()

    async def filter_tools(self, ctx: RunContext, tools: Sequence[Tool]) -> Sequence[Tool]:
        """Gate this iteration's whole offer: drop tools, or replace one by a tool of the same name (which is then
        the one dispatched). A raising hook fails the stage: a broken gate never lets tools through."""
        return tools

    def sources(self) -> Mapping[str, str]:
        """Ablatable ids this extension has offered so far (name → kind), for ``agent.without`` and explain."""
        return {}

    # -- around the run ---------------------------------------------------------------------------------
    async def before_run(self, ctx: RunContext) -> None:
        """Start of each leg (``run``, ``resume``), before the first stage; open per-run resources here."""

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        """End of each leg (completed or paused). Raising refuses the result; the record stays."""

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        """A leg failed with ``error`` (it is raised afterwards; close per-run resources here)."""

    # -- inside the turn (each runs in a recorded stage) ------------------------------------------------
    async def on_input(self, ctx: RunContext, message: str) -> str:
        """The user's message (rewrite it, or raise ``InputRefusedError``); the message let through is recorded."""
        return message

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        """Around each model call: rewrite the request, retry or fall back, or answer without calling next."""
        return await call_next(request)

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        """Around each tool dispatch: permit, rewrite arguments, cache, audit. A raising hook fails closed."""
        return await call_next(call)

    async def on_answer(self, ctx: RunContext, answer: str) -> str:
        """The final answer before it is committed: validate, rewrite, or ask the model again via ``call_model``."""
        return answer

    # -- what it leaves behind --------------------------------------------------------------------------
    def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
        """JSON for ``RunResult.extensions[name]`` (None adds nothing)."""
        return None

    def checkpoint(self, ctx: RunContext) -> Any:
        """JSON carried in the conversation checkpoint (``agent.checkpoint()``, crash checkpoints); None: nothing."""
        return None

    async def restore(self, ctx: RunContext, data: Any) -> None:
        """In the first stage of a run continued from a checkpoint that carries ``data`` for this extension."""


def check_extension(ext: object) -> Extension:
    """``ext`` if it is a usable extension; an ``InvalidExtensionError`` saying what is wrong otherwise."""
    if not isinstance(ext, Extension):
        kind = "an Extension class" if isinstance(ext, type) and issubclass(ext, Extension) else type(ext).__name__
        raise InvalidExtensionError(f"use() takes an Extension object, got {kind}", field="type")
    if not isinstance(ext.name, str) or not _NAME.match(ext.name):
        raise InvalidExtensionError("an extension's name must be lower_snake_case, 1..64 characters", field="name")
    return ext


# -- capabilities: what an extension answers beyond its hooks; the agent's doors find them by type --------------
@runtime_checkable
class AnswersFromRecord(Protocol):
    """Reads an agent's record to say how sure its answer is and why (the honesty extension): the agent's
    ``assessment``, ``pending_check_in``, ``can_explain``, ``why`` and ``chat`` doors open onto it. What it answers
    are the honesty layer's types (``Assessment``, ``CheckInPack``, ``Explanation``, ``RecordedChat``), which the
    agent layer below it does not name."""

    def assessment(self, agent: Agent, output_schema: Any) -> Any: ...
    def pending_check_in(self, agent: Agent) -> Any: ...
    def can_explain(self, agent: Agent) -> bool: ...
    def why(self, agent: Agent, question: str | None) -> Any: ...
    def chat(self, agent: Agent) -> Any: ...


@runtime_checkable
class ChecksAnswerValues(Protocol):
    """Checks the names and numbers of an answer against its evidence (``agent.unsupported_values()``: the honesty
    layer's ``UnsupportedValues``, or None)."""

    def unsupported_values(self, agent: Agent) -> Any: ...


@runtime_checkable
class HoldsArtifactStore(Protocol):
    """Keeps the agent's artifact store (``agent.get_artifact_store()``)."""

    def get_store(self) -> Any: ...


__all__ = [
    "AnswersFromRecord",
    "CallModel",
    "CallTool",
    "ChecksAnswerValues",
    "DuplicateExtensionError",
    "Extension",
    "ExtensionError",
    "HoldsArtifactStore",
    "InputRefusedError",
    "InvalidExtensionError",
    "RunContext",
    "RunOutcome",
    "ToolCallRequest",
    "check_extension",
]
