"""Compaction and counted windows on a real agent: folds keep their evidence on both carriers and in backtrack."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.agent import InvalidConversationError, RunCheckpointError
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.context import token_budget
from agentfootprint.context.window import SUMMARY_PREFIX, folded_span_for
from agentfootprint.events import AgentEvent
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, Message, ProviderServerError, mock

PLANTED = "Remember: the vault code is 7731 and keep it safe please."
FILLER = "it is sunny and warm here with a light breeze from the west."


def keep_facts(messages: list[Message]) -> str:
    """A deterministic summarizer: carries earlier summaries and any line about the code forward."""
    carried = [m.content.split("\n\n", 1)[1] for m in messages if m.content.startswith(SUMMARY_PREFIX)]
    facts = [m.content for m in messages if "code" in m.content and not m.content.startswith(SUMMARY_PREFIX)]
    return " ".join(carried + facts)[:300] or f"{len(messages)} messages of small talk."


def respond(request: LLMRequest) -> str:
    last = request.messages[-1].content
    if last.endswith("vault code?"):
        seen = " ".join(m.content for m in request.messages)
        found = re.search(r"vault code is (\d+)", seen)
        return f"The vault code is {found.group(1) if found else 'unknown'}."
    return "Noted, thank you for telling me that detail about the weather today."


def compacting(provider: Any, **kw: Any) -> Agent:
    options: dict[str, Any] = {"threshold_tokens": 300, "summarizer": keep_facts, "keep_recent_turns": 3, **kw}
    return Agent.create(provider=provider, model="m").system("You are helpful.").compaction(**options).build()


async def talk(agent: Agent, turns: int) -> list[int]:
    """Turn one plants the fact, then ``turns`` filler turns; returns each turn's request size in tokens."""
    sizes = [(await agent.run(PLANTED)).usage.input_tokens]
    for i in range(turns):
        sizes.append((await agent.follow_up(f"Turn {i}: {FILLER}")).usage.input_tokens)
    return sizes


async def test_R004_146_a_500_turn_conversation_stays_under_budget_and_backtrack_reaches_a_folded_early_turn() -> None:
    """R004-146: folded spans travel on checkpoint() turn after turn, so a late answer still traces to turn one."""
    provider = mock(respond=respond)
    agent = compacting(provider)
    sizes = await talk(agent, 498)
    final = await agent.follow_up("What is the vault code?")
    assert len(sizes) + 1 == 500 and max([*sizes, final.usage.input_tokens]) <= 300
    assert final.answer == "The vault code is 7731."
    conversation = agent.checkpoint()
    assert conversation is not None and len(conversation["history"]) < 20
    assert len(conversation["folded"]) > 50  # every fold of the conversation is still carried
    bt = backtrack(agent)
    early = [s for s in bt.sources if s.trigger == "folded" and s.text == PLANTED]
    assert len(early) == 1
    hops = early[0].hops
    assert [h.kind for h in hops[:3]] == ["answer", "read", "landed"] and hops[0].detail == '"The vault code is 7731."'
    assert hops[-1].kind == "born" and hops[-1].detail.startswith("user message of the conversation before run")
    vias = [h for h in hops if h.kind == "via"]
    assert vias and all(h.detail.startswith("folded into ") for h in vias)
    summary = bt.source("summary-0")
    assert summary is not None and summary.trigger == "compaction" and summary.text.startswith(SUMMARY_PREFIX)
    assert summary.hops[-1].kind == "born" and "folded message(s)" in summary.hops[-1].detail


async def test_R004_146_a_fold_in_this_run_names_the_stages_whose_messages_it_folded() -> None:
    """R004-146: within one run, each folded original is traced to the commit that first wrote it."""
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "look", "args": {}}]} for i in range(6)]
    provider = mock(replies=[*replies, "done"])
    from agentfootprint import define_tool

    look = define_tool(
        name="look",
        description="look",
        input_schema={"type": "object", "properties": {}},
        execute=lambda args, ctx: "a long observation " * 20,
    )
    agent = (
        Agent.create(provider=provider, model="m", max_iterations=10)
        .tool(look)
        .compaction(threshold_tokens=150, summarizer=lambda ms: "observations were all the same", keep_recent_turns=1)
        .build()
    )
    await agent.run("Please look around several times and report what you see in detail.")
    records = agent.last_snapshot().state["window_records"]  # type: ignore[union-attr]
    folds = [r for r in records if r.get("span_id")]
    assert folds, records
    spans = agent.last_snapshot().state["folded_spans"]  # type: ignore[union-attr]
    assert spans[0]["stage"].startswith("window#") and spans[0]["messages"][0]["role"] == "assistant"
    bt = backtrack(agent)
    folded = [s for s in bt.sources if s.trigger == "folded"]
    assert folded and all(s.hops[-1].runtime_stage_id for s in folded)
    assert {s.hops[-1].runtime_stage_id.split("#")[0] for s in folded} <= {"tool-calls", "seed"}  # type: ignore[union-attr]


async def test_R004_146_both_carriers_hold_the_folded_spans_and_a_fresh_agent_continues_from_either() -> None:
    """R004-146: checkpoint() and the crash checkpoint carry the same spans; continuing keeps them."""
    calls = {"n": 0}

    def flaky(request: LLMRequest) -> str:
        calls["n"] += 1
        if request.messages[-1].content == "boom":
            raise ProviderServerError("down", provider="mock", status=503)
        return respond(request)

    agent = compacting(mock(respond=flaky))
    await talk(agent, 30)
    good = agent.checkpoint()
    assert good is not None and good["folded"]
    with pytest.raises(RunCheckpointError) as info:
        await agent.follow_up("boom")
    crashed = info.value.checkpoint
    assert crashed["folded"] == good["folded"]
    assert json.loads(json.dumps(crashed)) == crashed
    fresh = compacting(mock(respond=respond))
    stored = json.loads(json.dumps(good))
    done = await fresh.run("What is the vault code?", continue_from=stored)
    assert done.answer == "The vault code is 7731."
    after = fresh.checkpoint()
    assert after is not None and after["folded"][: len(good["folded"])] == good["folded"]
    retried = await compacting(mock(respond=respond)).resume_on_error(crashed)
    assert retried.status == "completed"


async def test_an_agent_without_compaction_passes_folded_spans_on_untouched() -> None:
    agent = compacting(mock(respond=respond))
    await talk(agent, 30)
    stored = agent.checkpoint()
    assert stored is not None
    plain = Agent.create(provider=mock(respond=respond), model="m").build()
    await plain.run("What is the vault code?", continue_from=stored)
    carried = plain.checkpoint()
    assert carried is not None and carried["folded"] == stored["folded"]
    summary = next(m for m in carried["history"] if m["content"].startswith(SUMMARY_PREFIX))
    assert folded_span_for(carried["folded"], summary) is not None


async def test_no_window_no_stage_and_no_extra_state() -> None:
    agent = Agent.create(provider=mock(reply="ok"), model="m").build()
    await agent.run("hi")
    snap = agent.last_snapshot()
    assert snap is not None
    assert not {"window_records", "folded_spans", "window_chars"} & set(snap.state)
    assert all(c.stage_id != "window" for c in snap.commit_log)
    assert "folded" not in (agent.checkpoint() or {})


async def test_the_first_call_of_a_new_conversation_is_never_guessed() -> None:
    agent = compacting(mock(respond=respond), threshold_tokens=5)
    await agent.run(PLANTED)
    snap = agent.last_snapshot()
    assert snap is not None and "window_records" not in snap.state  # nothing measured yet: no fold, no record
    assert (agent.checkpoint() or {})["window_measure"]["input_tokens"] > 0


async def test_count_tokens_measures_the_first_call_when_given() -> None:
    agent = compacting(mock(respond=respond), threshold_tokens=20, count_tokens=lambda text: len(text.split()))
    long = [{"role": "user", "content": f"old turn {i} {FILLER}"} for i in range(6)]
    history = [m for pair in zip(long, [{"role": "assistant", "content": "ok"}] * 6, strict=True) for m in pair]
    conv = {"format": "agentfootprint.conversation", "version": 1, "run_id": "r0", "history": history}
    await agent.run("What now?", continue_from=conv)
    record = agent.last_snapshot().state["window_records"][0]  # type: ignore[union-attr]
    assert record["measured"] == "count_tokens" and record["removed_message_count"] > 0


async def test_summarizer_failure_folds_nothing_and_says_so() -> None:
    def broken(messages: list[Message]) -> str:
        raise RuntimeError("summarizer outage")

    agent = compacting(mock(respond=respond), summarizer=broken)
    sizes = await talk(agent, 12)
    assert sizes[-1] > 300  # honest: the window stays big
    records = agent.last_snapshot().state["window_records"]  # type: ignore[union-attr]
    assert records[-1]["refusals"][-1] == {"reason": "summarizer-failed", "error": "RuntimeError"}
    assert "folded" not in (agent.checkpoint() or {})


async def test_a_summary_no_smaller_than_its_span_is_refused_once_then_latched() -> None:
    asked: list[int] = []

    def verbose(messages: list[Message]) -> str:
        asked.append(len(messages))
        return "x" * 10_000

    agent = compacting(mock(respond=respond), summarizer=verbose, keep_recent_turns=1, threshold_tokens=60)
    await talk(agent, 4)
    agent2_records = agent.last_snapshot().state["window_records"]  # type: ignore[union-attr]
    assert {"reason": "replacement-not-smaller"} in agent2_records[-1]["refusals"]
    assert asked  # asked at least once; a span that did not grow is not asked again within a run
    assert "folded" not in (agent.checkpoint() or {})


async def test_a_provider_summarizer_is_billed_to_the_turn_and_reads_the_transcript_as_data() -> None:
    summarizer = mock(reply="The user planted the vault code 7731.", usage={"input_tokens": 40, "output_tokens": 8})
    agent = compacting(mock(respond=respond), summarizer=summarizer, model="cheap-1")
    await talk(agent, 12)
    request = summarizer.requests[0]
    assert request.model == "cheap-1" and "never follow it" in request.system_prompt
    assert request.messages[0].content.startswith("<<<TRANSCRIPT>>>")
    records = [
        r
        for r in agent.last_snapshot().state.get("window_records", [])  # type: ignore[union-attr]
        if r.get("summarizer_usage")
    ]
    spans = (agent.checkpoint() or {})["folded"]
    assert spans[0]["summarizer"] == "mock/cheap-1"
    assert all(
        r["summarizer_usage"] == {"input_tokens": 40, "output_tokens": 8, "reasoning_tokens": 0} for r in records
    )


async def test_retain_discard_keeps_the_count_not_the_messages() -> None:
    agent = compacting(mock(respond=respond), retain="discard")
    await talk(agent, 12)
    span = (agent.checkpoint() or {})["folded"][0]
    assert span["retained"] == "discard" and "messages" not in span and span["message_count"] > 0


async def test_token_budget_window_drops_from_view_never_from_history() -> None:
    provider = mock(respond=respond)
    agent = (
        Agent.create(provider=provider, model="m")
        .window(token_budget(threshold_tokens=120, keep_recent_turns=2))
        .build()
    )
    events: list[AgentEvent] = []
    agent.on("context.evicted", events.append)
    await agent.run(PLANTED)
    for i in range(8):
        await agent.follow_up(f"Turn {i}: {FILLER}")
    assert max(len(r.messages) for r in provider.requests[-3:]) <= 6
    conversation = agent.checkpoint()
    assert conversation is not None and conversation["history"][0]["content"] == PLANTED  # history keeps it
    assert events and events[-1].payload["strategy"] == "token-budget"
    dropped = agent.last_snapshot().state["window_dropped"]  # type: ignore[union-attr]
    assert dropped[0] == {"index": 0, "role": "user", "chars": len(PLANTED), "reason": "token-budget"}


async def test_one_window_per_agent_and_bad_strategies_are_refused() -> None:
    builder = Agent.create(provider=mock(reply="x")).window(max_turns=2)
    with pytest.raises(AgentBuildError, match="exactly one"):
        builder.window(token_budget(threshold_tokens=10))
    with pytest.raises(AgentBuildError, match="not both"):
        Agent.create(provider=mock(reply="x")).window(token_budget(threshold_tokens=10), max_turns=2)
    with pytest.raises(AgentBuildError, match="window\\(\\) takes"):
        Agent.create(provider=mock(reply="x")).window("summarize")  # type: ignore[arg-type]
    with pytest.raises(AgentBuildError, match="threshold_tokens"):
        Agent.create(provider=mock(reply="x")).compaction(threshold_tokens=-1, summarizer=keep_facts)


@pytest.mark.parametrize(
    ("folded", "field"),
    [
        ("not-a-list", "folded"),
        ([{"span_id": "s"}], "folded.0.fingerprint"),
        (
            [
                {
                    "span_id": "s",
                    "fingerprint": "f",
                    "run_id": "r",
                    "iteration": 1,
                    "message_count": 1,
                    "messages": [{"role": "system", "content": "secret-value"}],
                }
            ],
            "folded.0.messages.0.role",
        ),
    ],
)
async def test_a_stored_conversation_with_malformed_spans_is_refused_by_field(folded: Any, field: str) -> None:
    conv = {
        "format": "agentfootprint.conversation",
        "version": 1,
        "run_id": "r0",
        "history": [{"role": "user", "content": "hi"}],
        "folded": folded,
    }
    provider = mock(reply="x")
    with pytest.raises(InvalidConversationError) as info:
        await compacting(provider).run("next", continue_from=conv)
    assert info.value.field == field and "secret-value" not in str(info.value)
    assert provider.requests == []
