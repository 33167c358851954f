"""The event catalogue: one frozen payload class per event type, which is what the library's own code reads.

``event.payload`` stays a plain mapping (what users read and what JSON shows); ``payload.mapping()`` is that
mapping, built from the fields the emitter gave, by their wire names, in declared order. ``redacted`` names the
fields that carry user, model or tool text: the run's redaction scrubs every string (patterns, known secrets) and
replaces any field named in its ``keys`` with ``[REDACTED]``, before a listener sees the event.
"""

# No ``from __future__ import annotations`` here: real annotations spare pydantic compiling ~400 strings at import.
from collections.abc import Mapping
from typing import Any, ClassVar, Self, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentfootprint.events.errors import InvalidEventPayloadError, UnknownEventTypeError

Number = int | float
Json = dict[str, Any]

_CATALOGUE: "dict[str, type[EventPayload]]" = {}


class EventPayload(BaseModel):
    """Base of every event payload: ``event_type`` names its type; ``mapping()`` is ``event.payload``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    event_type: ClassVar[str] = ""
    """``agentfootprint.<domain>.<name>``; empty on the base and on ``CustomEventPayload``."""
    redacted: ClassVar[tuple[str, ...]] = ()
    """Fields carrying user, model or tool text (what a redaction policy usually scrubs)."""
    wire_names: ClassVar[dict[str, str]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.wire_names = {name: f.alias or name for name, f in cls.model_fields.items()}
        if cls.event_type:
            if cls.event_type in _CATALOGUE:
                raise TypeError(f"event type {cls.event_type} is declared twice in the catalogue")
            _CATALOGUE[cls.event_type] = cls

    def mapping(self) -> dict[str, Any]:
        """The payload as ``event.payload`` holds it: the fields given, by wire name, then any extra keys."""
        given = self.__pydantic_fields_set__
        wire = self.wire_names
        out = {wire[k]: v for k, v in self.__dict__.items() if k in given}
        extra = self.__pydantic_extra__
        if extra:
            out.update(extra)
        return out

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Self:
        """Validate a payload mapping into this class; a misfit is ``InvalidEventPayloadError`` naming the field."""
        if not isinstance(data, Mapping):
            raise InvalidEventPayloadError(cls.event_type or "a custom event", "payload")
        try:
            return cls.model_validate(dict(data))
        except ValidationError as err:
            raise InvalidEventPayloadError.from_validation(cls.event_type or "a custom event", err) from None

    @classmethod
    def view(cls, data: Mapping[str, Any]) -> Self:
        """This class over a delivered (redacted) mapping, unvalidated: values as delivered, a missing field None."""
        values = {wire: None for wire in cls.wire_names.values()}
        values.update(data)
        view = cast(Self, cls.model_construct(**values))
        object.__setattr__(view, "__pydantic_fields_set__", {k for k, w in cls.wire_names.items() if w in data})
        return view


class CustomEventPayload(EventPayload):
    """The payload of a custom (registered) event type: any keys, as the emitter gave them."""

    model_config = ConfigDict(extra="allow")


def payload_classes() -> tuple[type[EventPayload], ...]:
    """Every catalogue class, in declaration order."""
    return tuple(_CATALOGUE.values())


def catalogue_class(event_type: str) -> type[EventPayload] | None:
    """The catalogue class of a full event type, or None (a custom type)."""
    return _CATALOGUE.get(event_type)


def payload_class(event_type: str) -> type[EventPayload]:
    """The catalogue class of ``event_type`` (full or short form); unknown: ``UnknownEventTypeError``."""
    if isinstance(event_type, str):
        full = event_type if event_type.startswith("agentfootprint.") else "agentfootprint." + event_type
        found = _CATALOGUE.get(full)
        if found is not None:
            return found
    raise UnknownEventTypeError(event_type, names_only=True)


def payload_mapping(event_type: str, payload: EventPayload | Mapping[str, Any] | None) -> dict[str, Any]:
    """What an event carries as ``payload``: a catalogue object's ``mapping()`` (of this very type), or a copy of a
    mapping an emitter gave as it is (the seam takes both)."""
    if isinstance(payload, EventPayload):
        declared = payload.event_type
        if declared and declared != event_type and declared != "agentfootprint." + event_type:
            raise InvalidEventPayloadError(event_type, "event_type")
        return payload.mapping()
    return dict(payload) if payload is not None else {}


def parse_payload(event_type: str, data: Mapping[str, Any]) -> EventPayload:
    """Validate ``data`` as the payload of ``event_type`` (typed errors: unknown type, misfit field)."""
    return payload_class(event_type).from_mapping(data)


# ---------------------------------------------------------------- agent


class AgentTurnStart(EventPayload):
    """A turn begins: before any stage runs (``run``, ``resume``, ``follow_up``)."""

    event_type = "agentfootprint.agent.turn_start"
    redacted = ("message",)
    agent: str
    session_id: str | None
    message: str | None


class AgentTurnEnd(EventPayload):
    """A turn ends, completed or paused (``status``); a failed turn emits ``error.run`` instead."""

    event_type = "agentfootprint.agent.turn_end"
    redacted = ("answer",)
    status: str
    answer: str | None = None
    iterations: int
    usage: Json | None = None
    stopped_early: Json | None = None
    answer_coverage: Json | None = None


class AgentIterationStart(EventPayload):
    """An iteration of the ReAct loop begins (before its context is composed)."""

    event_type = "agentfootprint.agent.iteration_start"
    iteration: int


class AgentIterationEnd(EventPayload):
    """An iteration ends: after its tool calls ran (``tool_calls`` of them), or with the final answer (0)."""

    event_type = "agentfootprint.agent.iteration_end"
    iteration: int
    tool_calls: int


class AgentRouteDecided(EventPayload):
    """After each model call: the loop chose to call tools or to finish."""

    event_type = "agentfootprint.agent.route_decided"
    chosen: str
    pending_tool_calls: int
    reason: str


class AgentBudgetExhausted(EventPayload):
    """A limit ended the loop (``max-iterations`` or ``cost-budget``) while tool calls were pending."""

    event_type = "agentfootprint.agent.budget_exhausted"
    reason: str
    iteration: int
    limit: int | None = None
    pending_tool_calls: int
    action: str


class AgentRunConfigured(EventPayload):
    """A turn begins: what it is configured with, by declared names only (never a prompt, a value or a key)."""

    event_type = "agentfootprint.agent.run_configured"
    model_config = ConfigDict(extra="allow")
    runner: str
    agent: str
    llm: Json
    max_iterations: int
    wrap_up_at_max_iterations: bool
    max_tool_result_chars: int | None
    repeated_call_nudge: bool
    keep_last_tool_results: int
    cost_budget: Json | None
    tools: list[str]
    context: list[Json]
    extensions: list[str]
    window: Any
    react_mode: str
    caching: str
    observer_delivery: str
    configure: bool


# ---------------------------------------------------------------- stream


class StreamLlmStart(EventPayload):
    """A model call is about to be sent (``system_prompt_text`` and ``messages`` only with ``record_system_prompt``)."""

    event_type = "agentfootprint.stream.llm_start"
    redacted = ("system_prompt_text", "messages")
    model: str
    iteration: int
    message_count: int
    tools: list[str]
    system_prompt_text: str | None = None
    messages: list[Json] | None = None
    """The messages sent (role, content, tool calls and results), as the provider receives them."""


class StreamLlmEnd(EventPayload):
    """A model call answered: its text, the tool calls it asked for, usage and finish reason."""

    event_type = "agentfootprint.stream.llm_end"
    redacted = ("content", "tool_calls", "reasoning")
    content: str
    tool_calls: list[Json]
    usage: Json
    finish_reason: str | None
    reasoning: list[str] = []
    """The model's reasoning that came with the reply (thinking or a vendor's summary), never the answer."""
    model: str | None = None
    """The model that answered, when the emitter reports it (the library's own turns do not)."""
    response_model: str | None = None
    """The provider's own name for the model that answered, when the emitter reports it."""
    response_id: str | None = None
    """The vendor's id for this response, when it sends one."""


class StreamToken(EventPayload):
    """A piece of streamed model text arrived (streaming providers only)."""

    event_type = "agentfootprint.stream.token"
    redacted = ("text",)
    text: str


class StreamToolStart(EventPayload):
    """A tool call is about to run, with the arguments the model gave."""

    event_type = "agentfootprint.stream.tool_start"
    redacted = ("args",)
    tool_call_id: str
    name: str
    args: Any


class StreamToolEnd(EventPayload):
    """A tool call finished: the result the model will see, and whether it is an error."""

    event_type = "agentfootprint.stream.tool_end"
    redacted = ("content",)
    tool_call_id: str
    name: str
    content: str
    is_error: bool
    error_code: str | None


# ---------------------------------------------------------------- context and memory


class ContextEvaluated(EventPayload):
    """The context injections were evaluated for an iteration: which are active, by trigger kind, and errors."""

    event_type = "agentfootprint.context.evaluated"
    iteration: int
    active_ids: list[str]
    trigger_kinds: dict[str, int]
    errors: list[Json]


class ContextInjected(EventPayload):
    """One active injection landed in a slot this iteration (with the text it put there)."""

    event_type = "agentfootprint.context.injected"
    model_config = ConfigDict(extra="allow")
    redacted = ("text",)
    source: str
    source_id: str
    trigger: Any
    reason: str
    since_iteration: int
    text: str
    role: str | None = None
    slot: str


class ContextSlotComposed(EventPayload):
    """Reserved: registered for custom emitters; the library does not emit it."""

    event_type = "agentfootprint.context.slot_composed"
    model_config = ConfigDict(extra="allow")


class ContextBudgetPressure(EventPayload):
    """A slot is over its context budget (characters), or the token window measured the request (tokens)."""

    event_type = "agentfootprint.context.budget_pressure"
    slot: str
    unit: str | None = None
    chars: int | None = None
    budget: int | None = None
    over_by: int | None = None
    largest: list[Json] | None = None
    projected: Number | None = None
    cap: Number | None = None
    plan_action: str | None = None
    iteration: int


class ContextEvicted(EventPayload):
    """The window dropped (or summarized) older messages from what the model sees; the history keeps them."""

    event_type = "agentfootprint.context.evicted"
    slot: str
    strategy: str | None = None
    removed_message_count: int | None = None
    span_id: str | None = None
    dropped: list[Any] | None = None
    pinned: list[int] | None = None


class MemoryWritten(EventPayload):
    """A completed turn was written to a memory injection's store (``error`` when the write failed)."""

    event_type = "agentfootprint.memory.written"
    source_id: str
    namespace: Json
    entry_ids: list[Any]
    error: str | None = None


# ---------------------------------------------------------------- pause and check-in


class PauseRequested(EventPayload):
    """The run pauses to ask a person: ``ask_human``, or consent for a tool (``check_in``)."""

    event_type = "agentfootprint.pause.requested"
    redacted = ("question",)
    kind: str
    question: str
    tool_call_id: str
    tool_name: str


class PauseResumed(EventPayload):
    """A paused call was answered on resume, or the pending question was abandoned (``kind="abandoned"``)."""

    event_type = "agentfootprint.pause.resumed"
    redacted = ("question",)
    kind: str
    question: str | None = None
    tool_call_id: str
    tool_name: str | None = None
    request_id: str | None = None


class CheckinRequest(EventPayload):
    """Reserved: registered for custom emitters; the library emits ``pause.requested`` with ``kind="check_in"``."""

    event_type = "agentfootprint.checkin.request"
    model_config = ConfigDict(extra="allow")


class CheckinDecision(EventPayload):
    """A check-in was answered on resume: approved or declined, by whom, with the person's note."""

    event_type = "agentfootprint.checkin.decision"
    redacted = ("note",)
    tool_call_id: str
    tool: str
    decision: str
    by: Any
    note: Any
    request_id: str


# ---------------------------------------------------------------- errors and warnings


class ErrorTool(EventPayload):
    """A tool call ended in an error result (the model is told; the run goes on)."""

    event_type = "agentfootprint.error.tool"
    tool_call_id: str
    name: str
    code: str | None


class WarningToolRaised(EventPayload):
    """A tool raised an exception (a bug to fix): the model was told ``message``; the run goes on."""

    event_type = "agentfootprint.warning.tool_raised"
    redacted = ("message",)
    tool_call_id: str
    name: str
    message: str


class ErrorProvider(EventPayload):
    """A model call failed (after any retries, each kept in ``attempts``); the turn fails unless recovered."""

    event_type = "agentfootprint.error.provider"
    redacted = ("message",)
    error_type: str
    code: Any
    message: str
    attempts: list[Json]


class ErrorRun(EventPayload):
    """A turn failed: the error's type and stable code (never its message)."""

    event_type = "agentfootprint.error.run"
    error_type: str
    code: Any


# ---------------------------------------------------------------- cost


class CostUsage(EventPayload):
    """After each model call: its usage, the turn's running total and its priced cost (None without pricing)."""

    event_type = "agentfootprint.cost.usage"
    usage: Json
    total: Json
    cost: Number | None


class CostBudgetWarning(EventPayload):
    """The turn's spend crossed ``cost_budget`` with ``cost_action="warn"`` (once per turn)."""

    event_type = "agentfootprint.cost.budget_warning"
    spent: Number
    budget: Number


# ---------------------------------------------------------------- compositions


class CompositionEnter(EventPayload):
    """A composition (sequence, parallel, conditional, loop, router, graph) starts a run."""

    event_type = "agentfootprint.composition.enter"
    composition: str
    kind: str


class CompositionExit(EventPayload):
    """A composition's run returned (finished, or paused in a member)."""

    event_type = "agentfootprint.composition.exit"
    composition: str
    paused: bool


class CompositionForkStart(EventPayload):
    """A parallel composition starts its branches."""

    event_type = "agentfootprint.composition.fork_start"
    composition: str
    branches: list[str]


class CompositionBranchComplete(EventPayload):
    """One branch of a parallel composition finished."""

    event_type = "agentfootprint.composition.branch_complete"
    composition: str
    branch: str


class CompositionRouteDecided(EventPayload):
    """A conditional, router or graph chose where to go next (``from``: the graph node it left)."""

    event_type = "agentfootprint.composition.route_decided"
    redacted = ("reason",)
    composition: str
    from_: str | None = Field(default=None, alias="from")
    chosen: Any
    reason: Any = None


class CompositionIterationStart(EventPayload):
    """A loop composition starts a pass (``pass`` counts from 1)."""

    event_type = "agentfootprint.composition.iteration_start"
    composition: str
    pass_: int = Field(alias="pass")


# ---------------------------------------------------------------- tools, validation, permission, skills


class ToolsOffered(EventPayload):
    """A tool provider (MCP, say) offered its tools for an iteration."""

    event_type = "agentfootprint.tools.offered"
    iteration: int
    provider: str
    tools: list[str]


class ToolsRepeatedCall(EventPayload):
    """The same tool call (same arguments, same result) landed again: the model gets a one-line note."""

    event_type = "agentfootprint.tools.repeated_call"
    tool_call_id: str
    name: str
    occurrences: int
    args_fingerprint: str
    result_fingerprint: str


class _ToolSession(EventPayload):
    """The session a tool event is about: the tool, its scope (call or run) and a hash of its key."""

    tool: str
    scope: str
    key_hash: str


class ToolsSessionStarted(_ToolSession):
    """A tool registered a teardown (``ctx.on_teardown``): a session is open for the call or the run."""

    event_type = "agentfootprint.tools.session_started"
    tool_call_id: str


class ToolsSessionReused(_ToolSession):
    """A tool asked for a session already open under the same key: it is reused."""

    event_type = "agentfootprint.tools.session_reused"
    tool_call_id: str


class ToolsSessionClosed(_ToolSession):
    """A tool session's teardown ran (at the call's end or the run's)."""

    event_type = "agentfootprint.tools.session_closed"
    reason: str


class ToolsSessionCloseFailed(_ToolSession):
    """A tool session's teardown raised or timed out (never into the run)."""

    event_type = "agentfootprint.tools.session_close_failed"
    reason: str
    error_type: str


class ValidationArgsInvalid(EventPayload):
    """Reserved: registered for custom emitters; invalid tool arguments reach the model as an error result."""

    event_type = "agentfootprint.validation.args_invalid"
    model_config = ConfigDict(extra="allow")


class PermissionCheck(EventPayload):
    """Reserved: registered for custom emitters; permission verdicts are recorded on the tool result."""

    event_type = "agentfootprint.permission.check"
    model_config = ConfigDict(extra="allow")


class PermissionHalt(EventPayload):
    """A permission checker answered ``halt`` for a tool call: the turn ends with ``PolicyHaltError``."""

    event_type = "agentfootprint.permission.halt"
    tool: str
    tool_call_id: str


class SkillActivated(EventPayload):
    """The model activated a skill with ``read_skill``: its instructions join the system prompt."""

    event_type = "agentfootprint.skill.activated"
    skill_id: Any


class SkillGraphDeclared(EventPayload):
    """A run with a skill graph begins: the declared nodes, edges, start rules and continuity."""

    event_type = "agentfootprint.skill.graph_declared"
    model_config = ConfigDict(extra="allow")
    nodes: list[str]
    edges: list[Json]
    start: Any
    rules: list[Json]
    continuity: str


class MiddlewareDecision(EventPayload):
    """A message or tool middleware link decided (allow, deny, rewrote, ...) ; ``why`` when it said."""

    event_type = "agentfootprint.middleware.decision"
    middleware: str
    moment: str
    tool: str | None = None
    tool_call_id: str | None = None
    iteration: int | None = None
    outcome: str
    changed: bool | None = None
    why: str | None = None


# ---------------------------------------------------------------- reliability


class ReliabilityRetried(EventPayload):
    """A failed model call is tried again (same provider, or the next one with ``retry-other``)."""

    event_type = "agentfootprint.reliability.retried"
    attempt: int
    provider: str
    verb: str
    rule: str | None


class ReliabilityRecovered(EventPayload):
    """A model call succeeded after earlier attempts failed."""

    event_type = "agentfootprint.reliability.recovered"
    attempts: int
    provider: str


class ReliabilityFailFast(EventPayload):
    """A reliability rule gave up on a model call (``phase``: before the call or after a failure)."""

    event_type = "agentfootprint.reliability.fail_fast"
    kind: str
    phase: str
    attempt: int
    provider: str
    error_kind: str | None
    error_type: str | None


class ReliabilityCircuitOpened(EventPayload):
    """A provider's circuit breaker opened after repeated failures."""

    event_type = "agentfootprint.reliability.circuit_opened"
    provider: str
    error_type: str


class ReliabilityCircuitClosed(EventPayload):
    """A provider's circuit breaker closed again after a success."""

    event_type = "agentfootprint.reliability.circuit_closed"
    provider: str


class ReliabilityCircuitRejected(EventPayload):
    """A model call was refused without sending: the provider's circuit is open."""

    event_type = "agentfootprint.reliability.circuit_rejected"
    provider: str
    iteration: int


# ---------------------------------------------------------------- credentials


class _CredentialNeed(EventPayload):
    """What a credential event is about: the service, the tool call that needs it and the need's mode."""

    service: str
    tool: str
    tool_call_id: str
    mode: str


class CredentialRequested(_CredentialNeed):
    """A tool that needs a credential is about to run: the service is asked for one."""

    event_type = "agentfootprint.credential.requested"


class CredentialAcquired(_CredentialNeed):
    """A credential was issued for a tool call (its kind only, never the secret)."""

    event_type = "agentfootprint.credential.acquired"
    kind: str


class CredentialAuthorizationRequired(_CredentialNeed):
    """The service needs a person's consent first (names the service, never the authorization URL)."""

    event_type = "agentfootprint.credential.authorization_required"


class CredentialFailed(_CredentialNeed):
    """The credential provider raised: the tool call gets an error result."""

    event_type = "agentfootprint.credential.failed"
    error_type: str


# ---------------------------------------------------------------- artifacts, integrity, MCP


class ArtifactsMinted(EventPayload):
    """The run's recording was filed as an artifact (reference, scope, size and digest)."""

    event_type = "agentfootprint.artifacts.minted"
    model_config = ConfigDict(extra="allow")
    kind: str
    ref: str
    scope: Any
    bytes: int
    digest: str


class ArtifactsRefused(EventPayload):
    """Filing the run's recording failed (the run's outcome is unchanged)."""

    event_type = "agentfootprint.artifacts.refused"
    kind: str
    reason: str


class IntegrityContextError(EventPayload):
    """An integrity check found a problem in what the model saw or claimed (one finding)."""

    event_type = "agentfootprint.integrity.context_error"
    model_config = ConfigDict(extra="allow")
    redacted = ("message",)
    kind: str
    seam: str
    iteration: int
    message: str


class IntegrityDisposition(EventPayload):
    """A run with integrity checks ended: each check's row (armed, checked, findings)."""

    event_type = "agentfootprint.integrity.disposition"
    status: str
    posture: str
    rows: list[Json]


class McpToolsListed(EventPayload):
    """Reserved: registered for custom emitters; MCP tools are reported through ``tools.offered``."""

    event_type = "agentfootprint.mcp.tools_listed"
    model_config = ConfigDict(extra="allow")


__all__ = [
    "AgentBudgetExhausted",
    "AgentIterationEnd",
    "AgentIterationStart",
    "AgentRouteDecided",
    "AgentRunConfigured",
    "AgentTurnEnd",
    "AgentTurnStart",
    "ArtifactsMinted",
    "ArtifactsRefused",
    "CheckinDecision",
    "CheckinRequest",
    "CompositionBranchComplete",
    "CompositionEnter",
    "CompositionExit",
    "CompositionForkStart",
    "CompositionIterationStart",
    "CompositionRouteDecided",
    "ContextBudgetPressure",
    "ContextEvaluated",
    "ContextEvicted",
    "ContextInjected",
    "ContextSlotComposed",
    "CostBudgetWarning",
    "CostUsage",
    "CredentialAcquired",
    "CredentialAuthorizationRequired",
    "CredentialFailed",
    "CredentialRequested",
    "CustomEventPayload",
    "ErrorProvider",
    "ErrorRun",
    "ErrorTool",
    "EventPayload",
    "IntegrityContextError",
    "IntegrityDisposition",
    "McpToolsListed",
    "MemoryWritten",
    "MiddlewareDecision",
    "PauseRequested",
    "PauseResumed",
    "PermissionCheck",
    "PermissionHalt",
    "ReliabilityCircuitClosed",
    "ReliabilityCircuitOpened",
    "ReliabilityCircuitRejected",
    "ReliabilityFailFast",
    "ReliabilityRecovered",
    "ReliabilityRetried",
    "SkillActivated",
    "SkillGraphDeclared",
    "StreamLlmEnd",
    "StreamLlmStart",
    "StreamToken",
    "StreamToolEnd",
    "StreamToolStart",
    "ToolsOffered",
    "ToolsRepeatedCall",
    "ToolsSessionCloseFailed",
    "ToolsSessionClosed",
    "ToolsSessionReused",
    "ToolsSessionStarted",
    "ValidationArgsInvalid",
    "WarningToolRaised",
    "catalogue_class",
    "parse_payload",
    "payload_class",
    "payload_classes",
    "payload_mapping",
]
