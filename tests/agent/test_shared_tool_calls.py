"""The history entry of a tool-calling reply shares the recorded reply's frozen calls instead of a third copy: the
same frozen value as before (type for type), while everything handed out stays its own plain copy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent._tool_calls import _asked
from agentfootprint.flow._frozen import FrozenDict, FrozenList, freeze, thaw
from agentfootprint.providers import mock
from tests._typed import same_typed

json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)
call = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=6), "name": st.sampled_from(["look", "step"]), "args": json_value}
)


def _old_asked(response: Any) -> Any:
    """The old path: an entry built from thawed copies, frozen when appended to the history."""
    asked = {"role": "assistant", "content": response["content"], "tool_calls": thaw(response["tool_calls"])}
    if response.get("reasoning"):
        asked["reasoning"] = thaw(response["reasoning"])
    return freeze(asked)


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(call, max_size=3),
    content=st.none() | st.text(max_size=8),
    reasoning=st.none() | st.lists(st.fixed_dictionaries({"text": st.text(max_size=5)}), max_size=2),
)
def test_property_the_entry_equals_the_old_path_and_shares_the_calls(
    calls: list[dict[str, Any]], content: str | None, reasoning: list[dict[str, Any]] | None
) -> None:
    reply: dict[str, Any] = {"content": content, "tool_calls": calls, "finish_reason": "tool_calls"}
    if reasoning is not None:
        reply["reasoning"] = reasoning
    recorded = freeze(reply)  # what the call-llm stage committed
    entry = _asked(recorded)
    assert same_typed(entry, _old_asked(recorded))
    assert entry["tool_calls"] is recorded["tool_calls"]
    if reasoning:
        assert entry["reasoning"] is recorded["reasoning"]


def test_a_reply_that_is_not_frozen_is_frozen_not_shared() -> None:
    reply = {"content": "x", "tool_calls": [{"id": "c1", "name": "look", "args": {"a": [1]}}]}
    entry = _asked(reply)
    assert same_typed(entry, _old_asked(reply))
    assert entry["tool_calls"] is not reply["tool_calls"]
    assert type(entry["tool_calls"]) is FrozenList and type(entry["tool_calls"][0]["args"]) is FrozenDict
    reply["tool_calls"][0]["args"]["a"].append(2)  # the caller's own list: the entry kept none of it
    assert entry["tool_calls"][0]["args"]["a"] == [1]


def _look(args: dict[str, Any], ctx: Any) -> str:
    args["q"]["deep"].append("tool edits its own args")  # hostile: the tool mutates what it received
    return "RESULT"


async def test_a_run_shares_one_frozen_call_and_hands_out_plain_copies() -> None:
    look = define_tool(name="look", description="look", input_schema={"type": "object"}, execute=_look)
    provider = mock(replies=[{"tool_calls": [{"id": "c1", "name": "look", "args": {"q": {"deep": [1]}}}]}, "done"])
    agent = Agent.create(provider=provider, model="m").tool(look).build()
    result = await agent.run("go")
    assert result.answer == "done"
    flow = agent.last_flow()
    assert flow is not None
    log = flow.snapshot.commit_log
    replies = [w.value for c in log for w in c.writes if w.path == "last_response"]
    appended = [w.value for c in log for w in c.writes if w.path == "history" and w.verb == "append"]
    asked = [e for batch in appended for e in batch if e.get("tool_calls")]
    assert len(asked) == 1 and asked[0]["tool_calls"] is replies[0]["tool_calls"]
    assert thaw(asked[0]["tool_calls"]) == [{"id": "c1", "name": "look", "args": {"q": {"deep": [1]}}}]
    record = flow.snapshot.state  # the record keeps the committed values: read-only, like its commits' writes
    with pytest.raises(TypeError):
        record["history"][1]["tool_calls"][0]["args"]["q"]["deep"].append(2)  # hostile: edit the record
    state = flow.state
    assert type(state["history"][1]["tool_calls"]) is list  # the caller's copy is plain
    state["history"][1]["tool_calls"][0]["args"]["q"]["deep"].append(2)  # hostile: edit the handed-out copy
    assert state["last_response"]["tool_calls"] == []  # the final reply asked for nothing
    assert record["history"][1]["tool_calls"][0]["args"] == {"q": {"deep": [1]}}
    assert flow.committed_state()["history"][1]["tool_calls"][0]["args"] == {"q": {"deep": [1]}}
