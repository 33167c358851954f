"""Proof at one step of an imported run: the LLM span's recorded request re-sent without suspects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.explain import LocalizeError, Recording, backtrack, load_recording, report_html
from agentfootprint.explain import localize_sync as native_localize_sync
from agentfootprint.interop import ForeignStep, import_trace, localize_context_bug, localize_sync, rerun_step
from agentfootprint.providers import LLMRequest, Message, ToolCall, ToolSpec, mock
from tests.interop.test_import import PLANTED, SYSTEM, Tracer, answers, asks, genai_run, openinference_run, text

FLIP = "refund"


def flipped(a: str, b: str) -> bool:
    return (FLIP in a.lower()) != (FLIP in b.lower())


def seen(request: LLMRequest) -> str:
    return "\n".join([request.system_prompt, *(m.content for m in request.messages)])


def genai_model(request: LLMRequest) -> str:
    """Misled by the planted tool result: without it, the model approves the refund."""
    return "No: final sale." if "final sale" in seen(request) else "Yes, refund approved."


def test_planted_tool_result_is_the_one_culprit_at_the_step() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    report = localize_sync(
        rec, at=ids["last"], provider=mock(respond=genai_model), outcome_changed=flipped, progress=False
    )
    assert report.mode == "causal" and report.at == ids["last"] and report.trigger == ids["last"]
    assert report.answer == "No: final sale."
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order",)]
    assert report.baseline_flips == 0
    assert report.honesty_flags == ["foreign-trace", "downstream-not-rerun"]
    assert report.note.endswith("its downstream effect — later tool calls and model calls — was not re-run.")
    assert "downstream-not-rerun" in str(report)
    page = report_html(backtrack(rec, at=ids["last"]), report, snapshot=rec.snapshot)
    assert "(confirmed culprit)" in page and "downstream effect" in page


def test_planted_document_is_the_culprit_in_an_openinference_run() -> None:
    t, ids = openinference_run()
    rec = import_trace(list(t.spans))

    def model(request: LLMRequest) -> str:
        return "No refund: past 14 days." if "14 days" in seen(request) else "Yes, a refund is fine."

    def changed(a: str, b: str) -> bool:
        return ("No refund" in a) != ("No refund" in b)

    report = localize_sync(rec, at=ids["last"], provider=mock(respond=model), outcome_changed=changed, progress=False)
    assert [c.ids for c in report.confirmed_sets] == [("kb-12",)]
    assert [(c.ids, c.kinds) for c in report.culprit_sets if c.verdict == "confirmed"] == [(("kb-12",), ("rag",))]
    step = ForeignStep(rec, ids["last"], mock(reply="x"))
    # sources never overlap: the paragraph holding the document loses its own text, the document stays
    assert (
        step.without("system-2").request().system_prompt == "You are support.\n\nElectronics: no refunds after 14 days."
    )
    assert step.without("system-2", "kb-12").request().system_prompt == "You are support."
    assert step.without("kb-12").request().system_prompt == "You are support.\n\nContext:\n"


def test_one_result_of_a_tool_called_twice_is_its_own_culprit() -> None:
    t = Tracer()
    u = text("user", "Refund orders 1 and 2?")
    a1 = asks(("x1", "lookup_order", {"id": 1}))
    a2 = asks(("x2", "lookup_order", {"id": 2}))
    t.leaf(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps([u]),
            "gen_ai.output.messages": json.dumps([a1]),
        },
    )
    t.leaf(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps([u, a1, answers(("x1", "order 1 fine"))]),
            "gen_ai.output.messages": json.dumps([a2]),
        },
    )
    last = t.leaf(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [u, a1, answers(("x1", "order 1 fine")), a2, answers(("x2", "order 2 final sale"))]
            ),
            "gen_ai.output.messages": json.dumps([text("assistant", "No.")]),
        },
    )
    rec = import_trace(list(t.spans))
    report = localize_sync(rec, at=last, provider=mock(respond=genai_model), outcome_changed=flipped, progress=False)
    # the whole tool flips it too, through its second result: the finer set is the culprit, the claim says both
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order#2",)]
    assert report.confirmed_sets[0].claim.endswith(
        "; removing every result of tool 'lookup_order' flips it too (not listed apart: it contains this one)"
    )
    assert report.suspect("lookup_order").verdict == "confirmed"  # type: ignore[union-attr]
    assert report.suspect("lookup_order#1").verdict == "not-confirmed"  # type: ignore[union-attr]


def test_the_request_without_each_kind_of_source() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    step = ForeignStep(rec, ids["last"], mock(reply="x"))
    assert step.ablatable_ids() == {"system-1", "system-2", "policy-30", "lookup_order", "lookup_order#1", "escalate"}
    full = step.request(seed=3)
    assert full.system_prompt == SYSTEM and full.seed == 3 and full.model == "gpt-test"
    assert [t.name for t in full.tools] == ["lookup_order", "escalate"]
    cut = step.without("system-2", "policy-30", "lookup_order#1", "escalate").request(seed=3)
    assert cut == LLMRequest(
        system_prompt="You are the refunds desk.",
        messages=[
            Message(role="user", content="Can order 7 be refunded?"),
            Message(role="assistant", tool_calls=[ToolCall(id="c1", name="lookup_order", args={"id": 7})]),
            Message(role="tool", content="", tool_call_id="c1", tool_name="lookup_order"),
            Message(role="user", content="Context: "),
        ],
        tools=[ToolSpec(name="lookup_order", description="Look up an order", input_schema={"type": "object"})],
        model="gpt-test",
        seed=3,
    )
    by_name = step.without("lookup_order").request()
    assert [m.content for m in by_name.messages if m.role == "tool"] == [""]
    assert [t.name for t in by_name.tools] == ["escalate"]
    assert rerun_step(rec, ids["last"], mock(respond=genai_model), without=["lookup_order"]) == "Yes, refund approved."
    assert ForeignStep(rec, ids["last"], mock(reply="x"), model="other").request().model == "other"


def test_a_saved_and_loaded_recording_still_proves_at_the_step(tmp_path: Any) -> None:
    t, ids = genai_run()
    path = tmp_path / "run.json"
    path.write_text(import_trace(list(t.spans)).model_dump_json())
    report = localize_sync(
        load_recording(path),
        at=ids["last"],
        provider=mock(respond=genai_model),
        outcome_changed=flipped,
        progress=False,
    )
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order",)]


def test_end_to_end_with_agent_factory() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    calls: list[tuple[frozenset[str], int]] = []

    async def rerun_whole_agent(ablated: frozenset[str], seed: int) -> str:
        calls.append((ablated, seed))
        return "Yes, refund approved." if "lookup_order" in ablated else "No: final sale."

    report = localize_sync(
        rec,
        at=ids["first"],
        provider=mock(reply="unused"),
        outcome_changed=flipped,
        agent_factory=rerun_whole_agent,
        progress=False,
    )
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order",)]
    assert report.answer == "No: final sale."
    assert report.honesty_flags == ["foreign-trace"]
    assert report.note.endswith("Each rerun ran the whole agent again (agent_factory) and judged its final answer.")
    assert frozenset() in {a for a, _ in calls}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"at": "ffffffffffffffff"}, "no LLM span with that id; LLM spans you can prove at:"),
        ({"at": ""}, "at must be an LLM span id"),
        ({"at": None}, "at must be an LLM span id"),
        ({"provider": None}, "provider must be a model provider"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, Any], message: str) -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    args: dict[str, Any] = {"at": ids["last"], "provider": mock(reply="x"), **kwargs}
    with pytest.raises(LocalizeError, match=message.replace("(", r"\(")):
        localize_sync(rec, progress=False, **args)


def test_a_native_recording_or_a_non_call_step_is_refused() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    with pytest.raises(LocalizeError, match="no LLM span with that id"):
        ForeignStep(rec, f"{ids['last']}/request", mock(reply="x"))
    native = Recording(snapshot=rec.snapshot.model_copy(update={"chart_id": "agent"}))
    with pytest.raises(LocalizeError, match="not an imported trace"):
        ForeignStep(native, "seed#0", mock(reply="x"))
    with pytest.raises(LocalizeError, match="pass a recording from import_trace"):
        ForeignStep(rec.snapshot, ids["last"], mock(reply="x"))  # type: ignore[arg-type]
    with pytest.raises(LocalizeError, match="did not reach this step"):
        ForeignStep(rec, ids["last"], mock(reply="x")).without("nope")


def test_the_native_localizer_takes_a_foreign_step_as_it_is() -> None:
    t, ids = genai_run()
    step = ForeignStep(import_trace(list(t.spans)), ids["last"], mock(respond=genai_model))
    report = native_localize_sync(step, at=ids["last"], outcome_changed=flipped, progress=False)
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order",)]
    assert report.model_calls == report.reruns  # one model call per rerun: only the step is re-sent


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    planted=st.integers(min_value=0, max_value=3),
    tools=st.lists(st.sampled_from(["orders", "billing", "crm", "inventory"]), min_size=4, max_size=4, unique=True),
    cue=st.sampled_from(["final sale", "FINAL SALE", "final-sale item"]),
)
def test_the_planted_result_is_the_exact_culprit_set(planted: int, tools: list[str], cue: str) -> None:
    t = Tracer()
    history: list[dict[str, Any]] = [text("user", "May I return it?")]
    for n, name in enumerate(tools):
        ask = asks((f"k{n}", name, {}))
        t.leaf(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([ask]),
            },
        )
        result = f"{name} says: {cue}" if n == planted else f"{name} says: in stock, 10 days old"
        history = [*history, ask, answers((f"k{n}", result))]
    last = t.leaf(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([text("assistant", "No.")]),
        },
    )

    def model(request: LLMRequest) -> str:
        return "No." if cue in seen(request) else "Yes, refund it."

    report = localize_sync(
        import_trace(list(t.spans)), at=last, provider=mock(respond=model), outcome_changed=flipped, progress=False
    )
    assert [c.ids for c in report.confirmed_sets] == [(tools[planted],)]
    assert PLANTED not in seen(ForeignStep(import_trace(list(t.spans)), last, mock(reply="x")).request())


def test_the_async_entry_point_is_awaitable() -> None:
    import asyncio

    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    report = asyncio.run(
        localize_context_bug(
            rec, at=ids["last"], provider=mock(respond=genai_model), outcome_changed=flipped, samples=0, progress=False
        )
    )
    assert report.mode == "correlational"
    assert next(s.id for s in report.suspects) == "lookup_order"
    assert "foreign-trace" in report.honesty_flags


def test_proof_at_a_step_of_a_handed_over_agent() -> None:
    from tests.interop.test_import import handoff_run

    t, ids = handoff_run()
    rec = import_trace(list(t.spans))
    report = localize_sync(
        rec, at=ids["last"], provider=mock(respond=genai_model), outcome_changed=flipped, progress=False
    )
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order",)]
    step = ForeignStep(rec, ids["last"], mock(reply="x"))
    assert step.ablatable_ids() == {
        "refunds/system-1", "refunds/system-2", "transfer_to_refunds", "transfer_to_refunds#1", "lookup_order",
        "lookup_order#1", "escalate",
    }  # fmt: skip
    assert step.without("refunds/system-1").request().system_prompt == "Cite the policy you used."
    assert ForeignStep(rec, ids["triage"], mock(reply="x")).request().system_prompt == "Route refunds."


def test_explain_localize_takes_provider_for_an_imported_trace() -> None:
    t, ids = genai_run()
    rec = import_trace(list(t.spans))
    report = native_localize_sync(
        rec, at=ids["last"], provider=mock(respond=genai_model), outcome_changed=flipped, progress=False
    )
    assert [c.ids for c in report.confirmed_sets] == [("lookup_order",)]
    assert report.honesty_flags == ["foreign-trace", "downstream-not-rerun"]
    native = Recording(snapshot=rec.snapshot.model_copy(update={"chart_id": "agent"}))
    with pytest.raises(LocalizeError, match="provider= re-sends one step of an imported trace"):
        native_localize_sync(native, at=ids["last"], provider=mock(reply="x"), progress=False)
    with pytest.raises(LocalizeError, match="agent_factory must be a callable"):
        native_localize_sync(rec, at=ids["last"], provider=mock(reply="x"), agent_factory="mod:fn", progress=False)
