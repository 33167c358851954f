"""A tool result's ``name#n`` id comes from one forward pass over the commit log: the same ids as folding
``tool_results`` with ``value_at`` at each result (the former, quadratic way), on any sequence of tool calls."""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.providers import mock

bt = importlib.import_module("agentfootprint.explain.backtrack")


def _by_value_at(snap: Any, adder: Any, name: str, call_id: str) -> str | None:
    records = snap.value_at("tool_results", adder.idx, adder.namespace, default=None)
    if not isinstance(records, list | tuple):
        return None
    for i in range(len(records) - 1, -1, -1):
        r = records[i]
        if isinstance(r, dict) and r.get("call_id") == call_id and r.get("name") == name:
            return f"{name}#{sum(1 for x in records[: i + 1] if isinstance(x, dict) and x.get('name') == name)}"
    return None


def _agent(batches: list[list[str]]) -> Agent:
    tools = [
        define_tool(name=n, description=n, input_schema={"type": "object"}, execute=lambda a, c: "ok")
        for n in ("alpha", "beta", "gamma")
    ]
    replies: list[Any] = []
    for b, names in enumerate(batches):
        replies.append({"tool_calls": [{"id": f"c{b}_{i}", "name": n, "args": {}} for i, n in enumerate(names)]})
    replies.append("done")
    builder = Agent.create(provider=mock(replies=replies), max_iterations=len(batches) + 2)
    for tool in tools:
        builder = builder.tool(tool)
    return builder.build()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["alpha", "beta", "gamma"]), min_size=1, max_size=3), max_size=6))
async def test_property_one_pass_ids_equal_the_value_at_fold(batches: list[list[str]]) -> None:
    agent = _agent(batches)
    result = await agent.run("go")
    snap = result.record.snapshot  # type: ignore[union-attr]
    wanted = [
        (c, r["name"], r["call_id"])
        for c in snap.commit_log
        for w in c.writes
        if w.path == "tool_results" and w.verb == "append"
        for r in w.value
    ]
    assert len(wanted) == sum(len(b) for b in batches)
    fast = bt._result_ids(snap, wanted)
    assert fast == {(c.idx, n, i): _by_value_at(snap, c, n, i) for c, n, i in wanted}
    per_name: dict[str, int] = {}
    for _, name, _ in wanted:  # ids count each name's results in order
        per_name[name] = per_name.get(name, 0) + 1
    assert sorted(fast.values()) == sorted(f"{n}#{k}" for n, count in per_name.items() for k in range(1, count + 1))
