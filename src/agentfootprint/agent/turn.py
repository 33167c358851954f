"""The agent's turn state, typed: every field is one recorded state key, read and written through the stage's scope.

The recorded shape (what ``backtrack``, snapshots and checkpoints see) is plain JSON under these keys; this module
is the one place that names them, so stages and extensions never spell a state key by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import (
    Any,
    Generic,
    Literal,
    NotRequired,  # pydantic validates these (the door's checkpoint checks)
    TypeVar,
    overload,
)

from typing_extensions import TypedDict

from agentfootprint.flow import Scope
from agentfootprint.flow._namespace import MISSING

T = TypeVar("T")


class RunInfo(TypedDict, total=False):
    """Who and what the turn runs for (``run`` key)."""

    run_id: str
    agent: str
    session_id: str | None
    identity: dict[str, Any] | None
    member: bool


class HistoryEntry(TypedDict, total=False):
    """One conversation turn as a provider ``Message`` (``history`` key)."""

    role: Literal["user", "assistant", "tool"]
    content: str
    tool_call_id: str | None
    tool_name: str | None
    tool_calls: list[dict[str, Any]]
    reasoning: list[dict[str, Any]]


class InjectionRecord(TypedDict, total=False):
    """A piece of context that landed in a slot this iteration, with the trigger that let it in."""

    source: str
    source_id: str
    trigger: str
    reason: str
    since_iteration: int
    text: str
    role: str


class ToolCallRecord(TypedDict, total=False):
    """A tool call the model asked for, as plain data (``args_error`` when its arguments were unreadable)."""

    id: str
    name: str
    args: dict[str, Any]
    args_error: str


class ModelReply(TypedDict):
    """The last model response (``last_response`` key); ``reasoning`` only when the model returned some."""

    content: str
    tool_calls: list[ToolCallRecord]
    finish_reason: str | None
    model: str | None
    usage: dict[str, int]
    attempts: list[dict[str, Any]]
    reasoning: NotRequired[list[dict[str, Any]]]


class ModelCallRecord(TypedDict):
    """What went into the last model call (``llm_call`` key)."""

    iteration: int
    model: str
    seed: int | None
    message_count: int
    tools: list[str]
    wire: NotRequired[dict[str, Any]]
    """The wire manifest: what crossed to the model after every hook (``agent/_integrity_wire.py``)."""


class ToolResultRecord(TypedDict, total=False):
    """One executed tool call and its result (appended to ``tool_results``)."""

    call_id: str
    name: str
    args: dict[str, Any]
    content: str
    is_error: bool
    error_code: str | None
    iteration: int
    truncated: bool
    elapsed_ms: float
    check_in: str
    decided_by: str | None
    answered_by: str
    typed_answer: bool
    ablated: bool
    """True when ``without("tool#n")`` blanked this result for an ablation rerun."""


class ToolReturn(TypedDict):
    """The last iteration's tool results, as the injection engine's ``on_tool_return`` triggers read them."""

    name: str
    call_id: str
    content: str
    is_error: bool


class UsageTotal(TypedDict, total=False):
    """Token counts summed over the turn's model calls (``usage_total`` key): ``Usage`` as JSON."""

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int


class StoppedEarlyRecord(TypedDict):
    reason: Literal["max-iterations", "cost-budget"]
    iteration: int
    pending_tool_calls: int
    answer_was_empty: bool
    wrapped_up: NotRequired[bool]


class _Key(Generic[T]):
    """One turn-state field: reads and writes the recorded key of the same name through the stage's scope."""

    __slots__ = ("default", "key", "optional")

    def __init__(self, *, optional: bool = False, default: Any = None) -> None:
        self.key = ""
        self.optional = optional
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    @overload
    def __get__(self, obj: None, owner: type) -> _Key[T]: ...

    @overload
    def __get__(self, obj: Turn, owner: type) -> T: ...

    def __get__(self, obj: Turn | None, owner: type) -> T | _Key[T]:
        if obj is None:
            return self
        value = obj.scope._lookup(self.key)  # what scope.get / scope[key] read, one call fewer
        if value is MISSING:
            if self.optional:
                return self.default  # type: ignore[no-any-return]
            raise KeyError(self.key)
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: Turn, value: T) -> None:
        obj.scope[self.key] = value


class Turn:
    """Typed access to one stage's view of the agent's turn state (each attribute is one recorded key)."""

    __slots__ = ("scope",)

    run: _Key[RunInfo] = _Key()
    user_message: _Key[str] = _Key()
    history: _Key[Sequence[HistoryEntry]] = _Key()
    iteration: _Key[int] = _Key()
    activated_skills: _Key[Sequence[str]] = _Key()
    last_tool_results: _Key[Sequence[ToolReturn]] = _Key()
    usage_total: _Key[UsageTotal] = _Key()
    system_prompt_injections: _Key[Sequence[InjectionRecord]] = _Key(optional=True, default=())
    message_injections: _Key[Sequence[InjectionRecord]] = _Key(optional=True, default=())
    tool_injections: _Key[Sequence[dict[str, Any]]] = _Key()
    context_evaluated: _Key[dict[str, Any]] = _Key()
    system_prompt: _Key[str] = _Key(optional=True, default="")
    message_slot: _Key[Sequence[dict[str, Any]]] = _Key(optional=True, default=())
    tool_specs: _Key[Sequence[dict[str, Any]]] = _Key()
    window_dropped: _Key[Sequence[dict[str, Any]]] = _Key()
    window_records: _Key[Sequence[dict[str, Any]]] = _Key(optional=True, default=())
    window_chars: _Key[int] = _Key(optional=True, default=0)
    window_measure: _Key[dict[str, Any] | None] = _Key(optional=True)
    folded_spans: _Key[Sequence[dict[str, Any]]] = _Key(optional=True, default=())
    cache_markers: _Key[Sequence[dict[str, Any]]] = _Key()
    budget_pressure: _Key[Sequence[dict[str, Any]]] = _Key()
    llm_call: _Key[ModelCallRecord] = _Key()
    last_response: _Key[ModelReply] = _Key()
    failed_call: _Key[dict[str, Any]] = _Key()
    """A model call that failed after retries: its iteration, error code and every attempt (on the failed commit)."""
    pending_tool_calls: _Key[int] = _Key()
    cost_total: _Key[float] = _Key(optional=True, default=0.0)
    budget_exceeded: _Key[bool] = _Key(optional=True, default=False)
    tool_results: _Key[Sequence[ToolResultRecord]] = _Key(optional=True, default=())
    tool_choice_margins: _Key[Sequence[dict[str, Any]]] = _Key(optional=True, default=())
    answer: _Key[str] = _Key()
    stopped_early: _Key[StoppedEarlyRecord | None] = _Key(optional=True)
    member_message: _Key[str] = _Key()
    run_config: _Key[dict[str, str] | None] = _Key(optional=True)
    clock: _Key[dict[str, Any] | None] = _Key(optional=True)
    """The turn's clock (``.time()``): ``now`` (UTC, ISO), ``zone`` and where each came from."""
    clock_rows: _Key[Sequence[dict[str, Any]]] = _Key(optional=True, default=())
    """What the clock noticed: a resume that passed another ``time`` (``clock-on-resume``), never applied."""
    """What ``.configure()`` resolved for this run (model, instructions); absent on an agent without it."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def append(self, key: _Key[Sequence[T]], *items: T) -> None:
        """Grow a list field by ``items`` (recorded as an append: the log keeps only what was added)."""
        self.scope.append(key.key, *items)


TURN_KEYS: frozenset[str] = frozenset(name for name, value in vars(Turn).items() if isinstance(value, _Key))
"""Every state key the agent's own stages own; extensions record under other keys."""


__all__ = [
    "TURN_KEYS",
    "HistoryEntry",
    "InjectionRecord",
    "ModelCallRecord",
    "ModelReply",
    "RunInfo",
    "StoppedEarlyRecord",
    "ToolCallRecord",
    "ToolResultRecord",
    "ToolReturn",
    "Turn",
    "UsageTotal",
]
