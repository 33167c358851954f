"""Shared test helpers: a recording fake HTTP server, a fake sleep and scripted fake providers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from agentfootprint.providers import (
    BaseProvider,
    LLMRequest,
    LLMResponse,
    Message,
    ProviderError,
    StreamChunk,
)

FIXTURES = Path(__file__).parent / "fixtures"
SECRET = "sk-test-SECRET-9f8e7d6c5b4a"


def fixture(name: str) -> bytes:
    """Bytes of a recorded wire body."""
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> Any:
    """A JSON fixture, parsed."""
    return json.loads(fixture(name))


@dataclass
class Reply:
    """One canned HTTP answer."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def json_reply(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A JSON HTTP answer."""
    return Reply(status, json.dumps(data).encode(), {"content-type": "application/json", **(headers or {})})


def raw_reply(body: bytes | str, status: int = 200, content_type: str = "text/event-stream") -> Reply:
    """A raw HTTP answer (SSE, NDJSON, HTML...)."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(status, data, {"content-type": content_type})


@dataclass
class Seen:
    """A request the fake server received."""

    method: str
    url: str
    headers: dict[str, str]
    body: Any


Outcome = Reply | Exception | Callable[[httpx2.Request], Reply]


class FakeServer:
    """A ``MockTransport`` handler replaying outcomes in order (the last repeats) and recording requests."""

    def __init__(self, *outcomes: Outcome) -> None:
        self.outcomes = list(outcomes)
        self.seen: list[Seen] = []

    @property
    def transport(self) -> httpx2.MockTransport:
        """The transport to hand to a provider."""
        return httpx2.MockTransport(self)

    @property
    def last(self) -> Seen:
        """The most recent request."""
        return self.seen[-1]

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        raw = request.content
        self.seen.append(
            Seen(request.method, str(request.url), dict(request.headers), json.loads(raw) if raw else None)
        )
        index = min(len(self.seen) - 1, len(self.outcomes) - 1)
        outcome = self.outcomes[index]
        if isinstance(outcome, Exception):
            raise outcome
        if callable(outcome):
            outcome = outcome(request)
        return httpx2.Response(outcome.status, content=outcome.body, headers=outcome.headers)


class FakeSleep:
    """An injectable ``sleep`` that records delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def user_request(text: str = "Should order A-1001 be refunded?", **kw: Any) -> LLMRequest:
    """A one-message request."""
    return LLMRequest(
        system_prompt=kw.pop("system_prompt", "You are a refunds assistant."),
        messages=[Message(role="user", content=text)],
        **kw,
    )


Step = LLMResponse | ProviderError | tuple[str, ProviderError]


class ScriptedProvider(BaseProvider):
    """A fake provider whose calls follow a script of answers and errors.

    A ``("after-first-chunk", error)`` step streams one text chunk and then raises.
    """

    def __init__(self, name: str, *steps: Step) -> None:
        self.name = name
        self.steps = list(steps)
        self.calls = 0

    def _next(self) -> Step:
        self.calls += 1
        return self.steps[min(self.calls, len(self.steps)) - 1]

    async def complete(self, request: LLMRequest) -> LLMResponse:
        step = self._next()
        if isinstance(step, tuple):
            raise step[1]
        if isinstance(step, ProviderError):
            raise step
        return step

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        step = self._next()
        if isinstance(step, tuple):
            yield StreamChunk(kind="text", text="partial ")
            raise step[1]
        if isinstance(step, ProviderError):
            raise step
        yield StreamChunk(kind="text", text=step.content)
        yield StreamChunk(kind="done", response=step)


async def collect(stream: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    """All chunks of a stream."""
    return [chunk async for chunk in stream]
