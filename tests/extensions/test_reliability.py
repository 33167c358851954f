"""Reliability rules around every model call, and the circuit breaker."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent
from agentfootprint.agent import AgentBuildError
from agentfootprint.extensions import CircuitBreaker, ReliabilityFailFastError, rule
from agentfootprint.extensions.reliability import ReliabilityProvider, classify_error
from agentfootprint.providers import LLMRequest, LLMResponse, ProviderServerError, mock


class Flaky:
    """Fails the first ``failures`` calls with a 503, then answers."""

    name = "flaky"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls <= self.failures:
            raise ProviderServerError("upstream 503", provider="flaky", status=503)
        return LLMResponse(content="recovered")


RETRY = rule(when=lambda s: s.error_kind == "5xx-transient" and s.attempt < 3, then="retry", kind="transient-retry")
GIVE_UP = rule(when=lambda s: s.error is not None, then="fail-fast", kind="unrecoverable")


async def test_R004_124_post_decide_retries_then_recovers() -> None:
    """R004-124: rules-based reliability (.reliability(pre_check=, post_decide=)) wraps every model call in
    retry / fallback / fail-fast."""
    provider = Flaky(2)
    events: list[str] = []
    agent = Agent.create(provider=provider).reliability(post_decide=[RETRY, GIVE_UP]).build()
    agent.on("reliability.*", lambda e: events.append(e.type.split(".")[-1]))
    result = await agent.run("hi")
    assert result.answer == "recovered" and provider.calls == 3
    rows = agent.last_snapshot().state["reliability_attempts"]  # type: ignore[union-attr]
    assert [(r["attempt"], r["error_kind"], r["decision"], r["rule"]) for r in rows] == [
        (1, "5xx-transient", "retry", "transient-retry"),
        (2, "5xx-transient", "retry", "transient-retry"),
        (3, "ok", "ok", None),
    ]
    assert events == ["retried", "retried", "recovered"]


async def test_R004_124_fail_fast_raises_a_typed_error_with_the_record() -> None:
    """R004-124: a fail-fast rule raises ReliabilityFailFastError naming the rule's kind; the record stays."""
    agent = Agent.create(provider=Flaky(9)).reliability(post_decide=[RETRY, GIVE_UP]).build()
    with pytest.raises(ReliabilityFailFastError) as info:
        await agent.run("hi")
    assert info.value.kind == "unrecoverable" and info.value.code == "ERR_RELIABILITY_FAIL_FAST"
    assert info.value.payload["attempt"] == 3 and info.value.payload["error_kind"] == "5xx-transient"
    assert agent.last_snapshot().commit_log[-1].failed is True  # type: ignore[union-attr]


async def test_R004_124_pre_check_fails_fast_before_any_call_and_fallback_repairs() -> None:
    """R004-124: pre_check can fail fast before the call; 'fallback' repairs; 'retry-other' fails over."""
    provider = Flaky(0)
    big = rule(when=lambda s: len(s.request.messages[-1].content) > 20, then="fail-fast", kind="prompt-too-big")
    agent = Agent.create(provider=provider).reliability(pre_check=[big]).build()
    with pytest.raises(ReliabilityFailFastError, match="prompt-too-big"):
        await agent.run("x" * 30)
    assert provider.calls == 0

    async def canned(request: LLMRequest, error: BaseException | None) -> LLMResponse:
        return LLMResponse(content=f"canned after {type(error).__name__}")

    fb = (
        Agent.create(provider=Flaky(5))
        .reliability(
            post_decide=[rule(when=lambda s: s.error is not None, then="fallback", kind="repair")], fallback=canned
        )
        .build()
    )
    assert (await fb.run("hi")).answer == "canned after ProviderServerError"

    other = (
        Agent.create(provider=Flaky(5))
        .reliability(
            post_decide=[
                rule(when=lambda s: s.error is not None and s.can_switch_provider, then="retry-other", kind="failover")
            ],
            providers=[ReliabilityProvider(name="backup", provider=mock(reply="from backup"))],
        )
        .build()
    )
    assert (await other.run("hi")).answer == "from backup"
    rows = other.last_snapshot().state["reliability_attempts"]  # type: ignore[union-attr]
    assert [r["provider"] for r in rows] == ["flaky", "backup"]


async def test_R004_124_the_circuit_breaker_opens_rejects_without_calling_and_closes_after_probes() -> None:
    """R004-124: the circuit breaker opens after consecutive failures; while open a call is rejected without
    reaching the provider (a resilience event); after the cooldown, probe successes close it."""
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=2, cooldown_s=10, half_open_successes=1, clock=lambda: now[0])
    provider = Flaky(2)
    agent = (
        Agent.create(provider=provider)
        .reliability(
            post_decide=[rule(when=lambda s: s.error is not None, then="fail-fast", kind="down")],
            circuit_breaker=breaker,
        )
        .build()
    )
    events: list[str] = []
    agent.on("reliability.*", lambda e: events.append(e.type.split(".")[-1]))
    for _ in range(3):
        with pytest.raises(ReliabilityFailFastError):
            await agent.run("hi")
    assert provider.calls == 2 and breaker.state_of("flaky") == "open"
    assert events == ["fail_fast", "circuit_opened", "fail_fast", "circuit_rejected", "fail_fast"]
    now[0] = 11.0
    assert (await agent.run("hi")).answer == "recovered"
    assert breaker.state_of("flaky") == "closed" and events[-1] == "circuit_closed"


def test_bad_rules_are_refused_at_build() -> None:
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).reliability(
            pre_check=[rule(when=lambda s: True, then="retry", kind="r")]
        )
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).reliability()
    with pytest.raises(ValueError, match="kind"):
        rule(when=lambda s: True, then="ok", kind="has spaces")
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).reliability(post_decide=[{"when": "nope", "then": "ok", "kind": "k"}])


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=100, max_value=700))
def test_property_classify_error_by_status(status: int) -> None:
    kind = classify_error(ProviderServerError("x", provider="p", status=status))
    expected: Any = "rate-limit" if status == 429 else ("5xx-transient" if 500 <= status < 600 else "unknown")
    assert kind == expected
