"""backtrack, exactly: every hop of every chain, tools offered but never called, and the committed answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentfootprint import Agent, UnsupportedValuesError, define_fact, define_instruction, define_skill, define_tool
from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.compose import Parallel, Sequence
from agentfootprint.explain import Backtrack, BacktrackError, Hop, backtrack
from agentfootprint.flow import flow_chart
from agentfootprint.providers import mock

GOLDEN = Path(__file__).with_name("golden_flagship_backtrack.txt")


def hops(bt: Backtrack, source_id: str) -> list[tuple[str, str | None, str, str | None]]:
    trail = bt.source(source_id)
    assert trail is not None, source_id
    return [(h.kind, h.runtime_stage_id, h.detail, h.note) for h in trail.hops]


def tool(name: str, description: str, result: str) -> Any:
    return define_tool(name=name, description=description, input_schema={"type": "object"}, execute=lambda a, c: result)


async def test_flagship_backtrack_text_is_exact() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    assert str(backtrack(agent)) + "\n" == GOLDEN.read_text()


async def test_flagship_positions_and_triggers() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    bt = backtrack(agent)
    assert (bt.trigger, bt.answer_stage, bt.run_id) == ("call-llm#12", "final#14", agent.last_snapshot().run_id)  # type: ignore[union-attr]
    assert [(s.kind, s.id, s.slot, s.trigger, s.position, s.ablatable) for s in bt.sources] == [
        ("system", "system", "system_prompt", "always", 0, False),
        ("fact", "vip-override-fact", "system_prompt", "always", 1, True),
        ("fact", "style-fact", "system_prompt", "always", 2, True),
        ("message", "user-0", "messages", None, 2000, False),
        ("message", "assistant-1", "messages", None, 2001, False),
        ("tool", "lookup_order", "messages", "tool-result", 2002, True),
    ]
    assert bt.source("nope") is None


async def test_tools_offered_but_not_called_are_sources_of_the_tools_slot() -> None:
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "r1", "name": "read_skill", "args": {"id": "refunds"}}]},
            {"tool_calls": [{"id": "c1", "name": "lookup", "args": {"q": "x", "n": 2}}]},
            "The thing is 7.",
        ]
    )
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(tool("lookup", "Look a thing up", "found: 7"))
        .tool(tool("weather", "Weather now", "sun"))
        .skill(
            define_skill(
                id="refunds",
                description="How to refund",
                body="Refund with the refund tool.",
                tools=[tool("refund", "Issue a refund", "ok")],
            )
        )
        .build()
    )
    await agent.run("what is the thing?")
    bt = backtrack(agent)
    assert bt.answer == "The thing is 7." and (bt.trigger, bt.answer_stage) == ("call-llm#19", "final#21")
    assert [(s.kind, s.id, s.slot, s.trigger, s.position) for s in bt.sources] == [
        ("skill", "refunds", "system_prompt", "llm-activated", 0),
        ("message", "user-0", "messages", None, 2000),
        ("message", "assistant-1", "messages", None, 2001),
        ("tool", "read_skill", "messages", "tool-result", 2002),
        ("message", "assistant-3", "messages", None, 2003),
        ("tool", "lookup", "messages", "tool-result", 2004),
        ("tool", "weather", "tools", "always", 100001),
        ("tool", "refund", "tools", "llm-activated", 100003),
    ]
    answer = ("answer", "final#21", '"The thing is 7."', None)
    assert hops(bt, "weather") == [
        answer,
        ("read", "call-llm#19", "read tool_specs", None),
        ("landed", "tools#11", "wrote tool_specs", None),
        ("allowed", "tools#11", "always", None),
        ("born", None, "define_tool('weather')", None),
    ]
    assert hops(bt, "refund")[3:] == [
        ("allowed", "tools#11", "llm-activated", "skill 'refunds' is active"),
        ("born", None, "define_tool('refund')", None),
    ]
    assert hops(bt, "lookup") == [
        answer,
        ("read", "call-llm#19", "read history[4]", None),
        ("landed", "tool-calls#14", "appended history[4]", None),
        ("allowed", "route#13", "tool-call", "the model asked for tools; route chose tool-calls"),
        ("born", "call-llm#12", 'lookup(q="x", n=2) call c1', None),
    ]
    assert hops(bt, "refunds")[3] == (
        "allowed",
        "injection-engine#8",
        "llm-activated",
        "the model called read_skill; active since iteration 2",
    )
    assert bt.source("refund").text == "Issue a refund"  # type: ignore[union-attr]

    early = backtrack(agent, at="call-llm#5")
    assert (early.trigger, early.answer_stage, early.answer) == ("call-llm#5", "call-llm#5", "")
    assert [(s.id, s.slot, s.position) for s in early.sources] == [
        ("user-0", "messages", 2000),
        ("lookup", "tools", 100000),
        ("weather", "tools", 100001),
        ("read_skill", "tools", 100002),
    ]
    assert hops(early, "weather")[0] == ("answer", "call-llm#5", '""', None)


async def test_the_answer_is_the_committed_answer_not_the_last_response() -> None:
    """A final stage that changes the model's reply (here: an evidence gate on rails refusing it) is what
    backtrack reports as the answer; ``at=`` a model call reports that call's own reply."""
    agent = (
        Agent.create(provider=mock(reply="The order costs $999."), model="m")
        .names_and_numbers_from_evidence("rails")
        .build()
    )
    with pytest.raises(UnsupportedValuesError):
        await agent.run("What does the order cost?")
    bt = backtrack(agent)
    assert (bt.answer, bt.trigger, bt.answer_stage) == ("", "call-llm#5", "final#7")
    assert bt.sources[0].hops[0] == Hop(kind="answer", runtime_stage_id="final#7", detail='""')
    at_call = backtrack(agent, at="call-llm#5")
    assert (at_call.answer, at_call.answer_stage) == ("The order costs $999.", "call-llm#5")


def _synthetic(answer_writer: bool) -> Any:
    def call(s: Any) -> None:
        s["history"] = [{"role": "user", "content": "q"}]
        s["last_response"] = {"content": "draft"}

    builder = flow_chart("Seed", lambda s: s.set("x", 1), id="seed").then("Call", call, id="call-llm")
    if answer_writer:
        builder = builder.then("Final", lambda s: s.set("answer", s["last_response"]["content"] + "!"), id="final")
    return builder.build()


async def test_answer_and_trigger_on_a_bare_recording() -> None:
    r = await _synthetic(True).run()
    bt = backtrack(r.snapshot)
    assert (bt.answer, bt.trigger, bt.answer_stage, bt.sources) == ("draft!", "call-llm#1", "final#2", [])
    r = await _synthetic(False).run()
    bt = backtrack({"snapshot": r.snapshot.model_dump(mode="json")})
    assert (bt.answer, bt.trigger, bt.answer_stage) == ("draft", "call-llm#1", "call-llm#1")
    with pytest.raises(BacktrackError) as info:
        backtrack(r.snapshot, at="seed#0")
    assert str(info.value) == "that step comes before any model call; steps you can backtrack from: call-llm#1"
    assert info.value.steps == ("call-llm#1",)


async def test_an_answer_before_any_model_call_is_refused() -> None:
    r = await flow_chart("Final", lambda s: s.set("answer", "x"), id="final").build().run()
    with pytest.raises(BacktrackError) as info:
        backtrack(r.snapshot)
    assert str(info.value) == "no model call was recorded before the answer"
    r = await flow_chart("Other", lambda s: s.set("y", "x"), id="other").build().run()
    with pytest.raises(BacktrackError) as info:
        backtrack(r.snapshot)
    assert str(info.value) == "no model call was recorded in this run"
    with pytest.raises(BacktrackError) as info:
        backtrack(42)
    assert str(info.value) == "cannot backtrack a int: pass an Agent, a snapshot or a recording"


async def test_on_tool_return_and_rule_notes_are_exact() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "s1", "name": "search_docs", "args": {}}]}, "Need a receipt."])
    agent = (
        Agent.create(provider=provider, model="m")
        .tool(tool("search_docs", "Search", "doc: receipts"))
        .instruction(define_instruction(id="cite", prompt="Cite the document.", on_tool_return="search_docs"))
        .instruction(define_instruction(id="short", prompt="Be short.", active_when=lambda ctx: True))
        .build()
    )
    await agent.run("Do refunds need a receipt?")
    bt = backtrack(agent)
    assert hops(bt, "cite")[3:] == [
        (
            "allowed",
            "injection-engine#8",
            "on-tool-return search_docs",
            "the named tool returned; active since iteration 2",
        ),
        ("born", None, "define_instruction('cite')", None),
    ]
    assert hops(bt, "short")[3][2:] == ("rule", "its rule held; active since iteration 1")
    assert [bt.source(i).kind for i in ("cite", "short")] == ["instruction", "instruction"]  # type: ignore[union-attr]


def _member(name: str, reply: str, fact: str) -> Any:
    return (
        Agent.create(provider=mock(reply=reply), model="m", name=name)
        .fact(define_fact(id=fact, data=f"{fact} data"))
        .build()
    )


async def test_a_sequence_hands_the_research_answer_over_with_its_own_sources() -> None:
    seq = (
        Sequence.create()
        .step("research", _member("research", "R says 1", "rf"))
        .step("write", _member("writer", "W done", "wf"))
        .build()
    )
    await seq.run("go")
    bt = backtrack(seq)
    assert str(bt) + "\n" == Path(__file__).with_name("golden_sequence_backtrack.txt").read_text()
    assert [(s.id, s.position) for s in bt.sources] == [("wf", 0), ("user-0", 2000), ("rf", 200000), ("user-0", 200001)]


async def test_a_parallel_merge_reaches_every_branch_through_a_via_hop() -> None:
    par = (
        Parallel.create()
        .branch("a", _member("a", "A1", "af"))
        .branch("b", _member("b", "B1", "bf"))
        .merge_with(lambda answers: " | ".join(f"{k}:{v}" for k, v in sorted(answers.items())))
        .build()
    )
    await par.run("go")
    bt = backtrack(par)
    assert str(bt) + "\n" == Path(__file__).with_name("golden_parallel_backtrack.txt").read_text()
    assert [(s.id, s.position) for s in bt.sources] == [("bf", 0), ("user-0", 2000), ("af", 300002), ("user-0", 300003)]
