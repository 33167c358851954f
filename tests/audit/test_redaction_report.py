"""``agent.redaction_report()`` names what is redacted and never carries a value."""

from __future__ import annotations

import json

from agentfootprint import Agent
from agentfootprint.flow import RedactionPolicy
from agentfootprint.providers import mock
from tests.audit._agents import SECRET, Recorder, lookup_agent

CARD = "4111-2222-3333-4444"
CARD_PATTERN = r"\d{4}-\d{4}-\d{4}-\d{4}"


async def test_the_report_names_keys_and_never_the_values_redacted() -> None:
    agent = lookup_agent(Recorder())
    before = agent.redaction_report()
    result = await agent.run(f"My SSN is {SECRET}; am I active?")
    assert result.status == "completed"
    report = agent.redaction_report()
    assert report == before
    assert report["keys"] == ["ssn"]
    text = json.dumps(report)  # plain JSON
    assert SECRET not in text and SECRET[:12] not in text
    assert "active" not in text


async def test_the_report_lists_patterns_not_what_they_matched() -> None:
    agent = (
        Agent.create(provider=mock(replies=[f"your card {CARD} is on file"]), model="m-1")
        .redact(keys=["ssn", "card"], patterns=[CARD_PATTERN])
        .build()
    )
    await agent.run(f"card {CARD}")
    report = agent.redaction_report()
    assert report["keys"] == ["card", "ssn"]
    assert report["patterns"] == [CARD_PATTERN]
    assert CARD not in json.dumps(report)
    assert all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in report.values())


async def test_a_per_run_policy_never_puts_its_values_in_the_report() -> None:
    rec = Recorder()
    agent = lookup_agent(rec)
    await agent.run("check", redact=RedactionPolicy.of(keys=["status"]))
    text = json.dumps(agent.redaction_report())
    assert SECRET not in text and "active" not in text


def test_an_agent_without_redaction_reports_nothing() -> None:
    agent = Agent.create(provider=mock(reply="ok"), model="m-1").build()
    assert agent.redaction_report() == {"keys": [], "patterns": []}
