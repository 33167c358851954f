"""Issue 35 (diff): two runs compared step by step — where they first part, and the sources added, removed, changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentfootprint import Agent, RunResult, ask_human, define_fact, define_tool
from agentfootprint.agent import NoRunRecordError
from agentfootprint.cli import app
from agentfootprint.compose import Sequence
from agentfootprint.explain import RunDiff, WhatIfError, diff, load_recording, save_recording
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock
from tests.explain._backtrack_scenarios import SCENARIOS, _member


def _ticket(result: str | None = None) -> Any:
    def execute(args: dict[str, Any], ctx: Any) -> str:
        return result if result is not None else f"ticket for {args['q']}"

    return define_tool(
        name="ticket",
        description="Look up the ticket of a question",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        execute=execute,
    )


def _respond(req: LLMRequest) -> LLMResponse | str:
    """Ask the tool once with the question, then answer with what it said."""
    last = req.messages[-1]
    if last.role == "tool":
        return f"answer: {last.content}"
    return LLMResponse(content="", tool_calls=[ToolCall(id="c1", name="ticket", args={"q": str(last.content)})])


def _agent(tool_result: str | None = None) -> Agent:
    return (
        Agent.create(provider=mock(respond=_respond), model="m")
        .system("You answer tickets.")
        .tool(_ticket(tool_result))
        .fact(define_fact(id="policy", data="Tickets are answered in order."))
        .build()
    )


async def test_identical_runs_agree() -> None:
    agent = _agent()
    a, b = await agent.run("alpha"), await agent.run("alpha")
    d = diff(a, b)
    assert isinstance(d, RunDiff) and d.agree
    assert d.first_divergence is None and d.first_model_call is None and d.first_tool_call is None
    assert d.sources_added == [] and d.sources_removed == [] and d.sources_changed == []
    assert d.only_a == [] and d.only_b == [] and d.answer_a == d.answer_b == "answer: ticket for alpha"
    assert (d.run_a, d.run_b) == (a.run_id, b.run_id)
    assert "The runs agree" in str(d) and "Sources changed: none" in str(d)


async def test_a_removed_fact_is_named_and_the_first_divergence_is_where_it_was_injected() -> None:
    agent = _agent()
    original = await agent.run("alpha")
    without = await agent.without("policy").run("alpha")
    d = diff(original, without)
    assert d.sources_removed == ["policy"] and d.sources_added == [] and d.sources_changed == []
    assert d.first_divergence == ("injection-engine#1", "injection-engine#1")
    assert "system_prompt_injections" in d.divergence_keys
    assert d.first_model_call == ("call-llm#5", "call-llm#5")
    assert d.first_tool_call is None  # the same tool ran with the same arguments and returned the same
    assert d.only_a == ["policy"] and d.only_b == []
    reverse = diff(without, original)
    assert reverse.sources_added == ["policy"] and reverse.sources_removed == []
    text = str(d).splitlines()
    assert text[1] == (
        "First divergence: injection-engine#1 in A, injection-engine#1 in B "
        "(system_prompt_injections, context_evaluated differ)"
    )
    assert "Sources removed (A only): policy" in text and "Sources added (B only): none" in text


async def test_a_different_tool_result_is_a_changed_source_by_its_result_id() -> None:
    a = await _agent("ticket 7: open").run("alpha")
    b = await _agent("ticket 7: closed").run("alpha")
    d = diff(a, b)
    assert d.sources_changed == ["ticket#1"] and d.sources_added == [] and d.sources_removed == []
    assert d.first_divergence == ("tool-calls#7", "tool-calls#7")
    assert d.first_tool_call == ("tool-calls#7", "tool-calls#7")
    assert d.first_model_call == ("call-llm#12", "call-llm#12")  # the first call agreed; the second read the result
    assert d.only_a == d.only_b == ["ticket#1"]
    assert (d.answer_a, d.answer_b) == ("answer: ticket 7: open", "answer: ticket 7: closed")
    assert "Sources changed: ticket#1" in str(d) and 'Answer B: "answer: ticket 7: closed"' in str(d)


async def test_a_run_that_took_more_steps_diverges_where_the_other_stopped() -> None:
    a = await Agent.create(provider=mock(reply="done"), model="m").build().run("go")
    b = await _agent().run("go")
    d = diff(a, b)
    assert d.first_divergence is not None and d.first_divergence[0] is not None
    assert "policy" in d.sources_added and "ticket#1" in d.sources_added


async def test_results_recordings_and_snapshots_compare_alike(tmp_path: Path) -> None:
    agent = _agent()
    a = await agent.run("alpha")
    b = await agent.without("policy").run("alpha")
    saved = load_recording(save_recording(a, tmp_path / "a.json"))
    assert diff(saved, b) == diff(a, b) == diff(a.last_snapshot(), b.record)
    assert diff(saved, a).agree


def _asking() -> Agent:
    ask = {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "which?"}}]}
    return (
        Agent.create(provider=mock(replies=[ask, "done"]), model="m")
        .tool(ask_human)
        .fact(define_fact(id="policy", data="Be brief."))
        .build()
    )


async def test_resumed_runs_compare_across_the_pause() -> None:
    first, second = _asking(), _asking()
    paused_a, paused_b = await first.run("go"), await second.run("go")
    assert paused_a.status == "paused" and diff(paused_a, paused_b).agree
    assert paused_a.checkpoint is not None and paused_b.checkpoint is not None
    a, b = await first.resume(paused_a.checkpoint, "left"), await second.resume(paused_b.checkpoint, "right")
    d = diff(a, b)
    assert d.sources_changed == ["ask_human#1"] and d.first_tool_call == d.first_divergence
    assert d.first_divergence is not None and d.first_divergence[0] == d.first_divergence[1]
    assert str(d.first_divergence[0]).startswith("tool-calls#")
    assert diff(a, a).agree
    ahead = diff(paused_a, a)  # the paused leg stopped where its resume went on
    assert ahead.first_divergence is not None and ahead.first_divergence[0] is None
    assert ahead.answer_a is None and "Answer A: (none: the run gave no answer)" in str(ahead)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_every_scenario_agrees_with_itself(name: str) -> None:
    target = await SCENARIOS[name][0]()
    d = diff(target, target)
    assert d.agree and d.sources_added == d.sources_removed == d.sources_changed == []


# -------------------------------------------------------------------------------------------------- property

_TEXT = st.text(alphabet="abcdefgh ", min_size=1, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    question=st.text(alphabet="abcdefgh", min_size=1, max_size=12),
    results=st.lists(_TEXT, min_size=0, max_size=3),
    facts=st.lists(st.sampled_from(["f1", "f2", "f3"]), unique=True, max_size=3),
)
def test_a_run_diffed_with_its_own_repeat_agrees(question: str, results: list[str], facts: list[str]) -> None:
    """A scripted run (some tool calls, some facts) and the same script run again: no divergence, no source change;
    removing a fact it had names that fact and diverges at the first injection."""
    replies: list[Any] = [
        {"tool_calls": [{"id": f"c{i}", "name": "look", "args": {"n": i}}]} for i in range(len(results))
    ]
    look = define_tool(
        name="look", description="look", input_schema={"type": "object"}, execute=lambda a, c: results[a["n"]]
    )

    def build() -> Agent:
        builder = Agent.create(provider=mock(replies=[*replies, "final"]), model="m").tool(look)
        for f in facts:
            builder = builder.fact(define_fact(id=f, data=f"fact {f}"))
        return builder.build()

    first, second = build().run_sync(question), build().run_sync(question)
    d = diff(first, second)
    assert d.agree and d.sources_added == d.sources_removed == d.sources_changed == []
    assert diff(first, first).agree
    if facts:
        full = build().run_sync(question)
        cut = build().without(facts[0]).run_sync(question)
        planted = diff(full, cut)
        assert planted.sources_removed == [facts[0]] and planted.first_divergence == (
            "injection-engine#1",
            "injection-engine#1",
        )


def _looping(calls: int, changed_at: int | None, facts: tuple[str, ...] = ("f1",)) -> Agent:
    """A scripted tool loop of ``calls`` calls; the result of call ``changed_at`` (0-based) is planted different."""
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "look", "args": {"n": i}}]} for i in range(calls)]
    look = define_tool(
        name="look",
        description="look",
        input_schema={"type": "object"},
        execute=lambda a, c: "planted" if a["n"] == changed_at else f"view {a['n']}",
    )
    builder = Agent.create(provider=mock(replies=[*replies, "final"]), model="m").tool(look)
    for f in facts:
        builder = builder.fact(define_fact(id=f, data=f"fact {f}"))
    return builder.build()


@settings(max_examples=50, deadline=None)
@given(data=st.data(), calls=st.integers(min_value=1, max_value=5))
def test_a_planted_change_is_named_at_its_exact_step(data: st.DataObject, calls: int) -> None:
    """On generated pairs with one planted change (a tool result, a removed fact, the question), the first
    divergence is exactly the step where the change entered, and the changed source is named."""
    kind = data.draw(st.sampled_from(["tool-result", "fact", "question"]))
    base = _looping(calls, None).run_sync("go")
    snap = base.last_snapshot()
    assert snap is not None
    tool_steps = [c.runtime_stage_id for c in snap.commit_log if c.stage_id == "tool-calls"]
    if kind == "tool-result":
        k = data.draw(st.integers(min_value=0, max_value=calls - 1))
        d = diff(base, _looping(calls, k).run_sync("go"))
        assert d.first_divergence == (tool_steps[k], tool_steps[k]) and d.first_tool_call == d.first_divergence
        assert d.sources_changed == [f"look#{k + 1}"] and d.sources_added == d.sources_removed == []
    elif kind == "fact":
        d = diff(base, _looping(calls, None).without("f1").run_sync("go"))
        assert d.first_divergence == ("injection-engine#1", "injection-engine#1") and d.first_tool_call is None
        assert d.sources_removed == ["f1"] and d.sources_changed == []
    else:
        d = diff(base, _looping(calls, None).run_sync("went"))
        assert d.first_divergence == ("seed#0", "seed#0") and d.sources_changed == ["user-0"]
    assert d.first_model_call is not None and not d.agree


# ---------------------------------------------------------------------------------------------------- hostile


@pytest.mark.parametrize("hostile", [42, "secret-value", None, ["secret-value"], object()])
async def test_not_a_run_is_refused_by_code_without_quoting(hostile: Any) -> None:
    run = await _agent().run("alpha")
    for a, b in ((hostile, run), (run, hostile)):
        with pytest.raises(WhatIfError) as err:
            diff(a, b)
        assert err.value.code == "ERR_WHATIF_NOT_A_RUN" and "secret-value" not in str(err.value)


async def test_a_malformed_snapshot_mapping_is_refused_without_quoting() -> None:
    run = await _agent().run("alpha")
    with pytest.raises(WhatIfError) as err:
        diff({"run_id": "secret-value", "commit_log": "secret-value"}, run)
    assert err.value.code == "ERR_WHATIF_NOT_A_RUN" and "secret-value" not in str(err.value)


async def test_a_result_with_no_record_is_refused_by_code() -> None:
    run = await _agent().run("alpha")
    rebuilt = RunResult.model_validate_json(run.model_dump_json())
    with pytest.raises(NoRunRecordError) as err:
        diff(rebuilt, run)
    assert err.value.code == "ERR_NO_RUN_RECORD"


async def test_an_agent_that_never_ran_is_not_a_run() -> None:
    run = await _agent().run("alpha")
    with pytest.raises(WhatIfError) as err:
        diff(_agent(), run)
    assert err.value.code == "ERR_WHATIF_NOT_A_RUN"


# -------------------------------------------------------------------------------------------------------- CLI


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app(), list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.stdout, result.stderr


async def test_cli_diff_prints_the_diff_of_two_recordings(tmp_path: Path) -> None:
    agent = _agent()
    a = save_recording(await agent.run("alpha"), tmp_path / "a.json")
    b = save_recording(await agent.without("policy").run("alpha"), tmp_path / "b.json")
    code, out, _ = _cli("diff", str(a), str(b))
    assert code == 0
    assert out.strip() == str(diff(load_recording(a), load_recording(b)))
    assert "First divergence: injection-engine#1 in A" in out and "Sources removed (A only): policy" in out
    code, out, _ = _cli("diff", str(a), str(a))
    assert code == 0 and "The runs agree" in out


def test_cli_diff_of_a_missing_recording_is_one_line(tmp_path: Path) -> None:
    code, _, err = _cli("diff", str(tmp_path / "nope.json"), str(tmp_path / "other.json"))
    assert code == 2 and err.startswith("error [ERR_INVALID_RECORDING]") and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------------ compositions


async def test_a_member_fact_removed_in_a_sequence_diverges_inside_that_member() -> None:
    seq = Sequence.create().step("research", _member("research", "R1", "rf")).step("write", _member("w", "W", "wf"))
    built = seq.build()
    a = await built.run("go")
    b = await built.without("rf").run("go")
    d = diff(a, b)
    assert d.first_divergence == ("research/injection-engine#3", "research/injection-engine#3")
    assert d.first_model_call == ("research/call-llm#7", "research/call-llm#7")
    assert d.sources_removed == ["rf"] and d.sources_changed == [] and d.answer_a == d.answer_b == "W"
