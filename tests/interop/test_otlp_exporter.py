"""The real OTLP/HTTP span exporter (``opentelemetry-exporter-otlp-proto-http``) of an SDK ``TracerProvider`` sends
a pydantic-ai run to the AG-UI host's receiver served by uvicorn on 127.0.0.1; the filed trace imports and backtracks
to the planted source, under the caller the exporter's headers name."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

from agentfootprint._flagship import refunds_agent
from agentfootprint.explain import Recording, backtrack
from agentfootprint.hosting import ag_ui_app, otlp_run_id
from agentfootprint.identity import Identity
from agentfootprint.stores.recordings import InMemoryRecordingStore
from tests.explorer._server import serving
from tests.interop import _frameworks
from tests.interop._frameworks import capture, one_case

otlp_http = pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")


def by_header(request: Any) -> dict[str, str] | None:
    name = request.headers.get("x-user")
    return {"tenant": "acme", "principal": name} if name else None


@pytest.mark.parametrize("planted_in", ["tool", "doc"])
def test_a_run_exported_by_the_sdk_exporter_is_filed_and_backtracks(
    monkeypatch: pytest.MonkeyPatch, planted_in: str
) -> None:
    store = InMemoryRecordingStore()
    app = ag_ui_app(refunds_agent, bind_thread=by_header, otlp=store, explorer=True)
    results: list[SpanExportResult] = []
    with serving(app) as base:
        exporter = otlp_http.OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers={"X-User": "ann"}, timeout=30)
        export = exporter.export
        monkeypatch.setattr(exporter, "export", lambda spans: results.append(export(spans)) or results[-1])
        original = _frameworks._provider

        def provider() -> tuple[TracerProvider, Any]:
            made, memory = original()
            made.add_span_processor(SimpleSpanProcessor(exporter))
            return made, memory

        monkeypatch.setattr(_frameworks, "_provider", provider)
        cap = capture(one_case("pydantic_ai", planted_in=planted_in))
        exporter.shutdown()
    assert results and set(results) == {SpanExportResult.SUCCESS}
    assert len(results) == len(cap.spans)  # one export per finished span (SimpleSpanProcessor)
    trace_id = f"{cap.spans[0].context.trace_id:032x}"
    run_id = otlp_run_id(Identity(tenant="acme", principal="ann"), trace_id)
    assert [m.run_id for m in store.list().items] == [run_id]
    rec = Recording.model_validate_json(store.get(run_id) or "")
    assert rec.snapshot.state["answer"] == cap.case.misleading
    found = {s.id for s in backtrack(rec, at=cap.last_llm).sources}
    assert {"check_calendar", "search_docs", cap.case.planted_id} <= found
