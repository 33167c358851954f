"""The innermost model call: the provider itself, streaming tokens to listeners (scrubbed under redaction)."""

from __future__ import annotations

from agentfootprint.agent._run import AgentRun
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import StreamToken
from agentfootprint.flow import Redactor, Scope
from agentfootprint.providers import LLMRequest, LLMResponse


async def call_provider(run: AgentRun, scope: Scope, request: LLMRequest, iteration: int) -> LLMResponse:
    """``complete`` when nobody listens to tokens; else ``stream``, emitting text deltas as they arrive."""
    provider = run.config.provider
    if not run.events.has_listeners(ev.STREAM_TOKEN):
        return await provider.complete(request)
    final: LLMResponse | None = None
    tokens = TokenGate(run.redactor)
    stage = scope.runtime_stage_id
    async for chunk in provider.stream(request):
        if chunk.kind == "text" and chunk.text:
            for piece in tokens.feed(chunk.text):
                run.emit(ev.STREAM_TOKEN, StreamToken(text=piece), runtime_stage_id=stage, iteration=iteration)
        elif chunk.kind == "done":
            final = chunk.response
    for piece in tokens.flush():
        run.emit(ev.STREAM_TOKEN, StreamToken(text=piece), runtime_stage_id=stage, iteration=iteration)
    if final is None:
        raise RuntimeError(f"provider '{provider.name}' ended its stream without a final response")
    return final


class TokenGate:
    """Streams text deltas; under a redaction policy it scrubs the whole text so far and holds back a tail, so
    a secret split across chunks is never emitted."""

    HOLD_BACK = 128

    def __init__(self, redactor: Redactor) -> None:
        self._red = redactor if redactor.active else None
        self._raw = ""
        self._sent = 0

    def feed(self, text: str) -> list[str]:
        if self._red is None:
            return [text]
        self._raw += text
        scrubbed = self._red.scrub_text(self._raw)
        safe = max(self._sent, len(scrubbed) - self.HOLD_BACK)
        return self._take(scrubbed, safe)

    def flush(self) -> list[str]:
        if self._red is None:
            return []
        scrubbed = self._red.scrub_text(self._raw)
        return self._take(scrubbed, len(scrubbed))

    def _take(self, scrubbed: str, upto: int) -> list[str]:
        if upto <= self._sent:
            return []
        piece = scrubbed[self._sent : upto]
        self._sent = upto
        return [piece]


__all__ = ["TokenGate", "call_provider"]
