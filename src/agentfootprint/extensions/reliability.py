"""Rules-based reliability around every model call: retry, fail over, fall back or fail fast, plus a breaker.

``AgentBuilder.reliability(pre_check=[...], post_decide=[...], circuit_breaker=CircuitBreaker(...))``. A rule is
``rule(when=fn(scope) -> bool, then=verb, kind="stable-id")``; the first rule that matches decides. ``pre_check``
verbs: ``continue`` / ``fail-fast``; ``post_decide`` verbs: ``ok`` / ``retry`` / ``retry-other`` / ``fallback`` /
``fail-fast``. When no post rule matches, a success is ``ok`` and an error is raised as it was. Every attempt is a
row under ``reliability_attempts``; ``reliability.*`` events report retries, recoveries, fail-fasts and the breaker.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentfootprint.agent import CallModel, Extension, RunContext
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import (
    ReliabilityCircuitClosed,
    ReliabilityCircuitOpened,
    ReliabilityCircuitRejected,
    ReliabilityFailFast,
    ReliabilityRecovered,
    ReliabilityRetried,
)
from agentfootprint.extensions._ledger import file_row
from agentfootprint.providers import LLMRequest, LLMResponse, Provider

__all__ = [
    "ATTEMPTS_KEY",
    "MAX_ATTEMPTS",
    "BreakerState",
    "CircuitBreaker",
    "CircuitOpenError",
    "ErrorKind",
    "Reliability",
    "ReliabilityFailFastError",
    "ReliabilityProvider",
    "ReliabilityRule",
    "ReliabilityScope",
    "classify_error",
    "rule",
]

ATTEMPTS_KEY = "reliability_attempts"
MAX_ATTEMPTS = 50
Verb = Literal["continue", "ok", "retry", "retry-other", "fallback", "fail-fast"]
ErrorKind = Literal["ok", "5xx-transient", "rate-limit", "circuit-open", "schema-fail", "unknown"]
_PRE: frozenset[str] = frozenset({"continue", "fail-fast"})
_POST: frozenset[str] = frozenset({"ok", "retry", "retry-other", "fallback", "fail-fast"})
_KIND = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")
_TRANSIENT = re.compile(r"ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN|timed? ?out|connection reset", re.I)


class CircuitOpenError(AgentFootprintError, RuntimeError):
    """The breaker for this provider is open: the call was refused without reaching the provider."""

    code = "ERR_CIRCUIT_OPEN"

    def __init__(self, provider: str, retry_after: float) -> None:
        super().__init__(f"circuit breaker for provider '{provider[:80]}' is open; failing fast")
        self.provider = provider[:80]
        self.retry_after = retry_after


class ReliabilityFailFastError(AgentFootprintError, RuntimeError):
    """A reliability rule chose ``fail-fast``: ``kind`` is the rule's id, ``payload`` the facts it decided on."""

    code = "ERR_RELIABILITY_FAIL_FAST"

    def __init__(self, kind: str, reason: str, payload: dict[str, Any]) -> None:
        super().__init__(f"reliability fail-fast ({kind}): {reason[:300]}")
        self.kind = kind
        self.reason = reason[:300]
        self.payload = payload


@dataclass(frozen=True, slots=True)
class ReliabilityRule:
    """``when(scope)`` → ``then``; ``kind`` is a stable id (the fail-fast error's ``kind``), ``label`` prose."""

    when: Callable[[ReliabilityScope], bool]
    then: Verb
    kind: str
    label: str | None = None


def rule(
    *, when: Callable[[ReliabilityScope], bool], then: Verb, kind: str, label: str | None = None
) -> ReliabilityRule:
    """A reliability rule (validated: a callable ``when``, a known verb, a stable ``kind``)."""
    if not callable(when):
        raise TypeError("a reliability rule needs a callable when(scope) -> bool")
    if then not in _PRE | _POST:
        raise ValueError(
            "a reliability rule's then must be one of: continue, ok, retry, retry-other, fallback, fail-fast"
        )
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise ValueError("a reliability rule's kind must be 1-80 characters of letters, digits, '_', '.', ':', '-'")
    return ReliabilityRule(when=when, then=then, kind=kind, label=label)


def _coerce(rules: Iterable[Any], allowed: frozenset[str], phase: str) -> tuple[ReliabilityRule, ...]:
    out: list[ReliabilityRule] = []
    for r in rules:
        if isinstance(r, Mapping):
            r = rule(when=r.get("when"), then=r.get("then"), kind=r.get("kind"), label=r.get("label"))  # type: ignore[arg-type]
        if not isinstance(r, ReliabilityRule):
            raise TypeError(f"{phase} takes rule(...) or dicts with when/then/kind, got {type(r).__name__}")
        if r.then not in allowed:
            raise ValueError(f"{phase} rules cannot use '{r.then}' (allowed: {', '.join(sorted(allowed))})")
        out.append(r)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ReliabilityProvider:
    """A failover the ``retry-other`` verb moves to (after the agent's own provider)."""

    name: str
    provider: Provider
    model: str | None = None


@dataclass(slots=True)
class BreakerState:
    """One provider's breaker: ``closed`` → ``open`` after failures → ``half-open`` after the cooldown."""

    state: Literal["closed", "open", "half-open"] = "closed"
    failures: int = 0
    successes: int = 0
    opened_at: float = 0.0


@dataclass
class CircuitBreaker:
    """Per-provider breaker settings; its state lives on the agent instance across runs."""

    failure_threshold: int = 5
    cooldown_s: float = 30.0
    half_open_successes: int = 2
    should_count: Callable[[BaseException], bool] | None = None
    clock: Callable[[], float] = time.monotonic
    states: dict[str, BreakerState] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.failure_threshold < 1 or self.half_open_successes < 1 or self.cooldown_s < 0:
            raise ValueError("circuit breaker: thresholds must be >= 1 and the cooldown >= 0")

    def admit(self, provider: str) -> bool:
        """Whether a call to ``provider`` may go out now (an open breaker past its cooldown goes half-open)."""
        st = self.states.get(provider)
        if st is None or st.state != "open":
            return True
        if self.clock() - st.opened_at >= self.cooldown_s:
            st.state, st.successes = "half-open", 0
            return True
        return False

    def retry_after(self, provider: str) -> float:
        st = self.states.get(provider)
        return 0.0 if st is None else st.opened_at + self.cooldown_s

    def success(self, provider: str) -> bool:
        """Record a success; True when it closed a half-open breaker."""
        st = self.states.setdefault(provider, BreakerState())
        if st.state == "half-open":
            st.successes += 1
            if st.successes >= self.half_open_successes:
                self.states[provider] = BreakerState()
                return True
        elif st.failures:
            st.failures = 0
        return False

    def failure(self, provider: str, error: BaseException) -> bool:
        """Record a failure; True when it opened the breaker."""
        if self.should_count is not None and not self.should_count(error):
            return False
        st = self.states.setdefault(provider, BreakerState())
        st.failures += 1
        if st.state == "half-open" or (st.state == "closed" and st.failures >= self.failure_threshold):
            st.state, st.opened_at, st.successes = "open", self.clock(), 0
            return True
        return False

    def state_of(self, provider: str) -> str:
        st = self.states.get(provider)
        return "closed" if st is None else st.state


def classify_error(error: BaseException | None) -> ErrorKind:
    """A coarse kind for rules to match on: circuit-open, rate-limit, 5xx-transient, schema-fail or unknown."""
    if error is None:
        return "ok"
    code = getattr(error, "code", None)
    if code == CircuitOpenError.code:
        return "circuit-open"
    if code == "ERR_OUTPUT_SCHEMA":
        return "schema-fail"
    status = getattr(error, "status", None) or getattr(error, "status_code", None)
    if isinstance(status, int):
        if status == 429:
            return "rate-limit"
        if 500 <= status < 600:
            return "5xx-transient"
    if code in ("ERR_PROVIDER_CONNECTION", "ERR_PROVIDER_TIMEOUT") or isinstance(error, TimeoutError | ConnectionError):
        return "5xx-transient"
    text = str(error)
    if _TRANSIENT.search(text):
        return "5xx-transient"
    if re.search(r"rate.?limit|too many requests", text, re.I):
        return "rate-limit"
    return "unknown"


@dataclass
class ReliabilityScope:
    """What rules read: the request, the attempt, the provider, the last response or error and its kind."""

    request: LLMRequest
    providers_count: int
    has_fallback: bool
    attempt: int = 0
    provider_idx: int = 0
    current_provider: str = ""
    response: LLMResponse | None = None
    error: BaseException | None = None
    error_kind: ErrorKind = "ok"
    breaker_state: str = "closed"
    attempts_per_provider: dict[str, int] = field(default_factory=dict)

    @property
    def can_switch_provider(self) -> bool:
        return self.provider_idx < self.providers_count - 1


class Reliability(Extension):
    """The reliability gate: one loop of attempts around each model call, decided by the rules."""

    name = "reliability"

    def __init__(
        self,
        *,
        pre_check: Iterable[Any] = (),
        post_decide: Iterable[Any] = (),
        circuit_breaker: CircuitBreaker | Mapping[str, Any] | None = None,
        providers: Iterable[ReliabilityProvider] = (),
        fallback: Callable[[LLMRequest, BaseException | None], Awaitable[LLMResponse]] | None = None,
    ) -> None:
        self.pre_check = _coerce(pre_check, _PRE, "pre_check")
        self.post_decide = _coerce(post_decide, _POST, "post_decide")
        if isinstance(circuit_breaker, Mapping):
            circuit_breaker = CircuitBreaker(**dict(circuit_breaker))
        if circuit_breaker is not None and not isinstance(circuit_breaker, CircuitBreaker):
            raise TypeError("circuit_breaker must be a CircuitBreaker or a dict of its settings")
        self.breaker = circuit_breaker
        self.failovers = tuple(providers)
        for p in self.failovers:
            if not isinstance(p, ReliabilityProvider):
                raise TypeError("providers takes ReliabilityProvider(name=, provider=, model=) entries")
        if fallback is not None and not callable(fallback):
            raise TypeError("fallback must be an async fn(request, last_error) -> LLMResponse")
        self.fallback = fallback
        if not (self.pre_check or self.post_decide or self.breaker):
            raise ValueError("reliability() needs pre_check or post_decide rules, or a circuit_breaker")

    @staticmethod
    def _first(rules: tuple[ReliabilityRule, ...], scope: ReliabilityScope) -> ReliabilityRule | None:
        for r in rules:
            if r.when(scope):
                return r
        return None

    def _fail(
        self, ctx: RunContext, r: ReliabilityRule, scope: ReliabilityScope, phase: str
    ) -> ReliabilityFailFastError:
        payload = {
            "phase": phase,
            "attempt": scope.attempt,
            "provider": scope.current_provider,
            "error_kind": scope.error_kind,
            "error_type": type(scope.error).__name__ if scope.error is not None else None,
        }
        ctx.emit(ev.RELIABILITY_FAIL_FAST, lambda: ReliabilityFailFast(kind=r.kind, **payload))
        err = ReliabilityFailFastError(r.kind, r.label or r.kind, payload)
        if scope.error is not None:
            err.__cause__ = scope.error
        return err

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        names = [ctx.config.provider.name, *(p.name for p in self.failovers)]
        scope = ReliabilityScope(
            request=request,
            providers_count=len(names),
            has_fallback=self.fallback is not None,
            current_provider=names[0],
        )
        pre = self._first(self.pre_check, scope)
        if pre is not None and pre.then == "fail-fast":
            raise self._fail(ctx, pre, scope, "pre-check")
        while True:
            name = scope.current_provider
            scope.response, scope.error = None, None
            if self.breaker is not None and not self.breaker.admit(name):
                scope.error = CircuitOpenError(name, self.breaker.retry_after(name))
                rejected = ReliabilityCircuitRejected(provider=name, iteration=ctx.iteration)
                ctx.emit(ev.RELIABILITY_CIRCUIT_REJECTED, rejected)
            else:
                try:
                    scope.response = await self._call(scope, request, call_next)
                except Exception as exc:
                    scope.error = exc
                    if self.breaker is not None and self.breaker.failure(name, exc):
                        opened = ReliabilityCircuitOpened(provider=name, error_type=type(exc).__name__)
                        ctx.emit(ev.RELIABILITY_CIRCUIT_OPENED, opened)
                else:
                    if self.breaker is not None and self.breaker.success(name):
                        ctx.emit(ev.RELIABILITY_CIRCUIT_CLOSED, ReliabilityCircuitClosed(provider=name))
            scope.attempt += 1
            scope.attempts_per_provider[name] = scope.attempts_per_provider.get(name, 0) + 1
            scope.error_kind = classify_error(scope.error)
            scope.breaker_state = self.breaker.state_of(name) if self.breaker is not None else "closed"
            decided = self._first(self.post_decide, scope)
            verb = decided.then if decided is not None else ("ok" if scope.error is None else "raise")
            if scope.attempt >= MAX_ATTEMPTS and verb in ("retry", "retry-other"):
                decided = ReliabilityRule(when=lambda s: True, then="fail-fast", kind="attempts-exhausted")
                verb = "fail-fast"
            if verb == "retry-other" and not scope.can_switch_provider:
                decided = ReliabilityRule(when=lambda s: True, then="fail-fast", kind="no-other-provider")
                verb = "fail-fast"
            file_row(
                ctx,
                ATTEMPTS_KEY,
                {
                    "iteration": ctx.iteration,
                    "attempt": scope.attempt,
                    "provider": name,
                    "error_kind": scope.error_kind,
                    "error_type": type(scope.error).__name__ if scope.error is not None else None,
                    "decision": verb,
                    "rule": decided.kind if decided is not None else None,
                },
            )
            if verb == "ok" and scope.response is not None:
                if scope.attempt > 1:
                    ctx.emit(ev.RELIABILITY_RECOVERED, ReliabilityRecovered(attempts=scope.attempt, provider=name))
                return scope.response
            if verb == "ok" or verb == "raise":
                assert scope.error is not None
                raise scope.error
            if verb == "fail-fast":
                assert decided is not None
                raise self._fail(ctx, decided, scope, "post-decide")
            if verb == "fallback":
                if self.fallback is None:
                    raise self._fail(
                        ctx, ReliabilityRule(lambda s: True, "fail-fast", "no-fallback"), scope, "post-decide"
                    )
                return await self.fallback(request, scope.error)
            if verb == "retry-other":
                scope.provider_idx += 1
                scope.current_provider = names[scope.provider_idx]
            ctx.emit(
                ev.RELIABILITY_RETRIED,
                ReliabilityRetried(
                    attempt=scope.attempt,
                    provider=scope.current_provider,
                    verb=verb,
                    rule=decided.kind if decided else None,
                ),
            )

    async def _call(self, scope: ReliabilityScope, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        if scope.provider_idx == 0:
            return await call_next(request)
        failover = self.failovers[scope.provider_idx - 1]
        req = request if failover.model is None else request.model_copy(update={"model": failover.model})
        return await failover.provider.complete(req)
