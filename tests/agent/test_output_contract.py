"""Seed 004's output contract: parse_output (R004-96), the 3-tier fallback (R004-97), output_contract_unmet()
(R004-101) and enforcement in the loop (R004-102)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import (
    Agent,
    AgentBuildError,
    AgentFootprintError,
    NoOutputSchemaError,
    OutputContractUnmet,
    OutputSchemaError,
    OutputStrategyUnsupportedError,
    define_tool,
)
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock, with_fallback
from agentfootprint.providers.anthropic_api import build_body as anthropic_body
from agentfootprint.providers.base import BaseProvider
from agentfootprint.providers.bedrock_api import build_body as bedrock_body
from agentfootprint.providers.gemini_api import build_body as gemini_body
from agentfootprint.providers.openai_compat import build_body as openai_body


class Refund(BaseModel):
    amount: int
    reason: str


GOOD = '{"amount": 30, "reason": "late"}'
SECRET = "zebra-7731-secret"


def typed(provider: Any, **kw: Any) -> Agent:
    fallback = kw.pop("fallback", None)
    b = Agent.create(provider=provider, model="m").output_schema(Refund, **kw)
    if fallback is not None:
        b = b.output_fallback(*fallback[0], **fallback[1])
    return b.build()


# -- R004-96: parse_output ---------------------------------------------------------------------------------------
def test_r004_96_parse_output_returns_the_validated_model() -> None:
    agent = typed(mock(reply=GOOD))
    assert agent.parse_output(GOOD) == Refund(amount=30, reason="late")
    assert agent.parse_output("```json\n" + GOOD + "\n```") == Refund(amount=30, reason="late")


@pytest.mark.parametrize(
    ("raw", "stage", "path"),
    [
        (f"not json {SECRET}", "json-parse", "(root)"),
        ('{"amount": "' + SECRET + '", "reason": "x"}', "schema-validate", "amount"),
        ('{"amount": 3}', "schema-validate", "reason"),
    ],
)
def test_r004_96_output_schema_error_keeps_the_raw_output(raw: str, stage: str, path: str) -> None:
    agent = typed(mock(reply=GOOD))
    with pytest.raises(OutputSchemaError) as info:
        agent.parse_output(raw)
    err = info.value
    assert err.raw_output == raw
    assert err.stage == stage
    assert err.code == "ERR_OUTPUT_SCHEMA"
    assert err.issues[0]["path"] == path
    assert SECRET not in str(err)  # the raw output is kept on the error, never quoted by it


def test_r004_96_without_a_schema_the_error_is_plain_not_a_schema_error() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    with pytest.raises(NoOutputSchemaError) as info:
        agent.parse_output(GOOD)
    assert not isinstance(info.value, OutputSchemaError)
    assert info.value.code == "ERR_NO_OUTPUT_SCHEMA" and info.value.door == "Agent.parse_output"
    with pytest.raises(NoOutputSchemaError):
        agent.parse_output_async_sync(GOOD)


async def test_r004_96_parse_output_async_without_fallback_behaves_like_parse_output() -> None:
    agent = typed(mock(reply=GOOD))
    assert await agent.parse_output_async(GOOD) == Refund(amount=30, reason="late")
    with pytest.raises(OutputSchemaError) as info:
        await agent.parse_output_async("nope")
    assert info.value.raw_output == "nope"


@pytest.mark.parametrize("hostile", [None, 42, b"{}", ["a"], "[" * 100_000, "{" * 5000 + "}" * 5000, "\x00\ud800"])
def test_r004_96_hostile_input_is_a_schema_error_never_a_crash(hostile: Any) -> None:
    agent = typed(mock(reply=GOOD))
    with pytest.raises(OutputSchemaError) as info:
        agent.parse_output(hostile)
    assert len(str(info.value)) < 400


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(amount=st.integers(min_value=-(10**12), max_value=10**12), reason=st.text(max_size=50))
def test_r004_96_property_any_valid_refund_round_trips(amount: int, reason: str) -> None:
    agent = typed(mock(reply=GOOD))
    value = Refund(amount=amount, reason=reason)
    assert agent.parse_output(value.model_dump_json()) == value


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80).filter(lambda t: not t.strip().startswith(("{", "[", "`"))))
def test_r004_96_property_text_that_is_no_refund_keeps_the_raw_and_never_echoes_it(text: str) -> None:
    agent = typed(mock(reply=GOOD))
    try:
        agent.parse_output(text)
    except OutputSchemaError as err:
        assert err.raw_output == text
        if len(text) >= 8:
            assert text not in str(err)
    else:  # a bare JSON scalar can never be a Refund object
        raise AssertionError("a non-object answer passed the schema")


# -- R004-97: primary -> fallback -> canned ----------------------------------------------------------------------
async def test_r004_97_primary_tier_wins_when_the_answer_fits() -> None:
    calls: list[Any] = []
    agent = typed(mock(reply=GOOD), fallback=((lambda e, r: calls.append(r),), {}))
    assert await agent.run_typed("refund?") == Refund(amount=30, reason="late")
    assert calls == []


@pytest.mark.parametrize(
    "produce",
    [
        lambda e, r: {"amount": 0, "reason": "manual review"},
        lambda e, r: Refund(amount=0, reason="manual review"),
        lambda e, r: '{"amount": 0, "reason": "manual review"}',
    ],
)
async def test_r004_97_fallback_tier_value_is_validated_and_returned(produce: Any) -> None:
    seen: list[tuple[str, str]] = []

    def fallback(err: OutputSchemaError, raw: str) -> Any:
        seen.append((err.stage, raw))
        return produce(err, raw)

    agent = typed(mock(reply="sorry, prose"), fallback=((fallback,), {"canned": {"amount": -1, "reason": "canned"}}))
    assert await agent.run_typed("refund?") == Refund(amount=0, reason="manual review")
    assert seen == [("json-parse", "sorry, prose")]


async def test_r004_97_async_fallback_is_awaited() -> None:
    async def fallback(err: OutputSchemaError, raw: str) -> dict[str, Any]:
        return {"amount": 1, "reason": "async"}

    agent = typed(mock(reply="prose"), fallback=((fallback,), {}))
    assert await agent.parse_output_async("prose") == Refund(amount=1, reason="async")


@pytest.mark.parametrize(
    "fallback",
    [
        lambda e, r: (_ for _ in ()).throw(RuntimeError("fallback down")),
        lambda e, r: {"amount": "not a number", "reason": 3},
        lambda e, r: "still prose",
    ],
)
async def test_r004_97_canned_tier_when_the_fallback_fails(fallback: Any) -> None:
    events: list[str] = []
    agent = typed(mock(reply="prose"), fallback=((fallback,), {"canned": {"amount": 0, "reason": "retry later"}}))
    agent.on("agentfootprint.resilience.*", lambda e: events.append(e.type))
    got = await agent.run_typed("refund?")
    assert got == Refund(amount=0, reason="retry later")
    assert events == [
        "agentfootprint.resilience.output_fallback_triggered",
        "agentfootprint.resilience.output_canned_used",
    ]
    again = await agent.parse_output_async("prose")
    assert again == got and again is not got  # a fresh copy: a caller mutating one never changes the net


async def test_r004_97_without_canned_the_fallback_error_propagates() -> None:
    def fallback(err: OutputSchemaError, raw: str) -> Any:
        raise LookupError("no human available")

    agent = typed(mock(reply="prose"), fallback=((fallback,), {}))
    with pytest.raises(LookupError):
        await agent.run_typed("refund?")


def test_r004_97_canned_is_validated_at_build_and_needs_a_schema() -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").output_schema(Refund).output_fallback(
            canned={"amount": "many"}
        ).build()
    assert info.value.code == "ERR_OUTPUT_FALLBACK" and "many" not in str(info.value)
    with pytest.raises(AgentBuildError) as info2:
        Agent.create(provider=mock(reply="x"), model="m").output_fallback(canned={"amount": 1}).build()
    assert info2.value.code == "ERR_OUTPUT_FALLBACK"
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").output_schema(Refund).output_fallback().build()
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").output_schema(Refund).output_fallback("nope").build()


def test_r004_97_either_call_order_works() -> None:
    agent = (
        Agent.create(provider=mock(reply="x"), model="m")
        .output_fallback(canned={"amount": 0, "reason": "c"})
        .output_schema(Refund)
        .build()
    )
    assert agent.parse_output_async_sync("x") == Refund(amount=0, reason="c")


@settings(max_examples=40, deadline=None)
@given(
    raw=st.text(max_size=60),
    behaviour=st.sampled_from(["raise", "invalid", "none", "prose"]),
)
def test_r004_97_property_the_canned_tier_never_raises(raw: str, behaviour: str) -> None:
    def fallback(err: OutputSchemaError, r: str) -> Any:
        if behaviour == "raise":
            raise ValueError("x")
        return {"invalid": {"amount": []}, "none": None, "prose": r}[behaviour]

    agent = typed(mock(reply=GOOD), fallback=((fallback,), {"canned": {"amount": 0, "reason": "c"}}))
    got = agent.parse_output_async_sync(raw)
    assert isinstance(got, Refund)


# -- R004-101: output_contract_unmet() ---------------------------------------------------------------------------
async def test_r004_101_none_before_a_run_without_a_schema_and_after_a_pass() -> None:
    agent = typed(mock(reply=GOOD))
    assert agent.output_contract_unmet() is None
    await agent.run("refund?")
    assert agent.output_contract_unmet() is None
    plain = Agent.create(provider=mock(reply="prose"), model="m").build()
    await plain.run("refund?")
    assert plain.output_contract_unmet() is None


async def test_r004_101_set_with_zero_retries_and_run_still_returns_the_string() -> None:
    provider = mock(reply='{"amount": "' + SECRET + '"}')
    agent = typed(provider)
    result = await agent.run("refund?")
    assert result.answer == '{"amount": "' + SECRET + '"}'  # run() returns the model's string untouched
    unmet = agent.output_contract_unmet()
    assert isinstance(unmet, OutputContractUnmet)
    assert (unmet.stage, unmet.path, unmet.attempts, unmet.retries_spent) == ("schema-validate", "amount", 1, 0)
    assert unmet.fallback_configured is False and unmet.broken_by is None
    assert "amount" in unmet.error and "reason" in unmet.error and SECRET not in unmet.error
    assert provider.calls == 1
    assert agent.last_snapshot() is not None
    assert agent.last_snapshot().state["output_contract_unmet"]["attempts"] == 1  # type: ignore[union-attr]


async def test_r004_101_set_after_retries_are_exhausted_and_cleared_by_a_passing_run() -> None:
    provider = mock(replies=["prose", "more prose", "still prose", GOOD, GOOD])
    agent = typed(provider, retries=2, fallback=((lambda e, r: None,), {}))
    await agent.run("refund?")
    unmet = agent.output_contract_unmet()
    assert unmet is not None
    assert (unmet.stage, unmet.attempts, unmet.retries_spent, unmet.fallback_configured) == ("json-parse", 3, 2, True)
    await agent.run("again?")
    assert agent.output_contract_unmet() is None


async def test_r004_101_broken_by_names_the_rewrite_that_broke_a_good_answer() -> None:
    provider = mock(replies=[GOOD, GOOD])
    agent = (
        Agent.create(provider=provider, model="m")
        .output_schema(Refund, retries=3)
        .message_middleware(lambda message, ctx: message + " (reviewed)", name="stamp", phase="output")
        .build()
    )
    await agent.run("refund?")
    unmet = agent.output_contract_unmet()
    assert unmet is not None and unmet.broken_by == "message_middleware"
    assert unmet.retries_spent == 0 and provider.calls == 1  # a deterministic rewrite is not re-asked


async def test_r004_101_event_on_every_unmet_run() -> None:
    agent = typed(mock(reply="prose"))
    seen: list[dict[str, Any]] = []
    agent.on("agentfootprint.agent.output_contract_unmet", lambda e: seen.append(dict(e.payload)))
    await agent.run("refund?")
    assert seen == [
        {
            "stage": "json-parse",
            "path": "(root)",
            "attempts": 1,
            "retries_spent": 0,
            "fallback_configured": False,
            "broken_by": None,
        }
    ]


# -- R004-102: enforcement in the loop ---------------------------------------------------------------------------
async def test_r004_102_retries_re_ask_in_the_loop_with_the_validator_report() -> None:
    provider = mock(replies=['{"amount": "lots"}', GOOD])
    agent = typed(provider, retries=1)
    result = await agent.run("refund?")
    assert result.answer == GOOD and provider.calls == 2
    correction = provider.requests[1].messages[-1]
    assert correction.role == "user" and correction.content.startswith("[schema check")
    assert "amount" in correction.content and "lots" not in correction.content
    assert provider.requests[1].messages[-2].content == '{"amount": "lots"}'  # the failed answer is shown back
    rows = agent.last_snapshot().state["output_attempts"]  # type: ignore[union-attr]
    assert [r["outcome"] for r in rows] == ["retried", "passed"]
    assert rows[0]["path"] == "amount" and len(rows[0]["corrective_message_hash"]) == 16
    assert agent.output_contract_unmet() is None
    assert result.usage.input_tokens > 0


async def test_r004_102_tool_forced_answers_through_the_schema_tool() -> None:
    def respond(req: LLMRequest) -> LLMResponse:
        assert req.tool_choice == "respond_with_schema"
        assert [t.name for t in req.tools] == ["respond_with_schema"]
        assert req.tools[0].input_schema["required"] == ["amount", "reason"]
        return LLMResponse(
            tool_calls=[ToolCall(id="c1", name="respond_with_schema", args={"amount": 5, "reason": "r"})]
        )

    agent = typed(mock(respond=respond), strategy="tool-forced")
    assert await agent.run_typed("refund?") == Refund(amount=5, reason="r")
    assert json.loads((await agent.run("again")).answer or "") == {"amount": 5, "reason": "r"}


def test_r004_102_tool_forced_on_an_agent_with_tools_is_refused_at_build() -> None:
    lookup = define_tool(name="lookup", description="d", input_schema={"type": "object"}, execute=lambda a, c: "x")
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply=GOOD), model="m").tool(lookup).output_schema(
            Refund, strategy="tool-forced"
        ).build()
    assert info.value.code == "ERR_OUTPUT_STRATEGY_TOOLS"


async def test_r004_102_native_puts_the_json_schema_on_the_wire() -> None:
    provider = mock(reply=GOOD)
    agent = typed(provider, strategy="native")
    await agent.run("refund?")
    fmt = provider.requests[0].response_format
    assert fmt is not None and fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Refund" and fmt["json_schema"]["schema"]["required"] == ["amount", "reason"]


class _Plain(BaseProvider):
    name = "plain"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        return LLMResponse(content=GOOD)


@pytest.mark.parametrize("strategy", ["tool-forced", "native"])
async def test_r004_102_a_strategy_the_provider_cannot_carry_is_refused_before_any_call(strategy: str) -> None:
    provider = _Plain()
    agent = typed(provider, strategy=strategy)
    started: list[str] = []
    agent.on("agentfootprint.agent.turn_start", lambda e: started.append(e.type))
    with pytest.raises(OutputStrategyUnsupportedError) as info:
        await agent.run("refund?")
    assert (info.value.code, info.value.strategy, info.value.provider) == (
        "ERR_OUTPUT_STRATEGY_UNSUPPORTED",
        strategy,
        "plain",
    )
    assert provider.calls == 0 and started == []
    assert isinstance(info.value, AgentFootprintError)


async def test_r004_102_a_wrapper_carries_only_what_every_provider_it_wraps_carries() -> None:
    agent = typed(with_fallback(mock(reply=GOOD), _Plain()), strategy="tool-forced")
    with pytest.raises(OutputStrategyUnsupportedError):
        await agent.run("refund?")
    both = typed(with_fallback(mock(reply=GOOD), mock(reply=GOOD)), strategy="native")
    assert (await both.run("refund?")).answer == GOOD


@pytest.mark.parametrize(
    ("kw", "code"),
    [
        ({"retries": -1}, "ERR_OUTPUT_SCHEMA_BUILD"),
        ({"retries": 99}, "ERR_OUTPUT_SCHEMA_BUILD"),
        ({"retries": True}, "ERR_OUTPUT_SCHEMA_BUILD"),
        ({"strategy": "prose"}, "ERR_OUTPUT_SCHEMA_BUILD"),
    ],
)
def test_r004_102_bad_options_are_refused_by_name(kw: dict[str, Any], code: str) -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply=GOOD), model="m").output_schema(Refund, **kw)
    assert info.value.code == code


def test_r004_102_providers_put_the_forced_choice_in_their_own_dialect() -> None:
    tool = {"name": "respond_with_schema", "description": "", "input_schema": {"type": "object"}}
    req = LLMRequest(messages=[{"role": "user", "content": "q"}], tools=[tool], tool_choice="respond_with_schema")
    assert openai_body(req, "m", stream=False)["tool_choice"] == {
        "type": "function",
        "function": {"name": "respond_with_schema"},
    }
    assert anthropic_body(req, "m", 100, stream=False)["tool_choice"] == {"type": "tool", "name": "respond_with_schema"}
    assert bedrock_body(req)["toolConfig"]["toolChoice"] == {"tool": {"name": "respond_with_schema"}}
    assert gemini_body(req)["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY",
        "allowedFunctionNames": ["respond_with_schema"],
    }
    plain = LLMRequest(messages=[{"role": "user", "content": "q"}])
    assert "tool_choice" not in openai_body(plain, "m", stream=False)
    assert "tool_choice" not in anthropic_body(plain, "m", 100, stream=False)
