"""The AG-UI app: ``POST {path}`` runs the request door (seed 001), then streams the turn as AG-UI events over SSE.

One agent per turn from ``agent_factory()``; the conversation, any pause and the last run's recording live
server-side in the session store (``GET {path}/threads/{id}/recording`` serves the recording to the owner)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TokenUsage,
)
from ag_ui.encoder import EventEncoder
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentfootprint.agent.agent import Agent, load_conversation, load_pause_checkpoint
from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain.recording import InvalidRecordingError, recording_of
from agentfootprint.hosting.body import DEFAULT_MAX_BODY_BYTES, check_content_length, parse_json_body, read_body_capped
from agentfootprint.hosting.plan import (
    FrontendTool,
    ThreadBinder,
    TurnPlan,
    TurnRules,
    Validator,
    bind_identity,
    plan_turn,
)
from agentfootprint.hosting.refusal import HostingConfigError, WireRequestRefusal
from agentfootprint.hosting.request import RequestFacts, RequestReader, TurnRequest, check_id, read_request
from agentfootprint.hosting.sessions import (
    PauseRecord,
    SessionStore,
    StoredThreadUnreadableError,
    ThreadLease,
    ThreadRecord,
    memory_sessions,
    owner_key,
)
from agentfootprint.hosting.stream import AgUiTranslator, as_text, new_id
from agentfootprint.identity import Identity
from agentfootprint.providers import ProviderError
from agentfootprint.tools import Tool, ToolContext, define_tool

if TYPE_CHECKING:
    from agentfootprint.agent.models import RunResult

__all__ = ["AgentFactory", "ServedTurn", "ag_ui_app", "current_turn"]

logger = logging.getLogger("agentfootprint.hosting")

AgentFactory = Callable[[], Agent]
"""``agent_factory()`` → a fresh ``Agent`` for one turn (one instance runs one turn at a time)."""

_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_CLEANUP_SECONDS = 10.0
_DECLINED = "The user declined to answer."
_ASK_SCHEMA: dict[str, Any] = {"type": "string"}
_CONSENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}},
    "required": ["approved"],
}
_YES = frozenset({"yes", "y", "approve", "approved", "allow", "ok", "true"})


@dataclass(frozen=True)
class ServedTurn:
    """The turn being served, for the factory, tools and injections: ids, the bound caller, validated state/context."""

    thread_id: str
    run_id: str
    identity: Identity | None
    state: Any = None
    context: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


_CURRENT_TURN: contextvars.ContextVar[ServedTurn | None] = contextvars.ContextVar(
    "agentfootprint_served_turn", default=None
)


def current_turn() -> ServedTurn | None:
    """The AG-UI turn this code runs for (inside ``agent_factory()`` and the run), or None outside one."""
    return _CURRENT_TURN.get()


def ag_ui_app(
    agent_factory: AgentFactory,
    *,
    sessions: SessionStore | None = None,
    frontend_tools: Iterable[FrontendTool | Mapping[str, Any] | Tool] | None = None,
    accept_state: Validator | None = None,
    accept_context: Validator | None = None,
    bind_thread: ThreadBinder | None = None,
    path: str = "/agui",
    reader: RequestReader | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Starlette:
    """An ASGI app serving ``agent_factory``'s agents over AG-UI at ``POST {path}`` (and ``GET /healthz``)."""
    if not callable(agent_factory):
        raise HostingConfigError("agent_factory must be a callable returning an Agent")
    if not isinstance(path, str) or not path.startswith("/") or path == "/healthz" or path.endswith("/"):
        raise HostingConfigError("path must start with '/', not end with '/', and not be '/healthz'")
    if not isinstance(max_body_bytes, int) or isinstance(max_body_bytes, bool) or max_body_bytes < 1:
        raise HostingConfigError("max_body_bytes must be a positive int")
    if reader is not None and not callable(reader):
        raise HostingConfigError("reader must be callable")
    if bind_thread is not None and not callable(bind_thread):
        raise HostingConfigError("bind_thread must be callable")
    rules = TurnRules.build(frontend_tools=frontend_tools, accept_state=accept_state, accept_context=accept_context)
    host = _Host(agent_factory, sessions or memory_sessions(), rules, bind_thread, reader, max_body_bytes)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await host.store.close()

    routes = [
        Route(path, host.handle, methods=["POST"]),
        Route(path + "/threads/{thread_id:str}/recording", host.recording, methods=["GET"]),
        Route("/healthz", _health, methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.agentfootprint_sessions = host.store
    return app


async def _health(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _error(status: int, code: str, field: str | None, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "field": field, "message": message}}, status_code=status)


def _frontend_execute(args: dict[str, Any], ctx: ToolContext) -> Any:
    raise HostingConfigError("a frontend tool runs in the page; the agent loop pauses instead of executing it")


def _pausing_tool(tool: FrontendTool) -> Tool:
    return define_tool(
        name=tool.name,
        description=tool.description,
        input_schema=dict(tool.parameters),
        execute=_frontend_execute,
        pauses=True,
    )


class _HostError(Exception):
    """A failure before streaming that is the server's, not the request's: answered 500 in fixed words."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


class _Host:
    def __init__(
        self,
        factory: AgentFactory,
        store: SessionStore,
        rules: TurnRules,
        binder: ThreadBinder | None,
        reader: RequestReader | None,
        max_body_bytes: int,
    ) -> None:
        self.factory = factory
        self.store = store
        self.rules = rules
        self.binder = binder
        self.reader = reader
        self.max_body_bytes = max_body_bytes
        try:
            self.tools = {name: _pausing_tool(tool) for name, tool in rules.frontend_tools.items()}
        except AgentFootprintError as err:
            raise HostingConfigError(f"a frontend tool cannot be offered to the model: {err}") from None

    # -- the door ------------------------------------------------------------------------------------------------
    async def handle(self, request: Request) -> Response:
        lease: ThreadLease | None = None
        try:
            check_content_length(request.headers.get("content-length"), self.max_body_bytes)
            raw = await read_body_capped(request.stream(), self.max_body_bytes)
            body = parse_json_body(raw, self.max_body_bytes)
            headers = {key.lower(): value for key, value in request.headers.items()}
            turn = read_request(self.reader, RequestFacts(body=body, headers=headers))
            identity = await self._bind(request, turn.thread_id)
            lease = await self.store.acquire(turn.thread_id, owner_key(identity))
            _check_stored(lease)
            plan = _plan(turn, lease, self.rules, identity, headers)
        except WireRequestRefusal as refusal:
            await self._free(lease)
            return JSONResponse(refusal.to_json(), status_code=refusal.status)
        except StoredThreadUnreadableError as err:
            await self._free(lease)
            return _error(500, err.code, "threadId", str(err))
        except _HostError as err:
            await self._free(lease)
            return _error(500, err.code, err.field, err.message)
        except Exception:
            logger.exception("AG-UI request failed before streaming")
            await self._free(lease)
            return _error(500, "ERR_AGUI_INTERNAL", None, "the server could not take this request")
        return EventSourceResponse(self._events(plan, lease, headers), headers={"Cache-Control": "no-store"})

    async def recording(self, request: Request) -> Response:
        """``GET {path}/threads/{id}/recording``: the thread's last run as a recording JSON, for its owner only."""
        try:
            thread_id = check_id(request.path_params.get("thread_id"), "threadId")
            identity = await self._bind(request, thread_id)
            data = await self.store.read_recording(thread_id, owner_key(identity))
            if data is None:
                raise WireRequestRefusal("ERR_AGUI_NO_RECORDING", "threadId")
        except WireRequestRefusal as refusal:
            return JSONResponse(refusal.to_json(), status_code=refusal.status)
        except StoredThreadUnreadableError as err:
            return _error(500, err.code, "threadId", str(err))
        except _HostError as err:
            return _error(500, err.code, err.field, err.message)
        except Exception:
            logger.exception("AG-UI recording request failed")
            return _error(500, "ERR_AGUI_INTERNAL", None, "the server could not read this recording")
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    async def _bind(self, request: Request, thread_id: str) -> Identity:
        try:
            return await bind_identity(self.binder, request, thread_id)
        except WireRequestRefusal:
            raise
        except Exception:
            logger.exception("bind_thread failed")
            raise _HostError("ERR_AGUI_BIND_FAILED", "the server could not identify the caller") from None

    async def _free(self, lease: ThreadLease | None) -> None:
        if lease is None:
            return
        try:
            with anyio.move_on_after(_CLEANUP_SECONDS, shield=True):
                await self.store.release(lease)
        except Exception:
            logger.exception("could not free thread %r", lease.thread_id)

    # -- the stream ----------------------------------------------------------------------------------------------
    async def _events(self, plan: TurnPlan, lease: ThreadLease, headers: Mapping[str, str]) -> AsyncIterator[bytes]:
        encoder = EventEncoder()
        queue: asyncio.Queue[BaseEvent | None] = asyncio.Queue()
        pause = lease.record.pause if plan.kind == "resume" else None
        quiet = [pause.tool_call_id] if pause is not None and pause.kind == "frontend_tool" else []
        resumed = [pause.tool_call_id] if pause is not None and pause.kind == "interrupt" else []
        translator = AgUiTranslator(queue.put_nowait, quiet_results=quiet, unstreamed_results=resumed)
        task: asyncio.Task[RunResult] | None = None
        saved = False

        def encode(event: BaseEvent) -> bytes:
            return encoder.encode(event).encode("utf-8")

        try:
            yield encode(
                RunStartedEvent(
                    thread_id=plan.thread_id,
                    run_id=plan.run_id,
                    parent_run_id=plan.parent_run_id,
                    protocol_version=PROTOCOL_VERSION,
                )
            )
            if plan.state is not None:
                yield encode(StateSnapshotEvent(snapshot=plan.state))
            served = ServedTurn(plan.thread_id, plan.run_id, plan.identity, plan.state, plan.context, dict(headers))
            context = contextvars.copy_context()
            context.run(_CURRENT_TURN.set, served)
            agent, frontend = context.run(self._agent, plan, pause)
            agent.on("*", translator)
            task = asyncio.create_task(self._run(agent, plan, lease), context=context)
            task.add_done_callback(lambda _: queue.put_nowait(None))
            while (item := await queue.get()) is not None:
                yield encode(item)
            if task.cancelled():
                raise RuntimeError("the run was cancelled from inside")
            result = task.result()
            record, finished = self._finish(plan, lease, translator, agent, frontend, result)
            await self.store.save(lease, record, _recording_text(agent))
            saved = True
            yield encode(finished)
        except Exception as exc:
            translator.close()
            while not queue.empty():
                item = queue.get_nowait()
                if item is not None:
                    yield encode(item)
            yield encode(_run_error(exc))
        finally:
            with anyio.move_on_after(_CLEANUP_SECONDS, shield=True):
                if task is not None and not task.done():
                    task.cancel()
                    await asyncio.wait([task])
                if not saved:
                    await self._free(lease)

    def _agent(self, plan: TurnPlan, pause: PauseRecord | None) -> tuple[Agent, frozenset[str]]:
        agent = self.factory()
        if not isinstance(agent, Agent):
            raise HostingConfigError("agent_factory() must return an Agent")
        wanted = [tool.name for tool in plan.frontend_tools]
        if pause is not None and pause.kind == "frontend_tool" and pause.tool_name in self.tools:
            wanted.append(pause.tool_name)
        own = {name for name, kind in agent.config.source_ids().items() if kind == "tool"} | {"read_skill"}
        extra = tuple(self.tools[name] for name in dict.fromkeys(wanted) if name not in own)
        if extra:
            agent = agent.with_tools(*extra)
        return agent, frozenset(tool.name for tool in extra)

    async def _run(self, agent: Agent, plan: TurnPlan, lease: ThreadLease) -> RunResult:
        if plan.kind == "message":
            assert plan.message is not None
            return await agent.run(
                plan.message.text,
                identity=plan.identity,
                session_id=plan.thread_id,
                continue_from=lease.record.conversation,
            )
        pause = lease.record.pause
        assert pause is not None
        return await agent.resume(
            pause.checkpoint, _answer(plan, pause), identity=plan.identity, session_id=plan.thread_id
        )

    def _finish(
        self,
        plan: TurnPlan,
        lease: ThreadLease,
        translator: AgUiTranslator,
        agent: Agent,
        frontend: frozenset[str],
        result: RunResult,
    ) -> tuple[ThreadRecord, RunFinishedEvent]:
        messages = [*lease.record.messages, *_request_messages(plan), *translator.messages]
        usage = [
            TokenUsage(
                provider=getattr(agent.config.provider, "name", None) or None,
                model=agent.config.model or None,
                input_tokens=translator.input_tokens,
                output_tokens=translator.output_tokens,
                total_tokens=translator.input_tokens + translator.output_tokens,
            )
        ]
        if result.status == "completed":
            record = ThreadRecord(messages=tuple(messages), conversation=agent.checkpoint(), pause=None)
            outcome: Any = RunFinishedSuccessOutcome()
        else:
            pause = _pause_record(result, translator, frontend)
            record = ThreadRecord(messages=tuple(messages), conversation=lease.record.conversation, pause=pause)
            outcome = _outcome(pause)
        finished = RunFinishedEvent(thread_id=plan.thread_id, run_id=plan.run_id, outcome=outcome, usage=usage)
        return record, finished


def _recording_text(agent: Agent) -> str | None:
    """The run just served as recording JSON text (its snapshot is the redacted view), or None if nothing ran."""
    try:
        return recording_of(agent).model_dump_json()
    except InvalidRecordingError:
        return None


def _check_stored(lease: ThreadLease) -> None:
    record = lease.record
    try:
        if record.conversation is not None:
            load_conversation(record.conversation)
        if record.pause is not None:
            load_pause_checkpoint(record.pause.checkpoint)
    except AgentFootprintError:
        raise StoredThreadUnreadableError(lease.thread_id) from None


def _plan(
    turn: TurnRequest, lease: ThreadLease, rules: TurnRules, identity: Identity, headers: Mapping[str, str]
) -> TurnPlan:
    plan = plan_turn(turn, lease.record.held_thread(), rules, identity=identity, headers=headers)
    if plan.kind == "message" and (plan.message is None or not plan.message.text.strip()):
        raise WireRequestRefusal("ERR_AGUI_TEXT_REQUIRED", f"messages[{len(turn.messages) - 1}].content")
    return plan


def _request_messages(plan: TurnPlan) -> list[dict[str, Any]]:
    if plan.message is not None:
        content: Any = list(plan.message.parts) if plan.message.parts else plan.message.text
        return [{"id": plan.message.id, "role": "user", "content": content}]
    return [
        {"id": a.message_id, "role": "tool", "toolCallId": a.tool_call_id, "content": _tool_text(a.content)}
        for a in plan.tool_answers
    ]


def _tool_text(content: str | tuple[dict[str, Any], ...]) -> str:
    if isinstance(content, str):
        return content
    texts = [str(part["text"]) for part in content if part.get("type") == "text"]
    return "\n".join(texts) if len(texts) == len(content) else as_text(list(content))


def _answer(plan: TurnPlan, pause: PauseRecord) -> Any:
    if pause.kind == "frontend_tool":
        answer = next(a for a in plan.tool_answers if a.tool_call_id == pause.tool_call_id)
        text = _tool_text(answer.content)
        return f"Error: {answer.error}\n{text}".rstrip() if answer.error else text
    entry = next(e for e in plan.resume if e.interrupt_id == pause.interrupt_id)
    payload = entry.payload
    if pause.pause_kind == "check_in":
        if entry.status != "resolved":
            return False
        if isinstance(payload, Mapping):
            payload = payload.get("approved")
        return payload is True or (isinstance(payload, str) and payload.strip().lower() in _YES)
    if entry.status != "resolved":
        return _DECLINED
    if isinstance(payload, Mapping) and "answer" in payload:
        payload = payload["answer"]
    return "" if payload is None else payload


def _pause_record(result: RunResult, translator: AgUiTranslator, frontend: frozenset[str]) -> PauseRecord:
    checkpoint = dict(result.checkpoint or {})
    asked = translator.pause or {}
    flow = checkpoint.get("flow")
    pause_data = flow.get("pause_data") if isinstance(flow, Mapping) else None
    pause_kind = str(asked.get("kind") or (pause_data or {}).get("kind") or "ask_human")
    tool_name = str(checkpoint.get("tool_name", ""))
    call_id = str(checkpoint.get("tool_call_id", ""))
    question = result.question or ""
    if tool_name in frontend and pause_kind == "ask_human":
        return PauseRecord(
            checkpoint=checkpoint,
            kind="frontend_tool",
            pause_kind=pause_kind,
            tool_call_id=call_id,
            tool_name=tool_name,
            question=question,
        )
    return PauseRecord(
        checkpoint=checkpoint,
        kind="interrupt",
        pause_kind=pause_kind,
        tool_call_id=call_id,
        tool_name=tool_name,
        question=question,
        interrupt_id=new_id("int"),
    )


def _outcome(pause: PauseRecord) -> RunFinishedSuccessOutcome | RunFinishedInterruptOutcome:
    if pause.kind == "frontend_tool":
        return RunFinishedSuccessOutcome(pending_tool_call_ids=[pause.tool_call_id])
    interrupt = Interrupt(
        id=pause.interrupt_id or new_id("int"),
        reason=pause.pause_kind,
        message=pause.question or None,
        tool_call_id=pause.tool_call_id or None,
        response_schema=_CONSENT_SCHEMA if pause.pause_kind == "check_in" else _ASK_SCHEMA,
    )
    return RunFinishedInterruptOutcome(interrupts=[interrupt])


def _run_error(exc: BaseException) -> RunErrorEvent:
    """A RUN_ERROR in fixed words: a stable code, never the exception's text (it may carry a secret)."""
    cause = getattr(exc, "cause", None)
    cause = cause if isinstance(cause, BaseException) else exc
    code = getattr(cause, "code", None) if isinstance(cause, AgentFootprintError) else None
    if not isinstance(code, str) or _CODE.fullmatch(code) is None:
        code = "ERR_RUN_FAILED"
    if isinstance(cause, ProviderError):
        message = "the model provider failed"
    elif isinstance(cause, HostingConfigError):
        message = "the agent could not be served"
    elif code == "ERR_AGUI_LEASE_LOST":
        message = "the thread was taken over before this turn was saved"
    else:
        message = "the agent run failed"
    logger.warning("AG-UI run failed (%s)", code, exc_info=exc)
    return RunErrorEvent(message=message, code=code)
