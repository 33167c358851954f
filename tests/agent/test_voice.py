"""Viewer surfaces (R004-134) as they apply to our reports: app_name is the actor in narration, commentary templates
give third-person lines per event, thinking templates first-person status; both spread over the bundled English;
the HTML report names the agent and shows what it did."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.agent import Voice
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.agent.voice import DEFAULT_APP_NAME, DEFAULT_COMMENTARY, DEFAULT_THINKING
from agentfootprint.events import AgentEvent
from agentfootprint.explain import backtrack, report_html
from agentfootprint.providers import mock
from tests.agent.conftest import lookup_order, refund_respond


def support_agent(**voice: Any) -> Agent:
    builder = Agent.create(provider=mock(respond=refund_respond), model="mock-1").tool(lookup_order).keep_events()
    if "app_name" in voice:
        builder = builder.app_name(voice["app_name"])
    if "commentary" in voice:
        builder = builder.commentary_templates(voice["commentary"])
    if "thinking" in voice:
        builder = builder.thinking_templates(voice["thinking"])
    return builder.build()


async def test_R004_134_defaults_name_the_agent_chatbot_and_narrate_in_english() -> None:
    """R004-134: appName defaults to 'Chatbot'; commentary/thinking templates default to the bundled English."""
    agent = support_agent()
    assert agent.voice == Voice() and agent.voice.app_name == DEFAULT_APP_NAME == "Chatbot"
    assert agent.voice.commentary_templates == DEFAULT_COMMENTARY
    assert agent.voice.thinking_templates == DEFAULT_THINKING
    result = await agent.run("Can I get a refund for order 1042?")
    lines = agent.commentary()
    assert lines[0] == "Chatbot was asked: Can I get a refund for order 1042?"
    assert lines[1:4] == [
        "Chatbot called the model mock-1 (iteration 1).",
        "Chatbot called the tool lookup_order.",
        "The tool lookup_order answered.",
    ]
    assert lines[-1] == f"Chatbot answered: {result.answer}"


async def test_R004_134_app_name_and_templates_spread_over_the_defaults() -> None:
    """R004-134: the consumer's templates override by event type; what they do not name falls back."""
    agent = support_agent(
        app_name="Asistente",
        commentary={"stream.tool_start": "{{app_name}} usó {{name}}.", "agentfootprint.stream.llm_start": "IA…"},
        thinking={"stream.llm_start": "Pensando…"},
    )
    await agent.run("Can I get a refund for order 1042?")
    lines = agent.commentary()
    assert lines[:3] == [
        "Asistente was asked: Can I get a refund for order 1042?",
        "IA…",
        "Asistente usó lookup_order.",
    ]
    assert agent.voice.commentary_templates["stream.tool_end"] == DEFAULT_COMMENTARY["stream.tool_end"]
    statuses = [agent.voice.thinking(e) for e in agent.last_events()]
    shown = [s for s in statuses if s is not None]
    assert shown[:3] == ["Reading your message…", "Pensando…", "Using lookup_order…"]


async def test_R004_134_the_report_names_the_agent_and_shows_what_it_did() -> None:
    agent = support_agent(app_name="Support Bot")
    await agent.run("Can I get a refund for order 1042?")
    page = report_html(backtrack(agent), app_name=agent.voice.app_name, commentary=agent.commentary())
    assert "<title>Why did Support Bot answer this?</title>" in page
    assert "<h2>What Support Bot did</h2>" in page and "<li>Support Bot called the tool lookup_order.</li>" in page
    plain = report_html(backtrack(agent))
    assert "<title>Why did the agent answer this?</title>" in plain and "What the agent did" not in plain


async def test_commentary_of_a_redacted_run_carries_the_placeholder_never_the_value() -> None:
    agent = (
        Agent.create(provider=mock(reply="Noted."), model="m")
        .redact(patterns=[r"\d{3}-\d{2}-\d{4}"])
        .keep_events()
        .build()
    )
    await agent.run("My SSN is 123-45-6789")
    assert all("123-45-6789" not in line for line in agent.commentary())
    assert agent.commentary()[0].startswith("Chatbot was asked: My SSN is ")


def test_a_template_naming_a_missing_or_structured_value_renders_it_empty() -> None:
    voice = Voice(commentary_templates={"stream.tool_start": "{{app_name}}: {{args}}|{{nope}}|{{ name }}"})
    event = AgentEvent(type="agentfootprint.stream.tool_start", payload={"name": "t\nx", "args": {"a": 1}})
    assert voice.commentary(event) == "Chatbot: ||t x"
    assert voice.commentary(AgentEvent(type="agentfootprint.stream.token", payload={"text": "x"})) is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.app_name(""), "app_name must be a non-empty str of at most 100 characters"),
        (lambda b: b.app_name("x" * 101), "app_name must be a non-empty str of at most 100 characters"),
        (lambda b: b.app_name(7), "app_name must be a non-empty str of at most 100 characters"),
        (lambda b: b.commentary_templates(["x"]), "commentary_templates must be a dict of event type -> template"),
        (lambda b: b.commentary_templates({"no.such_event": "x"}), "commentary_templates has a key that is not"),
        (lambda b: b.thinking_templates({"stream.llm_start": 3}), "thinking_templates templates must be str"),
        (lambda b: b.thinking_templates({"stream.llm_start": "x" * 501}), "thinking_templates templates must be str"),
    ],
)
def test_bad_voice_options_are_refused_by_name_without_quoting(call: Any, message: str) -> None:
    with pytest.raises(AgentBuildError) as err:
        call(Agent.create(provider=mock(reply="x")))
    assert str(err.value).startswith(message) and "no.such_event" not in str(err.value)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300), st.dictionaries(st.text(max_size=10), st.text(max_size=200), max_size=5))
def test_property_rendering_stays_bounded_whatever_the_payload(template: str, payload: dict[str, str]) -> None:
    voice = Voice(thinking_templates={"stream.llm_start": template})
    line = voice.thinking(AgentEvent(type="agentfootprint.stream.llm_start", payload=payload))
    assert line is not None and len(line) <= len(template) + 200 * template.count("{{")
