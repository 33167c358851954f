"""import_trace: GenAI (current and previous) and OpenInference spans become a recording that backtrack reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentfootprint.explain import Recording, backtrack, load_recording, report_html
from agentfootprint.interop import InvalidTraceError, TraceContentMissingError, import_trace, to_otlp_json

SYSTEM = "You are the refunds desk.\n\nCite the policy you used."
QUESTION = "Can order 7 be refunded?"
PLANTED = "order 7: bought 90 days ago (final sale)"


class Tracer:
    """Real OpenTelemetry spans (SDK tracer into an in-memory exporter); returns span ids as hex."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("tests")
        self.root = trace.set_span_in_context(self.tracer.start_span("run"))  # one trace; the root is never exported

    @contextmanager
    def span(self, name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]] = ()) -> Iterator[str]:
        here = None if trace.get_current_span().get_span_context().is_valid else self.root
        with self.tracer.start_as_current_span(name, context=here, attributes=attrs) as s:
            for ev, ev_attrs in events:
                s.add_event(ev, ev_attrs)
            yield f"{s.get_span_context().span_id:016x}"

    def leaf(self, name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]] = ()) -> str:
        with self.span(name, attrs, events) as sid:
            return sid

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        return self.exporter.get_finished_spans()


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def asks(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls],
    }


def answers(*results: tuple[str, str]) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": i, "response": r} for i, r in results]}


TOOLS = [
    {"type": "function", "name": "lookup_order", "description": "Look up an order", "parameters": {"type": "object"}},
    {"type": "function", "name": "escalate", "description": "Hand to a human", "parameters": {"type": "object"}},
]


def chat(t: Tracer, messages: list[dict[str, Any]], reply: dict[str, Any], **extra: Any) -> str:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
        "gen_ai.tool.definitions": json.dumps(TOOLS),
        "gen_ai.input.messages": json.dumps(messages),
        "gen_ai.output.messages": json.dumps([reply]),
        **extra,
    }
    return t.leaf("chat gpt-test", attrs)


def tool(t: Tracer, name: str, call_id: str, result: str) -> str:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.result": result,
    }
    return t.leaf(f"execute_tool {name}", attrs)


def genai_run() -> tuple[Tracer, dict[str, str]]:
    """A pydantic-ai-shaped run: ask, a tool call, a retrieval, the answer (the tool result is the planted one)."""
    t = Tracer()
    ids: dict[str, str] = {}
    u = text("user", QUESTION)
    a1 = asks(("c1", "lookup_order", {"id": 7}))
    docs = [
        {"id": "policy-30", "content": "Refunds within 30 days."},
        {"id": "policy-vip", "content": "VIPs any time."},
    ]
    with t.span("invoke_agent refunds", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds"}):
        ids["first"] = chat(t, [u], a1)
        ids["tool"] = tool(t, "lookup_order", "c1", PLANTED)
        ids["retrieval"] = t.leaf(
            "retrieval kb", {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.documents": json.dumps(docs)}
        )
        context = text("user", "Context: Refunds within 30 days.")
        ids["last"] = chat(t, [u, a1, answers(("c1", PLANTED)), context], text("assistant", "No: final sale."))
    return t, ids


def kinds_ids(rec: Recording, at: str | None = None) -> list[tuple[str, str]]:
    return [(s.kind, s.id) for s in backtrack(rec, at=at).sources]


# ---- the GenAI conventions ---------------------------------------------------------------------------------------


def test_genai_run_backtracks_to_every_source_of_the_final_call() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    bt = backtrack(rec)
    assert bt.answer == "No: final sale."
    assert bt.trigger == ids["last"]
    assert [(s.kind, s.id) for s in bt.sources] == [
        ("instruction", "system-1"),
        ("instruction", "system-2"),
        ("rag", "policy-30"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "lookup_order"),
        ("message", "user-3"),
        ("tool", "escalate"),
    ]
    result = bt.source("lookup_order")
    assert result is not None and result.text == PLANTED and result.result_id == "lookup_order#1"
    assert [(h.kind, h.runtime_stage_id) for h in result.hops] == [
        ("answer", "answer"),
        ("read", ids["last"]),
        ("landed", ids["tool"]),
        ("allowed", None),
        ("born", ids["first"]),
    ]
    assert result.hops[-1].detail == "lookup_order(id=7) call c1"
    assert (
        rec.agent == "refunds"
        and rec.model == "gpt-test"
        and rec.snapshot.run_id == t.spans[0].context.trace_id.to_bytes(16, "big").hex()
    )


def test_born_and_allowed_the_trace_does_not_record_are_unknown_never_invented() -> None:
    t, ids = genai_run()
    bt = backtrack(import_trace(list(t.spans)))
    for sid in ("system-1", "policy-30", "escalate"):
        trail = bt.source(sid)
        assert trail is not None
        allowed = next(h for h in trail.hops if h.kind == "allowed")
        assert (allowed.detail, allowed.runtime_stage_id) == ("unknown", None)
        assert allowed.note is not None and allowed.note.startswith("foreign-trace")
        born = trail.hops[-1].detail
        assert "define_" not in born and "Agent.system" not in born
    assert (
        bt.source("policy-30").hops[-1].detail
        == f"document policy-30 returned by retrieval span 'retrieval kb' ({ids['retrieval']})"
    )  # type: ignore[union-attr]
    assert "(foreign-trace)" in bt.source("system-2").hops[-1].detail  # type: ignore[union-attr]
    # a document that did not reach the call in its text is not a source of it
    assert bt.source("policy-vip") is None


def test_backtrack_at_an_earlier_llm_span() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    assert kinds_ids(rec, at=ids["first"]) == [
        ("instruction", "system-1"),
        ("instruction", "system-2"),
        ("message", "user-0"),
        ("tool", "lookup_order"),
        ("tool", "escalate"),
    ]
    assert backtrack(rec, at=ids["first"]).answer == ""


def test_a_tool_called_twice_gets_per_call_result_ids() -> None:
    t = Tracer()
    u = text("user", "Compare orders 1 and 2")
    a1 = asks(("x1", "lookup_order", {"id": 1}))
    a2 = asks(("x2", "lookup_order", {"id": 2}))
    chat(t, [u], a1)
    chat(t, [u, a1, answers(("x1", "order 1 ok"))], a2)
    chat(t, [u, a1, answers(("x1", "order 1 ok")), a2, answers(("x2", "order 2 late"))], text("assistant", "2 is late"))
    bt = backtrack(import_trace(list(t.spans)))
    results = [(s.id, s.result_id, s.text) for s in bt.sources if s.kind == "tool" and s.slot == "messages"]
    assert results == [
        ("lookup_order", "lookup_order#1", "order 1 ok"),
        ("lookup_order", "lookup_order#2", "order 2 late"),
    ]


def test_previous_genai_form_indexed_attributes() -> None:
    t = Tracer()
    attrs = {
        "gen_ai.system": "openai",
        "gen_ai.request.model": "m",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": SYSTEM,
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": QUESTION,
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "k1",
        "gen_ai.prompt.2.tool_calls.0.name": "lookup_order",
        "gen_ai.prompt.2.tool_calls.0.arguments": '{"id": 7}',
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.tool_call_id": "k1",
        "gen_ai.prompt.3.content": PLANTED,
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "No.",
        "llm.request.functions.0.name": "lookup_order",
        "llm.request.functions.0.description": "Look up",
    }
    t.leaf("openai.chat", attrs)
    rec = import_trace(list(t.spans))
    assert kinds_ids(rec) == [
        ("instruction", "system-1"),
        ("instruction", "system-2"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "lookup_order"),
    ]
    assert backtrack(rec).source("lookup_order").text == PLANTED  # type: ignore[union-attr]
    assert backtrack(rec).answer == "No."


def test_previous_genai_form_message_events() -> None:
    t = Tracer()
    events = [
        ("gen_ai.system.message", {"content": SYSTEM}),
        ("gen_ai.user.message", {"content": QUESTION}),
        (
            "gen_ai.assistant.message",
            {"tool_calls": json.dumps([{"id": "e1", "function": {"name": "lookup_order", "arguments": "{}"}}])},
        ),
        ("gen_ai.tool.message", {"content": PLANTED, "id": "e1"}),
        ("gen_ai.choice", {"message": json.dumps({"role": "assistant", "content": "No refund."})}),
    ]
    t.leaf("chat m", {"gen_ai.operation.name": "chat"}, events)
    bt = backtrack(import_trace(list(t.spans)))
    assert bt.answer == "No refund."
    assert [(s.kind, s.id) for s in bt.sources][-1] == ("tool", "lookup_order")
    assert bt.source("lookup_order").text == PLANTED  # type: ignore[union-attr]


def test_previous_genai_form_prompt_and_completion_events() -> None:
    t = Tracer()
    events = [
        (
            "gen_ai.content.prompt",
            {
                "gen_ai.prompt": json.dumps(
                    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]
                )
            },
        ),
        ("gen_ai.content.completion", {"gen_ai.completion": json.dumps([{"role": "assistant", "content": "Yes."}])}),
    ]
    t.leaf("chat m", {"gen_ai.operation.name": "chat"}, events)
    bt = backtrack(import_trace(list(t.spans)))
    assert (bt.answer, [(s.kind, s.id, s.text) for s in bt.sources]) == (
        "Yes.",
        [("instruction", "system-1", "Be brief."), ("message", "user-0", QUESTION)],
    )


# ---- OpenInference -----------------------------------------------------------------------------------------------


def oi_messages(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, m in enumerate(messages):
        for key, value in m.items():
            if key == "tool_calls":
                for j, (cid, name, args) in enumerate(value):
                    base = f"{prefix}.{i}.message.tool_calls.{j}.tool_call"
                    out.update({f"{base}.id": cid, f"{base}.function.name": name, f"{base}.function.arguments": args})
            else:
                out[f"{prefix}.{i}.message.{key}"] = value
    return out


def openinference_run() -> tuple[Tracer, dict[str, str]]:
    """A LangGraph-shaped run: agent span, retriever, LLM asking a tool, tool span, LLM answering from a document."""
    t = Tracer()
    ids: dict[str, str] = {}
    docs = {
        "retrieval.documents.0.document.id": "kb-12",
        "retrieval.documents.0.document.content": "Electronics: no refunds after 14 days.",
        "retrieval.documents.1.document.id": "kb-3",
        "retrieval.documents.1.document.content": "Shipping is free.",
    }
    with t.span("agent", {"openinference.span.kind": "AGENT", "agent.name": "support"}):
        ids["retriever"] = t.leaf("retrieve", {"openinference.span.kind": "RETRIEVER", **docs})
        first = [
            {"role": "system", "content": "You are support.\n\nContext:\nElectronics: no refunds after 14 days."},
            {"role": "user", "content": "Refund my headphones?"},
        ]
        ask = {"role": "assistant", "tool_calls": [("t1", "order_age", '{"order": 9}')]}
        ids["first"] = t.leaf(
            "ChatModel",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "fake-chat",
                "llm.tools.0.tool.json_schema": json.dumps(
                    {
                        "type": "function",
                        "function": {
                            "name": "order_age",
                            "description": "Age of an order",
                            "parameters": {"type": "object"},
                        },
                    }
                ),
                **oi_messages("llm.input_messages", first),
                **oi_messages("llm.output_messages", [ask]),
            },
        )
        ids["tool"] = t.leaf(
            "order_age",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "order_age",
                "input.value": '{"order": 9}',
                "output.value": "20 days",
            },
        )
        second = [*first, ask, {"role": "tool", "content": "20 days", "tool_call_id": "t1", "name": "order_age"}]
        ids["last"] = t.leaf(
            "ChatModel",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "fake-chat",
                **oi_messages("llm.input_messages", second),
                **oi_messages("llm.output_messages", [{"role": "assistant", "content": "No refund: past 14 days."}]),
            },
        )
    return t, ids


def test_openinference_run_backtracks_documents_and_tools() -> None:
    t, ids = openinference_run()
    rec = import_trace(list(t.spans))
    bt = backtrack(rec)
    assert bt.answer == "No refund: past 14 days."
    assert [(s.kind, s.id) for s in bt.sources] == [
        ("instruction", "system-1"),
        ("instruction", "system-2"),
        ("rag", "kb-12"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "order_age"),
    ]
    assert bt.source("kb-12").text == "Electronics: no refunds after 14 days."  # type: ignore[union-attr]
    assert bt.source("order_age").hops[2].runtime_stage_id == ids["tool"]  # type: ignore[union-attr]
    assert rec.agent == "support" and rec.model == "fake-chat"
    assert kinds_ids(rec, at=ids["first"])[-1] == ("tool", "order_age")  # offered, not yet called


def test_convention_restricts_what_is_read() -> None:
    t, _ = openinference_run()
    with pytest.raises(InvalidTraceError) as err:
        import_trace(list(t.spans), convention="genai")
    assert err.value.code == "ERR_TRACE_NO_LLM_SPANS"
    assert backtrack(import_trace(list(t.spans), convention="openinference")).answer == "No refund: past 14 days."
    with pytest.raises(InvalidTraceError) as bad:
        import_trace(list(t.spans), convention="langsmith")
    assert bad.value.code == "ERR_TRACE_CONVENTION"


# ---- content missing ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attrs", "setting", "convention"),
    [
        (
            {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true",
            "genai",
        ),
        ({"openinference.span.kind": "LLM", "llm.model_name": "m"}, "OPENINFERENCE_HIDE_INPUTS", "openinference"),
    ],
)
def test_llm_spans_without_content_are_refused_with_the_setting(
    attrs: dict[str, Any], setting: str, convention: str
) -> None:
    t = Tracer()
    t.leaf("chat", attrs)
    t.leaf("chat", attrs)
    with pytest.raises(TraceContentMissingError) as err:
        import_trace(list(t.spans))
    assert (err.value.missing, err.value.total, err.value.convention, err.value.code) == (
        2,
        2,
        convention,
        "ERR_TRACE_CONTENT_MISSING",
    )
    assert str(err.value).startswith("2 of 2 LLM span(s) carry no message content")
    assert setting in str(err.value)
    assert isinstance(err.value, ValueError)


def test_pydantic_ai_setting_is_named_for_genai() -> None:
    t = Tracer()
    t.leaf("chat", {"gen_ai.operation.name": "chat"})
    with pytest.raises(TraceContentMissingError, match=r"InstrumentationSettings\(include_content=True\)"):
        import_trace(list(t.spans))


# ---- file shapes -------------------------------------------------------------------------------------------------


def _pb_bytes(doc: dict[str, Any]) -> bytes:
    """The same trace as OTLP protobuf (ids base64 as protobuf's JSON mapping wants)."""
    import base64

    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    doc = json.loads(json.dumps(doc))
    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for sp in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in sp:
                        sp[key] = base64.b64encode(bytes.fromhex(sp[key])).decode()
    data = ParseDict(doc, TracesData())
    return data.SerializeToString()  # type: ignore[no-any-return]


def test_every_file_shape_imports_to_the_same_recording(tmp_path: Any) -> None:
    t, _ = genai_run()
    expected = import_trace(list(t.spans)).model_dump()
    doc = to_otlp_json(t.spans)
    (tmp_path / "trace.json").write_text(json.dumps(doc))
    half = len(doc["resourceSpans"][0]["scopeSpans"][0]["spans"]) // 2
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines = [{"resourceSpans": [{"scopeSpans": [{"spans": part}]}]} for part in (spans[:half], spans[half:])]
    (tmp_path / "trace.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    (tmp_path / "trace.pb").write_bytes(_pb_bytes(doc))
    for source in (doc, tmp_path / "trace.json", str(tmp_path / "trace.jsonl"), tmp_path / "trace.pb"):
        assert import_trace(source).model_dump() == expected


def test_an_imported_recording_saves_loads_and_reports(tmp_path: Any) -> None:
    t, _ = genai_run()
    rec = import_trace(list(t.spans))
    path = tmp_path / "run.json"
    path.write_text(rec.model_dump_json())
    again = load_recording(path)
    assert again == rec
    assert [(s.kind, s.id, s.text) for s in backtrack(again).sources] == [
        (s.kind, s.id, s.text) for s in backtrack(rec).sources
    ]
    page = report_html(backtrack(again), snapshot=again.snapshot)
    assert "<span class='mono'>lookup_order</span>" in page and "foreign-trace" in page
    assert (
        "The system prompt the model saw</h2><pre>You are the refunds desk.\n\nCite the policy you used.</pre>" in page
    )


def test_several_traces_pick_the_newest_or_the_named_one() -> None:
    t1, _ = genai_run()
    t2, ids2 = openinference_run()
    spans = [*t1.spans, *t2.spans]
    assert backtrack(import_trace(spans)).trigger == ids2["last"]
    first_trace = f"{t1.spans[0].context.trace_id:032x}"
    assert backtrack(import_trace(spans, trace_id=first_trace)).answer == "No: final sale."
    with pytest.raises(InvalidTraceError) as err:
        import_trace(spans, trace_id="0" * 32)
    assert err.value.code == "ERR_TRACE_NOT_FOUND"


# ---- hostile input -----------------------------------------------------------------------------------------------

SECRET = "sk-SECRET-do-not-echo"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b'{"resourceSpans": "' + SECRET.encode() + b'"}', "resourceSpans"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "' + SECRET.encode() + b'"}]}]}]}', "traceId"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "'
            + b"a" * 32
            + b'", "spanId": "'
            + b"b" * 16
            + b'", "attributes": [{"key": 5}]}]}]}]}',
            "attributes[0]",
        ),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "'
            + b"a" * 32
            + b'", "spanId": "'
            + b"b" * 16
            + b'", "startTimeUnixNano": "'
            + SECRET.encode()
            + b'"}]}]}]}',
            "startTimeUnixNano",
        ),
        (b'{"notATrace": "' + SECRET.encode() + b'"}\n', "resourceSpans"),
        (b'{"x": 1}\n' + SECRET.encode() + b"\n", "line 1"),
        (b"\xff\xfe" + SECRET.encode(), "protobuf"),
        (b"[" + SECRET.encode(), "line 1"),
    ],
)
def test_malformed_files_are_typed_refusals_that_never_quote_values(tmp_path: Any, body: bytes, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(body)
    with pytest.raises(InvalidTraceError) as err:
        import_trace(path)
    assert SECRET not in str(err.value)
    assert needle in str(err.value)
    assert err.value.code == "ERR_INVALID_TRACE"


def test_nesting_past_the_parser_depth_is_refused_or_read_as_text() -> None:
    with pytest.raises(InvalidTraceError, match="nests deeper than a JSON parser follows"):
        import_trace(b'{"resourceSpans": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    t = Tracer()
    deep = "[" * 200_000 + "]" * 200_000
    t.leaf("chat", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": deep})
    with pytest.raises(TraceContentMissingError):
        import_trace(list(t.spans))


def test_odd_sources_are_refused() -> None:
    with pytest.raises(InvalidTraceError, match="cannot import a int"):
        import_trace(7)
    with pytest.raises(InvalidTraceError, match="not an OpenTelemetry ReadableSpan"):
        import_trace([object()])
    with pytest.raises(InvalidTraceError, match="cannot read the trace file: FileNotFoundError"):
        import_trace("/nonexistent/trace.json")


def test_garbage_inside_message_attributes_reads_as_no_content() -> None:
    t = Tracer()
    t.leaf(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "{not json", "gen_ai.output.messages": "[1, 2]"},
    )
    with pytest.raises(TraceContentMissingError):
        import_trace(list(t.spans))


# ---- properties --------------------------------------------------------------------------------------------------

words = st.text(alphabet="abcdefghij klmnop", min_size=3, max_size=30).map(str.strip).filter(bool)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    paragraphs=st.lists(words, min_size=0, max_size=4, unique=True),
    results=st.lists(st.tuples(st.sampled_from(["lookup", "search", "calc"]), words), min_size=0, max_size=5),
)
def test_sources_are_exactly_what_the_last_span_sent(paragraphs: list[str], results: list[tuple[str, str]]) -> None:
    t = Tracer()
    history: list[dict[str, Any]] = [text("user", "question?")]
    for n, (name, result) in enumerate(results):
        ask = asks((f"id{n}", name, {"n": n}))
        t.leaf(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([ask]),
            },
        )
        history = [*history, ask, answers((f"id{n}", result))]
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([text("assistant", "done")]),
    }
    if paragraphs:
        attrs["gen_ai.system_instructions"] = json.dumps([{"type": "text", "content": "\n\n".join(paragraphs)}])
    t.leaf("chat", attrs)
    rec = import_trace(list(t.spans))
    bt = backtrack(rec)
    assert [s.text for s in bt.sources if s.kind == "instruction"] == paragraphs
    got = [(s.id, s.result_id, s.text) for s in bt.sources if s.kind == "tool"]
    counts: dict[str, int] = {}
    want = []
    for name, result in results:
        counts[name] = counts.get(name, 0) + 1
        want.append((name, f"{name}#{counts[name]}", result))
    assert got == want
    assert import_trace(list(t.spans)).model_dump() == rec.model_dump()  # a pure function of the spans
    assert rec.snapshot.state == rec.snapshot.replay()  # the state kept while building is the replayed one


def test_langchain_documents_take_their_id_from_metadata_and_reach_through_a_quoting_tool() -> None:
    t = Tracer()
    content = "Headphones can't be returned once opened."
    docs = {
        "retrieval.documents.0.document.content": content,
        "retrieval.documents.0.document.metadata": json.dumps({"id": "kb-7", "source": "faq.md"}),
        "retrieval.documents.1.document.content": "Shipping is free.",
        "retrieval.documents.1.document.metadata": json.dumps({"source": "ship.md"}),
    }
    t.leaf("retrieve", {"openinference.span.kind": "RETRIEVER", **docs})
    returned = repr([{"id": "kb-7", "content": content}])  # a tool returning Python objects, as the Agents SDK shows
    history = [
        {"role": "user", "content": "Return my headphones?"},
        {"role": "assistant", "tool_calls": [("s1", "search_docs", "{}")]},
        {"role": "tool", "content": returned, "tool_call_id": "s1"},
    ]
    attrs = {
        "openinference.span.kind": "LLM",
        **oi_messages("llm.input_messages", history),
        **oi_messages("llm.output_messages", [{"role": "assistant", "content": "No."}]),
    }
    t.leaf("response", attrs)
    bt = backtrack(import_trace(list(t.spans)))
    assert [(s.kind, s.id) for s in bt.sources] == [
        ("rag", "kb-7"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "search_docs"),
    ]
    assert bt.source("kb-7").text == content  # type: ignore[union-attr]


def test_message_skeletons_without_text_are_content_missing() -> None:
    """pydantic-ai with include_content=False keeps roles, tool ids and names, and drops every text."""
    t = Tracer()
    skeleton = [
        {"role": "user", "parts": [{"type": "text"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_0", "name": "check_calendar"}]},
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "call_0", "name": "check_calendar"}]},
    ]
    for _ in range(2):
        reply = [{"role": "assistant", "parts": [{"type": "text"}]}]
        attrs = {"gen_ai.input.messages": json.dumps(skeleton), "gen_ai.output.messages": json.dumps(reply)}
        t.leaf("chat m", {"gen_ai.operation.name": "chat", **attrs})
    with pytest.raises(TraceContentMissingError) as err:
        import_trace(list(t.spans))
    assert (err.value.missing, err.value.total) == (2, 2)
    assert "include_content=True" in str(err.value)


def handoff_run() -> tuple[Tracer, dict[str, str]]:
    """Two agents: triage hands the conversation to refunds, which looks the order up and answers."""
    t = Tracer()
    ids: dict[str, str] = {}
    u = text("user", QUESTION)
    hand = asks(("h1", "transfer_to_refunds", {}))
    moved = answers(("h1", "Transferred to refunds."))
    look = asks(("c1", "lookup_order", {"id": 7}))
    with t.span("workflow", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "workflow"}):
        with t.span("invoke_agent triage", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}):
            ids["triage"] = chat(t, [u], hand, **{"gen_ai.system_instructions": json.dumps("Route refunds.")})
        with t.span("invoke_agent refunds", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "refunds"}):
            ids["first"] = chat(t, [u, hand, moved], look)
            ids["tool"] = tool(t, "lookup_order", "c1", PLANTED)
            ids["last"] = chat(
                t, [u, hand, moved, look, answers(("c1", PLANTED))], text("assistant", "No: final sale.")
            )
    return t, ids


def test_agents_become_the_run_structure_with_via_hops() -> None:
    t, ids = handoff_run()
    rec = import_trace(list(t.spans))
    snap = rec.snapshot
    assert [(c.kind, c.namespace, c.stage_name) for c in snap.commit_log if c.kind != "stage"] == [
        ("subflow-enter", "triage", "triage"),
        ("subflow-exit", "", "triage"),
        ("subflow-enter", "refunds", "refunds"),
        ("subflow-exit", "", "refunds"),
    ]
    bt = backtrack(rec)
    assert bt.answer == "No: final sale." and bt.trigger == ids["last"]
    own = [(s.kind, s.id) for s in bt.sources if not any(h.kind == "via" for h in s.hops)]
    assert own == [
        ("instruction", "refunds/system-1"),
        ("instruction", "refunds/system-2"),
        ("message", "user-0"),
        ("message", "assistant-1"),
        ("tool", "transfer_to_refunds"),
        ("message", "assistant-3"),
        ("tool", "lookup_order"),
        ("tool", "escalate"),
    ]
    upstream = [s for s in bt.sources if any(h.kind == "via" for h in s.hops)]
    assert [(s.kind, s.id) for s in upstream] == [
        ("instruction", "triage/system-1"),
        ("message", "user-0"),
        ("tool", "lookup_order"),
        ("tool", "escalate"),
    ]
    via = next(h for h in upstream[0].hops if h.kind == "via")
    assert via.detail == "input handed over from triage's answer"
    assert rec.snapshot.state == rec.snapshot.replay()
    assert rec.snapshot.subflow_states["refunds"] == rec.snapshot.state_at(len(snap.commit_log) - 1, "refunds")
