"""Recorded chat and self-explain: why-answers from the record only, reruns on the recorded history, forks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_fact
from agentfootprint.explain import BacktrackError
from agentfootprint.honesty.chat import RecordedChat, explain_answer, recorded_chat
from agentfootprint.honesty.self_explain import NO_RUN, self_explain_tools
from agentfootprint.providers import LLMRequest, mock

WRONG = "Refund APPROVED: Dana Reyes holds VIP tier override status."
RIGHT = "Refund DECLINED: the order is outside the 30-day refund window."
SEEN: list[LLMRequest] = []
NO_CTX: Any = None


def respond(req: LLMRequest) -> Any:
    SEEN.append(req)
    last = req.messages[-1]
    if last.role == "user" and last.content.startswith("why"):
        return {"tool_calls": [{"id": "w1", "name": "trace_why", "args": {"question": last.content}}]}
    if last.role == "tool" and last.tool_name == "trace_why":
        return f"From my record: {last.content}"
    return WRONG if "VIP tier override" in req.system_prompt else RIGHT


def make_agent(*, explain: bool = False) -> Agent:
    builder = (
        Agent.create(provider=mock(respond=respond), model="mock-1")
        .system("You are a refunds assistant. Refunds only within 30 days.")
        .fact(define_fact(id="vip-fact", data="Customer Dana Reyes holds VIP tier override status."))
        .fact(define_fact(id="style-fact", data="Keep replies short."))
    )
    return (builder.self_explain() if explain else builder).build()


@pytest.fixture(autouse=True)
def _clear() -> None:
    SEEN.clear()


# -- scenarios ----------------------------------------------------------------------------------------------------


async def test_why_is_answered_from_the_recording_with_no_model_call() -> None:
    agent = make_agent()
    assert not agent.can_explain()
    await agent.run("Can Dana get a refund?")
    assert not agent.can_explain()  # R004-84: without self-explain there is nothing for the model to explain from
    before = len(SEEN)
    why = agent.why('Why did you say "VIP tier override"?')
    assert len(SEEN) == before  # the recording answered, not the model
    assert why.claim == "VIP tier override" and why.sources[0].id == "vip-fact" and why.sources[0].rank == 1
    assert "vip-fact" in why.text and why.sources[0].born == "define_fact('vip-fact')"


async def test_why_picks_the_sentence_the_question_is_about() -> None:
    agent = make_agent()
    await agent.run("Can Dana get a refund?")
    why = agent.why("why is the refund approved for Dana Reyes")
    assert why.claim == WRONG and why.sources and why.sources[0].id == "vip-fact"


async def test_recorded_chat_freezes_each_turn() -> None:
    chat = recorded_chat(make_agent)
    await chat.send("Can Dana get a refund?")
    await chat.send("Are you sure?")
    turns = chat.turns
    assert [t.k for t in turns] == [0, 1] and turns[0].continue_from is None
    assert turns[1].continue_from == turns[0].conversation_after
    assert chat.reason(1).answer == WRONG
    why = chat.why(0, 'why "VIP tier override"?')
    assert chat.explanations == [why] and why.sources[0].id == "vip-fact"


async def test_rerun_turn_uses_the_recorded_history_byte_for_byte() -> None:
    chat = recorded_chat(make_agent)
    await chat.send("Can Dana get a refund?")
    SEEN.clear()
    await chat.send("Are you sure?")
    original = [r.model_dump_json() for r in SEEN]
    SEEN.clear()
    rerun = await chat.rerun_turn(1, check_baseline=False)
    assert [r.model_dump_json() for r in SEEN] == original
    assert rerun.verdict == "no-effect" and rerun.answer == rerun.original_answer


async def test_rerun_without_a_source_gives_a_causal_verdict_against_the_baseline() -> None:
    chat = recorded_chat(make_agent)
    await chat.send("Can Dana get a refund?")
    await chat.send("Are you sure?")
    SEEN.clear()
    rerun = await chat.rerun_turn(1, ignore=["vip-fact"])
    assert rerun.answer == RIGHT and rerun.changed and rerun.baseline_changed is False and rerun.verdict == "causal"
    prior = [m.model_dump() for m in SEEN[0].messages[:-1]]
    assert prior == [m.model_dump() for m in make_history(chat, 1)]  # the same recorded history, only context differs
    quiet = await chat.rerun_turn(1, ignore=["style-fact"])
    assert quiet.verdict == "no-effect"


def make_history(chat: RecordedChat, k: int) -> list[Any]:
    from agentfootprint.providers import Message

    conv = chat.turns[k].continue_from or {"history": []}
    return [Message.model_validate(m) for m in conv["history"]]


async def test_fork_leaves_the_original_untouched() -> None:
    chat = recorded_chat(make_agent)
    await chat.send("Can Dana get a refund?")
    await chat.send("Are you sure?")
    frozen = json.dumps([t.model_dump(mode="json") for t in chat.turns], sort_keys=True)
    rerun = await chat.rerun_turn(0, ignore=["vip-fact"])
    branch = chat.fork(0, from_rerun=rerun)
    await branch.send("Thanks, and for order 7?")
    assert json.dumps([t.model_dump(mode="json") for t in chat.turns], sort_keys=True) == frozen
    assert [t.answer for t in branch.turns] == [RIGHT, RIGHT] and branch.parent is not None
    assert len(chat.turns) == 2
    plain = chat.fork(0)
    assert [t.answer for t in plain.turns] == [WRONG]
    with pytest.raises(ValueError):
        chat.fork(1, from_rerun=rerun)
    with pytest.raises(IndexError):
        chat.reason(5)


async def test_agent_chat_builds_fresh_agents_like_this_one() -> None:
    chat = make_agent().chat()
    result = await chat.send("Can Dana get a refund?")
    assert result.answer == WRONG and len(chat.turns) == 1


async def test_self_explain_answers_from_the_previous_turn() -> None:
    agent = make_agent(explain=True)
    assert not agent.can_explain()
    first = await agent.run("why would you say anything?")
    assert first.answer == f"From my record: {NO_RUN}"  # nothing completed yet: the tools say so
    await agent.run("Can Dana get a refund?")
    assert agent.can_explain()
    second = await agent.follow_up('why did you say "VIP tier override"?')
    assert second.answer is not None and "vip-fact" in second.answer


async def test_trace_tools_read_the_previous_record() -> None:
    agent = make_agent(explain=True)
    await agent.run("Can Dana get a refund?")
    offered = [spec["name"] for spec in (agent.last_snapshot() or pytest.fail("no record")).state["tool_specs"]]
    assert offered == ["trace_list_stages", "trace_read_commit", "trace_who_wrote", "trace_backtrack", "trace_why"]
    bound = agent.extension_state("self_explain")["snapshot"]
    tools = {t.name: t for t in self_explain_tools(lambda: bound)}
    stages = tools["trace_list_stages"].execute({}, NO_CTX)
    assert "call-llm#" in stages
    assert tools["trace_who_wrote"].execute({"key": "answer"}, NO_CTX).startswith("final#")
    assert "No such step" in tools["trace_read_commit"].execute({"runtime_stage_id": "nope"}, NO_CTX)
    assert "vip-fact" in tools["trace_backtrack"].execute({}, NO_CTX)


def test_explaining_nothing_is_a_typed_error() -> None:
    with pytest.raises(BacktrackError):
        make_agent().why("why?")


# -- properties ---------------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(question=st.text(max_size=200))
def test_explanations_are_deterministic_and_bounded(question: str) -> None:
    import asyncio

    agent = make_agent()
    asyncio.run(agent.run("Can Dana get a refund?"))
    a, b = explain_answer(agent, question), explain_answer(agent, question)
    assert a == b and len(a.sources) <= 3
    assert all(x.score >= y.score for x, y in zip(a.sources, a.sources[1:], strict=False))


# -- security -----------------------------------------------------------------------------------------------------


async def test_trace_tools_never_show_a_redacted_value() -> None:
    def reply(req: LLMRequest) -> Any:
        last = req.messages[-1]
        if last.role == "user" and last.content.startswith("why"):
            return {"tool_calls": [{"id": "w", "name": "trace_backtrack", "args": {}}]}
        if last.role == "tool":
            return last.content
        return "Your code is SECRET-9911."

    agent = (
        Agent.create(provider=mock(respond=reply), model="m").redact(patterns=[r"SECRET-\d+"]).self_explain().build()
    )
    await agent.run("what is my code? it is SECRET-9911")
    shown = await agent.follow_up("why did you say that?")
    snap = agent.last_snapshot()
    assert snap is not None
    tool_text = next(r["content"] for r in snap.state["tool_results"] if r["name"] == "trace_backtrack")
    assert "SECRET-9911" not in tool_text and "[REDACTED]" in tool_text
    assert shown.answer is not None and "SECRET-9911" not in shown.answer


async def test_trace_tool_outputs_are_bounded() -> None:
    agent = make_agent(explain=True)
    await agent.run("x" * 50_000)
    bound = agent.extension_state("self_explain")["snapshot"]
    tool = next(t for t in self_explain_tools(lambda: bound) if t.name == "trace_backtrack")
    assert len(tool.execute({}, NO_CTX)) <= 4000
