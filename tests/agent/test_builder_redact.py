"""``AgentBuilder.redact`` takes lists like the ``redact`` run option: a bare str is refused (it used to become one
key per letter), as is a pattern that does not compile (a typed refusal, never a raw ``re.error``), unquoted."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import AgentBuildError
from agentfootprint.providers import mock


@pytest.mark.parametrize(
    ("keys", "patterns"),
    [("card", ()), ((), r"\d{16}"), (["card", 5], ()), ([""], ()), ((), ["(unclosed-secret"]), ((), ["*bad"])],
    ids=["bare-key", "bare-pattern", "non-str-key", "empty-key", "unclosed-group", "nothing-to-repeat"],
)
def test_redact_refuses_what_it_cannot_use_with_a_typed_error_that_quotes_nothing(keys: Any, patterns: Any) -> None:
    with pytest.raises(AgentBuildError) as err:
        Agent.create(provider=mock(reply="x")).redact(keys=keys, patterns=patterns)
    assert err.value.code == "ERR_REDACT_BUILD" and "unclosed-secret" not in str(err.value)


async def test_a_listed_key_is_redacted_as_a_whole_name() -> None:
    pay = define_tool(
        name="pay",
        description="Pay with a card",
        input_schema={"type": "object", "properties": {"card": {"type": "string"}}},
        execute=lambda args, ctx: "paid",
    )
    calls = [{"tool_calls": [{"id": "p1", "name": "pay", "args": {"card": "4111-9999"}}]}, "done"]
    agent = Agent.create(provider=mock(replies=calls)).tool(pay).redact(keys=["card"]).build()
    result = await agent.run("pay the bill")
    assert result.answer == "done" and agent.config.redaction.keys == frozenset({"card"})
    assert "4111-9999" not in agent.last_snapshot().model_dump_json()  # type: ignore[union-attr]


@given(st.lists(st.text(alphabet="abcdefgh_", min_size=1, max_size=8), max_size=4))
def test_property_listed_keys_are_kept_whole(keys: list[str]) -> None:
    agent = Agent.create(provider=mock(reply="x")).redact(keys=keys).build()
    assert agent.config.redaction.keys == frozenset(keys)
