"""HTTP helpers for the hosting tests: an in-process client, SSE parsing, scripted agents on a shared mock."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx2
from tests._live import parse_sse

from agentfootprint import Agent, ask_human
from agentfootprint.providers import MockProvider, mock
from agentfootprint.tools import Tool


def client(app: Any) -> httpx2.AsyncClient:
    """An in-process client for an ASGI app."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://test", timeout=30)


def types(events: Sequence[dict[str, Any]]) -> list[str]:
    """The event types, in order."""
    return [e["type"] for e in events]


def of(events: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The events of one type."""
    return [e for e in events if e["type"] == kind]


def text_of(events: Sequence[dict[str, Any]]) -> str:
    """The streamed text (all TEXT_MESSAGE_CONTENT deltas)."""
    return "".join(e["delta"] for e in of(events, "TEXT_MESSAGE_CONTENT"))


def user(mid: str, content: Any = "hello") -> dict[str, Any]:
    """A user message."""
    return {"id": mid, "role": "user", "content": content}


def body(*messages: dict[str, Any], thread: str = "t1", run: str = "r1", **fields: Any) -> dict[str, Any]:
    """A RunAgentInput body."""
    return {"threadId": thread, "runId": run, "messages": list(messages), **fields}


async def turn(http: httpx2.AsyncClient, payload: Any, **kwargs: Any) -> tuple[int, Any]:
    """POST a turn: (status, SSE events) for a stream, (status, JSON) otherwise."""
    response = await http.post("/agui", json=payload, **kwargs)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return response.status_code, parse_sse(response.text)
    return response.status_code, response.json()


def factory(provider: MockProvider, *tools: Tool, counter: list[int] | None = None) -> Callable[[], Agent]:
    """A factory building a fresh agent per turn on one shared provider (``counter`` counts the agents built)."""

    def make() -> Agent:
        if counter is not None:
            counter.append(1)
        return Agent.create(provider=provider).system("You are a test agent.").tools(tools).build()

    return make


def asking(question: str = "Which city?", answer_after: str = "Noted.") -> MockProvider:
    """A provider that calls ask_human once, then answers."""
    return mock(
        replies=[{"tool_calls": [{"id": "ask-1", "name": "ask_human", "args": {"question": question}}]}, answer_after]
    )


__all__ = ["ask_human", "asking", "body", "client", "factory", "of", "parse_sse", "text_of", "turn", "types", "user"]
