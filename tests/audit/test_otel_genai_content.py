"""OTel spans carry what the GenAI conventions name: ``gen_ai.response.id``, ``gen_ai.agent.id``, the prompt-cache
counts (``gen_ai.usage.cache_read.input_tokens`` / ``cache_creation.input_tokens``) and, with content capture on and
the prompt recorded, ``gen_ai.system_instructions`` and ``gen_ai.input.messages`` on every chat span."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as semconv

from agentfootprint import Agent
from agentfootprint.audit import instrument
from agentfootprint.audit import otel as o
from agentfootprint.providers import LLMResponse, Usage, anthropic, bedrock, mock
from tests.audit._agents import SECRET, Recorder, lookup_agent, lookup_then_answer, lookup_tool, scripted
from tests.providers._sdk_bodies import anthropic_message, converse_output
from tests.providers._support import FakeServer, raw_reply


def _spans(exporter: InMemorySpanExporter, prefix: str) -> list[dict[str, Any]]:
    found: list[ReadableSpan] = [s for s in exporter.get_finished_spans() if s.name.startswith(prefix)]
    return [dict(s.attributes or {}) for s in found]


def test_attribute_names_are_the_installed_semantic_conventions() -> None:
    assert o.GEN_AI_RESPONSE_ID == semconv.GEN_AI_RESPONSE_ID
    assert o.GEN_AI_AGENT_ID == semconv.GEN_AI_AGENT_ID
    assert o.GEN_AI_SYSTEM_INSTRUCTIONS == semconv.GEN_AI_SYSTEM_INSTRUCTIONS
    assert o.GEN_AI_INPUT_MESSAGES == semconv.GEN_AI_INPUT_MESSAGES
    assert o.GEN_AI_OUTPUT_MESSAGES == semconv.GEN_AI_OUTPUT_MESSAGES
    assert o.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS == semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
    assert o.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS == semconv.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS


async def test_response_id_agent_id_and_cache_counts(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    usage = Usage(input_tokens=2120, output_tokens=7, cached_input_tokens=1800, cache_write_tokens=300)
    reply = LLMResponse(content="hi", model="m-2", id="resp-42", usage=usage, finish_reason="stop")
    agent = Agent.create(provider=mock(replies=[reply]), model="m", id="refunds-bot").build()
    instrument(agent, tp)
    await agent.run("hello")
    (chat,) = _spans(exporter, "chat")
    assert chat[o.GEN_AI_RESPONSE_ID] == "resp-42"
    assert chat[o.GEN_AI_RESPONSE_MODEL] == "m-2"
    assert (chat[o.GEN_AI_USAGE_INPUT_TOKENS], chat[o.GEN_AI_USAGE_OUTPUT_TOKENS]) == (2120, 7)
    assert chat[o.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1800
    assert chat[o.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 300
    (root,) = _spans(exporter, "invoke_agent")
    assert root[o.GEN_AI_AGENT_ID] == "refunds-bot"
    assert root[o.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1800  # the turn's total
    assert o.GEN_AI_RESPONSE_ID not in root


async def test_no_id_and_no_cache_leave_the_attributes_out(tp: TracerProvider, exporter: InMemorySpanExporter) -> None:
    agent = Agent.create(provider=mock(replies=[LLMResponse(content="hi")]), model="m").build()
    instrument(agent, tp)
    await agent.run("hello")
    (chat,) = _spans(exporter, "chat")
    absent = {o.GEN_AI_RESPONSE_ID, o.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, o.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS}
    assert not absent & set(chat)
    (root,) = _spans(exporter, "invoke_agent")
    assert root[o.GEN_AI_AGENT_ID] == "agent"  # Agent.id without Agent.create(id=...)


async def test_an_anthropic_reply_from_the_sdk_types_reaches_the_chat_span(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    usage = {
        "input_tokens": 20,
        "output_tokens": 7,
        "cache_read_input_tokens": 1800,
        "cache_creation_input_tokens": 300,
    }
    raw = anthropic_message("msg_01XyZ", "claude-sonnet-4-5-20250929", usage)
    server = FakeServer(raw_reply(raw, content_type="application/json"))
    provider = anthropic("sk-ant-test-key-000000", "claude-sonnet-4-5", transport=server.transport)
    agent = Agent.create(provider=provider, model="claude-sonnet-4-5").build()
    instrument(agent, tp)
    await agent.run("hello")
    (chat,) = _spans(exporter, "chat")
    assert chat[o.GEN_AI_PROVIDER_NAME] == "anthropic"
    assert chat[o.GEN_AI_RESPONSE_ID] == "msg_01XyZ"
    assert chat[o.GEN_AI_RESPONSE_MODEL] == "claude-sonnet-4-5-20250929"
    assert chat[o.GEN_AI_USAGE_INPUT_TOKENS] == 2120  # the input total, cached parts included
    assert chat[o.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1800
    assert chat[o.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 300


async def test_a_bedrock_reply_names_no_response_model_and_its_cache_counts_reach_the_span(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    usage = {"inputTokens": 12, "outputTokens": 5, "totalTokens": 2017}
    usage.update({"cacheReadInputTokens": 1500, "cacheWriteInputTokens": 500})
    server = FakeServer(raw_reply(json.dumps(converse_output(usage)), content_type="application/json"))
    provider = bedrock("anthropic.claude-x", region="us-east-1", api_key="k", transport=server.transport)
    agent = Agent.create(provider=provider, model="anthropic.claude-x").build()
    instrument(agent, tp)
    await agent.run("hello")
    (chat,) = _spans(exporter, "chat")
    assert chat[o.GEN_AI_PROVIDER_NAME] == "aws.bedrock" and chat[o.GEN_AI_REQUEST_MODEL] == "anthropic.claude-x"
    assert o.GEN_AI_RESPONSE_MODEL not in chat and o.GEN_AI_RESPONSE_ID not in chat  # Converse names neither
    assert chat[o.GEN_AI_USAGE_INPUT_TOKENS] == 2012
    assert chat[o.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1500
    assert chat[o.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 500


async def test_chat_spans_carry_system_instructions_and_input_messages(
    tp: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    rec = Recorder()
    builder = Agent.create(provider=scripted(rec, lookup_then_answer()), model="m-1", record_system_prompt=True)
    agent = builder.system("You check customers.").tool(lookup_tool(rec)).redact(keys=["ssn"]).build()
    instrument(agent, tp, capture_content=True)
    await agent.run("Is the customer on file active?")
    first, second = _spans(exporter, "chat")
    system = rec.requests[0].system_prompt
    assert "You check customers." in system
    assert json.loads(first[o.GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": system}]
    user = {"role": "user", "parts": [{"type": "text", "content": "Is the customer on file active?"}]}
    assert json.loads(first[o.GEN_AI_INPUT_MESSAGES]) == [user]
    sent = json.loads(second[o.GEN_AI_INPUT_MESSAGES])
    assert sent[0] == user
    call = {"type": "tool_call", "id": "call-1", "name": "lookup", "arguments": {"ssn": "[REDACTED]"}}
    assert sent[1] == {"role": "assistant", "parts": [call]}
    assert sent[2]["role"] == "tool" and len(sent) == 3
    (response,) = sent[2]["parts"]
    assert (response["type"], response["id"]) == ("tool_call_response", "call-1")
    assert json.loads(response["response"])["status"] == "active"
    text = json.dumps([first, second])
    assert SECRET not in text and SECRET[:12] not in text  # re-redacted like every captured content


@pytest.mark.parametrize(("record", "capture"), [(False, True), (True, False)], ids=["not-recorded", "no-capture"])
async def test_chat_spans_carry_no_input_unless_recorded_and_captured(
    tp: TracerProvider, exporter: InMemorySpanExporter, record: bool, capture: bool
) -> None:
    agent = lookup_agent(Recorder(), record_system_prompt=record)
    instrument(agent, tp, capture_content=capture)
    await agent.run("Is the customer on file active?")
    chats = _spans(exporter, "chat")
    assert len(chats) == 2
    for chat in chats:
        assert o.GEN_AI_INPUT_MESSAGES not in chat and o.GEN_AI_SYSTEM_INSTRUCTIONS not in chat
        assert (o.GEN_AI_OUTPUT_MESSAGES in chat) is capture


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", 3, None])},
        optional={
            "content": st.one_of(st.text(max_size=20), st.integers(), st.none()),
            "tool_call_id": st.one_of(st.text(max_size=8), st.none()),
            "tool_calls": st.one_of(
                st.lists(st.one_of(st.dictionaries(st.sampled_from(["id", "name", "args"]), st.text()), st.text())),
                st.text(max_size=5),
            ),
        },
    )
)
def test_any_sent_message_maps_to_a_role_and_parts(message: dict[str, Any]) -> None:
    mapped = o._chat_message(message)
    assert mapped["role"] in ("user", "assistant", "tool")
    assert isinstance(mapped["parts"], list)
    assert all(part["type"] in ("text", "tool_call", "tool_call_response") for part in mapped["parts"])
    json.dumps(mapped)
