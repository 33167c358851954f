"""Workflow (R003-16): named steps with explicit data flow, structured values, pause/resume, backtrack across."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, Workflow, define_fact
from agentfootprint.compose import CompositionBuildError, Sequence, StepMessageError, StepOutputError
from agentfootprint.explain import backtrack, localize_context_bug
from agentfootprint.flow import pause
from agentfootprint.providers import LLMRequest, mock
from tests.compose._support import asker, echo, witness


def parse(values: dict[str, Any]) -> dict[str, Any]:
    text = values["input"]
    return {"order": text.split()[-1].rstrip("!"), "angry": "!" in text}


async def test_R003_16_workflow_hands_structured_values_between_named_steps() -> None:
    """R003-16: Workflow exists; a function step's dict reaches the next step unchanged (not flattened to text)."""
    wf = (
        Workflow.create("intake")
        .step("parse", parse, inputs=["input"])
        .step("price", lambda v: {"order": v["parse"]["order"], "refund": 42 if not v["parse"]["angry"] else 50})
        .build()
    )
    result = await wf.run("refund A-1001!")
    assert result.status == "completed"
    assert result.output == {"order": "A-1001", "refund": 50}
    assert json.loads(result.answer or "") == {"order": "A-1001", "refund": 50}
    assert wf.steps == ["parse", "price"]


async def test_R003_16_each_step_reads_only_what_it_declares() -> None:
    """R003-16: explicit data flow — the mount's recorded reads are exactly the declared outputs."""
    wf = (
        Workflow.create("w")
        .step("a", echo("A"))
        .step("b", echo("B"))
        .step("c", echo("C"), inputs=["input", "a"], message=lambda v: f"{v['input']}+{v['a']}")
        .build()
    )
    result = await wf.run("q")
    assert result.answer == "C(q+A(q))"
    snap = wf.last_snapshot()
    assert snap is not None
    enter_c = next(c for c in snap.commit_log if c.kind == "subflow-enter" and c.stage_id == "c")
    assert sorted(enter_c.reads) == ["input", "out:a"]
    enter_b = next(c for c in snap.commit_log if c.kind == "subflow-enter" and c.stage_id == "b")
    assert sorted(enter_b.reads) == ["out:a"]


async def test_several_inputs_default_to_labelled_blocks_and_output_picks_a_step() -> None:
    wf = (
        Workflow.create("w")
        .step("a", echo("A"))
        .step("b", echo("B"), inputs=["input", "a"])
        .step("tidy", lambda v: v["b"].upper())
        .output("b")
        .build()
    )
    result = await wf.run("q")
    assert result.answer == "B([input]\nq\n\n[a]\nA(q))"


async def test_async_function_steps_are_awaited() -> None:
    async def shout(values: dict[str, Any]) -> str:
        return str(values["input"]).upper()

    assert (await Workflow.create().step("s", shout).build().run("hi")).answer == "HI"


async def test_function_output_that_is_not_json_is_refused_by_name() -> None:
    wf = Workflow.create("w").step("bad", lambda v: {"secret-value"}).build()
    with pytest.raises(StepOutputError) as info:
        await wf.run("q")
    assert info.value.code == "ERR_STEP_OUTPUT" and info.value.step == "bad"
    assert "secret-value" not in str(info.value) and "set" in str(info.value)


async def test_message_function_must_return_text() -> None:
    wf = Workflow.create("w").step("a", echo("A"), message=lambda v: 42).build()  # type: ignore[arg-type,return-value]
    with pytest.raises(StepMessageError) as info:
        await wf.run("q")
    assert info.value.code == "ERR_STEP_MESSAGE" and "int" in str(info.value)


def test_build_refuses_unknown_later_or_reserved_names() -> None:
    with pytest.raises(CompositionBuildError, match="'later', which is not an earlier step"):
        Workflow.create("w").step("a", echo("A"), inputs=["later"]).step("later", echo("B"))
    with pytest.raises(CompositionBuildError, match="two steps named 'a'"):
        Workflow.create("w").step("a", echo("A")).step("a", echo("B"))
    with pytest.raises(CompositionBuildError, match="reserved"):
        Workflow.create("w").step("input", echo("A"))
    with pytest.raises(CompositionBuildError, match="must be an Agent, a composition or a function"):
        Workflow.create("w").step("a", "not a runner")
    with pytest.raises(CompositionBuildError, match="it takes the values themselves"):
        Workflow.create("w").step("f", parse, message=lambda v: "x")
    with pytest.raises(CompositionBuildError, match="no step named"):
        Workflow.create("w").step("a", echo("A")).output("ghost").build()
    with pytest.raises(CompositionBuildError, match="at least one step"):
        Workflow.create("w").build()
    with pytest.raises(CompositionBuildError, match="inputs must be a list"):
        Workflow.create("w").step("a", echo("A"), inputs="input")  # type: ignore[arg-type]
    with pytest.raises(CompositionBuildError, match="distinct step names"):
        Workflow.create("w").step("a", echo("A"), inputs=["input", "input"])


@given(st.text(min_size=1, max_size=40).filter(lambda t: t.strip()))
@settings(max_examples=40, deadline=None)
def test_any_input_round_trips_through_a_function_chain(text: str) -> None:
    wf = (
        Workflow.create("w")
        .step("wrap", lambda v: {"t": v["input"], "n": len(v["input"])})
        .step("unwrap", lambda v: v["wrap"]["t"] * 1 if v["wrap"]["n"] == len(v["wrap"]["t"]) else "")
        .build()
    )
    assert wf.run_sync(text).answer == text


async def test_R003_16_pause_inside_any_step_resumes_in_a_fresh_workflow() -> None:
    """R003-16: resumable after a pause inside an agent step and inside a function step."""

    def gate(values: dict[str, Any]) -> str:
        return f"{values['ask']} approved by {pause({'question': 'Approve?'})}"

    def build() -> Workflow:
        return Workflow.create("w").step("ask", asker()).step("gate", gate).step("b", echo("B")).build()

    first = await build().run("refund", identity={"tenant": "acme"})
    assert first.status == "paused" and first.question == "Which order?"
    second = await build().resume(json.loads(json.dumps(first.checkpoint)), "A-1001")
    assert second.status == "paused" and second.question == "Approve?"
    done = await build().resume(json.loads(json.dumps(second.checkpoint)), "Dana")
    assert done.answer == "B(order A-1001 approved by Dana)" and done.run_id == first.run_id


async def test_R003_16_members_serve_the_workflow_run() -> None:
    """R003-16 with R003-01/02: a Workflow member's tools see the outermost run's id and identity."""
    seen: list[tuple[str, Any]] = []
    wf = Workflow.create("w").step("a", witness("a", seen)).step("f", lambda v: v["a"]).build()
    result = await wf.run("q", identity={"tenant": "acme", "principal": "dana"})
    assert [(run_id, ident.tenant, ident.principal) for run_id, ident in seen] == [(result.run_id, "acme", "dana")]


async def test_R003_16_backtrack_and_localize_walk_through_a_function_step() -> None:
    """R003-16: explainable across steps — a function step between two agents keeps the via chain."""

    def research(req: LLMRequest) -> str:
        return "VIP customer" if "VIP override" in req.system_prompt else "regular customer"

    def write(req: LLMRequest) -> str:
        return "APPROVED" if "VIP" in req.messages[-1].content else "DECLINED"

    researcher = (
        Agent.create(provider=mock(respond=research), model="m", name="research")
        .fact(define_fact(id="planted", data="VIP override for Dana"))
        .fact(define_fact(id="tone", data="Be kind."))
        .build()
    )
    writer = Agent.create(provider=mock(respond=write), model="m", name="writer").build()
    wf = (
        Workflow.create("w")
        .step("research", researcher)
        .step("extract", lambda v: {"summary": v["research"]})
        .step("write", writer, message=lambda v: v["extract"]["summary"])
        .build()
    )
    assert (await wf.run("q")).answer == "APPROVED"
    planted = backtrack(wf).source("planted")
    assert planted is not None
    assert [h.detail for h in planted.hops if h.kind == "via"] == ["out:extract made by extract from research's answer"]
    report = await localize_context_bug(wf, samples=2, outcome_changed=lambda a, b: a != b, progress=False)
    assert report.suspect("planted").verdict == "confirmed"  # type: ignore[union-attr]
    assert report.suspect("tone").verdict == "not-confirmed"  # type: ignore[union-attr]


async def test_workflow_nests_and_is_nested() -> None:
    inner = Workflow.create("inner").step("p", parse, inputs=["input"]).build()
    outer = Sequence.create("outer").step("i", inner).step("e", echo("E")).build()
    result = await outer.run("refund A-7")
    assert result.answer == 'E({"order": "A-7", "angry": false})'
    wrapper = Workflow.create("wrap").step("inner", inner).step("keys", lambda v: sorted(v["inner"])).build()
    assert (await wrapper.run("refund A-7")).output == ["angry", "order"]


async def test_without_reaches_agents_and_skips_functions() -> None:
    wf = Workflow.create("w").step("a", echo("A", fact="f1")).step("f", lambda v: v["a"]).build()
    assert wf.source_ids() == {"f1": "fact"}
    clone = wf.without("f1")
    assert isinstance(clone, Workflow) and clone.source_ids() == {} and clone.steps == ["a", "f"]
