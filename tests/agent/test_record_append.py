"""``RunContext.record_append``: what ``record(key, [*recorded(key, ()), *items])`` records, at the items' cost."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import CallModel, Extension, ExtensionError, RunContext
from agentfootprint.providers import LLMRequest, LLMResponse, mock

STEP = define_tool(
    name="step",
    description="Do one step",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=lambda args: f"step {args['n']} done",
)


class Rows(Extension):
    """Files ``rows[i]`` on the i-th model call, by ``record_append`` or by writing the grown list back."""

    name = "rows"

    def __init__(self, rows: list[list[Any]], grow: bool) -> None:
        self.rows = rows
        self.grow = grow
        self.calls = 0

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        items = self.rows[self.calls % len(self.rows)]
        self.calls += 1
        if self.grow:
            ctx.record_append("ledger", *items)
        else:
            ctx.record("ledger", [*ctx.recorded("ledger", ()), *items])
        return await call_next(request)


def _agent(rows: list[list[Any]], grow: bool, steps: int) -> Any:
    def respond(request: LLMRequest) -> Any:
        k = (len(request.messages) + 1) // 2
        if k > steps:
            return "done"
        return {"tool_calls": [{"id": f"c{k}", "name": "step", "args": {"n": k}}]}

    return Agent.create(provider=mock(respond=respond)).tool(STEP).use(Rows(rows, grow)).build()


def _same_ids(value: Any, run_id: str) -> str:
    """``value`` as JSON text with what differs from run to run (its random id, tool timings) spelt the same."""
    text = json.dumps(value, sort_keys=True, default=str).replace(run_id, "<run>")
    return re.sub(r'"elapsed_ms": [0-9.e-]+', '"elapsed_ms": 0', text)


async def _run(rows: list[list[Any]], grow: bool, steps: int) -> Any:
    agent = _agent(rows, grow, steps)
    result = await agent.run("go")
    snapshot = agent.last_snapshot()
    commits = [c.model_dump() for c in snapshot.commit_log]
    writes = [[(w.path, w.verb, type(w.value).__name__) for w in c.writes] for c in snapshot.commit_log]
    record = [result.answer, result.iterations, snapshot.state, commits, writes, agent.checkpoint()["history"]]
    return _same_ids(record, result.run_id)


async def test_each_call_commits_an_append_of_its_row_and_reads_the_ledger() -> None:
    agent = _agent([[{"call": 1}]], True, 2)
    await agent.run("go")
    snapshot = agent.last_snapshot()
    assert snapshot.state["ledger"] == [{"call": 1}] * 3
    ledger = [(c.idx, w.verb, w.value) for c in snapshot.commit_log for w in c.writes if w.path == "ledger"]
    assert [(verb, value) for _, verb, value in ledger] == [
        ("set", [{"call": 1}]),
        ("append", [{"call": 1}]),
        ("append", [{"call": 1}]),
    ]
    second = snapshot.commit_log[ledger[1][0]]
    assert second.reads["ledger"] == ledger[0][0]


async def test_the_record_equals_writing_the_grown_list_back() -> None:
    rows: list[list[Any]] = [[{"n": 1}], [], [{"n": 2}, "x"]]
    assert await _run(rows, True, 4) == await _run(rows, False, 4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.one_of(st.integers(0, 3), st.text(max_size=2), st.booleans()), max_size=3), min_size=1),
    st.integers(0, 3),
)
async def test_any_rows_record_as_writing_the_grown_list_back(rows: list[list[Any]], steps: int) -> None:
    assert await _run(rows, True, steps) == await _run(rows, False, steps)


async def test_a_key_the_agent_owns_or_a_write_outside_a_stage_is_refused_as_record_refuses() -> None:
    class Clobber(Extension):
        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            ctx.record_append("history", {"role": "user", "content": "x"})
            return answer

    with pytest.raises(ExtensionError, match="owns that key"):
        await Agent.create(provider=mock(reply="x")).use(Clobber()).build().run("hi")

    class Late(Extension):
        async def after_run(self, ctx: RunContext, outcome: Any) -> None:
            ctx.record_append("late", 1)

    with pytest.raises(ExtensionError, match="only inside a stage"):
        await Agent.create(provider=mock(reply="x")).use(Late()).build().run("hi")


async def test_a_ledger_holding_no_list_is_grown_as_record_would_grow_it() -> None:
    class Odd(Extension):
        async def on_input(self, ctx: RunContext, message: str) -> str:
            ctx.record("ledger", "ab")  # a str: the grown value spells it out, as [*"ab", item] does
            return message

        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            ctx.record_append("ledger", "c")
            return answer

    agent = Agent.create(provider=mock(reply="x")).use(Odd()).build()
    await agent.run("hi")
    assert agent.last_snapshot().state["ledger"] == ["a", "b", "c"]

    class Number(Extension):
        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            ctx.record("count", 3)
            return answer

        async def after_run(self, ctx: RunContext, outcome: Any) -> None:
            return None

    class Grow(Extension):
        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            ctx.record_append("count", 1)
            return answer

    with pytest.raises(TypeError):
        await Agent.create(provider=mock(reply="x")).use(Number()).use(Grow()).build().run("hi")
