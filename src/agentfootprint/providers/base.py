"""The ``Provider`` protocol and a base class that derives ``stream`` from ``complete``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from agentfootprint.providers._models import LLMRequest, LLMResponse, StreamChunk


@runtime_checkable
class Provider(Protocol):
    """Anything that answers an ``LLMRequest``; ``stream`` ends with a ``done`` chunk holding the response."""

    name: str

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Return the model's full answer."""
        ...

    def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Yield text and tool-call chunks, then a final ``done`` chunk with the assembled response."""
        ...


def chunks_from_response(response: LLMResponse) -> list[StreamChunk]:
    """The chunks a non-streaming provider yields: its text, its tool calls, then ``done``."""
    chunks: list[StreamChunk] = []
    if response.content:
        chunks.append(StreamChunk(kind="text", text=response.content))
    chunks.extend(StreamChunk(kind="tool_call", tool_call=call) for call in response.tool_calls)
    chunks.append(StreamChunk(kind="done", response=response))
    return chunks


class BaseProvider(ABC):
    """Implement ``complete``; ``stream`` then yields the whole answer as one text chunk and ``done``."""

    name: str = "provider"

    @abstractmethod
    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Return the model's full answer."""

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Yield the answer from ``complete`` as chunks, ending with ``done``."""
        response = await self.complete(request)
        for chunk in chunks_from_response(response):
            yield chunk
