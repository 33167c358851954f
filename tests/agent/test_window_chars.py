"""The window stage's measure of the conversation: what ``history_chars`` counts, at the cost of the new entries."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import _run
from agentfootprint.agent._run import AgentRun
from agentfootprint.context import token_budget
from agentfootprint.context.window import history_chars
from agentfootprint.events import EventDispatcher
from agentfootprint.flow._frozen import freeze
from agentfootprint.providers import LLMRequest, mock

STEP = define_tool(
    name="step",
    description="Do one step",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=lambda args: f"step {args['n']} done " * 3,
)


def _run_of() -> AgentRun:
    agent = Agent.create(provider=mock(reply="x")).build()
    return AgentRun(agent.config, EventDispatcher(), "run-1")


def _entry(i: int, calls: int = 0) -> Any:
    entry: dict[str, Any] = {"role": "tool" if i % 2 else "assistant", "content": "word " * (i % 5)}
    if calls:
        entry["tool_calls"] = [
            {"id": f"c{i}.{k}", "name": "step", "args": {"n": i, "k": [k] * k}} for k in range(calls)
        ]
    return freeze(entry)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    counted: list[Any] = []
    real = _run.entry_chars

    def entry_chars(entry: Any) -> int:
        counted.append(entry)
        return real(entry)

    monkeypatch.setattr(_run, "entry_chars", entry_chars)
    return counted


def test_a_grown_history_counts_only_its_new_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _counting(monkeypatch)
    run = _run_of()
    history = [_entry(i, i % 3) for i in range(6)]
    assert run.history_chars(history[:2]) == history_chars(history[:2]) == 26
    assert counted == history[:2]
    assert run.history_chars(history) == history_chars(history)
    assert counted == history
    assert run.history_chars(history) == history_chars(history)
    assert counted == history
    assert run.history_chars([]) == 0
    assert counted == history


def test_a_history_that_is_not_an_extension_is_counted_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _counting(monkeypatch)
    run = _run_of()
    history = [_entry(i, 1) for i in range(5)]
    run.history_chars(history)
    folded = [history[0], _entry(9), *history[3:]]  # a fold: one summary stands for entries 1..2
    assert run.history_chars(folded) == history_chars(folded)
    assert counted == [*history, *folded]
    same_ends = [folded[0], _entry(8, 2), *folded[2:]]  # a one-entry fold keeps the length and both ends
    run.forget_conversation()
    assert run.history_chars(same_ends) == history_chars(same_ends) != history_chars(folded)
    assert counted == [*history, *folded, *same_ends]
    run.history_chars(folded)
    counted.clear()
    shorter = history[:3]
    assert run.history_chars(shorter) == history_chars(shorter)
    assert counted == shorter
    other = [_entry(i, 2) for i in range(3)]
    assert run.history_chars(other, "member/") == history_chars(other)
    assert run.history_chars(shorter) == history_chars(shorter)  # each namespace keeps its own count
    assert counted == [*shorter, *other]


def test_a_history_of_unreadable_entries_is_measured_as_history_chars_measures_it() -> None:
    run = _run_of()
    odd = [freeze({"role": "assistant", "content": None, "tool_calls": ["not a call", {"name": 3}]})]
    assert run.history_chars(odd) == history_chars(odd) == len("3") + len("{}")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["grow", "fold", "cut", "fresh"]), st.integers(0, 4), st.integers(0, 2)),
        min_size=1,
        max_size=12,
    )
)
def test_any_sequence_of_histories_measures_as_history_chars(steps: list[tuple[str, int, int]]) -> None:
    run = _run_of()
    history: list[Any] = []
    made = 0
    for op, k, calls in steps:
        new = [_entry(made + j, calls) for j in range(k)]
        made += k
        if op == "grow":
            history = [*history, *new]
        elif op == "fold" and len(history) > 2:
            history = [history[0], *new[:1], *history[2:]]
            run.forget_conversation()  # as the window stage does after writing a fold
        elif op == "cut":
            history = history[: len(history) // 2]
        else:
            history = new
        assert run.history_chars(history) == history_chars(history)


def _window_agent(threshold: int) -> Any:
    calls: list[int] = []

    def respond(request: LLMRequest) -> Any:
        calls.append(len(request.messages))
        k = len(calls)
        if k > 12:
            return "done"
        return {"tool_calls": [{"id": f"c{k}", "name": "step", "args": {"n": k}}]}

    return (
        Agent.create(provider=mock(respond=respond), model="m", max_iterations=20)
        .tool(STEP)
        .window(token_budget(threshold_tokens=threshold, keep_recent_turns=2))
        .build()
    )


async def _record(threshold: int) -> tuple[str, list[Any]]:
    agent = _window_agent(threshold)
    result = await agent.run("Work through the steps one at a time.")
    snapshot = agent.last_snapshot()
    text = json.dumps([result.answer, snapshot.state, [c.model_dump() for c in snapshot.commit_log]], default=str)
    text = re.sub(r'"elapsed_ms": [0-9.e-]+', '"elapsed_ms": 0', text.replace(result.run_id, "<run>"))
    return text, [r.get("over_budget") for r in snapshot.state.get("window_records", [])]


@pytest.mark.parametrize(("threshold", "over"), [(60, {True}), (10_000, set())])
async def test_a_windowed_run_records_what_counting_the_whole_history_records(
    threshold: int, over: set[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    cached, flags = await _record(threshold)
    monkeypatch.setattr(AgentRun, "history_chars", lambda self, history, key="": history_chars(history))
    assert (cached, flags) == await _record(threshold)
    assert set(flags) == over and len(flags) == (7 if over else 0)
