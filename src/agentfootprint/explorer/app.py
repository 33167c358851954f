"""The explorer as an ASGI app (Starlette, imported when the app is built): the page at ``/``, its JSON API under
``/api``, live localization progress over server-sent events."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentfootprint.errors import validation_field
from agentfootprint.explorer.catalog import Catalog, ExplorerError, RunQuery, open_catalog
from agentfootprint.explorer.prove import Jobs, LocalizeRequest
from agentfootprint.explorer.views import backtrack_view, diff_view, narrative_view, run_view, source_view

CatalogFor = Callable[[Any], Awaitable[Catalog]]
"""How a host picks the catalog a request may see (its caller's own runs)."""

_STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:;"
        " base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_STATUS = {
    "ERR_EXPLORER_NO_RUN": 404,
    "ERR_EXPLORER_NO_SOURCE": 404,
    "ERR_EXPLORER_NO_JOB": 404,
    "ERR_EXPLORER_NO_AGENT": 409,
    "ERR_EXPLORER_SIGN_IN_REQUIRED": 401,
    "ERR_EXPLORER_BUSY": 429,
    "ERR_EXPLORER_STORE": 500,
    "ERR_EXPLORER_BAD_RECORDING": 422,
}
SSE_HEARTBEAT_SECONDS = 15.0


def _asset(name: str) -> str:
    return resources.files("agentfootprint.explorer").joinpath("static", name).read_text(encoding="utf-8")


def _flag(raw: str | None, name: str) -> bool | None:
    if raw is None or raw == "" or raw == "any":
        return None
    if raw in ("1", "true", "yes"):
        return True
    if raw in ("0", "false", "no"):
        return False
    raise ExplorerError(f"filter '{name}' takes true, false or any", code="ERR_EXPLORER_QUERY")


def _when(raw: str | None, name: str, end: bool = False) -> float | None:
    """Epoch seconds, or a date ``YYYY-MM-DD`` (UTC; an ``until`` date includes that whole day)."""
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
        if math.isfinite(value):
            return value
    except ValueError:
        pass
    try:
        day = datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise ExplorerError(
            f"filter '{name}' takes a date YYYY-MM-DD or epoch seconds", code="ERR_EXPLORER_QUERY"
        ) from None
    return day + 86_400.0 if end else day


def query_of(params: Any) -> RunQuery:
    """The listing query of a request's parameters (a typed refusal naming the field)."""
    try:
        return RunQuery(
            q=params.get("q") or None,
            agent=params.get("agent") or None,
            since=_when(params.get("since"), "since"),
            until=_when(params.get("until"), "until", end=True),
            paused=_flag(params.get("paused"), "paused"),
            failed=_flag(params.get("failed"), "failed"),
            offset=params.get("offset") or 0,
            limit=params.get("limit") or 50,
        )
    except ValidationError as err:
        field = validation_field(err, default="query")
        raise ExplorerError(f"filter '{field}' is out of range", code="ERR_EXPLORER_QUERY") from None


def explorer_app(
    source: str | Path | Catalog | None = None,
    *,
    agent_factory: Callable[[], Any] | None = None,
    catalog_for: CatalogFor | None = None,
    root_path: str = "",
) -> Any:
    """The explorer over ``source`` (a recordings path or a ``Catalog``), or over ``catalog_for(request)`` (a host
    showing each caller their own runs). ``agent_factory`` builds the agent that reruns a run to prove culprits."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    if catalog_for is None:
        if source is None:
            raise ExplorerError("the explorer needs recordings (a path or a catalog)", code="ERR_EXPLORER_PATH")
        fixed = source if isinstance(source, Catalog) else open_catalog(source)

        async def fixed_catalog(request: Any) -> Catalog:
            return fixed

        pick: CatalogFor = fixed_catalog
    else:
        pick = catalog_for
    jobs = Jobs(agent_factory)
    page = _asset("index.html").replace("{{ROOT}}", root_path.rstrip("/"))
    assets = {name: _asset(name) for name in _STATIC}

    def refusal(exc: ExplorerError) -> JSONResponse:
        status = _STATUS.get(exc.code, 400)
        return JSONResponse({"error": {"code": exc.code, "message": str(exc)}}, status_code=status, headers=_HEADERS)

    def ok(data: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(data, status_code=status, headers=_HEADERS)

    def handled(
        fn: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                return await fn(request)
            except ExplorerError as exc:
                return refusal(exc)

        return endpoint

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=_HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(assets[name], media_type=_STATIC[name], headers=_HEADERS)

    async def info(request: Request) -> Response:
        return ok({"can_prove": agent_factory is not None, "version": 1})

    async def runs(request: Request) -> Response:
        query = query_of(request.query_params)
        catalog = await pick(request)
        listed = await run_in_threadpool(catalog.page, query)
        return ok(listed.model_dump(mode="json"))

    async def recording(request: Request, key: str = "run_id") -> Any:
        catalog = await pick(request)
        return await run_in_threadpool(catalog.body, request.path_params[key])

    async def run(request: Request) -> Response:
        rec = await recording(request)
        sources = _flag(request.query_params.get("sources"), "sources") is not False
        narrative = _flag(request.query_params.get("narrative"), "narrative") is not False
        view = await run_in_threadpool(lambda: run_view(rec, sources=sources, narrative=narrative))
        view["can_prove"] = agent_factory is not None
        return ok(view)

    async def run_narrative(request: Request) -> Response:
        rec = await recording(request)
        return ok(await run_in_threadpool(narrative_view, rec))

    async def run_backtrack(request: Request) -> Response:
        rec = await recording(request)
        at = request.query_params.get("at") or None
        return ok(await run_in_threadpool(backtrack_view, rec, at))

    async def source_of_run(request: Request) -> Response:
        rec = await recording(request)
        return ok(await run_in_threadpool(source_view, rec, request.path_params["source_id"]))

    async def compare(request: Request) -> Response:
        a_id, b_id = request.query_params.get("a"), request.query_params.get("b")
        if not a_id or not b_id:
            raise ExplorerError("compare takes two run ids: a and b", code="ERR_EXPLORER_QUERY")
        catalog = await pick(request)
        a = await run_in_threadpool(catalog.body, a_id)
        b = await run_in_threadpool(catalog.body, b_id)
        return ok(await run_in_threadpool(diff_view, a, b))

    async def localize(request: Request) -> Response:
        try:
            raw = await request.json()
        except (ValueError, UnicodeDecodeError):
            raise ExplorerError("the body must be a JSON object", code="ERR_EXPLORER_LOCALIZE") from None
        try:
            req = LocalizeRequest.model_validate(raw)
        except ValidationError as err:
            field = validation_field(err, default="body")
            raise ExplorerError(f"localize field '{field}' is invalid", code="ERR_EXPLORER_LOCALIZE") from None
        catalog = await pick(request)
        rec = await run_in_threadpool(catalog.body, req.run_id)
        job = jobs.start(req, rec)
        return ok(job.progress(), status=202)

    async def visible_job(request: Request) -> Any:
        """The job named in the path, if its run is one this caller may see (else no such job)."""
        job = jobs.get(request.path_params["job_id"])
        catalog = await pick(request)
        try:
            await run_in_threadpool(catalog.body, job.request.run_id)
        except ExplorerError:
            raise ExplorerError("no localization with this id", code="ERR_EXPLORER_NO_JOB") from None
        return job

    async def job_status(request: Request) -> Response:
        return ok((await visible_job(request)).progress())

    async def job_cancel(request: Request) -> Response:
        job = await visible_job(request)
        return ok(jobs.cancel(job.id).progress())

    async def job_events(request: Request) -> Response:
        job = await visible_job(request)

        async def stream() -> AsyncIterator[str]:
            seen = -1
            while True:
                if job.version != seen:
                    seen = job.version
                    now = job.progress()  # read once: the job moves on while this event is being sent
                    yield f"event: progress\ndata: {json.dumps(now, separators=(',', ':'))}\n\n"
                    if now["state"] != "running":
                        yield f"event: end\ndata: {json.dumps({'state': now['state']})}\n\n"
                        return
                else:
                    yield ": keep-alive\n\n"
                await job.wait(seen, SSE_HEARTBEAT_SECONDS)

        headers = {**_HEADERS, "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def not_found(request: Request, exc: Exception) -> Response:
        return ok({"error": {"code": "ERR_EXPLORER_NOT_FOUND", "message": "no such page"}}, status=404)

    routes = [
        Route("/", index),
        Route("/static/{name}", static),
        Route("/api/info", handled(info)),
        Route("/api/runs", handled(runs)),
        Route("/api/runs/{run_id}", handled(run)),
        Route("/api/runs/{run_id}/backtrack", handled(run_backtrack)),
        Route("/api/runs/{run_id}/narrative", handled(run_narrative)),
        Route("/api/runs/{run_id}/sources/{source_id:path}", handled(source_of_run)),
        Route("/api/diff", handled(compare)),
        Route("/api/localize", handled(localize), methods=["POST"]),
        Route("/api/localize/{job_id}", handled(job_status)),
        Route("/api/localize/{job_id}/events", handled(job_events)),
        Route("/api/localize/{job_id}/cancel", handled(job_cancel), methods=["POST"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        await jobs.close()

    app = Starlette(routes=routes, exception_handlers={404: not_found}, lifespan=lifespan)
    app.state.jobs = jobs
    return app


__all__ = ["CatalogFor", "explorer_app", "query_of"]
