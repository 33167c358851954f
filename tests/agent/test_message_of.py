"""A committed history entry becomes the message ``Message.model_validate(thaw(entry))`` makes, sharing nothing
mutable with the committed entry."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentfootprint.agent._run import message_of
from agentfootprint.flow import freeze, thaw
from agentfootprint.providers import Message


def test_a_frozen_entry_validates_to_the_thawed_entrys_message() -> None:
    entry = freeze(
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [
                {"id": "c0", "name": "t", "args": {"q": "a", "n": 1}},
                {"id": "c1", "name": "u", "args": {"deep": {"k": [1, {"z": 2}]}, "flat": "s"}},
            ],
        }
    )
    message = message_of(entry)
    assert message == Message.model_validate(thaw(entry))
    assert [type(c.args) for c in message.tool_calls] == [dict, dict]
    deep = message.tool_calls[1].args["deep"]
    assert type(deep) is dict and type(deep["k"]) is list and type(deep["k"][1]) is dict
    deep["k"].append(3)  # a plain copy: the committed entry is untouched
    assert entry["tool_calls"][1]["args"]["deep"]["k"] == [1, {"z": 2}]
    assert message.tool_calls[0].args is not entry["tool_calls"][0]["args"]


def test_a_tool_entry_and_a_refused_entry_behave_as_before() -> None:
    tool = freeze({"role": "tool", "content": "r", "tool_call_id": "c0", "tool_name": "t"})
    assert message_of(tool) == Message(role="tool", content="r", tool_call_id="c0", tool_name="t")
    with pytest.raises(ValidationError):
        message_of(freeze({"role": "robot", "content": "r"}))
    with pytest.raises(ValidationError):
        message_of(freeze({"role": "user", "content": "r", "extra": 1}))
