"""Attempt bookkeeping shared by the retry and fallback wrappers."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from agentfootprint.providers._models import LLMResponse, ProviderAttempt, StreamChunk
from agentfootprint.providers.base import BaseProvider, Provider
from agentfootprint.providers.errors import ProviderError, ProviderResponseError


class RecordingProvider(BaseProvider):
    """Marker base for wrappers that record ``ProviderAttempt`` lists on responses and errors."""


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()`` value)."""
    return round((time.perf_counter() - started) * 1000.0, 3)


def ok_records(inner: Provider, response: LLMResponse, attempt: int, started: float) -> list[ProviderAttempt]:
    """The records for a success: the inner wrapper's own list, or one ``ok`` attempt."""
    if isinstance(inner, RecordingProvider) and response.attempts:
        return list(response.attempts)
    return [
        ProviderAttempt(
            provider=inner.name,
            attempt=attempt,
            outcome="ok",
            error_code=None,
            status=None,
            elapsed_ms=elapsed_ms(started),
        )
    ]


def error_records(inner: Provider, error: ProviderError, attempt: int, started: float) -> list[ProviderAttempt]:
    """The records for a failure: the inner wrapper's own list, or one ``error`` attempt."""
    if isinstance(inner, RecordingProvider) and error.attempts:
        return list(error.attempts)
    return [
        ProviderAttempt(
            provider=error.provider or inner.name,
            attempt=attempt,
            outcome="error",
            error_code=error.code,
            status=error.status,
            elapsed_ms=elapsed_ms(started),
        )
    ]


def with_attempts(chunk: StreamChunk, attempts: list[ProviderAttempt]) -> StreamChunk:
    """A ``done`` chunk whose response carries ``attempts``."""
    assert chunk.response is not None
    response = chunk.response.model_copy(update={"attempts": list(attempts)})
    return chunk.model_copy(update={"response": response})


def missing_done(inner: Provider) -> ProviderResponseError:
    """The error for a stream that ended without its ``done`` chunk."""
    return ProviderResponseError(
        f"the stream from {inner.name} ended without its final 'done' chunk", provider=inner.name
    )


async def close_quietly(iterator: AsyncIterator[StreamChunk]) -> None:
    """Close an async generator if it has ``aclose``."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()
