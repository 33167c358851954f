"""Thinking handlers: one place that makes sure a model's thinking is reasoning, never part of its answer.

Providers already move the reasoning their wire carries (Anthropic thinking blocks, OpenAI-style ``reasoning``
fields, Ollama ``thinking``) into ``LLMResponse.reasoning``. A handler runs on every response of an agent that asks
for thinking, whatever the provider, so thinking that arrived inline (a ``<think>`` span) is moved too.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agentfootprint.providers._models import LLMResponse, ReasoningBlock
from agentfootprint.providers._reasoning import split_think


@runtime_checkable
class ThinkingHandler(Protocol):
    """Normalizes one response's thinking: ``content`` is the answer only, the thinking is in ``reasoning``."""

    name: str

    def normalize(self, response: LLMResponse) -> LLMResponse: ...


class ThinkTagHandler:
    """Moves a leading ``<think>…</think>`` span of the answer into reasoning; reasoning already split stays as is."""

    name = "think-tags"

    def normalize(self, response: LLMResponse) -> LLMResponse:
        answer, blocks = split_think(response.content)
        if not blocks:
            return response
        kept: list[ReasoningBlock] = [*response.reasoning, *(b for b in blocks if b not in response.reasoning)]
        return response.model_copy(update={"content": answer, "reasoning": kept})


def think_tags() -> ThinkTagHandler:
    """The default thinking handler (also for providers that declare none)."""
    return ThinkTagHandler()


__all__ = ["ThinkTagHandler", "ThinkingHandler", "think_tags"]
