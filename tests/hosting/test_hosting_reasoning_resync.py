"""AG-UI: a reply's reasoning reaches the page as REASONING_* events (redacted like the rest, never the answer, never
stored as a message), and a page that lost messages the thread holds is sent MESSAGES_SNAPSHOT to resync."""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    EventType,
    MessagesSnapshotEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
)
from agui_http import body, client, of, turn, types, user
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.hosting import ag_ui_app
from agentfootprint.providers import LLMResponse, ReasoningBlock, mock

MODELS = {
    "REASONING_START": ReasoningStartEvent,
    "REASONING_MESSAGE_START": ReasoningMessageStartEvent,
    "REASONING_MESSAGE_CONTENT": ReasoningMessageContentEvent,
    "REASONING_MESSAGE_END": ReasoningMessageEndEvent,
    "REASONING_END": ReasoningEndEvent,
    "MESSAGES_SNAPSHOT": MessagesSnapshotEvent,
}


def _thinking(*texts: str, answer: str = "Paris.") -> Any:
    blocks = [ReasoningBlock(kind="thinking", text=t) for t in texts]
    return lambda: Agent.create(provider=mock(replies=[LLMResponse(content=answer, reasoning=blocks)])).build()


async def test_a_replys_reasoning_is_streamed_as_one_reasoning_message_in_its_model_step() -> None:
    async with client(ag_ui_app(_thinking("France's capital", "is Paris"))) as http:
        status, events = await turn(http, body(user("u1", "Capital of France?")))
        shown = await http.get("/agui/threads/t1")
    assert status == 200
    kinds = types(events)
    start = kinds.index("REASONING_START")
    assert kinds[start : start + 5] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    text_span = (kinds.index("TEXT_MESSAGE_START"), kinds.index("TEXT_MESSAGE_END"))
    assert not text_span[0] < start < text_span[1]  # never inside the answer's text message (streamed text first)
    assert kinds.index("STEP_STARTED") < start < kinds.index("STEP_FINISHED")  # inside the model call's step
    for event in events:
        if event["type"] in MODELS:
            MODELS[event["type"]].model_validate(event)
    (content,) = of(events, "REASONING_MESSAGE_CONTENT")
    assert content["delta"] == "France's capital\n\nis Paris"
    assert len({e["messageId"] for e in events if e["type"].startswith("REASONING")}) == 1
    (text,) = of(events, "TEXT_MESSAGE_CONTENT")
    assert text["delta"] == "Paris."  # the reasoning is never the answer
    assert "France's capital" not in json.dumps(shown.json()["messages"])  # nor a stored message


async def test_a_reply_without_reasoning_sends_no_reasoning_events() -> None:
    async with client(ag_ui_app(lambda: Agent.create(provider=mock(reply="Paris.")).build())) as http:
        _, events = await turn(http, body(user("u1", "Capital of France?")))
    assert not [k for k in types(events) if k.startswith("REASONING")]


async def test_reasoning_is_redacted_like_every_other_surface() -> None:
    def make() -> Agent:
        reply = LLMResponse(content="Done.", reasoning=[ReasoningBlock(text="the key is sk-live-123abc, use it")])
        return Agent.create(provider=mock(replies=[reply])).redact(patterns=[r"sk-live-\w+"]).build()

    async with client(ag_ui_app(make)) as http:
        _, events = await turn(http, body(user("u1", "Do it")))
    (content,) = of(events, "REASONING_MESSAGE_CONTENT")
    assert "sk-live-123abc" not in json.dumps(events) and "[REDACTED]" in content["delta"]


async def test_a_page_that_lost_messages_is_sent_a_snapshot_of_the_thread_first() -> None:
    replies = ["Hello Ann.", "Your name is Ann."]
    app = ag_ui_app(lambda: Agent.create(provider=mock(replies=list(replies))).build())
    async with client(app) as http:
        _, first = await turn(http, body(user("u1", "I am Ann")))
        held = (await http.get("/agui/threads/t1")).json()["messages"]
        status, events = await turn(http, body(user("u2", "Who am I?"), run="r2"))  # the page lost u1 and the reply
    assert status == 200 and "MESSAGES_SNAPSHOT" not in types(first)
    assert types(events)[:2] == ["RUN_STARTED", "MESSAGES_SNAPSHOT"]
    (snapshot,) = of(events, "MESSAGES_SNAPSHOT")
    MessagesSnapshotEvent.model_validate(snapshot)
    assert [m["id"] for m in snapshot["messages"]] == [m["id"] for m in held]
    assert [m["role"] for m in snapshot["messages"]] == ["user", "assistant"]


async def test_a_page_in_step_with_the_thread_gets_no_snapshot() -> None:
    app = ag_ui_app(lambda: Agent.create(provider=mock(replies=["Hello Ann.", "Ann."])).build())
    async with client(app) as http:
        await turn(http, body(user("u1", "I am Ann")))
        held = (await http.get("/agui/threads/t1")).json()["messages"]
        status, events = await turn(http, body(*held, user("u2", "Who am I?"), run="r2"))
    assert status == 200 and "MESSAGES_SNAPSHOT" not in types(events)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40).filter(str.strip), min_size=1, max_size=4))
async def test_property_every_reasoning_text_reaches_the_page_once_and_in_order(texts: list[str]) -> None:
    async with client(ag_ui_app(_thinking(*texts, answer="ok"))) as http:
        _, events = await turn(http, body(user("u1", "think")))
    (content,) = of(events, "REASONING_MESSAGE_CONTENT")
    assert content["delta"] == "\n\n".join(texts)
    assert EventType(events[-1]["type"]) == EventType.RUN_FINISHED
