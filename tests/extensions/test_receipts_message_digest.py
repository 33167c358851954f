"""A message's digest written out directly is the digest of its json-mode dump, for every message shape."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.extensions.receipts import _message_json, canonical_json, digest, message_digest
from agentfootprint.providers import Message, ToolCall
from agentfootprint.providers._models import ReasoningBlock

TEXT = st.text(max_size=6) | st.sampled_from(['"', "\\", "\n", "\x00", "é", "\u2028", "😀"])
ARGS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
CALLS = st.builds(
    ToolCall,
    id=TEXT,
    name=TEXT,
    args=st.dictionaries(TEXT, ARGS, max_size=3),
    args_error=st.none() | TEXT,
    signature=st.none() | TEXT,
)
MESSAGES = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool"]),
    content=TEXT,
    tool_call_id=st.none() | TEXT,
    tool_name=st.none() | TEXT,
    tool_calls=st.lists(CALLS, max_size=3),
    reasoning=st.lists(st.builds(ReasoningBlock, text=TEXT), max_size=1),
)


def _dumped(message: Any) -> str | None:
    try:
        return digest(message.model_dump(mode="json"))
    except (ValueError, RecursionError):
        return None


@settings(max_examples=400, deadline=None)
@given(MESSAGES)
def test_the_digest_is_the_dumped_messages_digest(message: Message) -> None:
    assert message_digest(message) == _dumped(message)


def test_a_plain_message_is_written_out_as_its_canonical_dump() -> None:
    call = ToolCall(id="c0", name="t", args={"q": "é", "n": [1, 2.5, None, True], "o": {"b": 1, "a": 2}})
    message = Message(role="assistant", content='say "hi"', tool_calls=[call])
    assert _message_json(message) == canonical_json(message.model_dump(mode="json"))
    tool = Message(role="tool", content="found", tool_call_id="c0", tool_name="t")
    assert _message_json(tool) == (
        '{"content":"found","reasoning":[],"role":"tool","tool_call_id":"c0","tool_calls":[],"tool_name":"t"}'
    )
    assert message_digest(tool) == hashlib.sha256(canonical_json(tool.model_dump(mode="json")).encode()).hexdigest()


def test_reasoning_odd_arguments_and_other_types_are_dumped_instead() -> None:
    reasoned = Message(role="assistant", content="x", reasoning=[ReasoningBlock(text="think")])
    infinite = Message(role="assistant", tool_calls=[ToolCall(id="c", name="t", args={"x": math.inf})])
    keyed = Message(role="assistant", tool_calls=[ToolCall(id="c", name="t", args={"x": {1: 2}})])
    tupled = Message(role="assistant", tool_calls=[ToolCall(id="c", name="t", args={"x": (1, 2)})])
    for message in (reasoned, infinite, keyed, tupled, {"role": "user", "content": "x"}):
        assert _message_json(message) is None
    for message in (reasoned, infinite, keyed, tupled):
        assert message_digest(message) == _dumped(message)


def test_a_lone_surrogate_has_no_digest_either_way() -> None:
    message = Message(role="user", content="\ud800")
    assert message_digest(message) is None
    assert _dumped(message) is None
