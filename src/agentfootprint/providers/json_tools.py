"""Tool calling for models without native tool calls: tools become a constrained JSON reply, the reply tool calls."""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentfootprint.providers._local_json import (
    parse_reply,
    reply_schema,
    rewrite_messages,
    tool_instructions,
    tool_rounds,
)
from agentfootprint.providers._models import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers.base import BaseProvider, Provider, chunks_from_response
from agentfootprint.providers.errors import ProviderConfigError

__all__ = ["JsonToolCallingProvider", "json_tool_calling"]


class JsonToolCallingProvider(BaseProvider):
    """Wraps a Chat Completions provider: tools become a JSON reply schema, the JSON reply becomes tool calls.

    ``answer_pattern`` (an anchored regular expression) constrains the final answer text, with or without tools,
    e.g. ``"^(APPROVED|DECLINED): .+$"``.
    """

    carries_forced_tool_choice = False
    carries_native_output = False
    """Its own wire is a JSON reply schema: it cannot carry a second, caller-chosen one."""

    def __init__(
        self, inner: Provider, *, max_tool_rounds: int | None = None, answer_pattern: str | None = None
    ) -> None:
        if max_tool_rounds is not None and max_tool_rounds < 0:
            raise ProviderConfigError("json_tool_calling(): max_tool_rounds must be >= 0 or None")
        self.inner = inner
        self.name = inner.name
        self.max_tool_rounds = max_tool_rounds
        self.answer_pattern = answer_pattern

    def __repr__(self) -> str:
        return f"JsonToolCallingProvider({self.inner!r}, max_tool_rounds={self.max_tool_rounds})"

    def translate(self, request: LLMRequest) -> LLMRequest:
        """The request the inner provider sees: no ``tools``, a tool addendum, a JSON ``response_format``."""
        if request.response_format is not None:
            raise ProviderConfigError(
                "json_tool_calling(): a request it constrains (tools offered or answer_pattern set) cannot also set "
                "response_format"
            )
        rounds = tool_rounds(request.messages)
        allow = self.max_tool_rounds is None or rounds < self.max_tool_rounds
        addendum = tool_instructions(request.tools, allow_tools=allow)
        system = f"{request.system_prompt}\n\n{addendum}" if request.system_prompt else addendum
        schema = reply_schema(request.tools, allow_tools=allow, answer_pattern=self.answer_pattern)
        return request.model_copy(
            update={
                "system_prompt": system,
                "messages": rewrite_messages(request.messages),
                "tools": [],
                "response_format": {"type": "json_object", "schema": schema},
            }
        )

    def constrained(self, request: LLMRequest) -> bool:
        """Whether this request gets the JSON reply: it offers tools, or an answer pattern is set."""
        return bool(request.tools) or self.answer_pattern is not None

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Ask for a JSON reply when tools are offered and map it to tool calls; otherwise pass through."""
        if not self.constrained(request):
            return await self.inner.complete(request)
        response = await self.inner.complete(self.translate(request))
        call_id = f"call_{tool_rounds(request.messages)}"
        answer, calls = parse_reply(response.content, call_id=call_id)
        finish = "tool_calls" if calls else response.finish_reason
        return response.model_copy(update={"content": answer, "tool_calls": calls, "finish_reason": finish})

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream text as-is without tools; with tools, the mapped reply as chunks (JSON is not streamed raw)."""
        if not self.constrained(request):
            async for chunk in self.inner.stream(request):
                yield chunk
            return
        for chunk in chunks_from_response(await self.complete(request)):
            yield chunk


def json_tool_calling(
    provider: Provider, *, max_tool_rounds: int | None = None, answer_pattern: str | None = None
) -> JsonToolCallingProvider:
    """Tool calls via constrained JSON on any OpenAI-compatible server; after ``max_tool_rounds`` results, answer."""
    return JsonToolCallingProvider(provider, max_tool_rounds=max_tool_rounds, answer_pattern=answer_pattern)
