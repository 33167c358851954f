"""One run's dependencies, carried explicitly by the engine (``scope.deps``): config, events, identity, hooks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentfootprint.agent._repeated import RepeatedCalls
from agentfootprint.agent.errors import MemberIdentityError
from agentfootprint.agent.extension import (
    CallModel,
    CallTool,
    Extension,
    RunContext,
    ToolCallRequest,
)
from agentfootprint.agent.member_run import resolve_parent_run
from agentfootprint.context.window import entry_chars
from agentfootprint.events import AgentEvent, EventDispatcher, EventSink, PayloadArg
from agentfootprint.flow import CancelToken, FlowResult, RedactionPolicy, Redactor, Scope, thaw
from agentfootprint.identity import Identity, coerce_identity
from agentfootprint.providers import LLMRequest, LLMResponse, Message
from agentfootprint.tools import RunStoppingError, Tool, ToolOutcome

if TYPE_CHECKING:
    from agentfootprint.agent.config import AgentConfig
    from agentfootprint.agent.turn import Turn


class RunEvents:
    """The run's view of its event sink: every event is redacted with the run's policy (not only the agent's)."""

    __slots__ = ("_meta", "_redact", "_sink", "has_listeners")

    def __init__(self, sink: EventSink, redactor: Redactor, meta: Mapping[str, Any] | None = None) -> None:
        self._sink = sink
        self._redact: Callable[[Any], Any] | None = _redacting(redactor) if redactor.active else None
        self._meta = dict(meta) if meta else None
        self.has_listeners: Callable[[str], bool] = sink.has_listeners
        """Whether emitting an event type would reach anyone: the sink's own check (no call in between)."""

    def emit(
        self,
        event_type: str,
        payload: PayloadArg = None,
        *,
        run_id: str | None = None,
        runtime_stage_id: str | None = None,
        iteration: int | None = None,
        timestamp: float | None = None,
        redact: Callable[[Any], Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> AgentEvent | None:
        return self._sink.emit(
            event_type,
            payload,
            run_id=run_id,
            runtime_stage_id=runtime_stage_id,
            iteration=iteration,
            timestamp=timestamp,
            redact=redact or self._redact,
            meta={**self._meta, **meta} if (self._meta and meta) else (meta or self._meta),
        )

    def is_known(self, event_type: str) -> bool:
        return self._sink.is_known(event_type)

    def listen(self, type_or_glob: str, fn: Callable[[AgentEvent], Any]) -> Callable[[], None]:
        """Subscribe ``fn`` on the sink (events arrive redacted); returns unsubscribe (a no-op for a bare sink)."""
        on = getattr(self._sink, "on", None)
        if on is None:
            return lambda: None
        off: Callable[[], None] = on(type_or_glob, fn)
        return off

    def register_type(self, event_type: str) -> str:
        return self._sink.register_type(event_type)


def _redacting(redactor: Redactor) -> Callable[[Any], Any]:
    def redact(payload: Any) -> Any:
        redactor.observe("", payload)
        return redactor.redact(payload)

    return redact


class AgentRun:
    """Per-run dependencies of an agent's chart: not state (never recorded), handed to every stage explicitly."""

    def __init__(
        self,
        config: AgentConfig,
        events: EventSink,
        run_id: str,
        *,
        identity: Identity | None = None,
        session_id: str | None = None,
        seed: int | None = None,
        redactor: Redactor | None = None,
        original_input: str | None = None,
        mounted: bool = False,
        agent_state: dict[str, dict[str, Any]] | None = None,
        continued: dict[str, Any] | None = None,
        resumed: bool = False,
        request: Any = None,
        link: str | None = None,
        turn_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
        signal: CancelToken | None = None,
    ) -> None:
        self.config = config
        self.run_id = run_id
        self.turn_id = turn_id or run_id
        """The turn this run serves: its first leg's run id (a resumed leg has a fresh run id, the same turn)."""
        self.identity = identity
        """Who the caller said the run is for (what tools see); None when they said nothing."""
        self.session_id = session_id
        self.memory_identity = memory_identity_of(identity, session_id)
        """The namespace memory is scoped to: the caller's identity, else ``{conversation_id: session_id}``."""
        self.seed = seed
        self.redactor = redactor if redactor is not None else Redactor(RedactionPolicy())
        self.events = RunEvents(events, self.redactor, meta)
        self.signal = signal if signal is not None else CancelToken()
        self.scope: Scope | None = None
        """The scope of the stage running now (what ``last_snapshot()`` reads mid-run)."""
        self.original_input = original_input
        self.mounted = mounted
        self.resumed = resumed
        self.request = request
        """The request this run serves (a host's served turn), or None: a member sees its linked run's only."""
        self.link = link
        """The live link of the composition run this run serves (for a helper run of the same run), or None."""
        self.cancelled = asyncio.Event()
        self.answer_rewrites: list[str] = []
        """Extensions whose ``on_answer`` changed the final answer in this leg, in order."""
        self.warnings: list[str] = []
        """Problems the developer should see (a tool that raised), one line each; copied to ``RunResult``."""
        self.last_completed_iteration = 0
        self.wire_memo: Any = None
        """The wire manifest's digests of this run's parts and its last call's view (``WireMemo``): the next call
        records only what follows the prefix it shares with that one."""
        self.wire_key: bytes | None = None
        """The run's random key for wire digests under redaction (never recorded: digests cannot be guessed back)."""
        self.budget_warned = False
        self.empty_warned = False
        self.resume_time: dict[str, Any] | None = None
        """The ``time`` a resume passed, read: taken once by the resumed leg's tool-calls stage."""
        self.answered_ask: dict[str, Any] | None = None
        """The typed ask this run's resume answered (tool, call id, re-asks), or None."""
        self.repeated_calls = RepeatedCalls()
        """This run's tally of identical calls and results (fingerprints only; never recorded)."""
        self.agent_state: dict[str, dict[str, Any]] = agent_state if agent_state is not None else {}
        self.ext_state: dict[str, dict[str, Any]] = {}
        self.continued: dict[str, Any] = dict(continued or {})
        """Extension data a continued conversation carried, by extension name (for ``restore``)."""
        self.final_flow: FlowResult | None = None
        """The engine's result once the leg ended (its served state is read, and so copied, only when asked)."""
        self.run_input: dict[str, Any] | None = None
        """What the turn was given (message, prior history, identity, session, seed): kept on its record."""
        self.tool_services: dict[str, Any] = {}
        """What extensions hand to tools for this leg (``RunContext.offer_to_tools``), read as ``ctx.service``."""
        self.provided: dict[str, dict[str, Tool]] = {}
        """Tools extensions provided for the current iteration, by chart namespace."""
        self._message_caches: dict[str, tuple[list[Any], list[Message]]] = {}
        self._chars_caches: dict[str, tuple[list[Any], list[int]]] = {}

    @staticmethod
    def of(scope: Scope, config: AgentConfig, events: EventSink | None = None) -> AgentRun:
        """The run ``config``'s chart serves, as the engine handed it; else, in a chart a caller built, the run its
        mount input names (``parent_run``: a live link; ``member_identity``: an identity); else refused."""
        run = scope.deps
        if isinstance(run, AgentRun) and run.config is config:
            run.scope = scope
            return run
        return AgentRun._adopt(scope, config, events)

    @staticmethod
    def _adopt(scope: Scope, config: AgentConfig, events: EventSink | None) -> AgentRun:
        link = scope.get("parent_run")
        sink = events if events is not None else EventDispatcher()
        if link is not None:
            record = resolve_parent_run(link, f"agent '{config.name[:80]}' (mounted)")
            run = AgentRun(
                config,
                sink,
                record.run_id,
                identity=record.identity,
                session_id=record.session_id,
                redactor=Redactor(config.redaction),
                mounted=True,
                request=record.request,
                link=record.link,
            )
        else:
            given = scope.get("member_identity")
            if given is None:
                raise MemberIdentityError()
            identity = coerce_identity(thaw(given))
            run_id = scope.run_id or ""
            run = AgentRun(config, sink, run_id, identity=identity, redactor=Redactor(config.redaction), mounted=True)
        scope.bind_deps(run)
        run.scope = scope
        return run

    def release(self) -> None:
        """The leg is over: drop the links back to its last stage and services, so its record is freed as soon as
        nothing holds it (no reference cycle left for the garbage collector to find)."""
        self.scope = None
        self.tool_services = {}

    # -- events -----------------------------------------------------------------------------------------------
    def emit(
        self, event_type: str, payload: Any, *, runtime_stage_id: str | None = None, iteration: int | None = None
    ) -> None:
        if self.events.has_listeners(event_type):
            self.events.emit(
                event_type, payload, run_id=self.run_id, runtime_stage_id=runtime_stage_id, iteration=iteration
            )

    # -- extensions -------------------------------------------------------------------------------------------
    def ctx(self, ext: Extension, turn: Turn | None = None) -> RunContext:
        return RunContext(self, ext, turn)

    def model_chain(self, innermost: CallModel, turn: Turn | None = None) -> CallModel:
        """``innermost`` wrapped by every extension's ``wrap_model_call`` (the first one used is outermost)."""
        call = innermost
        for ext in reversed(self.config.hooks.wrap_model_call):
            call = _wrap_model(ext, self.ctx(ext, turn), call)
        return call

    def tool_chain(self, innermost: CallTool, turn: Turn | None = None) -> CallTool:
        """``innermost`` wrapped by every extension's ``wrap_tool_call``; a raising hook is named, not hidden."""
        call = innermost
        for ext in reversed(self.config.hooks.wrap_tool_call):
            call = _wrap_tool(ext, self.ctx(ext, turn), call)
        return call

    async def call_model(self, request: LLMRequest) -> LLMResponse:
        """A model call through the extensions' chain, without streaming (what hooks use to ask again)."""
        return await self.model_chain(self.config.provider.complete)(request)

    async def each(self, hook: str, *args: Any, turn: Turn | None = None) -> None:
        """Await ``hook(ctx, *args)`` on every extension that overrides it, in ``.use()`` order."""
        for ext in getattr(self.config.hooks, hook):
            await getattr(ext, hook)(self.ctx(ext, turn), *args)

    # -- conversation -----------------------------------------------------------------------------------------
    def messages_for(self, history: Sequence[Any], key: str = "") -> Sequence[Message]:
        """History entries as provider messages; converts only entries added since the last call (linear cost).

        Keyed by the chart namespace (members re-entered by a Loop or run side by side never share a cache);
        a history that is not an extension of the cached one is converted afresh. The answer is the cache itself,
        read-only: a caller copies it into the request it builds."""
        sources, cache = self._message_caches.get(key, ([], []))
        if not _extends(history, sources):
            sources, cache = [], []
        for entry in history[len(cache) :]:
            sources.append(entry)
            cache.append(message_of(entry))
        self._message_caches[key] = (sources, cache)
        return cache

    def history_chars(self, history: Sequence[Any], key: str = "") -> int:
        """``history_chars(history)`` (what the window stage measures), counting only the entries added since the
        last call: the same cache and extension check as ``messages_for``, holding each entry's running total."""
        sources, totals = self._chars_caches.get(key, ([], []))
        if not _extends(history, sources):
            sources, totals = [], []
        total = totals[-1] if totals else 0
        for entry in history[len(totals) :]:
            total += entry_chars(entry)
            sources.append(entry)
            totals.append(total)
        self._chars_caches[key] = (sources, totals)
        return total

    def forget_conversation(self, key: str = "") -> None:
        """Drop both caches of ``key``'s conversation: its history was rewritten, not grown (a fold), so an entry
        at a checked end may be the same while one between them is not."""
        self._message_caches.pop(key, None)
        self._chars_caches.pop(key, None)


_ATOMS = frozenset({str, int, float, bool, type(None)})
_VALIDATE = Message.__pydantic_validator__.validate_python
"""``Message.model_validate`` without its wrapper (the same validator, the same defaults)."""


def message_of(entry: Any) -> Message:
    """``Message.model_validate(thaw(entry))``: the entry validated as it is (the validator copies its containers),
    then only arguments holding a container copied (an argument's values are taken as they are)."""
    message: Message = _VALIDATE(entry)
    for call in message.tool_calls:
        if any(type(v) not in _ATOMS for v in call.args.values()):
            call.args = thaw(call.args)
    return message


def _extends(history: Sequence[Any], sources: list[Any]) -> bool:
    """Whether ``history`` is ``sources`` plus newer entries, judged by its ends (committed entries are frozen: one
    identity, one value; a rewrite that keeps both ends calls ``forget_conversation``)."""
    n = len(sources)
    return not n or (len(history) >= n and history[0] is sources[0] and history[n - 1] is sources[n - 1])


def memory_identity_of(identity: Identity | None, session_id: str | None) -> Identity | None:
    """A run with a session and no identity is scoped to ``{conversation_id: session_id}``: a hosting session is a
    conversation. An identity the caller gave always wins; with neither, memory falls back to the run's own."""
    if identity is not None:
        return identity
    return Identity(conversation_id=session_id) if session_id else None


class ToolHookError(Exception):
    """A ``wrap_tool_call`` hook raised: the call fails closed and the record names the extension."""

    def __init__(self, extension: str, error: BaseException) -> None:
        super().__init__(f"extension '{extension}' failed around a tool call: {type(error).__name__}")
        self.extension = extension
        self.error = error


def _wrap_model(ext: Extension, ctx: RunContext, call_next: CallModel) -> CallModel:
    async def call(request: LLMRequest) -> LLMResponse:
        return await ext.wrap_model_call(ctx, request, call_next)

    return call


def _wrap_tool(ext: Extension, ctx: RunContext, call_next: CallTool) -> CallTool:
    async def call(request: ToolCallRequest) -> ToolOutcome:
        try:
            return await ext.wrap_tool_call(ctx, request, call_next)
        except (ToolHookError, RunStoppingError):
            raise
        except Exception as exc:
            raise ToolHookError(ext.name, exc) from exc

    return call


Stage = Callable[[Scope], Awaitable[None] | None]

__all__ = ["AgentRun", "RunEvents", "Stage", "ToolHookError", "memory_identity_of"]
