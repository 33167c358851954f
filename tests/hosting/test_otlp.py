"""The OTLP/HTTP receiver: real framework spans posted as protobuf or JSON are filed as recordings under the caller's
own principal; oversize, malformed and unauthenticated exports are refused with typed codes."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.trace import ReadableSpan
from starlette.applications import Starlette
from starlette.testclient import TestClient
from tests.interop._frameworks import Captured, capture, one_case

from agentfootprint.explain import Recording, backtrack
from agentfootprint.hosting import HostingConfigError, OtlpReceiver, otlp_app, otlp_run_id
from agentfootprint.identity import Identity
from agentfootprint.interop import to_otlp_json
from agentfootprint.stores.recordings import InMemoryRecordingStore

PB = {"Content-Type": "application/x-protobuf"}
JS = {"Content-Type": "application/json"}


@cache
def run(framework: str, content: bool = True) -> Captured:
    return capture(one_case(framework), content=content)


def _value(v: Any) -> AnyValue:
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(double_value=v)
    if isinstance(v, str):
        return AnyValue(string_value=v)
    out = AnyValue()
    out.array_value.values.extend(_value(x) for x in v)
    return out


def protobuf(spans: Sequence[ReadableSpan]) -> bytes:
    """What the OTLP/HTTP protobuf exporter sends (an ``ExportTraceServiceRequest``), built from ``ReadableSpan``s."""
    out = []
    for s in spans:
        pb = Span(
            trace_id=s.context.trace_id.to_bytes(16, "big"),
            span_id=s.context.span_id.to_bytes(8, "big"),
            parent_span_id=s.parent.span_id.to_bytes(8, "big") if s.parent else b"",
            name=s.name,
            start_time_unix_nano=s.start_time or 0,
            end_time_unix_nano=s.end_time or 0,
            attributes=[KeyValue(key=k, value=_value(v)) for k, v in (s.attributes or {}).items()],
        )
        for e in s.events:
            attrs = [KeyValue(key=k, value=_value(v)) for k, v in (e.attributes or {}).items()]
            pb.events.add(name=e.name, time_unix_nano=e.timestamp, attributes=attrs)
        out.append(pb)
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=out)])])
    return request.SerializeToString()


def trace_hex(cap: Captured) -> str:
    return f"{cap.spans[0].context.trace_id:032x}"


def client(**options: Any) -> tuple[TestClient, InMemoryRecordingStore]:
    store = InMemoryRecordingStore()
    return TestClient(otlp_app(store, **options)), store


def by_header(request: Any) -> Identity | None:
    user = request.headers.get("x-user")
    return Identity(tenant="acme", principal=user) if user else None


def stored(store: InMemoryRecordingStore, run_id: str) -> Recording:
    body = store.get(run_id)
    assert body is not None
    return Recording.model_validate_json(body)


# --- filing ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["pydantic_ai", "langgraph", "openai_agents"])
def test_a_protobuf_export_is_filed_and_backtracks_the_planted_source(framework: str) -> None:
    cap = run(framework)
    http, store = client()
    r = http.post("/v1/traces", content=protobuf(cap.spans), headers=PB)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/x-protobuf"
    reply = ExportTraceServiceResponse.FromString(r.content)
    assert not reply.HasField("partial_success")
    run_id = otlp_run_id(None, trace_hex(cap))
    assert r.headers["x-agentfootprint-runs"] == run_id
    rec = stored(store, run_id)
    assert rec.snapshot.state["answer"] == cap.case.misleading
    found = {s.id for s in backtrack(rec, at=cap.last_llm).sources}
    assert {"check_calendar", "search_docs", cap.case.planted_id} <= found
    meta = store.list().items
    assert [(m.run_id, m.answer) for m in meta] == [(run_id, cap.case.misleading)]


def test_a_json_export_is_filed_and_answers_json() -> None:
    cap = run("langgraph")
    http, store = client()
    r = http.post("/v1/traces", content=json.dumps(to_otlp_json(cap.spans)), headers=JS)
    assert (r.status_code, r.json()) == (200, {})
    assert stored(store, otlp_run_id(None, trace_hex(cap))).snapshot.state["answer"] == cap.case.misleading


def test_a_gzip_export_is_read() -> None:
    cap = run("pydantic_ai")
    http, store = client()
    r = http.post("/v1/traces", content=gzip.compress(protobuf(cap.spans)), headers={**PB, "Content-Encoding": "gzip"})
    assert r.status_code == 200
    assert store.get(otlp_run_id(None, trace_hex(cap))) is not None


def test_a_trace_sent_in_batches_is_filed_whole_and_a_retry_changes_nothing() -> None:
    cap = run("openai_agents")
    llm = [s for s in cap.spans if (s.attributes or {}).get("openinference.span.kind") == "LLM"]
    rest = [s for s in cap.spans if s not in llm]
    http, store = client()
    first = http.post("/v1/traces", content=protobuf(rest), headers=PB)
    assert first.status_code == 200
    assert "x-agentfootprint-runs" not in first.headers  # no model call yet: held, not filed
    assert store.list().items == ()
    for _ in range(2):  # the exporter's retry of the same batch
        r = http.post("/v1/traces", content=protobuf(llm), headers=PB)
        assert r.status_code == 200
    rec = stored(store, otlp_run_id(None, trace_hex(cap)))
    found = {s.id for s in backtrack(rec, at=cap.last_llm).sources}
    assert {"check_calendar", "search_docs", "kb-hours", "kb-bags"} <= found
    assert len(store.list().items) == 1


def test_a_trace_without_content_is_a_partial_success_naming_the_code() -> None:
    cap = run("langgraph", content=False)
    http, store = client()
    r = http.post("/v1/traces", content=protobuf(cap.spans), headers=PB)
    assert r.status_code == 200
    reply = ExportTraceServiceResponse.FromString(r.content)
    assert reply.partial_success.rejected_spans == len(cap.spans)
    assert reply.partial_success.error_message == "ERR_TRACE_CONTENT_MISSING"
    assert store.list().items == ()


# --- identity -------------------------------------------------------------------------------------------------


def test_each_caller_files_under_its_own_principal() -> None:
    cap = run("pydantic_ai")
    http, store = client(bind_caller=by_header)
    body = protobuf(cap.spans)
    for user in ("ann", "bob"):
        assert http.post("/v1/traces", content=body, headers={**PB, "X-User": user}).status_code == 200
    ann = otlp_run_id(Identity(tenant="acme", principal="ann"), trace_hex(cap))
    bob = otlp_run_id(Identity(tenant="acme", principal="bob"), trace_hex(cap))
    assert ann != bob
    assert sorted(m.run_id for m in store.list().items) == sorted([ann, bob])
    assert "ann" not in ann  # the principal is hashed into the id, never spelled out
    assert otlp_run_id(None, trace_hex(cap)) not in {ann, bob}


def test_require_identity_refuses_an_anonymous_export() -> None:
    http, store = client(bind_caller=by_header, require_identity=True)
    r = http.post("/v1/traces", content=protobuf(run("pydantic_ai").spans), headers=JS)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "ERR_OTLP_SIGN_IN_REQUIRED"
    assert r.headers["x-agentfootprint-error"] == "ERR_OTLP_SIGN_IN_REQUIRED"
    assert store.list().items == ()


# --- refusals -------------------------------------------------------------------------------------------------


def test_a_body_over_the_cap_is_a_typed_413() -> None:
    http, store = client(max_body_bytes=1000)
    r = http.post("/v1/traces", content=protobuf(run("pydantic_ai").spans), headers=PB)
    assert r.status_code == 413
    assert r.headers["x-agentfootprint-error"] == "ERR_OTLP_BODY_TOO_LARGE"
    assert r.content.startswith(b"\x08\x08\x12")  # google.rpc.Status: code 8 (RESOURCE_EXHAUSTED), then the message
    assert b"ERR_OTLP_BODY_TOO_LARGE" in r.content
    assert store.list().items == ()


def test_a_gzip_bomb_is_a_413_not_an_allocation() -> None:
    http, _ = client(max_body_bytes=10_000)
    bomb = gzip.compress(b"{" + b" " * 5_000_000 + b"}")
    assert len(bomb) < 10_000
    r = http.post("/v1/traces", content=bomb, headers={**JS, "Content-Encoding": "gzip"})
    assert (r.status_code, r.json()["error"]["code"]) == (413, "ERR_OTLP_BODY_TOO_LARGE")


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (b"\xff\xff\xff", PB, 400, "ERR_OTLP_NOT_PROTOBUF"),
        (b"{not json", JS, 400, "ERR_OTLP_NOT_JSON"),
        (b"[1, 2]", JS, 400, "ERR_OTLP_NOT_JSON"),
        (b'{"resourceSpans": {"a": 1}}', JS, 400, "ERR_OTLP_NOT_JSON"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "00"}]}]}]}', JS, 400,
         "ERR_OTLP_BAD_SPAN"),
        (b"hello", {"Content-Type": "text/plain"}, 415, "ERR_OTLP_CONTENT_TYPE"),
        (b"{}", {**JS, "Content-Encoding": "br"}, 415, "ERR_OTLP_CONTENT_ENCODING"),
        (b"not gzip", {**JS, "Content-Encoding": "gzip"}, 400, "ERR_OTLP_NOT_GZIP"),
    ],
)  # fmt: skip
def test_malformed_exports_are_refused_by_code(body: bytes, headers: dict[str, str], status: int, code: str) -> None:
    http, store = client()
    r = http.post("/v1/traces", content=body, headers=headers)
    assert (r.status_code, r.headers["x-agentfootprint-error"]) == (status, code)
    assert store.list().items == ()


def test_an_empty_export_is_an_empty_success() -> None:
    http, _ = client()
    r = http.post("/v1/traces", content=b"", headers=PB)
    assert (r.status_code, r.content) == (200, b"")
    assert http.post("/v1/traces", content=b"{}", headers=JS).json() == {}


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([PB, JS]))
def test_hostile_bodies_never_fail_the_server(body: bytes, headers: dict[str, str]) -> None:
    http, _ = client()
    r = http.post("/v1/traces", content=body, headers=headers)
    assert r.status_code in (200, 400)


# --- wiring ---------------------------------------------------------------------------------------------------


def test_the_receiver_mounts_next_to_an_existing_app() -> None:
    from agentfootprint import Agent
    from agentfootprint.hosting import ag_ui_app
    from agentfootprint.providers import mock

    store = InMemoryRecordingStore()
    app = ag_ui_app(Agent.create(provider=mock("hi")).system("You are a test agent.").build())
    app.router.routes.extend(OtlpReceiver(store).routes())
    http = TestClient(app)
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.post("/v1/traces", content=protobuf(run("pydantic_ai").spans), headers=PB).status_code == 200
    assert len(store.list().items) == 1


@pytest.mark.parametrize(
    "options",
    [{"max_body_bytes": 0}, {"max_traces": True}, {"bind_caller": "nobody"}, {"convention": "zipkin"}],
)
def test_bad_configuration_is_a_config_error(options: dict[str, Any]) -> None:
    with pytest.raises(HostingConfigError):
        OtlpReceiver(InMemoryRecordingStore(), **options)
    with pytest.raises(HostingConfigError):
        OtlpReceiver(object())  # type: ignore[arg-type]


def test_otlp_app_is_a_starlette_app_holding_its_receiver() -> None:
    app = otlp_app(InMemoryRecordingStore(), path="/otel/v1/traces")
    assert isinstance(app, Starlette)
    assert isinstance(app.state.agentfootprint_otlp, OtlpReceiver)
    assert TestClient(app).post("/otel/v1/traces", content=b"", headers=PB).status_code == 200


# --- batching and memory bounds -------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=5))
def test_any_batching_of_a_trace_files_the_same_recording(rnd: Any, batches: int) -> None:
    cap = run("langgraph")
    whole, store = client()
    assert whole.post("/v1/traces", content=protobuf(cap.spans), headers=PB).status_code == 200
    expected = stored(store, otlp_run_id(None, trace_hex(cap)))
    spans = list(cap.spans)
    rnd.shuffle(spans)
    cuts = sorted(rnd.sample(range(1, len(spans)), batches - 1)) if batches > 1 else []
    parts = [spans[a:b] for a, b in zip([0, *cuts], [*cuts, len(spans)], strict=True)]
    http, split_store = client()
    for part in parts:
        assert http.post("/v1/traces", content=protobuf(part), headers=PB).status_code == 200
    got = stored(split_store, otlp_run_id(None, trace_hex(cap)))
    assert got.snapshot.state["answer"] == expected.snapshot.state["answer"]
    assert [(s.id, s.kind) for s in backtrack(got).sources] == [(s.id, s.kind) for s in backtrack(expected).sources]


def test_a_streamed_body_over_the_cap_is_a_413_without_a_declared_length() -> None:
    http, store = client(max_body_bytes=2000)

    def chunks() -> Any:
        for _ in range(10):
            yield b"\x0a" * 500

    r = http.post("/v1/traces", content=chunks(), headers=PB)
    assert (r.status_code, r.headers["x-agentfootprint-error"]) == (413, "ERR_OTLP_BODY_TOO_LARGE")
    assert store.list().items == ()


def test_spans_past_the_per_trace_cap_are_rejected_as_partial_success() -> None:
    cap = run("pydantic_ai")
    http, _ = client(max_spans_per_trace=3)
    r = http.post("/v1/traces", content=protobuf(cap.spans), headers=PB)
    reply = ExportTraceServiceResponse.FromString(r.content)
    assert r.status_code == 200
    assert reply.partial_success.rejected_spans == len(cap.spans) - 3
    assert "ERR_OTLP_TRACE_TOO_LARGE" in reply.partial_success.error_message


def test_a_trace_let_go_under_memory_pressure_is_not_replaced_by_a_late_batch() -> None:
    first, second = run("pydantic_ai"), run("openai_agents")
    http, store = client(max_traces=1)
    assert http.post("/v1/traces", content=protobuf(first.spans), headers=PB).status_code == 200
    assert http.post("/v1/traces", content=protobuf(second.spans), headers=PB).status_code == 200  # first let go
    before = store.get(otlp_run_id(None, trace_hex(first)))
    late = http.post("/v1/traces", content=protobuf(first.spans[:1]), headers=PB)
    reply = ExportTraceServiceResponse.FromString(late.content)
    assert (reply.partial_success.rejected_spans, reply.partial_success.error_message) == (1, "ERR_OTLP_TRACE_CLOSED")
    assert store.get(otlp_run_id(None, trace_hex(first))) == before
    assert len(store.list().items) == 2


def test_a_caller_refused_by_bind_caller_gets_its_refusal() -> None:
    from agentfootprint.hosting import WireRequestRefusal

    def no_token(request: Any) -> Identity:
        raise WireRequestRefusal("ERR_AGUI_TOKEN_MISSING")

    http, store = client(bind_caller=no_token)
    r = http.post("/v1/traces", content=protobuf(run("pydantic_ai").spans), headers=PB)
    assert (r.status_code, r.headers["x-agentfootprint-error"]) == (401, "ERR_AGUI_TOKEN_MISSING")
    assert r.content.startswith(b"\x08\x10")  # google.rpc.Status code 16, UNAUTHENTICATED
    assert store.list().items == ()


def test_a_crashing_bind_caller_is_a_503_in_fixed_words() -> None:
    def broken(request: Any) -> Identity:
        raise RuntimeError("secret detail")

    http, store = client(bind_caller=broken)
    r = http.post("/v1/traces", content=b"{}", headers=JS)
    assert (r.status_code, r.json()["error"]["code"]) == (503, "ERR_OTLP_BIND_FAILED")
    assert "secret" not in r.text
    assert r.headers["retry-after"] == "5"
    assert store.list().items == ()
