"""``with_fallback``: try providers in order until one answers."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

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
from agentfootprint.providers.errors import ProviderConfigError, ProviderError


class FallbackProvider(RecordingProvider):
    """Tries each provider in order on ``ProviderError``; a stream only falls back before its first chunk."""

    def __init__(self, primary: Provider, *fallbacks: Provider) -> None:
        providers = [primary, *fallbacks]
        for p in providers:
            if not isinstance(p, Provider):
                raise ProviderConfigError(f"with_fallback(): {type(p).__name__} is not a provider")
        self.providers = providers
        self.name = "fallback(" + ", ".join(p.name for p in providers) + ")"

    def __repr__(self) -> str:
        return f"FallbackProvider({', '.join(repr(p) for p in self.providers)})"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """The first provider's answer that does not raise ``ProviderError``."""
        attempts: list[ProviderAttempt] = []
        last: ProviderError | None = None
        for provider in self.providers:
            started = time.perf_counter()
            try:
                response = await provider.complete(request)
            except ProviderError as error:
                attempts.extend(error_records(provider, error, 1, started))
                last = error
                continue
            attempts.extend(ok_records(provider, response, 1, started))
            return response.model_copy(update={"attempts": attempts})
        assert last is not None
        last.attempts = attempts
        raise last

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream from the first provider that starts; an error after the first chunk propagates."""
        attempts: list[ProviderAttempt] = []
        for index, provider in enumerate(self.providers):
            started = time.perf_counter()
            streamed = False
            chunks = provider.stream(request)
            try:
                async for chunk in chunks:
                    if chunk.kind == "done" and chunk.response is not None:
                        attempts.extend(ok_records(provider, chunk.response, 1, started))
                        yield with_attempts(chunk, attempts)
                        return
                    streamed = True
                    yield chunk
                raise missing_done(provider)
            except ProviderError as error:
                attempts.extend(error_records(provider, error, 1, started))
                if streamed or index == len(self.providers) - 1:
                    error.attempts = attempts
                    raise
            finally:
                await close_quietly(chunks)


def with_fallback(primary: Provider, *fallbacks: Provider) -> FallbackProvider:
    """Use ``primary``; on a ``ProviderError`` try each fallback in order."""
    return FallbackProvider(primary, *fallbacks)
