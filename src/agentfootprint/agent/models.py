"""What the Agent returns and stores: results, early-stop reports, conversation and pause checkpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agentfootprint.providers import Usage

if TYPE_CHECKING:
    from agentfootprint.agent.record import RunRecord
    from agentfootprint.events import AgentEvent
    from agentfootprint.flow import FlowSnapshot

CONVERSATION_FORMAT: Literal["agentfootprint.conversation"] = "agentfootprint.conversation"
PAUSE_FORMAT: Literal["agentfootprint.agent.pause"] = "agentfootprint.agent.pause"


class StoppedEarly(BaseModel):
    """A configured limit ended the turn: never thrown, recorded in committed state."""

    model_config = ConfigDict(frozen=True)

    reason: Literal["max-iterations", "cost-budget", "max-steps"]
    iteration: int
    pending_tool_calls: int
    answer_was_empty: bool = False
    wrapped_up: bool = False
    """True when the turn asked once more with the tools withheld, and that answer is the one handed back."""


class RunResult(BaseModel):
    """One turn's outcome: the answer, or a pause with the question and a JSON checkpoint to resume it."""

    answer: str | None = None
    status: Literal["completed", "paused"]
    run_id: str
    question: str | None = None
    request_id: str | None = None
    """When paused: the id of what the run asks (name it in a consent decision: ``check_in_approved(result)``)."""
    resumed_from: str | None = None
    """On a resumed leg: the run id of the leg it continues (a pause and its resume are one turn, two runs)."""
    questions: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    session_id: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    iterations: int = 0
    stopped_early: StoppedEarly | None = None
    output: Any = None
    extensions: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    """Problems the developer should fix, one line each (e.g. a tool that raised); the model saw them as errors."""
    _record: Any = PrivateAttr(default=None)

    @property
    def record(self) -> RunRecord | None:
        """This run's record (snapshot, events, conversation, input): what explain, audit and reports read.
        None on a result rebuilt from JSON (the record is not part of the result's JSON form)."""
        return self._record  # type: ignore[no-any-return]

    def recorded(self) -> RunRecord:
        """This run's record, or ``NoRunRecordError`` for a result that has none (rebuilt from JSON)."""
        if self._record is None:
            from agentfootprint.agent.errors import NoRunRecordError

            raise NoRunRecordError()
        return self._record  # type: ignore[no-any-return]

    def last_snapshot(self) -> FlowSnapshot | None:
        """This run's served snapshot: a result is a recorded run wherever explain, audit or a report reads one."""
        return self.recorded().snapshot

    def last_events(self) -> list[AgentEvent]:
        """This run's own events (kept with ``.keep_events()``), redacted."""
        return self.recorded().last_events()

    def with_record(self, record: RunRecord) -> RunResult:
        """This result holding ``record`` (set once, by the runner that made both)."""
        self._record = record
        return self

    def __eq__(self, other: object) -> bool:
        """Equal by what the result says (its fields): the record it holds is not part of its value."""
        if not isinstance(other, RunResult):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        """The answer (or the pending question), then one ``warning:`` line per warning."""
        head = (self.answer or "") if self.status == "completed" else f"(paused) {self.question or ''}"
        return "\n".join([head, *(f"warning: {w}" for w in self.warnings)])

    """What each extension added to this result (``Extension.result``), by extension name."""

    @property
    def paused(self) -> bool:
        return self.status == "paused"


class AgentStamp(BaseModel):
    """Which agent recorded a checkpoint: present only when that agent's id was chosen (``Agent.create(id=...)``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)


class RunRedaction(BaseModel):
    """The redaction a paused run was covered by: key names, and each pattern as a reference (its SHA-256), never
    the pattern itself: a resume covers the resumed leg by the keys, and refuses unless it has every pattern."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: list[Annotated[str, Field(min_length=1, max_length=512)]] = Field(default_factory=list, max_length=1000)
    patterns: list[Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]] = Field(
        default_factory=list, max_length=1000
    )


class ConversationCheckpoint(BaseModel):
    """A conversation as JSON: store it anywhere and continue it with ``run(..., continue_from=...)``."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["agentfootprint.conversation"] = CONVERSATION_FORMAT
    version: Literal[1] = 1
    run_id: str = Field(max_length=200)
    history: list[dict[str, Any]] = Field(max_length=100_000)
    identity: dict[str, Any] | None = None
    last_completed_iteration: int = Field(default=0, ge=0)
    original_input: str | None = None
    extensions: dict[str, Any] | None = None
    """What extensions carry across turns (``Extension.checkpoint``), by name; absent when none did."""
    folded: list[dict[str, Any]] | None = Field(default=None, max_length=100_000)
    """One folded span per compaction, oldest first: what each summary in ``history`` stands for."""
    window_measure: dict[str, int] | None = None
    """The provider's token count of the last request and that request's characters (a counted window's scale)."""
    agent: AgentStamp | None = None
    """The recording agent's chosen id (absent when it took the default)."""
    seal: str | None = Field(default=None, max_length=128)
    """HMAC-SHA256 of the rest, when the recording agent has a ``checkpoint_key``."""

    def to_json(self) -> dict[str, Any]:
        """The checkpoint as plain JSON (optional parts only when present)."""
        return self.model_dump(mode="json", exclude=self._absent())

    def to_json_text(self) -> str:
        """``json.dumps(self.to_json())`` up to spacing, written directly (refused for text only Python's encoder
        writes, such as a lone surrogate)."""
        return self.model_dump_json(exclude=self._absent())

    def _absent(self) -> set[str] | None:
        return {k for k in ("extensions", "folded", "window_measure", "agent", "seal") if not getattr(self, k)} or None


class AgentPauseCheckpoint(BaseModel):
    """A paused turn: the flow checkpoint plus who it is for and what it asked."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["agentfootprint.agent.pause"] = PAUSE_FORMAT
    version: Literal[1] = 1
    run_id: str = Field(max_length=200)
    question: str
    tool_call_id: str
    tool_name: str
    identity: dict[str, Any] | None = None
    session_id: str | None = Field(default=None, max_length=200)
    flow: dict[str, Any]
    contains_unredacted_values: bool = True
    request_id: str | None = Field(default=None, max_length=200)
    """The id of what the run asks (a consent decision must name it); derived from the turn and the exact call."""
    redaction: RunRedaction | None = None
    """The redaction the paused run was covered by (its keys, and references to its patterns)."""
    agent: AgentStamp | None = None
    seal: str | None = Field(default=None, max_length=128)

    def to_json(self) -> dict[str, Any]:
        """The checkpoint as plain JSON (optional parts only when present)."""
        exclude = {k for k in ("redaction", "agent", "seal") if not getattr(self, k)}
        return self.model_dump(mode="json", exclude=exclude or None)
