"""The AG-UI app: ``POST {path}`` runs the request door, then streams the turn as AG-UI events over SSE.

One agent per turn from ``agent_factory()``; the conversation, any pause and the last run's recording live
server-side in the session store. ``POST {path}/invoke`` runs the same turn and answers JSON; the owner's thread
endpoints list, read and delete threads (``{path}/threads``, ``{path}/threads/{id}``, ``.../recording``)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    MessagesSnapshotEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TokenUsage,
)
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Receive, Scope, Send

from agentfootprint.agent.agent import Agent, load_conversation, load_pause_checkpoint
from agentfootprint.agent.consent import check_in_approved, check_in_declined
from agentfootprint.agent.models import RunResult
from agentfootprint.errors import AgentFootprintError, validation_field
from agentfootprint.explain.recording import InvalidRecordingError, recording_of
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.hosting._body import DEFAULT_MAX_BODY_BYTES, check_content_length, parse_json_body, read_body_capped
from agentfootprint.hosting._host_seal import (
    HostKeys,
    host_key,
    open_record,
    open_recording,
    seal_record,
    seal_recording,
)
from agentfootprint.hosting.limits import Admission, AdmissionLimits, Ticket
from agentfootprint.hosting.memory_store import memory_sessions
from agentfootprint.hosting.plan import (
    FrontendTool,
    ThreadBinder,
    TurnPlan,
    TurnRules,
    Validator,
    bind_identity,
    plan_turn,
)
from agentfootprint.hosting.refusal import HostingConfigError, HostUnavailableError, WireRequestRefusal
from agentfootprint.hosting.request import RequestFacts, RequestReader, TurnRequest, check_id, read_request
from agentfootprint.hosting.sessions import (
    DEFAULT_LEASE_SECONDS,
    LeaseLostError,
    PauseRecord,
    SessionStore,
    StoredThreadUnreadableError,
    ThreadLease,
    ThreadRecord,
    ThreadSummary,
    owner_key,
)
from agentfootprint.hosting.stream import AgUiTranslator, as_text, new_id
from agentfootprint.identity import Identity
from agentfootprint.providers import ProviderError
from agentfootprint.tools import Tool, ToolContext, define_tool

__all__ = ["AgentFactory", "ServedTurn", "ag_ui_app", "current_turn"]

logger = logging.getLogger("agentfootprint.hosting")

AgentFactory = Callable[[], Agent]
"""``agent_factory()`` → a fresh ``Agent`` for one turn (one instance runs one turn at a time)."""

_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_CLEANUP_SECONDS = 10.0
_PING_SECONDS = 15.0
_PING = object()
_SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
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
    """The AG-UI turn the host is serving (inside ``agent_factory()`` and the host's own code), or None outside one.

    Tools read the request their own run serves as ``ctx.request``: the same turn for the served agent and for
    members of compositions it links, and None for an agent mounted in a chart you built and run yourself."""
    return _CURRENT_TURN.get()


def ag_ui_app(
    agent_factory: AgentFactory | Agent,
    *,
    sessions: SessionStore | None = None,
    frontend_tools: Iterable[FrontendTool | Mapping[str, Any] | Tool] | None = None,
    accept_state: Validator | None = None,
    accept_context: Validator | None = None,
    bind_thread: ThreadBinder | None = None,
    path: str = "/agui",
    reader: RequestReader | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_message_bytes: int | None = None,
    limits: AdmissionLimits | Mapping[str, Any] | None = None,
    retention_seconds: float | None = None,
    checkpoint_key: str | bytes | Sequence[str | bytes] | None = None,
    explorer: bool = False,
    otlp: Any = False,
) -> Starlette:
    """An ASGI app serving ``agent_factory``'s agents over AG-UI at ``POST {path}`` (and ``GET /healthz``); an
    ``Agent`` instead of a factory serves every thread with that one instance (turns run side by side).

    ``limits``: per-caller admission (429 + Retry-After); ``retention_seconds``: threads not written for that long
    are deleted (checked at start and periodically); ``max_message_bytes``: the largest message a turn may carry;
    ``checkpoint_key``: the host seals the pause, conversation and recording it stores (HMAC-SHA256, bound to the
    thread and its owner) and refuses a stored one whose seal is missing or wrong with a 409 (``ERR_CHECKPOINT_SEAL``,
    field ``seal``) before anything runs; a list of keys rotates them (the first signs, each verifies).
    ``explorer``: the why explorer at ``/explorer/``, listing the signed-in caller's own threads' last runs.
    ``otlp``: the OTLP/HTTP trace receiver at ``POST /v1/traces`` (True: into an in-memory RecordingStore; or a
    RecordingStore, or an ``OtlpReceiver``); imported traces are filed per caller and the explorer lists them."""
    if isinstance(agent_factory, Agent):  # one instance serves every thread at once: a run is a value
        shared = agent_factory
        agent_factory = lambda: shared  # noqa: E731
    if not callable(agent_factory):
        raise HostingConfigError("agent_factory must be an Agent, or a callable returning an Agent")
    if not isinstance(path, str) or not path.startswith("/") or path == "/healthz" or path.endswith("/"):
        raise HostingConfigError("path must start with '/', not end with '/', and not be '/healthz'")
    max_body_bytes = _positive(max_body_bytes, "max_body_bytes")
    if max_message_bytes is not None:
        max_message_bytes = _positive(max_message_bytes, "max_message_bytes")
    if retention_seconds is not None and (
        isinstance(retention_seconds, bool)
        or not isinstance(retention_seconds, int | float)
        or not 60 <= retention_seconds <= 100 * 365 * 86_400
    ):
        raise HostingConfigError("retention_seconds must be a number of seconds, at least 60")
    if reader is not None and not callable(reader):
        raise HostingConfigError("reader must be callable")
    if bind_thread is not None and not callable(bind_thread):
        raise HostingConfigError("bind_thread must be callable")
    try:
        admission = AdmissionLimits.model_validate(limits or {})
    except ValidationError as err:
        raise HostingConfigError(f"limits.{validation_field(err, 'limits')} is not valid") from None
    rules = TurnRules.build(frontend_tools=frontend_tools, accept_state=accept_state, accept_context=accept_context)
    key = host_key(checkpoint_key)
    host = _Host(
        agent_factory,
        sessions if sessions is not None else memory_sessions(),
        rules,
        bind_thread,
        reader,
        _Caps(max_body_bytes, max_message_bytes),
        Admission(admission),
        path,
        float(retention_seconds) if retention_seconds is not None else None,
    )
    host.key = key
    receiver = None
    if otlp is not False:
        from agentfootprint.hosting._otlp import host_receiver

        receiver = host_receiver(otlp, bind_thread)
        host.imported = receiver.recordings if receiver is not None else None

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        sweeper = None
        if host.retention is not None:
            await host.sweep_once()
            sweeper = asyncio.create_task(host.sweep_forever())
        try:
            yield
        finally:
            if sweeper is not None:
                sweeper.cancel()
                await asyncio.gather(sweeper, return_exceptions=True)
            await host.store.close()

    routes: list[BaseRoute] = [
        Route(path, host.handle, methods=["POST"]),
        Route(path + "/invoke", host.invoke, methods=["POST"]),
        Route(path + "/threads", host.list_threads, methods=["GET"]),
        Route(path + "/threads/{thread_id:str}", host.transcript, methods=["GET"]),
        Route(path + "/threads/{thread_id:str}", host.delete, methods=["DELETE"]),
        Route(path + "/threads/{thread_id:str}/recording", host.recording, methods=["GET"]),
        Route("/healthz", _health, methods=["GET"]),
    ]
    if explorer:
        from agentfootprint.explorer import explorer_app

        shown = explorer_app(catalog_for=host.explorer_catalog, agent_factory=agent_factory, root_path="/explorer")
        routes.append(Mount("/explorer", app=shown))
    if receiver is not None:
        routes.extend(receiver.routes())
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.agentfootprint_otlp = receiver
    app.state.agentfootprint_sessions = host.store
    app.state.agentfootprint_sweep = host.sweep
    return app


def _positive(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise HostingConfigError(f"{name} must be a positive int")
    return value


async def _health(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _error(
    status: int, code: str, field: str | None, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "field": field, "message": message, "reason": code}},
        status_code=status,
        headers=dict(headers) if headers else None,
    )


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


def _failure(exc: BaseException, what: str) -> Response:
    """The JSON answer for a request that failed before its turn ran (a refusal, or the server's own trouble)."""
    if isinstance(exc, WireRequestRefusal):
        return JSONResponse(exc.to_json(), status_code=exc.status, headers=exc.headers or None)
    if isinstance(exc, StoredThreadUnreadableError):
        return _error(500, exc.code, "threadId", str(exc))
    if isinstance(exc, InvalidCheckpointError):  # a stored thread whose seal is missing, wrong or no key verifies
        logger.warning("AG-UI stored thread refused (%s, field %s)", exc.code, exc.field)
        return _error(409, exc.code, exc.field, str(exc))
    if isinstance(exc, HostUnavailableError):
        return _error(503, exc.code, None, exc.message, {"Retry-After": str(exc.retry_after)})
    if isinstance(exc, _HostError):
        return _error(500, exc.code, exc.field, exc.message)
    logger.error("%s", what, exc_info=exc)
    return _error(500, "ERR_AGUI_INTERNAL", None, "the server could not take this request")


@dataclass(frozen=True)
class _Caps:
    body: int
    message: int | None


@dataclass
class _Opened:
    """A request that passed the door: its plan, the thread's lease, the headers, and its admission ticket."""

    plan: TurnPlan
    lease: ThreadLease
    headers: Mapping[str, str]
    ticket: Ticket
    started: bool = False


class _TurnStream(StreamingResponse):
    """One turn's SSE response; if its stream never started (the client left first), the thread and the admission
    slot are freed all the same."""

    def __init__(self, content: AsyncIterator[bytes], *, release: Callable[[], Awaitable[None]]) -> None:
        super().__init__(content, media_type="text/event-stream", headers=_SSE_HEADERS)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._release()


@dataclass
class _Served:
    result: RunResult
    finished: RunFinishedEvent
    pause: PauseRecord | None


def _discard(_: BaseEvent) -> None:
    return None


async def _ping(queue: asyncio.Queue[Any]) -> None:
    """A keep-alive comment every ``_PING_SECONDS`` while a turn is quiet, so proxies keep the stream open."""
    while True:
        await asyncio.sleep(_PING_SECONDS)
        queue.put_nowait(_PING)


class _Host:
    def __init__(
        self,
        factory: AgentFactory,
        store: SessionStore,
        rules: TurnRules,
        binder: ThreadBinder | None,
        reader: RequestReader | None,
        caps: _Caps,
        admission: Admission,
        path: str,
        retention: float | None,
    ) -> None:
        self.factory = factory
        self.store = store
        self.rules = rules
        self.binder = binder
        self.reader = reader
        self.caps = caps
        self.admission = admission
        self.path = path
        self.retention = retention
        self.key: HostKeys | None = None
        self.imported: Any = None  # the RecordingStore the OTLP receiver files into (otlp=)
        lease_seconds = getattr(store, "lease_seconds", DEFAULT_LEASE_SECONDS)
        self.heartbeat_seconds = max(0.2, float(lease_seconds) / 3)
        try:
            self.tools = {name: _pausing_tool(tool) for name, tool in rules.frontend_tools.items()}
        except AgentFootprintError as err:
            raise HostingConfigError(f"a frontend tool cannot be offered to the model: {err}") from None

    # -- the door ------------------------------------------------------------------------------------------------
    async def handle(self, request: Request) -> Response:
        """``POST {path}``: the turn as an AG-UI event stream."""
        try:
            opened = await self._open(request)
        except Exception as exc:
            return _failure(exc, "AG-UI request failed before streaming")
        return _TurnStream(self._events(opened), release=lambda: self._abandon(opened))

    async def invoke(self, request: Request) -> Response:
        """``POST {path}/invoke``: the turn's RunResult as JSON (200), or 202 when it paused, with where to poll."""
        try:
            opened = await self._open(request)
        except Exception as exc:
            return _failure(exc, "AG-UI invoke failed before running")
        plan = opened.plan
        try:
            served = await self._serve(opened, _discard)
        except Exception as exc:
            failed = _run_error(exc)
            status = 409 if failed.code == "ERR_AGUI_LEASE_LOST" else 500
            return _error(status, failed.code or "ERR_RUN_FAILED", None, failed.message)
        body: dict[str, Any] = served.result.model_dump(mode="json", exclude={"checkpoint"})
        body["thread_id"] = plan.thread_id
        outcome = served.finished.outcome
        body["outcome"] = outcome.model_dump(mode="json", by_alias=True, exclude_none=True) if outcome else None
        headers = {"Cache-Control": "no-store"}
        if served.pause is None:
            return JSONResponse(body, headers=headers)
        poll = f"{self.path}/threads/{plan.thread_id}"
        body["poll"] = poll
        return JSONResponse(body, status_code=202, headers={**headers, "Location": poll})

    async def _open(self, request: Request) -> _Opened:
        """Read, bind, admit, lease and plan one turn; anything refused frees what it took."""
        check_content_length(request.headers.get("content-length"), self.caps.body)
        caller = await self._caller(request)
        raw = await read_body_capped(request.stream(), self.caps.body)
        body = parse_json_body(raw, self.caps.body)
        headers = {key.lower(): value for key, value in request.headers.items()}
        turn = read_request(self.reader, RequestFacts(body=body, headers=headers))
        identity = _bound(caller, turn.thread_id)
        ticket = self.admission.admit(_caller_key(identity, request))
        lease: ThreadLease | None = None
        try:
            lease = await self.store.acquire(turn.thread_id, owner_key(identity))
            lease = replace(lease, record=open_record(lease.thread_id, owner_key(identity), lease.record, self.key))
            lease = _check_stored(lease)
            plan = _plan(turn, lease, self.rules, identity, headers, self.caps.message)
        except BaseException:
            ticket.refund()
            await self._free(lease)
            raise
        return _Opened(plan, lease, headers, ticket)

    async def _caller(self, request: Request) -> Identity | None:
        try:
            return await bind_identity(self.binder, request, None)
        except (WireRequestRefusal, HostUnavailableError):
            raise
        except Exception:
            logger.exception("bind_thread failed")
            raise _HostError("ERR_AGUI_BIND_FAILED", "the server could not identify the caller") from None

    # -- the owner's thread endpoints ----------------------------------------------------------------------------
    async def recording(self, request: Request) -> Response:
        """``GET {path}/threads/{id}/recording``: the thread's last run as a recording JSON, for its owner only."""
        try:
            thread_id, owner = await self._owner_of(request)
            data = await self.store.read_recording(thread_id, owner)
            if data is None:
                raise WireRequestRefusal("ERR_AGUI_NO_RECORDING", "threadId")
            data = open_recording(thread_id, owner, data, self.key)  # with a key, an edited recording is refused
        except Exception as exc:
            return _failure(exc, "AG-UI recording request failed")
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    async def transcript(self, request: Request) -> Response:
        """``GET {path}/threads/{id}``: the thread's messages and what a pause waits on (never a checkpoint)."""
        try:
            thread_id, owner = await self._owner_of(request)
            stored = await self.store.read_thread(thread_id, owner)
            open_record(thread_id, owner, stored.record, self.key)  # with a key, one edited behind the host is refused
        except Exception as exc:
            return _failure(exc, "AG-UI transcript request failed")
        pause = stored.record.pause
        body = {
            **_summary_json(stored.summary),
            "paused": pause is not None,
            "messages": list(stored.record.messages),
            "outcome": _outcome(pause).model_dump(mode="json", by_alias=True, exclude_none=True) if pause else None,
        }
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    async def delete(self, request: Request) -> Response:
        """``DELETE {path}/threads/{id}``: the thread and its recording are gone (204); 409 while a turn runs."""
        try:
            thread_id, owner = await self._owner_of(request)
            await self.store.delete_thread(thread_id, owner)
        except Exception as exc:
            return _failure(exc, "AG-UI delete request failed")
        return Response(status_code=204)

    async def list_threads(self, request: Request) -> Response:
        """``GET {path}/threads?limit=N``: the signed-in caller's threads, most recently written first."""
        try:
            owner = owner_key(await self._caller(request))
            if owner is None:
                raise WireRequestRefusal("ERR_AGUI_SIGN_IN_REQUIRED", "authorization")
            limit = _limit(request.query_params.get("limit"))
            threads = await self.store.list_threads(owner, limit=limit)
        except Exception as exc:
            return _failure(exc, "AG-UI thread list request failed")
        return JSONResponse({"threads": [_summary_json(t) for t in threads]}, headers={"Cache-Control": "no-store"})

    async def explorer_catalog(self, request: Request) -> Any:
        """The explorer's runs for this caller: the last recording of each of their threads (signed in only)."""
        from agentfootprint.explain.recording import Recording
        from agentfootprint.explorer import ExplorerError, MemoryCatalog

        try:
            owner = owner_key(await self._caller(request))
        except Exception:
            owner = None
        if owner is None:
            raise ExplorerError("sign in to see your runs", code="ERR_EXPLORER_SIGN_IN_REQUIRED")
        catalog = MemoryCatalog()
        for thread in await self.store.list_threads(owner, limit=1000):
            data = await self.store.read_recording(thread.thread_id, owner)
            try:
                opened = open_recording(thread.thread_id, owner, data, self.key) if data is not None else None
                if opened is not None:
                    catalog.add(Recording.model_validate(opened), created_at=thread.updated_at)
            except (AgentFootprintError, ValidationError):
                logger.warning("explorer: a thread's recording was refused (edited or unreadable); not listed")
        if self.imported is not None:
            from agentfootprint.hosting._otlp import imported_runs

            for rec, created in await anyio.to_thread.run_sync(imported_runs, self.imported, owner):
                catalog.add(rec, created_at=created)
        return catalog

    async def _owner_of(self, request: Request) -> tuple[str, str | None]:
        caller = await self._caller(request)
        thread_id = check_id(request.path_params.get("thread_id"), "threadId")
        return thread_id, owner_key(caller)

    async def sweep(self) -> int:
        """Delete the threads older than the retention (none without one); returns how many."""
        if self.retention is None:
            return 0
        return await self.store.purge(self.retention)

    async def sweep_once(self) -> None:
        """One sweep; a failure is logged, never raised."""
        try:
            removed = await self.sweep()
            if removed:
                logger.info("retention removed %d threads", removed)
        except Exception:
            logger.exception("retention sweep failed")

    async def sweep_forever(self) -> None:
        """Sweep every tenth of the retention (at most hourly) after the one at start."""
        assert self.retention is not None
        every = min(max(self.retention / 10, 1.0), 3600.0)
        while True:
            await asyncio.sleep(every)
            await self.sweep_once()

    async def _free(self, lease: ThreadLease | None) -> None:
        if lease is None:
            return
        try:
            with anyio.move_on_after(_CLEANUP_SECONDS, shield=True):
                await self.store.release(lease)
        except Exception:
            logger.exception("could not free thread %r", lease.thread_id)

    # -- the turn ------------------------------------------------------------------------------------------------
    async def _abandon(self, opened: _Opened) -> None:
        """Free what a turn whose stream never started holds (a started stream frees its own)."""
        if not opened.started:
            opened.started = True
            opened.ticket.done()
            await self._free(opened.lease)

    async def _events(self, opened: _Opened) -> AsyncIterator[bytes]:
        opened.started = True
        encoder = EventEncoder()
        plan = opened.plan
        queue: asyncio.Queue[Any] = asyncio.Queue()
        job: asyncio.Task[_Served] | None = None
        pings: asyncio.Task[None] | None = None

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
            if plan.out_of_sync:  # the page lost messages the thread holds (a dropped stream): it resyncs first
                yield encode(_messages_snapshot(plan.conversation))
            if plan.state is not None:
                yield encode(StateSnapshotEvent(snapshot=plan.state))
            job = asyncio.create_task(self._serve(opened, queue.put_nowait))
            job.add_done_callback(lambda _: queue.put_nowait(None))
            pings = asyncio.create_task(_ping(queue))
            while (item := await queue.get()) is not None:
                yield b": ping\n\n" if item is _PING else encode(item)
            served = job.result()
            yield encode(served.finished)
        except Exception as exc:
            while not queue.empty():
                item = queue.get_nowait()
                if item is not None and item is not _PING:
                    yield encode(item)
            yield encode(_run_error(exc))
        finally:
            if pings is not None:
                pings.cancel()
            if job is None:
                opened.ticket.done()
                await self._free(opened.lease)
            elif not job.done():
                with anyio.move_on_after(_CLEANUP_SECONDS, shield=True):
                    job.cancel()
                    await asyncio.wait([job])

    async def _serve(self, opened: _Opened, sink: Callable[[BaseEvent], None]) -> _Served:
        """Run the planned turn (events to ``sink``), keep its lease alive, save it; frees the thread on failure."""
        plan, lease = opened.plan, opened.lease
        pause = lease.record.pause if plan.kind == "resume" else None
        quiet = [pause.tool_call_id] if pause is not None and pause.kind == "frontend_tool" else []
        resumed = [pause.tool_call_id] if pause is not None and pause.kind == "interrupt" else []
        translator = AgUiTranslator(sink, quiet_results=quiet, unstreamed_results=resumed)
        saved = False
        task: asyncio.Task[RunResult] | None = None
        beat: asyncio.Task[None] | None = None
        lost = asyncio.Event()
        try:
            served = ServedTurn(
                plan.thread_id, plan.run_id, plan.identity, plan.state, plan.context, dict(opened.headers)
            )
            context = contextvars.copy_context()
            context.run(_CURRENT_TURN.set, served)
            agent, frontend = context.run(self._agent, plan, pause)
            task = asyncio.create_task(self._run(agent, plan, lease, served, translator), context=context)
            beat = asyncio.create_task(self._heartbeat(lease, task, lost))
            try:
                result = await task
            except asyncio.CancelledError:
                if lost.is_set():
                    raise LeaseLostError("the thread's lease was lost while the turn ran") from None
                raise
            record, finished = self._finish(plan, lease, translator, agent, frontend, result)
            owner = owner_key(plan.identity)
            sealed = seal_record(lease.thread_id, owner, record, self.key)
            await self.store.save(lease, sealed, seal_recording(lease.thread_id, owner, _recording(result), self.key))
            saved = True
            return _Served(result, finished, record.pause)
        except BaseException:
            translator.close()
            raise
        finally:
            opened.ticket.done()
            with anyio.move_on_after(_CLEANUP_SECONDS, shield=True):
                for running in (beat, task):
                    if running is not None and not running.done():
                        running.cancel()
                        await asyncio.wait([running])
                if not saved:
                    await self._free(lease)

    async def _heartbeat(self, lease: ThreadLease, task: asyncio.Task[Any], lost: asyncio.Event) -> None:
        """Renew the lease while the turn runs; a lost lease cancels the run."""
        while not task.done():
            await asyncio.sleep(self.heartbeat_seconds)
            if task.done():
                return
            try:
                await self.store.renew(lease)
            except LeaseLostError:
                lost.set()
                task.cancel()
                return
            except Exception:
                logger.warning("could not renew the lease of thread %r", lease.thread_id, exc_info=True)

    def _agent(self, plan: TurnPlan, pause: PauseRecord | None) -> tuple[Agent, frozenset[str]]:
        agent = self.factory()
        if not isinstance(agent, Agent):
            raise HostingConfigError("agent_factory() must return an Agent")
        kept = getattr(self.store, "decision_ledger", None)
        if agent.config.decision_ledger is None and callable(kept):  # consent spent with the threads, across restarts
            agent = agent.with_decision_ledger(kept())
        wanted = [tool.name for tool in plan.frontend_tools]
        if pause is not None and pause.kind == "frontend_tool" and pause.tool_name in self.tools:
            wanted.append(pause.tool_name)
        own = {name for name, kind in agent.config.source_ids().items() if kind == "tool"} | {"read_skill"}
        extra = tuple(self.tools[name] for name in dict.fromkeys(wanted) if name not in own)
        if extra:
            agent = agent.with_tools(*extra)
        return agent, frozenset(tool.name for tool in extra)

    async def _run(
        self, agent: Agent, plan: TurnPlan, lease: ThreadLease, served: ServedTurn, translator: AgUiTranslator
    ) -> RunResult:
        """The turn, run for ``served`` (its tools see it as ``ctx.request``; an unlinked member never does); its
        own events, and no other turn's, go to ``translator`` (one agent instance serves every thread at once)."""
        if plan.kind == "message":
            assert plan.message is not None
            return await agent.run(
                plan.message.text,
                identity=plan.identity,
                session_id=plan.thread_id,
                continue_from=lease.record.conversation,
                request=served,
                on_event=translator,
            )
        pause = lease.record.pause
        assert pause is not None
        return await agent.resume(
            pause.checkpoint,
            _answer(plan, pause),
            identity=plan.identity,
            session_id=plan.thread_id,
            request=served,
            on_event=translator,
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
            own = result.record
            record = ThreadRecord(
                messages=tuple(messages), conversation=own.checkpoint() if own is not None else None, pause=None
            )
            outcome: Any = RunFinishedSuccessOutcome()
        else:
            pause = _pause_record(result, translator, frontend)
            record = ThreadRecord(messages=tuple(messages), conversation=lease.record.conversation, pause=pause)
            outcome = _outcome(pause)
        finished = RunFinishedEvent(thread_id=plan.thread_id, run_id=plan.run_id, outcome=outcome, usage=usage)
        return record, finished


def _messages_snapshot(messages: tuple[dict[str, Any], ...]) -> MessagesSnapshotEvent:
    """Every message the thread holds (what a page that lost part of a stream resyncs with)."""
    return MessagesSnapshotEvent.model_validate({"messages": list(messages)})


def _recording(result: RunResult) -> str | None:
    """The run just served as recording JSON text (its snapshot is the redacted view), or None if nothing ran."""
    try:
        return recording_of(result).model_dump_json()
    except InvalidRecordingError:
        return None


def _check_stored(lease: ThreadLease) -> ThreadLease:
    """The lease, its stored conversation checked (unreadable: 500); a pause whose checkpoint is not one this host
    wrote is dropped from the lease, so nothing is matched to it."""
    record = lease.record
    if record.conversation is not None:
        try:
            load_conversation(record.conversation)
        except AgentFootprintError:
            raise StoredThreadUnreadableError(lease.thread_id) from None
    if record.pause is not None:
        try:
            load_pause_checkpoint(record.pause.checkpoint)
        except AgentFootprintError:
            logger.warning("thread %r holds a pause this host did not write: it is ignored", lease.thread_id)
            return replace(lease, record=record.model_copy(update={"pause": None}))
    return lease


def _bound(caller: Identity | None, thread_id: str) -> Identity:
    """The run's identity: the bound caller, on this conversation."""
    tenant = caller.tenant if caller is not None else None
    principal = caller.principal if caller is not None else None
    issuer = caller.issuer if caller is not None else None
    return Identity(tenant=tenant, principal=principal, conversation_id=thread_id, issuer=issuer)


def _caller_key(identity: Identity, request: Request) -> str:
    """Whom admission counts a turn against: the signed-in caller, else the client's address."""
    owner = owner_key(identity)
    if owner is not None:
        return "id:" + owner
    client = request.client
    return "addr:" + (client.host if client is not None else "unknown")


def _limit(raw: str | None) -> int:
    if raw is None:
        return 100
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise WireRequestRefusal("ERR_AGUI_FIELD_VALUE", "limit")
    return int(raw)


def _summary_json(summary: ThreadSummary) -> dict[str, Any]:
    return {
        "threadId": summary.thread_id,
        "createdAt": summary.created_at,
        "updatedAt": summary.updated_at,
        "paused": summary.paused,
        "busy": summary.busy,
    }


def _plan(
    turn: TurnRequest,
    lease: ThreadLease,
    rules: TurnRules,
    identity: Identity,
    headers: Mapping[str, str],
    max_message_bytes: int | None,
) -> TurnPlan:
    plan = plan_turn(turn, lease.record.held_thread(), rules, identity=identity, headers=headers)
    last = f"messages[{len(turn.messages) - 1}].content"
    if plan.kind == "message" and (plan.message is None or not plan.message.text.strip()):
        raise WireRequestRefusal("ERR_AGUI_TEXT_REQUIRED", last)
    if max_message_bytes is not None:
        if plan.message is not None and _size(plan.message.parts or plan.message.text) > max_message_bytes:
            raise WireRequestRefusal("ERR_AGUI_MESSAGE_TOO_LARGE", last)
        for answer in plan.tool_answers:
            if _size(answer.content) > max_message_bytes:
                raise WireRequestRefusal("ERR_AGUI_MESSAGE_TOO_LARGE", "messages")
    return plan


def _size(content: Any) -> int:
    """A message's size in bytes: its text as UTF-8, or its content parts as JSON."""
    if isinstance(content, str):
        return len(content.encode("utf-8"))
    return len(json.dumps(content, ensure_ascii=False).encode("utf-8"))


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
    if pause.pause_kind == "check_in":  # the host binds the page's yes/no to the request it holds
        if isinstance(payload, Mapping):
            payload = payload.get("approved")
        yes = entry.status == "resolved" and (
            payload is True or (isinstance(payload, str) and payload.strip().lower() in _YES)
        )
        return check_in_approved(pause.checkpoint) if yes else check_in_declined(pause.checkpoint)
    if entry.status != "resolved":
        return _DECLINED
    if isinstance(payload, Mapping) and "answer" in payload:
        payload = payload["answer"]
    return "" if payload is None else payload


def _pause_record(result: RunResult, translator: AgUiTranslator, frontend: frozenset[str]) -> PauseRecord:
    checkpoint = dict(result.checkpoint or {})
    asked = translator.pause.kind if translator.pause is not None else None
    flow = checkpoint.get("flow")
    pause_data = flow.get("pause_data") if isinstance(flow, Mapping) else None
    pause_kind = str(asked or (pause_data or {}).get("kind") or "ask_human")
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
