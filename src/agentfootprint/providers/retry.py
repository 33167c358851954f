"""``with_retry``: retry retryable provider errors with capped exponential backoff, honouring ``retry-after``."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from agentfootprint.providers._attempts import (
    RecordingProvider,
    close_quietly,
    error_records,
    missing_done,
    ok_records,
    with_attempts,
)
from agentfootprint.providers._models import LLMRequest, LLMResponse, ProviderAttempt, StreamChunk
from agentfootprint.providers.base import Provider
from agentfootprint.providers.errors import ProviderConfigError, ProviderError, RateLimitError

SleepFn = Callable[[float], Awaitable[object]]
JitterFn = Callable[[float], float]


def _finite_non_negative(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < float("inf")


class RetryProvider(RecordingProvider):
    """Wraps a provider; retries only errors with ``retryable=True`` (429, 5xx, timeouts, connection)."""

    def __init__(
        self,
        inner: Provider,
        *,
        max_attempts: int = 3,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        sleep: SleepFn = asyncio.sleep,
        jitter: float | JitterFn | None = None,
        max_retry_after: float = 60.0,
    ) -> None:
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ProviderConfigError("with_retry(): max_attempts must be an integer >= 1")
        if not all(_finite_non_negative(v) for v in (base_delay, max_delay, max_retry_after)):
            raise ProviderConfigError("with_retry(): base_delay, max_delay and max_retry_after must be numbers >= 0")
        if isinstance(jitter, int | float) and not 0 <= jitter <= 1:
            raise ProviderConfigError("with_retry(): jitter as a number must be a fraction between 0 and 1")
        self.inner = inner
        self.name = inner.name
        self.max_attempts = max_attempts
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self.max_retry_after = float(max_retry_after)
        self._sleep = sleep
        self._jitter = jitter

    def __repr__(self) -> str:
        return f"RetryProvider({self.inner!r}, max_attempts={self.max_attempts})"

    def delay_for(self, failed_attempt: int, error: ProviderError) -> float:
        """Seconds to wait after attempt ``failed_attempt`` failed with ``error``."""
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_retry_after)
        delay = min(self.max_delay, self.base_delay * 2.0 ** min(failed_attempt - 1, 60))
        if callable(self._jitter):
            delay = float(self._jitter(delay))
        elif self._jitter:
            delay *= 1.0 - self._jitter * random.random()
        return min(max(delay, 0.0), self.max_delay)

    def _give_up(self, error: ProviderError, attempt: int, streamed: bool) -> bool:
        if isinstance(error, RateLimitError) and (error.retry_after or 0.0) > self.max_retry_after:
            return True  # waiting less than the server asked would only burn attempts inside its window
        return streamed or not error.retryable or attempt >= self.max_attempts

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Call the inner provider until it answers, a non-retryable error occurs, or attempts run out."""
        attempts: list[ProviderAttempt] = []
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                response = await self.inner.complete(request)
            except ProviderError as error:
                attempts.extend(error_records(self.inner, error, attempt, started))
                if self._give_up(error, attempt, streamed=False):
                    error.attempts = attempts
                    raise
                await self._sleep(self.delay_for(attempt, error))
                continue
            attempts.extend(ok_records(self.inner, response, attempt, started))
            return response.model_copy(update={"attempts": attempts})

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream with retries, but only while nothing has been yielded yet."""
        attempts: list[ProviderAttempt] = []
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            streamed = False
            chunks = self.inner.stream(request)
            try:
                async for chunk in chunks:
                    if chunk.kind == "done" and chunk.response is not None:
                        attempts.extend(ok_records(self.inner, chunk.response, attempt, started))
                        yield with_attempts(chunk, attempts)
                        return
                    streamed = True
                    yield chunk
                raise missing_done(self.inner)
            except ProviderError as error:
                attempts.extend(error_records(self.inner, error, attempt, started))
                if self._give_up(error, attempt, streamed):
                    error.attempts = attempts
                    raise
                delay = self.delay_for(attempt, error)
            finally:
                await close_quietly(chunks)
            await self._sleep(delay)


def with_retry(
    provider: Provider,
    *,
    max_attempts: int = 3,
    base_delay: float = 0.5,
    max_delay: float = 8.0,
    sleep: SleepFn = asyncio.sleep,
    jitter: float | JitterFn | None = None,
    max_retry_after: float = 60.0,
) -> RetryProvider:
    """Retry ``provider`` on retryable errors: delay ``base_delay * 2**(n-1)`` capped at ``max_delay``.

    A server's ``retry-after`` is waited in full up to ``max_retry_after`` seconds; a longer one is raised at once.
    """
    return RetryProvider(
        provider,
        max_attempts=max_attempts,
        base_delay=base_delay,
        max_delay=max_delay,
        sleep=sleep,
        jitter=jitter,
        max_retry_after=max_retry_after,
    )
