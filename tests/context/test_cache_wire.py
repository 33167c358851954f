"""Cache policy reaches the wire: an agent on the Anthropic adapter sends cache_control breakpoints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

from agentfootprint import Agent, define_fact
from agentfootprint.providers import anthropic, mock

FIXTURES = Path(__file__).parents[1] / "providers" / "fixtures"


async def test_always_cached_fact_becomes_anthropic_cache_control() -> None:
    bodies: list[dict[str, Any]] = []
    answer = json.loads((FIXTURES / "anthropic_answer.json").read_text())

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=answer)

    provider = anthropic(api_key="test-key", model="claude-x", transport=httpx2.MockTransport(handler))
    agent = (
        Agent.create(provider=provider, model="claude-x")
        .system("Base policy.")
        .fact(define_fact(id="catalog", data="A long, stable product catalog.", cache="always"))
        .build()
    )
    await agent.run("hi")
    system = bodies[0]["system"]
    assert isinstance(system, list) and any("cache_control" in block for block in system)
    assert "".join(block["text"] for block in system) == "Base policy.\n\nA long, stable product catalog."
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["cache_markers"][0]["source_id"] == "catalog"


async def test_other_providers_ignore_markers() -> None:
    provider = mock(reply="ok")
    agent = Agent.create(provider=provider, model="m").fact(define_fact(id="f", data="x", cache="always")).build()
    assert (await agent.run("hi")).answer == "ok"
    assert provider.requests[0].cache_markers
