"""The agent keeps its last conversation checkpoint as JSON text (one string, not a tree of dicts and lists per
message): ``checkpoint()`` and ``follow_up`` see exactly what the kept dict gave before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import _conversation
from agentfootprint.agent._seal import seal
from agentfootprint.providers import LLMRequest, mock
from tests._typed import same_typed


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every conversation checkpoint the agent builds (the model, before it is written out)."""
    built: list[Any] = []
    original = _conversation.conversation_model

    def spy(*args: Any) -> Any:
        value = original(*args)
        built.append(value)
        return value

    monkeypatch.setattr(_conversation, "conversation_model", spy)
    return built


def _old(model: Any, key: Any) -> Any:
    """The old path: the sealed JSON dict was kept, and ``checkpoint()`` returned ``loads(dumps(kept))``."""
    return json.loads(json.dumps(seal(model.to_json(), key)))


def _tool() -> Any:
    schema = {"type": "object", "properties": {"x": {}}}
    return define_tool(name="look", description="look", input_schema=schema, execute=lambda args, ctx: args)


text = st.text(max_size=12)  # any code point, lone surrogates included
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text
json_value = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=10
)


@settings(max_examples=60, deadline=None)
@given(message=text.filter(str.strip), args=json_value, answer=text, sealed=st.booleans())
def test_property_checkpoint_equals_the_old_path(message: str, args: Any, answer: str, sealed: bool) -> None:
    """Any text (lone surrogates take Python's encoder), any arguments, with and without a checkpoint key."""
    import asyncio

    key = "k" * 32 if sealed else None
    with pytest.MonkeyPatch.context() as mp:
        built = _spy(mp)
        provider = mock(replies=[{"tool_calls": [{"id": "c1", "name": "look", "args": {"x": args}}]}, answer])
        agent = Agent.create(provider=provider, model="m", checkpoint_key=key).tool(_tool()).build()
        asyncio.run(agent.run(message))
    assert isinstance(agent.last_record().conversation_text, str)  # type: ignore[union-attr]
    got = agent.checkpoint()
    assert same_typed(got, _old(built[-1], agent.config.checkpoint_key))
    assert got is not agent.checkpoint()  # a fresh copy on every call


async def test_follow_up_continues_the_same_conversation_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[LLMRequest] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(req)
        return f"answer {len(seen)}"

    built = _spy(monkeypatch)
    agent = Agent.create(provider=mock(respond=respond), model="m").build()
    await agent.run("first \ud800 question")
    cp = agent.checkpoint()
    assert cp is not None
    cp["history"].clear()  # hostile: the caller edits what it received
    result = await agent.follow_up("second")
    assert result.answer == "answer 2"
    assert [(m.role, m.content) for m in seen[1].messages if m.role != "system"] == [
        ("user", "first \ud800 question"),
        ("assistant", "answer 1"),
        ("user", "second"),
    ]
    assert same_typed(agent.checkpoint(), _old(built[-1], None))
    assert [m["content"] for m in agent.checkpoint()["history"]] == [  # type: ignore[index]
        "first \ud800 question",
        "answer 1",
        "second",
        "answer 2",
    ]


async def test_the_kept_text_is_written_directly_and_reads_back_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _spy(monkeypatch)
    provider = mock(replies=[{"tool_calls": [{"id": "c1", "name": "look", "args": {"x": [1.5, {"y": None}]}}]}, "ok"])
    agent = Agent.create(provider=provider, model="m").tool(_tool()).build()
    await agent.run("plain text, é and 🙂")
    assert agent.last_record().conversation_text == built[-1].to_json_text()  # type: ignore[union-attr]  # no Python encoder pass on the common path
    assert same_typed(agent.checkpoint(), _old(built[-1], None))


async def test_the_kept_text_is_written_when_first_read_and_stays_the_runs_own(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[Any] = []
    original = _conversation._unsealed_text
    monkeypatch.setattr(_conversation, "_unsealed_text", lambda model: written.append(model) or original(model))
    provider = mock(replies=[{"tool_calls": [{"id": "c1", "name": "look", "args": {"x": [1]}}]}, "one", "two"])
    agent = Agent.create(provider=provider, model="m").tool(_tool()).build()
    first = await agent.run("first")
    assert written == []  # nothing written yet: a run whose conversation is never read never pays for it
    second = await agent.run("second", continue_from=first.record.checkpoint())
    assert len(written) == 1  # the first run's, read to continue from it
    first_text = first.record.conversation_text
    assert first.record.conversation_text is first_text and len(written) == 1  # written once, then kept
    assert [m["content"] for m in json.loads(first_text)["history"]] == ["first", "", '{"x": [1]}', "one"]  # type: ignore[arg-type]
    assert [m["content"] for m in second.record.checkpoint()["history"]][-2:] == ["second", "two"]  # type: ignore[index]
    assert json.loads(first.record.conversation_text)["history"][-1]["content"] == "one"  # type: ignore[arg-type]  # the later turn changed nothing


async def test_a_sealed_conversation_is_written_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[Any] = []
    monkeypatch.setattr(_conversation, "_unsealed_text", written.append)
    agent = Agent.create(provider=mock(replies=["ok"]), model="m", checkpoint_key="k" * 32).build()
    result = await agent.run("hi")
    assert written == [] and isinstance(result.record._conversation, str)
    assert result.record.checkpoint()["seal"]  # type: ignore[index]
