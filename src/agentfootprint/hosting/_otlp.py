"""An OTLP/HTTP trace receiver: ``POST /v1/traces`` (protobuf or JSON, optionally gzip) files each imported trace
into a recordings store under the caller's own principal, so a team points its existing exporter at the host."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import zlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentfootprint.explain.recording import Recording
from agentfootprint.hosting._body import read_body_capped
from agentfootprint.hosting.plan import ThreadBinder, bind_identity
from agentfootprint.hosting.refusal import HostingConfigError, HostUnavailableError, WireRequestRefusal
from agentfootprint.hosting.sessions import owner_key
from agentfootprint.identity import Identity
from agentfootprint.interop import InvalidTraceError, TraceContentMissingError, import_trace
from agentfootprint.stores.recordings import MAX_PAGE, InMemoryRecordingStore, RecordingStore

logger = logging.getLogger("agentfootprint.hosting.otlp")

OTLP_PATH = "/v1/traces"
DEFAULT_MAX_OTLP_BYTES = 8 * 1024 * 1024
"""The largest request body (after gzip is undone) the receiver reads; larger is a 413."""
DEFAULT_MAX_TRACES = 256
"""How many traces the receiver holds open at once, so a trace exported in several batches is filed whole."""
DEFAULT_MAX_SPANS_PER_TRACE = 10_000
DEFAULT_MAX_HELD_BYTES = 64 * 1024 * 1024
"""The most span JSON the receiver holds across open traces; the least recently sent trace is closed first."""
_CLOSED_MEMORY = 4096
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
_REFUSED: dict[str, tuple[int, str]] = {
    "ERR_OTLP_BODY_TOO_LARGE": (413, "the request body is larger than this receiver accepts"),
    "ERR_OTLP_CONTENT_TYPE": (415, "send application/x-protobuf or application/json"),
    "ERR_OTLP_CONTENT_ENCODING": (415, "send the body plain or gzip-compressed"),
    "ERR_OTLP_NOT_GZIP": (400, "the body is not valid gzip"),
    "ERR_OTLP_NOT_PROTOBUF": (400, "the body is not an OTLP ExportTraceServiceRequest in protobuf"),
    "ERR_OTLP_NOT_JSON": (400, "the body is not an OTLP ExportTraceServiceRequest in JSON"),
    "ERR_OTLP_BAD_SPAN": (400, "a span lacks a valid traceId or spanId"),
    "ERR_OTLP_SIGN_IN_REQUIRED": (401, "this receiver files traces for signed-in callers only"),
}
_GRPC_INVALID_ARGUMENT = 3
_GRPC_UNAUTHENTICATED = 16
_GRPC_RESOURCE_EXHAUSTED = 8


def _refusal(reason: str) -> WireRequestRefusal:
    status, message = _REFUSED[reason]
    return WireRequestRefusal(reason, "body", status=status, message=message)


def otlp_run_id(identity: Identity | None, trace_id: str) -> str:
    """The run id a trace is filed under: the caller's principal (hashed) and the trace id, so no caller can reach or
    replace another's run by sending the same trace id."""
    return _owner_prefix(owner_key(identity)) + trace_id.lower()


def _owner_prefix(owner: str | None) -> str:
    tag = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:16] if owner is not None else "anonymous"
    return f"otlp-{tag}-"


def imported_runs(recordings: RecordingStore, owner: str | None, limit: int = 1000) -> list[tuple[Recording, float]]:
    """The runs the receiver filed for ``owner`` (newest first, at most ``limit``), each with when it was filed;
    one that no longer reads as a recording is skipped."""
    prefix = _owner_prefix(owner)
    out: list[tuple[Recording, float]] = []
    cursor: str | None = None
    while True:
        page = recordings.list(limit=MAX_PAGE, cursor=cursor)
        for meta in page.items:
            body = recordings.get(meta.run_id) if meta.run_id.startswith(prefix) else None
            if body is None:
                continue
            try:
                out.append((Recording.model_validate_json(body), meta.created_at))
            except ValidationError:
                logger.warning("an imported trace's recording no longer reads; not listed")
            if len(out) >= limit:
                return out
        cursor = page.next_cursor
        if cursor is None:
            return out


def host_receiver(otlp: Any, bind_caller: ThreadBinder | None) -> OtlpReceiver | None:
    """The receiver an AG-UI host mounts for ``otlp=``: None for False, a new in-memory store for True, the given
    store, or the given ``OtlpReceiver`` as is; with a ``bind_caller`` only signed-in callers may send."""
    if otlp is False or otlp is None:
        return None
    if isinstance(otlp, OtlpReceiver):
        return otlp
    if otlp is True:
        return OtlpReceiver(InMemoryRecordingStore(), bind_caller=bind_caller, require_identity=bind_caller is not None)
    if isinstance(otlp, RecordingStore):
        return OtlpReceiver(otlp, bind_caller=bind_caller, require_identity=bind_caller is not None)
    raise HostingConfigError("otlp must be a bool, a RecordingStore or an OtlpReceiver")


@dataclass
class _Trace:
    """One trace's spans received so far (by span id: an exporter's retry sends the same span again)."""

    spans: dict[str, dict[str, Any]] = field(default_factory=dict)
    size: int = 0


def _hex(raw: Any, width: int) -> str | None:
    if not isinstance(raw, str):
        return None
    text = raw.strip().lower()
    if len(text) == width * 2 and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return None
    return decoded.hex() if len(decoded) == width else None


def _decode(body: bytes, content_type: str) -> dict[str, Any]:
    """The request as OTLP/JSON (a protobuf body is mapped to the JSON form)."""
    if content_type == PROTOBUF:
        from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        message = ExportTraceServiceRequest()
        try:
            message.ParseFromString(body)
        except (DecodeError, ValueError, RecursionError):
            raise _refusal("ERR_OTLP_NOT_PROTOBUF") from None
        mapped: dict[str, Any] = MessageToDict(message)
        return mapped
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _refusal("ERR_OTLP_NOT_JSON") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans", []), list):
        raise _refusal("ERR_OTLP_NOT_JSON")
    return doc


def _by_trace(doc: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The request's spans grouped by trace id, each wrapped with its resource and scope (OTLP/JSON)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for rs in doc.get("resourceSpans") or []:
        if not isinstance(rs, dict) or not isinstance(rs.get("scopeSpans", []), list):
            raise _refusal("ERR_OTLP_NOT_JSON")
        for ss in rs.get("scopeSpans") or []:
            if not isinstance(ss, dict) or not isinstance(ss.get("spans", []), list):
                raise _refusal("ERR_OTLP_NOT_JSON")
            for span in ss.get("spans") or []:
                if not isinstance(span, dict):
                    raise _refusal("ERR_OTLP_NOT_JSON")
                trace_id, span_id = _hex(span.get("traceId"), 16), _hex(span.get("spanId"), 8)
                if trace_id is None or span_id is None:
                    raise _refusal("ERR_OTLP_BAD_SPAN")
                wrapped = {"resource": rs.get("resource") or {}, "scope": ss.get("scope") or {}, "span": span}
                out.setdefault(trace_id, []).append(wrapped)
    return out


def _gunzip(body: bytes, cap: int) -> bytes:
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, cap + 1)
    except zlib.error:
        raise _refusal("ERR_OTLP_NOT_GZIP") from None
    if len(out) > cap or inflater.unconsumed_tail:
        raise _refusal("ERR_OTLP_BODY_TOO_LARGE")
    if not inflater.eof:
        raise _refusal("ERR_OTLP_NOT_GZIP")
    return out


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _status_pb(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` in protobuf (code = field 1, message = field 2), as the OTLP/HTTP spec answers errors."""
    text = message.encode("utf-8")
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


class OtlpReceiver:
    """``POST /v1/traces``: reads an OTLP export, imports each trace (``interop.import_trace``) and files it in
    ``recordings`` as ``otlp_run_id(caller, trace_id)``; a trace sent in several batches is re-filed whole."""

    def __init__(
        self,
        recordings: RecordingStore,
        *,
        bind_caller: ThreadBinder | None = None,
        require_identity: bool = False,
        max_body_bytes: int = DEFAULT_MAX_OTLP_BYTES,
        max_traces: int = DEFAULT_MAX_TRACES,
        max_spans_per_trace: int = DEFAULT_MAX_SPANS_PER_TRACE,
        max_held_bytes: int = DEFAULT_MAX_HELD_BYTES,
        convention: str = "auto",
    ) -> None:
        if not callable(getattr(recordings, "put", None)):
            raise HostingConfigError("recordings must be a RecordingStore (agentfootprint.stores)")
        if bind_caller is not None and not callable(bind_caller):
            raise HostingConfigError("bind_caller must be callable")
        caps = {"max_body_bytes": max_body_bytes, "max_traces": max_traces,
                "max_spans_per_trace": max_spans_per_trace, "max_held_bytes": max_held_bytes}  # fmt: skip
        for name, value in caps.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise HostingConfigError(f"{name} must be a positive int")
        if convention not in ("auto", "genai", "openinference"):
            raise HostingConfigError("convention must be 'auto', 'genai' or 'openinference'")
        self.recordings = recordings
        self.bind_caller = bind_caller
        self.require_identity = bool(require_identity)
        self.max_body_bytes = max_body_bytes
        self.max_traces = max_traces
        self.max_spans = max_spans_per_trace
        self.max_held_bytes = max_held_bytes
        self.convention = convention
        self._open: OrderedDict[str, _Trace] = OrderedDict()
        self._held = 0
        self._closed: OrderedDict[str, None] = OrderedDict()  # traces let go: a late batch must not replace them
        self._lock = anyio.Lock()

    def routes(self, path: str = OTLP_PATH) -> list[Route]:
        """The receiver's route, to add to an app: ``Starlette(routes=[*other, *receiver.routes()])``."""
        return [Route(path, self.handle, methods=["POST"])]

    async def handle(self, request: Request) -> Response:
        """One OTLP/HTTP export request."""
        wants_pb = _media(request.headers.get("content-type")) != JSON
        try:
            caller = await self._caller(request)
            doc = await self._read(request)
            rejected, why, filed = await self._file(caller, _by_trace(doc))
        except WireRequestRefusal as exc:
            return _error(exc.status, exc.reason, exc.message, wants_pb, exc.headers)
        except HostUnavailableError as exc:
            return _error(503, exc.code, exc.message, wants_pb, {"Retry-After": str(exc.retry_after)})
        except Exception:
            logger.exception("OTLP export request failed")
            return _error(500, "ERR_OTLP_INTERNAL", "the receiver could not file this export", wants_pb)
        headers = {"X-Agentfootprint-Runs": ",".join(filed)} if filed else {}
        return _success(rejected, why, wants_pb, headers)

    async def _caller(self, request: Request) -> Identity:
        try:
            identity = await bind_identity(self.bind_caller, request, None)
        except (WireRequestRefusal, HostUnavailableError):
            raise
        except Exception:
            logger.exception("bind_caller failed")
            raise HostUnavailableError("ERR_OTLP_BIND_FAILED", "the receiver could not identify the caller") from None
        if self.require_identity and owner_key(identity) is None:
            raise _refusal("ERR_OTLP_SIGN_IN_REQUIRED")
        return identity

    async def _read(self, request: Request) -> dict[str, Any]:
        media = _media(request.headers.get("content-type"))
        if media not in (PROTOBUF, JSON):
            raise _refusal("ERR_OTLP_CONTENT_TYPE")
        encoding = (request.headers.get("content-encoding") or "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            raise _refusal("ERR_OTLP_CONTENT_ENCODING")
        declared = (request.headers.get("content-length") or "").strip()
        if declared.isascii() and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise _refusal("ERR_OTLP_BODY_TOO_LARGE")
        try:
            body = await read_body_capped(request.stream(), self.max_body_bytes)
        except WireRequestRefusal:
            raise _refusal("ERR_OTLP_BODY_TOO_LARGE") from None
        if encoding == "gzip":
            body = _gunzip(body, self.max_body_bytes)
        return _decode(body, media)

    async def _file(
        self, caller: Identity, traces: dict[str, list[dict[str, Any]]]
    ) -> tuple[int, list[str], list[str]]:
        """Merge each trace's new spans with those already held, import and file it; count what was refused."""
        rejected = 0
        why: list[str] = []
        filed: list[str] = []
        for trace_id, spans in traces.items():
            run_id = otlp_run_id(caller, trace_id)
            async with self._lock:
                if run_id in self._closed:
                    rejected += len(spans)
                    why.append("ERR_OTLP_TRACE_CLOSED")
                    continue
                held = self._open.pop(run_id, None) or _Trace()
                fresh = []
                for s in spans:
                    span_id = str(_hex(s["span"].get("spanId"), 8))
                    if span_id in held.spans:
                        continue
                    size = len(json.dumps(s, separators=(",", ":")))
                    if len(held.spans) >= self.max_spans or held.size + size > self.max_held_bytes:
                        rejected += 1
                        why.append("ERR_OTLP_TRACE_TOO_LARGE")
                        continue
                    held.spans[span_id] = s
                    held.size += size
                    self._held += size
                    fresh.append(s)
                self._open[run_id] = held
                self._let_go(keep=run_id)
                snapshot = list(held.spans.values())
            outcome = await anyio.to_thread.run_sync(self._import_and_put, run_id, trace_id, snapshot)
            if outcome is None:
                filed.append(run_id)
            elif outcome != "ERR_TRACE_NO_LLM_SPANS":  # no model call yet: held until a later batch brings one
                rejected += len(fresh)
                why.append(outcome)
        return rejected, sorted(set(why)), filed

    def _let_go(self, keep: str) -> None:
        """Close the least recently sent traces while too many, or too many bytes, are held (never ``keep``)."""
        while len(self._open) > 1 and (len(self._open) > self.max_traces or self._held > self.max_held_bytes):
            run_id = next(iter(self._open))
            if run_id == keep:
                self._open.move_to_end(run_id)
                continue
            self._held -= self._open.pop(run_id).size
            self._closed[run_id] = None
            while len(self._closed) > _CLOSED_MEMORY:
                self._closed.popitem(last=False)

    def _import_and_put(self, run_id: str, trace_id: str, spans: Sequence[dict[str, Any]]) -> str | None:
        doc = {
            "resourceSpans": [
                {"resource": s["resource"], "scopeSpans": [{"scope": s["scope"], "spans": [s["span"]]}]} for s in spans
            ]
        }
        try:
            recording = import_trace(doc, convention=self.convention, trace_id=trace_id)
        except TraceContentMissingError as exc:
            return exc.code
        except InvalidTraceError as exc:
            return "ERR_TRACE_NO_LLM_SPANS" if _no_llm(exc) else exc.code
        state = recording.snapshot.state
        self.recordings.put(
            run_id,
            recording.model_dump_json(),
            agent=recording.agent,
            question=str(state.get("user_message") or ""),
            answer=str(state.get("answer") or ""),
        )
        return None


def _no_llm(exc: InvalidTraceError) -> bool:
    """Whether the import found no model call yet (a batch of tool or agent spans only)."""
    return exc.code == "ERR_TRACE_NO_LLM_SPANS"


def _media(raw: str | None) -> str:
    return (raw or "").split(";", 1)[0].strip().lower()


def _success(rejected: int, why: list[str], protobuf: bool, headers: Mapping[str, str]) -> Response:
    """``ExportTraceServiceResponse``: empty when everything was filed, else its ``partial_success``."""
    message = "; ".join(why)
    if protobuf:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        reply = ExportTraceServiceResponse()
        if rejected or why:
            reply.partial_success.rejected_spans = rejected
            reply.partial_success.error_message = message
        return Response(reply.SerializeToString(), media_type=PROTOBUF, headers=dict(headers))
    body: dict[str, Any] = {}
    if rejected or why:
        body["partialSuccess"] = {"rejectedSpans": str(rejected), "errorMessage": message}
    return Response(json.dumps(body), media_type=JSON, headers=dict(headers))


def _error(
    status: int, reason: str, message: str, protobuf: bool, headers: Mapping[str, str] | None = None
) -> Response:
    """A refusal as the OTLP/HTTP spec answers one (a ``google.rpc.Status``), its message led by the stable code."""
    grpc = {401: _GRPC_UNAUTHENTICATED, 413: _GRPC_RESOURCE_EXHAUSTED}.get(status, _GRPC_INVALID_ARGUMENT)
    text = f"{reason}: {message}"
    extra = {"X-Agentfootprint-Error": reason, **(headers or {})}
    if protobuf:
        return Response(_status_pb(grpc, text), status_code=status, media_type=PROTOBUF, headers=extra)
    body = {"code": grpc, "message": text, "error": {"code": reason, "field": "body", "message": message}}
    return Response(json.dumps(body), status_code=status, media_type=JSON, headers=extra)


def otlp_app(recordings: RecordingStore, *, path: str = OTLP_PATH, **options: Any) -> Starlette:
    """An ASGI app receiving OTLP/HTTP traces at ``POST {path}`` into ``recordings`` (see ``OtlpReceiver``)."""
    receiver = OtlpReceiver(recordings, **options)
    app = Starlette(routes=receiver.routes(path))
    app.state.agentfootprint_otlp = receiver
    return app


__all__ = [
    "DEFAULT_MAX_OTLP_BYTES",
    "OTLP_PATH",
    "OtlpReceiver",
    "otlp_app",
    "otlp_run_id",
]
