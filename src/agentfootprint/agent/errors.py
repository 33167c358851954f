"""Typed refusals of the Agent runner; each has a stable ``code``."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import InvalidCheckpointError


class AgentBuildError(AgentFootprintError, ValueError):
    """The agent cannot be built as configured (duplicate names, bad limits, ...); names the culprit."""

    code = "ERR_AGENT_BUILD"


class InvalidLimitError(AgentBuildError):
    """A limit or default that cannot be used (``cost_budget``, ``max_tool_result_chars``, ...); ``option`` names
    it, and the message says what is accepted without quoting what was given."""

    code = "ERR_INVALID_LIMIT"

    def __init__(self, option: str, accepted: str) -> None:
        super().__init__(f"{option} {accepted}")
        self.option = option


class RunInFlightError(AgentFootprintError, RuntimeError):
    """This agent instance is already running a turn; one instance runs one turn at a time."""

    code = "ERR_RUN_IN_FLIGHT"


class PendingQuestionError(AgentFootprintError, RuntimeError):
    """The last run paused to ask a person something; answer it with ``resume`` or drop it with ``abandon_pause``."""

    code = "ERR_PENDING_QUESTION"

    def __init__(self, message: str, *, question: str | None, tool_call_id: str | None) -> None:
        super().__init__(message)
        self.question = question
        self.tool_call_id = tool_call_id


class NoConversationError(AgentFootprintError, RuntimeError):
    """``follow_up`` needs a completed run on this agent to continue."""

    code = "ERR_NO_CONVERSATION"


class InvalidConversationError(InvalidCheckpointError):
    """A ``continue_from`` / ``resume_on_error`` conversation that is malformed or inconsistent; names the field."""

    code = "ERR_INVALID_CONVERSATION"


class ConversationMismatchError(AgentFootprintError, ValueError):
    """A stored conversation handed to an agent that provably did not record it: both agents chose an id
    (``Agent.create(id=...)``) and the ids differ. Agents that never chose an id are never refused."""

    code = "ERR_CONVERSATION_MISMATCH"

    def __init__(self, door: str, *, stored_agent_id: str, agent_id: str) -> None:
        super().__init__(
            f"{door}: this conversation was recorded by agent '{stored_agent_id[:80]}' and was handed to agent "
            f"'{agent_id[:80]}'; both chose their id and the ids differ. Continue it on the agent whose id is "
            f"'{stored_agent_id[:80]}', or give both agents the same id if handing it over is intended"
        )
        self.door = door
        self.stored_agent_id = stored_agent_id
        self.agent_id = agent_id


class ResumeIdentityConflictError(InvalidCheckpointError):
    """A resume named a caller who is not the paused run's caller (also when the paused run had none): refused
    before anything runs. ``field`` is ``"identity"``."""

    code = "ERR_RESUME_IDENTITY_CONFLICT"

    def __init__(self, door: str) -> None:
        super().__init__(
            f"{door}: the identity given is not the caller the run paused for; a paused turn resumes only for its "
            "own caller (omit identity to resume for the caller on the checkpoint)",
            field="identity",
        )
        self.door = door


class DecisionRequiredError(AgentFootprintError, ValueError):
    """A consent gate (check-in) was answered with something that is not a decision; the tool never runs.
    ``received`` names only the type of what arrived."""

    code = "ERR_DECISION_REQUIRED"

    def __init__(self, *, received: str, request_id: str | None = None) -> None:
        super().__init__(
            "the run is paused on a consent request: answer it with a decision — "
            f"check_in_approved(request, by=...) or check_in_declined(request, by=...); received {received}"
        )
        self.gate = "check_in"
        self.received = received
        self.request_id = request_id


class ResumeDecisionError(AgentFootprintError, ValueError):
    """A decision that does not answer the request the run is paused on: it names no request (``no-request``),
    another one (``other-request``), or one a resume already answered (``spent``). The tool never runs."""

    code = "ERR_RESUME_DECISION"

    _WHY: ClassVar[dict[str, str]] = {
        "no-request": "the decision names no request; build it from the pause: check_in_approved(paused, by=...)",
        "other-request": "the decision answers another request than the one this run is paused on",
        "spent": "this consent request was already answered by an earlier resume; a consent is spent once",
    }

    def __init__(self, reason: str, *, request_id: str | None = None) -> None:
        super().__init__(self._WHY.get(reason, "the decision does not answer this run's consent request"))
        self.reason = reason
        self.request_id = request_id


class ResumeRedactionError(AgentFootprintError, ValueError):
    """A paused run was covered by a redaction pattern the resume cannot compile: a caller's own pattern is never
    compiled from a checkpoint. Pass the same ``redact`` to ``resume()`` (or declare it on the agent)."""

    code = "ERR_RESUME_REDACTION"

    def __init__(self, reason: str = "unknown-pattern", *, missing: int = 1) -> None:
        super().__init__(
            f"the paused run was covered by {missing} redaction pattern(s) this resume does not have: pass the same "
            "redact=... to resume() (or declare the pattern on the agent); patterns are never compiled from a "
            "checkpoint"
        )
        self.reason = reason
        self.missing = missing


class RunCheckpointError(AgentFootprintError):
    """A run crashed mid-way; ``checkpoint`` is the last good conversation for ``resume_on_error``.

    The raised object is also an instance of the original error's class, so ``except ProviderError`` still works."""

    code = "ERR_RUN_CHECKPOINT"
    checkpoint: dict[str, Any]
    cause: BaseException | None


class RunDataError(AgentFootprintError, ValueError):
    """A run met data it cannot use (a model of the run refused it); names the model and the field, never the
    value."""

    code = "ERR_RUN_DATA"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field

    @classmethod
    def from_validation(cls, err: Any) -> RunDataError:
        from agentfootprint.errors import validation_field

        field = validation_field(err, "value")
        title = str(getattr(err, "title", "") or "value")[:80]
        return cls(f"the run met data its {title} cannot hold (field '{field[:120]}')", field=field)


class OutputSchemaError(AgentFootprintError, ValueError):
    """The answer did not match the output schema; ``issues`` name each path and what was expected, ``stage`` which
    half failed (``json-parse`` / ``schema-validate``) and ``raw_output`` keeps the answer for triage (never in
    the message)."""

    code = "ERR_OUTPUT_SCHEMA"

    def __init__(
        self,
        message: str,
        *,
        issues: list[dict[str, str]],
        raw_output: str | None = None,
        stage: str = "schema-validate",
    ) -> None:
        super().__init__(message)
        self.issues = issues
        self.raw_output = raw_output
        self.stage = stage


class OptionUnavailableError(AgentBuildError):
    """A builder option whose behaviour needs a subsystem this project does not have; refused by name at build,
    never accepted and ignored. ``option`` names it; ``needs`` says what it would need."""

    code = "ERR_OPTION_UNAVAILABLE"

    def __init__(self, option: str, needs: str) -> None:
        super().__init__(f"{option}() is not available in agentfootprint: it needs {needs}")
        self.option = option
        self.needs = needs


class NoOutputSchemaError(AgentBuildError):
    """A typed read of the answer (``parse_output``, ``run_typed``) on an agent built without ``.output_schema()``;
    not an ``OutputSchemaError``: nothing was judged."""

    code = "ERR_NO_OUTPUT_SCHEMA"

    def __init__(self, door: str, agent: str) -> None:
        super().__init__(f"{door}: agent '{agent[:80]}' has no output_schema; add .output_schema(Model) when building")
        self.door = door


class OutputStrategyUnsupportedError(AgentFootprintError, ValueError):
    """An output strategy (``tool-forced`` / ``native``) the provider does not put on its wire; refused at run start,
    before any model call (a quiet fall back to asking in prose would be config that lies)."""

    code = "ERR_OUTPUT_STRATEGY_UNSUPPORTED"

    def __init__(self, *, strategy: str, provider: str, while_thinking: bool = False) -> None:
        what = "a forced tool choice" if strategy == "tool-forced" else "a structured-output format"
        why = "refuses one while the agent's thinking budget is on" if while_thinking else "does not declare that it"
        super().__init__(
            f"output strategy '{strategy}' needs {what} on the wire, and provider '{provider[:80]}' {why}"
            f"{' carries one' if not while_thinking else ''}; use strategy='instruct' with retries=N (works on every "
            "provider) or a provider that carries it"
        )
        self.strategy = strategy
        self.provider = provider


class PolicyHaltError(AgentFootprintError, RuntimeError):
    """A permission checker answered ``halt``: the turn ends here."""

    code = "ERR_POLICY_HALT"


class UnknownSourceError(AgentFootprintError, KeyError):
    """``agent.without(...)`` named an id that is not one of the agent's context sources or tools.

    ``suggestions`` holds the agent's ids closest to each unknown one (a typo such as ``vip-overide-fact``).
    """

    code = "ERR_UNKNOWN_SOURCE"

    def __init__(self, message: str, *, suggestions: tuple[str, ...] = (), code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.suggestions = suggestions

    @classmethod
    def for_ids(cls, unknown: list[str], known: Iterable[str]) -> UnknownSourceError:
        """The error for ``unknown`` ids, suggesting the closest of the ``known`` ones."""
        pool = sorted(str(k) for k in known)
        near: list[str] = []
        for name in unknown:
            near += [m for m in difflib.get_close_matches(str(name), pool, n=2, cutoff=0.75) if m not in near]
        hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
        named = ", ".join(map(str, unknown))[:300]
        return cls(f"agent has no context source or tool named: {named}{hint}", suggestions=tuple(near))

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.code


class MemberIdentityError(AgentFootprintError, RuntimeError):
    """An agent's chart is running where no run reaches it (mounted by a foreign executor with no run)."""

    code = "ERR_MEMBER_NO_IDENTITY"

    def __init__(self) -> None:
        super().__init__(
            "an agent's chart ran with no run to serve: mount agents through a composition (Sequence, Parallel, "
            "Conditional, Loop) or call agent.run(); it never runs under its instance's last run"
        )


class ParentRunRefusedError(AgentFootprintError, PermissionError):
    """A ``parent_run`` that is not a live link this process issued (forged, copied, or already closed)."""

    code = "ERR_PARENT_RUN_REFUSED"

    def __init__(self, door: str, reason: str = "parent_run is not a live run link") -> None:
        super().__init__(f"{door}: {reason}; a member never runs under a run it cannot prove")


_COMBINED: dict[type[BaseException], type[BaseException]] = {}


def as_run_checkpoint_error(
    exc: BaseException, checkpoint: dict[str, Any], *, scrub: Callable[[str], str] | None = None
) -> BaseException:
    """The crash as a ``RunCheckpointError`` that is still an instance of the original error's class; ``scrub``
    (the run's redaction) cleans its message of any secret the run learned."""
    cls = type(exc)
    args = tuple(scrub(a) if (scrub is not None and isinstance(a, str)) else a for a in exc.args)
    try:
        combined = _COMBINED.get(cls)
        if combined is None:
            combined = type(cls.__name__, (cls, RunCheckpointError), {"__module__": cls.__module__})
            _COMBINED[cls] = combined
        err: Any = cls.__new__(combined, *args)
        err.__dict__.update(getattr(exc, "__dict__", {}))
        if "__notes__" in err.__dict__:
            err.__dict__["__notes__"] = list(err.__dict__["__notes__"])
        err.args = args
    except Exception:
        text = str(exc)[:300]
        err = RunCheckpointError(f"run failed: {type(exc).__name__}: {scrub(text) if scrub else text}")
    err.checkpoint = checkpoint
    err.cause = exc
    err.__cause__ = exc
    err.__traceback__ = exc.__traceback__
    if isinstance(err, RunCheckpointError) and type(err) is RunCheckpointError:
        for note in list(getattr(exc, "__notes__", [])):
            err.add_note(note)
    return err  # type: ignore[no-any-return]


class MessageRoleError(AgentFootprintError, ValueError):
    """A messages-slot injection declares a role the provider cannot carry; refused at run start, before any call."""

    code = "ERR_MESSAGE_ROLE"

    def __init__(self, *, role: str, source_id: str, provider: str) -> None:
        super().__init__(
            f"context '{source_id[:80]}' lands in the messages slot as role '{role[:20]}', which provider "
            f"'{provider[:80]}' cannot carry in its message list; use the system_prompt slot or another role"
        )
        self.role = role
        self.source_id = source_id
        self.provider = provider


class NoRunRecordError(AgentFootprintError, ValueError):
    """A result that carries no record (a result rebuilt from JSON has none): explain its saved recording instead."""

    code = "ERR_NO_RUN_RECORD"

    def __init__(self) -> None:
        super().__init__(
            "this result carries no record (a result rebuilt from JSON has none): pass its saved recording instead"
        )
