"""A receipt's message digest is the chain over every message of the request, however the chain was cached."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.extensions.receipts import Receipts, digest
from agentfootprint.providers import LLMRequest, Message


def _from_scratch(messages: list[Message]) -> str:
    running = hashlib.sha256(b"messages").hexdigest()
    for m in messages:
        running = hashlib.sha256((running + digest(m.model_dump(mode="json"))).encode()).hexdigest()
    return running


def _digest(ctx: Any, messages: list[Message]) -> str:
    return Receipts()._messages_digest(ctx, LLMRequest(messages=messages))


def test_a_growing_conversation_chains_each_message_once() -> None:
    ctx = SimpleNamespace(state={})
    msgs = [Message(role="user", content=f"m{i}") for i in range(4)]
    for k in range(5):
        assert _digest(ctx, msgs[:k]) == _from_scratch(msgs[:k])
    assert len(ctx.state["chain"]) == 4


def test_a_rewritten_or_shortened_history_is_chained_afresh_from_where_it_differs() -> None:
    ctx = SimpleNamespace(state={})
    msgs = [Message(role="user", content=f"m{i}") for i in range(4)]
    assert _digest(ctx, msgs) == _from_scratch(msgs)
    compacted = [msgs[0], Message(role="user", content="summary"), msgs[3]]
    assert _digest(ctx, compacted) == _from_scratch(compacted)
    assert _digest(ctx, msgs[:2]) == _from_scratch(msgs[:2])
    assert _digest(ctx, []) == _from_scratch([])
    assert _digest(ctx, msgs) == _from_scratch(msgs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(0, 5), max_size=6), min_size=1, max_size=6))
def test_any_sequence_of_requests_digests_as_from_scratch(requests: list[list[int]]) -> None:
    pool = [Message(role="user", content=f"m{i}") for i in range(6)]
    ctx = SimpleNamespace(state={})
    for picks in requests:
        msgs = [pool[i] for i in picks]
        assert _digest(ctx, msgs) == _from_scratch(msgs)
