"""Provider-neutral request, response and streaming models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """One tool call the model asked for; ``args_error`` says why unusable wire arguments became ``{}``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_error: str | None = None


class Message(BaseModel):
    """One conversation turn: a user, assistant or tool message."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolSpec(BaseModel):
    """A tool offered to the model: name, description and JSON Schema of its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Usage(BaseModel):
    """Token counts of one or more model calls."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class LLMRequest(BaseModel):
    """What the agent sends to a provider; an empty ``model`` means the provider's default model."""

    model_config = ConfigDict(extra="forbid")

    system_prompt: str = ""
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    model: str = ""
    seed: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None
    cache_markers: list[dict[str, Any]] = Field(default_factory=list)
    """Provider-neutral prompt-cache breakpoints (Anthropic turns them into ``cache_control``; others ignore)."""


class ProviderAttempt(BaseModel):
    """One try of one provider, recorded by ``with_retry`` / ``with_fallback``."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    attempt: int
    outcome: Literal["ok", "error"]
    error_code: str | None = None
    status: int | None = None
    elapsed_ms: float = 0.0


class LLMResponse(BaseModel):
    """A complete model answer: text, tool calls, usage and (when wrapped) every attempt made."""

    model_config = ConfigDict(extra="forbid")

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    finish_reason: str | None = None
    attempts: list[ProviderAttempt] = Field(default_factory=list)


class StreamChunk(BaseModel):
    """One streamed piece: a text delta, a finished tool call, or ``done`` carrying the full response."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["text", "tool_call", "done"]
    text: str = ""
    tool_call: ToolCall | None = None
    response: LLMResponse | None = None
