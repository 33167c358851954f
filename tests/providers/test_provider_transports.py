"""The HTTP providers over real transports: an in-process ASGI server and a refused local socket."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx2
import pytest

from agentfootprint.providers import ProviderConnectionError, Usage, openai_compatible

from ._support import collect, fixture, user_request

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class ChatServer:
    """A tiny ASGI Chat Completions server that streams the recorded SSE fixture event by event."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        body = json.loads(raw)
        self.bodies.append(body)
        if body.get("stream"):
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            for event in fixture("openai_stream_text.sse").split(b"\n\n"):
                await send({"type": "http.response.body", "body": event + b"\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        else:
            payload = fixture("openai_answer.json")
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": payload})


async def test_asgi_server_complete_and_stream() -> None:
    app = ChatServer()
    provider = openai_compatible("http://testserver/v1", model="m", transport=httpx2.ASGITransport(app=app))
    response = await provider.complete(user_request())
    assert response.usage == Usage(input_tokens=42, output_tokens=11)
    chunks = await collect(provider.stream(user_request()))
    assert "".join(c.text for c in chunks if c.kind == "text") == "Refund DECLINED."
    assert [b.get("stream", False) for b in app.bodies] == [False, True]


async def test_refused_local_port_is_a_connection_error() -> None:
    provider = openai_compatible("http://127.0.0.1:1/v1", model="m", timeout=5)
    with pytest.raises(ProviderConnectionError) as info:
        await provider.complete(user_request())
    assert str(info.value).startswith("could not connect to http://127.0.0.1:1/v1 — is the server running?")
