"""The run page's JSON: question, answer, stages and flowchart, calls with tokens, narrative, every source's chain;
one source's birth and forward slice; two runs compared."""

from __future__ import annotations

import pytest

from agentfootprint._flagship import QUESTION
from agentfootprint.explain import Recording, backtrack, diff, forward_slice
from agentfootprint.explorer import ExplorerError
from agentfootprint.explorer.views import backtrack_view, diff_view, run_view, source_view
from agentfootprint.flow import render_narrative


def test_run_view_of_the_flagship(runs: dict[str, Recording]) -> None:
    rec = runs["wrong"]
    view = run_view(rec)
    assert view["question"] == QUESTION
    assert view["answer"].startswith("Refund APPROVED")
    assert view["status"] == "completed"
    assert [s["id"] for s in view["steps"]] == [c.runtime_stage_id for c in rec.snapshot.commit_log]
    nodes = {n["id"]: n["visits"] for n in view["flow"]["nodes"]}
    assert nodes == {
        "seed": 1,
        "injection-engine": 2,
        "system-prompt": 2,
        "messages": 2,
        "tools": 2,
        "call-llm": 2,
        "route": 2,
        "tool-calls": 1,
        "final": 1,
    }
    assert {"from": "route", "to": "tool-calls", "count": 1} in view["flow"]["edges"]
    assert {"from": "route", "to": "final", "count": 1} in view["flow"]["edges"]
    route = next(s for s in view["steps"] if s["id"] == "route#6")
    assert route["chosen"] == ["tool-calls"]
    assert set(route) == {"id", "stage", "name", "kind", "namespace", "failed", "paused", "error", "chosen"}
    described = {n["id"]: n["description"] for n in view["flow"]["nodes"]}  # once per stage, not on every step
    assert described == {c.stage_id: c.description for c in rec.snapshot.commit_log}
    calls = [(t["kind"], t["at"]) for t in view["timeline"]]
    assert calls == [("model", "call-llm#5"), ("tool", "tool-calls#7"), ("model", "call-llm#12")]
    first = view["timeline"][0]
    assert (first["input_tokens"], first["output_tokens"], first["tool_calls"]) == (46, 3, ["lookup_order"])
    assert view["timeline"][1]["name"] == "lookup_order"
    assert view["timeline"][1]["latency_ms"] is not None
    assert view["trigger"] == backtrack(rec).trigger == "call-llm#12"
    assert [s["id"] for s in view["sources"]] == [s.id for s in backtrack(rec).sources]
    fact = next(s for s in view["sources"] if s["id"] == "vip-override-fact")
    assert [h["kind"] for h in fact["hops"]] == ["answer", "read", "landed", "allowed", "born"]
    assert view["narrative"][0]["depth"] == 0
    assert len(view["narrative"]) == len(render_narrative(rec.snapshot))  # every line: under the cap
    assert view["narrative_truncated"] is False


def test_paused_run_view(runs: dict[str, Recording]) -> None:
    view = run_view(runs["paused"])
    assert view["status"] == "paused"
    assert view["answer"] is None
    assert view["question"] == "Refund my order"


def test_source_view_born_and_forward_slice(runs: dict[str, Recording]) -> None:
    rec = runs["wrong"]
    view = source_view(rec, "vip-override-fact")
    assert view["born"] == {
        "kind": "born",
        "runtime_stage_id": None,
        "detail": "define_fact('vip-override-fact')",
        "note": None,
    }
    assert view["forward_slice"] == forward_slice(rec, "vip-override-fact")
    assert view["forward_slice"][-1] == "final#14"
    with pytest.raises(ExplorerError) as err:
        source_view(rec, "no-such-source")
    assert err.value.code == "ERR_EXPLORER_NO_SOURCE"


def test_backtrack_view_at_a_step(runs: dict[str, Recording]) -> None:
    rec = runs["wrong"]
    assert backtrack_view(rec, "call-llm#5")["trigger"] == "call-llm#5"
    with pytest.raises(ExplorerError) as err:
        backtrack_view(rec, "nope#1")
    assert err.value.code == "ERR_EXPLORER_BACKTRACK"


def test_diff_view_matches_explain_diff(runs: dict[str, Recording]) -> None:
    a, b = runs["wrong"], runs["fixed"]
    view = diff_view(a, b)
    expected = diff(a, b)
    assert view["sources_removed"] == expected.sources_removed == ["vip-override-fact"]
    assert tuple(view["first_divergence"]) == expected.first_divergence
    assert view["text"] == str(expected)
    assert view["a"]["answer"].startswith("Refund APPROVED")
    assert view["b"]["answer"].startswith("Refund DECLINED")
