"""Real frameworks' traces (pydantic-ai, LangGraph, OpenAI Agents SDK, offline): import, backtrack the planted
source, and prove it the culprit at the step with a mock provider."""

from __future__ import annotations

import json
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.explain import backtrack
from agentfootprint.interop import TraceContentMissingError, import_trace, localize_sync, to_otlp_json
from agentfootprint.providers.mock_provider import mock
from tests.interop._frameworks import FRAMEWORKS, Captured, Case, capture, one_case, planted_cases

PLACES = ("tool", "doc")


@cache
def captured(framework: str, planted_in: str) -> Captured:
    return capture(one_case(framework, planted_in=planted_in))


# --- what the frameworks really emit (content on) ---------------------------------------------------------------


def test_pydantic_ai_spans_carry_genai_content() -> None:
    cap = captured("pydantic_ai", "tool")
    by_op = {}
    for s in cap.spans:
        by_op.setdefault((s.attributes or {}).get("gen_ai.operation.name"), []).append(s)
    assert sorted(by_op, key=str) == ["chat", "execute_tool", "invoke_agent", "retrieval"]
    last = next(s for s in by_op["chat"] if f"{s.context.span_id:016x}" == cap.last_llm).attributes or {}
    assert json.loads(str(last["gen_ai.system_instructions"])) == [{"type": "text", "content": cap.case.system}]
    parts = [p for m in json.loads(str(last["gen_ai.input.messages"])) for p in m["parts"]]
    results = {p["name"]: p["result"] for p in parts if p["type"] == "tool_call_response"}
    assert results == {t.name: t.output() for t in cap.case.tools}
    assert [d["name"] for d in json.loads(str(last["gen_ai.tool.definitions"]))] == ["check_calendar", "search_docs"]
    tools = {(s.attributes or {})["gen_ai.tool.name"]: s.attributes for s in by_op["execute_tool"]}
    assert tools["check_calendar"]["gen_ai.tool.call.result"] == cap.case.planted_text


def test_langgraph_spans_carry_openinference_content() -> None:
    cap = captured("langgraph", "doc")
    kinds = sorted({str((s.attributes or {}).get("openinference.span.kind")) for s in cap.spans})
    assert kinds == ["AGENT", "CHAIN", "LLM", "RETRIEVER", "TOOL"]  # the "agent" node reads as AGENT
    last = next(s for s in cap.spans if f"{s.context.span_id:016x}" == cap.last_llm).attributes or {}
    assert last["llm.input_messages.0.message.role"] == "system"
    assert last["llm.input_messages.0.message.content"] == cap.case.system
    tool_msgs = {last[f"llm.input_messages.{i}.message.name"]: last[f"llm.input_messages.{i}.message.content"]
                 for i in (3, 4)}  # fmt: skip
    assert tool_msgs == {t.name: t.output() for t in cap.case.tools}
    retriever = next(s for s in cap.spans if (s.attributes or {}).get("openinference.span.kind") == "RETRIEVER")
    a = retriever.attributes or {}
    assert a["retrieval.documents.0.document.content"] == cap.case.planted_text
    assert json.loads(str(a["retrieval.documents.0.document.metadata"])) == {"id": "kb-hours"}
    assert "retrieval.documents.0.document.id" not in a  # LangChain's instrumentor drops Document.id


def test_openai_agents_spans_carry_openinference_content() -> None:
    cap = captured("openai_agents", "doc")
    kinds = sorted({str((s.attributes or {}).get("openinference.span.kind")) for s in cap.spans})
    assert kinds == ["AGENT", "CHAIN", "LLM", "RETRIEVER", "TOOL"]
    last = next(s for s in cap.spans if f"{s.context.span_id:016x}" == cap.last_llm).attributes or {}
    assert last["llm.input_messages.0.message.content"] == cap.case.system
    tool_msgs = {last[f"llm.input_messages.{i}.message.tool_call_id"]: last[f"llm.input_messages.{i}.message.content"]
                 for i in (4, 5)}  # fmt: skip
    assert tool_msgs["call_0"] == cap.case.tools[0].result
    assert cap.case.planted_text in str(tool_msgs["call_1"])  # a list return reaches the model as its repr()
    assert "llm.input_messages.4.message.name" not in last  # the SDK's tool messages carry only the call id
    retriever = next(s for s in cap.spans if (s.attributes or {}).get("openinference.span.kind") == "RETRIEVER")
    a = retriever.attributes or {}
    assert (a["retrieval.documents.0.document.id"], a["retrieval.documents.0.document.content"]) == (
        "kb-hours",
        cap.case.planted_text,
    )


# --- import, backtrack, step proof ------------------------------------------------------------------------------


@pytest.mark.parametrize("planted_in", PLACES)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_framework_run_imports_with_the_final_answer_and_two_model_calls(framework: str, planted_in: str) -> None:
    cap = captured(framework, planted_in)
    assert cap.final == cap.case.misleading
    assert len(cap.llm_spans) == 2
    rec = import_trace(list(cap.spans))
    assert rec.snapshot.state["answer"] == cap.case.misleading
    calls = [c.runtime_stage_id for c in rec.snapshot.commit_log if c.stage_id == "call-llm"]
    assert calls == cap.llm_spans


@pytest.mark.parametrize("planted_in", PLACES)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_backtrack_lists_the_planted_source_with_its_text(framework: str, planted_in: str) -> None:
    cap = captured(framework, planted_in)
    bt = backtrack(import_trace(list(cap.spans)), at=cap.last_llm)
    found = {s.id: s for s in bt.sources}
    expected = {"system-1": "instruction", "system-2": "instruction", "kb-hours": "rag", "kb-bags": "rag",
                "check_calendar": "tool", "search_docs": "tool"}  # fmt: skip
    assert {i: found[i].kind for i in expected if i in found} == expected
    assert cap.case.planted_text in str(found[cap.case.planted_id])


@pytest.mark.parametrize("planted_in", PLACES)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_step_localization_confirms_the_planted_culprit(framework: str, planted_in: str) -> None:
    cap = captured(framework, planted_in)
    rec = import_trace(list(cap.spans))
    provider = mock(respond=cap.case.respond)
    report = localize_sync(rec, at=cap.last_llm, provider=provider)
    assert [(c.ids, c.verdict) for c in report.culprit_sets] == [((cap.case.planted_id,), "confirmed")]
    assert report.at == cap.last_llm
    assert "foreign-trace" in report.honesty_flags
    assert "downstream-not-rerun" in report.honesty_flags
    assert provider.calls > 0


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_otlp_json_round_trip_backtracks_the_same_sources(framework: str) -> None:
    cap = captured(framework, "tool")
    direct = backtrack(import_trace(list(cap.spans)), at=cap.last_llm)
    via_json = backtrack(import_trace(json.loads(json.dumps(to_otlp_json(cap.spans)))), at=cap.last_llm)
    assert [(s.id, s.kind) for s in via_json.sources] == [(s.id, s.kind) for s in direct.sources]


# --- content capture off: refused, naming the setting -----------------------------------------------------------


@pytest.mark.parametrize(
    ("framework", "setting"),
    [("pydantic_ai", "include_content=True"), ("langgraph", "OPENINFERENCE_HIDE_INPUTS"),
     ("openai_agents", "OPENINFERENCE_HIDE_INPUTS")],
)  # fmt: skip
def test_a_run_captured_without_content_is_refused(framework: str, setting: str) -> None:
    cap = capture(one_case(framework), content=False)
    assert cap.final == cap.case.misleading
    with pytest.raises(TraceContentMissingError) as err:
        import_trace(list(cap.spans))
    assert (err.value.missing, err.value.total) == (2, 2)
    assert setting in str(err.value)
    assert cap.case.planted_text not in str(err.value)


# --- generated planted cases (property) -------------------------------------------------------------------------

CASES = planted_cases(60)


@settings(max_examples=9, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CASES))
def test_generated_planted_case_is_backtracked_and_confirmed(case: Case) -> None:
    cap = capture(case)
    assert cap.final == case.misleading
    rec = import_trace(list(cap.spans))
    bt = backtrack(rec, at=cap.last_llm)
    assert {t.name for t in case.tools} <= {s.id for s in bt.sources}
    assert case.planted_id in {s.id for s in bt.sources}
    report = localize_sync(rec, at=cap.last_llm, provider=mock(respond=case.respond))
    found = {c.ids for c in report.culprit_sets if c.verdict == "confirmed"}
    assert case.culprits_exact(found), found
