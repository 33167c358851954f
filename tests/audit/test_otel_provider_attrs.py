"""OTel chat spans name the vendor with the GenAI conventions' well-known ``gen_ai.provider.name`` (not the
instance's name), say which server was called (``server.address``/``server.port``), and set
``gen_ai.response.model`` only from what the provider reported."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentfootprint import Agent
from agentfootprint.audit import instrument
from agentfootprint.audit import otel as o
from agentfootprint.providers import (
    LLMResponse,
    anthropic,
    azure_openai,
    bedrock,
    gemini,
    mock,
    ollama,
    openai_compatible,
    with_retry,
)


@pytest.mark.parametrize(
    ("make", "name", "server"),
    [
        (lambda: anthropic(api_key="k", model="claude"), "anthropic", ("api.anthropic.com", 443)),
        (
            lambda: azure_openai(api_key="k", endpoint="https://acme.openai.azure.com", deployment="d"),
            "azure.ai.openai",
            ("acme.openai.azure.com", 443),
        ),
        (
            lambda: bedrock(region="us-east-1", model="m", api_key="k"),
            "aws.bedrock",
            ("bedrock-runtime.us-east-1.amazonaws.com", 443),
        ),
        (
            lambda: gemini(api_key="k", model="gemini-2.5-flash"),
            "gcp.gemini",
            ("generativelanguage.googleapis.com", 443),
        ),
        (lambda: ollama(model="llama3", base_url="http://127.0.0.1:11434"), "ollama", ("127.0.0.1", 11434)),
        (
            lambda: openai_compatible(base_url="https://api.openai.com/v1", api_key="k"),
            "openai",
            ("api.openai.com", 443),
        ),
        (lambda: openai_compatible(base_url="https://api.groq.com/openai/v1", api_key="k"), "groq", None),
        (lambda: with_retry(anthropic(api_key="k", model="claude")), "anthropic", ("api.anthropic.com", 443)),
    ],
    ids=["anthropic", "azure", "bedrock", "gemini", "ollama", "openai", "groq", "retry-wrapped"],
)
def test_the_vendor_has_its_well_known_name_and_server(make: Any, name: str, server: Any) -> None:
    provider = make()
    assert o.provider_name(provider) == name
    found = o._server(provider)
    if server is not None:
        assert (found[o.SERVER_ADDRESS], found[o.SERVER_PORT]) == server


def test_an_unknown_provider_keeps_its_own_name() -> None:
    assert o.provider_name(mock(reply="x")) == mock(reply="x").name
    assert o._server(mock(reply="x")) == {}


async def test_a_chat_span_carries_the_reported_response_model_and_no_server_for_in_process_models() -> None:
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    provider = mock(replies=[LLMResponse(content="hi", model="m-2025-06-01")])
    agent = Agent.create(provider=provider, model="m").build()
    instrument(agent, tp)
    await agent.run("hello")
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    attrs = dict(chat.attributes or {})
    assert attrs[o.GEN_AI_REQUEST_MODEL] == "m" and attrs[o.GEN_AI_RESPONSE_MODEL] == "m-2025-06-01"
    assert o.SERVER_ADDRESS not in attrs
