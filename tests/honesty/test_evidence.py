"""Names and numbers from evidence: scenarios per posture, properties of the value check, and what it never leaks."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.agent import AgentBuildError
from agentfootprint.honesty.evidence import (
    STATE_KEY,
    Evidence,
    UnsupportedValuesError,
    check_answer,
    extract_values,
)
from agentfootprint.providers import LLMRequest, mock
from tests.honesty.conftest import Calls, lookup_agent

INVENTED = "The refund for order A-1001 is $520, issued to Dana Reyes."
QUOTED = "The refund for order A-1001 is $480, issued to Dana Reyes."


# -- scenarios ----------------------------------------------------------------------------------------------------


async def test_an_invented_amount_is_flagged(calls: Calls) -> None:
    agent = lookup_agent(calls, INVENTED)
    result = await agent.run("How much is the refund for A-1001?")
    verdict = agent.unsupported_values()
    assert result.answer == INVENTED  # assist records, never changes the answer
    assert verdict is not None and [v.value for v in verdict.values] == ["$520"]
    assert verdict.values[0].kind == "amount" and verdict.posture == "assist" and not verdict.revised
    snap = agent.last_snapshot()
    assert snap is not None and snap.state[STATE_KEY]["values"][0]["value"] == "$520"  # committed state


async def test_a_quoted_amount_is_not_flagged(calls: Calls) -> None:
    agent = lookup_agent(calls, QUOTED)
    await agent.run("How much is the refund for A-1001?")
    assert agent.unsupported_values() is None
    snap = agent.last_snapshot()
    assert snap is not None and snap.state[STATE_KEY]["checked"] >= 3 and snap.state[STATE_KEY]["values"] == []


async def test_rails_refuses_and_returns_nothing(calls: Calls) -> None:
    agent = lookup_agent(calls, INVENTED, posture="rails")
    with pytest.raises(UnsupportedValuesError) as info:
        await agent.run("How much is the refund for A-1001?")
    err = info.value
    assert err.code == "ERR_UNSUPPORTED_VALUES" and err.values == ["$520"]
    assert isinstance(err, ValueError) and err.verdict is not None and err.verdict.refused
    assert agent.checkpoint() is None  # nothing became the conversation
    verdict = agent.unsupported_values()
    assert verdict is not None and verdict.refused
    snap = agent.last_snapshot()
    assert snap is not None and snap.state["answer"] == ""
    assert await agent.assessment() is None


async def test_rails_passes_a_grounded_answer(calls: Calls) -> None:
    agent = lookup_agent(calls, QUOTED, posture="rails")
    result = await agent.run("How much is the refund for A-1001?")
    assert result.answer == QUOTED and agent.unsupported_values() is None


async def test_guard_asks_once_and_takes_the_correction(calls: Calls) -> None:
    def final(req: LLMRequest) -> str:
        return QUOTED if "appear in no tool result" in req.messages[-1].content else INVENTED

    agent = lookup_agent(calls, final, posture="guard")
    result = await agent.run("How much is the refund for A-1001?")
    assert result.answer == QUOTED and agent.unsupported_values() is None
    asks = [r for r in calls.requests if "appear in no tool result" in r.messages[-1].content]
    assert len(asks) == 1 and "'$520'" in asks[0].messages[-1].content and asks[0].tools == []
    snap = agent.last_snapshot()
    assert snap is not None
    revision = snap.state["evidence_revision"]
    assert revision["original"] == INVENTED and revision["content"] == QUOTED and revision["unsupported_after"] == []
    assert snap.state[STATE_KEY]["asked_to_correct"] is True and snap.state[STATE_KEY]["initial"][0]["value"] == "$520"


async def test_guard_marks_values_that_survive_the_correction(calls: Calls) -> None:
    agent = lookup_agent(calls, INVENTED, posture="guard")
    result = await agent.run("How much is the refund for A-1001?")
    verdict = agent.unsupported_values()
    assert result.answer == INVENTED
    assert verdict is not None and verdict.revised and verdict.asked_to_correct
    assert [v.value for v in verdict.values] == ["$520"]
    assert sum("appear in no tool result" in r.messages[-1].content for r in calls.requests) == 1  # once, not twice


async def test_the_user_message_and_injected_facts_count_as_evidence(calls: Calls) -> None:
    from agentfootprint import define_fact

    agent = (
        Agent.create(provider=mock(reply="Per policy 30 days apply to Ticket T-77 for Maria Lopez."), model="m")
        .fact(define_fact(id="policy", data="Refunds are allowed within 30 days."))
        .names_and_numbers_from_evidence()
        .build()
    )
    await agent.run("Please check ticket T-77 for Maria Lopez")
    assert agent.unsupported_values() is None


async def test_without_the_gate_nothing_is_recorded(calls: Calls) -> None:
    agent = lookup_agent(calls, INVENTED, posture=None)
    await agent.run("How much?")
    snap = agent.last_snapshot()
    assert snap is not None and STATE_KEY not in snap.state and agent.unsupported_values() is None


def test_the_builder_refuses_an_unknown_posture() -> None:
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).names_and_numbers_from_evidence("lenient")  # type: ignore[arg-type]
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).names_and_numbers_from_evidence(allow=[""])


async def test_allowed_values_are_always_grounded(calls: Calls) -> None:
    agent = (
        Agent.create(provider=mock(reply="Thanks for contacting Acme Support."), model="m")
        .names_and_numbers_from_evidence(allow=["Acme Support"])
        .build()
    )
    await agent.run("hi")
    assert agent.unsupported_values() is None


def test_extract_values_finds_each_kind() -> None:
    text = "Dana Reyes paid $480.00 on 2024-03-05 for order A-1001; 3 items, March 5, 2024. However, Bob agreed."
    kinds = {(v.value, v.kind) for v in extract_values(text)}
    assert ("Dana Reyes", "name") in kinds and ("$480.00", "amount") in kinds and ("2024-03-05", "date") in kinds
    assert ("A-1001", "id") in kinds and ("3", "number") in kinds and ("March 5, 2024", "date") in kinds
    assert ("Bob", "name") in kinds and not any(v == "However" for v, _ in kinds)


def test_numbers_match_by_value_and_dates_by_day() -> None:
    evidence = Evidence(["total 1,250.00 dollars, due 2024-03-05"])
    assert check_answer("You owe $1,250 by March 5, 2024.", evidence) == (2, [])
    _, missing = check_answer("You owe $1,350 by March 6, 2024.", evidence)
    assert [m.value for m in missing] == ["$1,350", "March 6, 2024"]


# -- properties ---------------------------------------------------------------------------------------------------

_names = st.sampled_from(["Dana Reyes", "Maria Lopez", "Acme Corp", "Oslo"])
_amounts = st.integers(min_value=1, max_value=10**7)
_ids = st.from_regex(r"[A-Z]{2,4}-[0-9]{2,6}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(name=_names, amount=_amounts, ident=_ids)
def test_values_quoted_from_the_evidence_are_always_grounded(name: str, amount: int, ident: str) -> None:
    evidence = Evidence([f"record {ident}: customer {name}, balance {amount:,} USD"])
    answer = f"The balance of {name} on {ident} is ${amount:,}."
    checked, missing = check_answer(answer, evidence)
    assert missing == [] and checked >= 3


@settings(max_examples=60, deadline=None)
@given(amount=_amounts, delta=st.integers(min_value=1, max_value=1000))
def test_a_changed_number_is_always_flagged(amount: int, delta: int) -> None:
    evidence = Evidence([f"balance {amount}"])
    _, missing = check_answer(f"The balance is {amount + delta}.", evidence)
    assert [m.value for m in missing] == [str(amount + delta)]


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_extraction_never_raises_and_spans_point_into_the_text(text: str) -> None:
    for v in extract_values(text):
        assert text[v.start : v.start + len(v.value)] == v.value or v.kind == "name"


# -- security -----------------------------------------------------------------------------------------------------


async def test_rails_error_carries_no_redacted_value(calls: Calls) -> None:
    answer = "Your card 4111-2222-3333-4444 was charged $520."
    agent = (
        Agent.create(provider=mock(reply=answer), model="m")
        .redact(patterns=[r"\d{4}-\d{4}-\d{4}-\d{4}"])
        .names_and_numbers_from_evidence("rails")
        .build()
    )
    with pytest.raises(UnsupportedValuesError) as info:
        await agent.run("what happened?")
    carried = json.dumps([*info.value.values, str(info.value)])
    assert "4111" not in carried and "$520" in carried
    verdict = agent.unsupported_values()
    assert verdict is not None and "4111" not in verdict.model_dump_json()
    snap = agent.last_snapshot()
    assert snap is not None and "4111-2222" not in snap.model_dump_json()


def test_a_hostile_answer_is_checked_within_fixed_caps() -> None:
    hostile = ("A1-" * 20_000) + ("9" * 50_000) + (" Xy" * 20_000)
    values = extract_values(hostile)
    _, missing = check_answer(hostile, Evidence(["nothing here"] * 50))
    assert (len(values), len(missing)) == (2, 2)
    assert [v.value for v in extract_values("x " * 99_990 + " $999 ")] == ["$999"]
    assert extract_values("x " * 100_000 + " $999 ") == []  # nothing past the first 200,000 characters is scanned


async def test_the_correction_request_quotes_only_the_answer_values(calls: Calls) -> None:
    agent = lookup_agent(calls, INVENTED, posture="guard")
    await agent.run("How much?")
    ask = next(r for r in calls.requests if "appear in no tool result" in r.messages[-1].content)
    assert "'$520'" in ask.messages[-1].content and ask.messages[-2].content == INVENTED
