"""Provider-neutral request, response and streaming models."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from typing_extensions import TypedDict


class ToolCall(BaseModel):
    """One tool call the model asked for; ``args_error`` says why unusable wire arguments became ``{}``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    args_error: str | None = None
    signature: str | None = None
    """Opaque token the vendor wants back with this call on the next request (Gemini's thought signature)."""


ReasoningSource = Literal[
    "anthropic.thinking",
    "anthropic.redacted_thinking",
    "bedrock.reasoning_content",
    "gemini.thought",
    "openai.reasoning_content",
    "openai.reasoning",
    "ollama.thinking",
    "think_tag",
    "other",
]
"""The wire field a reasoning block came from."""


class ReasoningBlock(BaseModel):
    """One piece of the model's reasoning, in one form for every provider: recorded, redactable, never the answer.

    ``kind`` is ``thinking`` (the model's own reasoning text), ``summary`` (a vendor-written summary of it) or
    ``redacted`` (withheld by the vendor: ``text`` is empty and ``signature`` holds the opaque payload).
    ``source`` names the wire field it came from; ``signature`` is what the vendor needs echoed back unchanged.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["thinking", "summary", "redacted"] = "thinking"
    text: str = ""
    signature: str | None = None
    source: ReasoningSource = "other"


class Message(BaseModel):
    """One conversation turn: a user, assistant or tool message."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: list[ReasoningBlock] = Field(default_factory=list)
    """On an assistant turn: the reasoning that came with it, sent back only where the vendor requires it."""


class ToolSpec(BaseModel):
    """A tool offered to the model: name, description and JSON Schema of its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class _UsageDump(TypedDict):
    """What a ``Usage`` dumps to (its serialization schema): the cache counts only when non-zero."""

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_input_tokens: NotRequired[int]
    cache_write_tokens: NotRequired[int]


class Usage(BaseModel):
    """Token counts of one or more model calls."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    """How many of ``output_tokens`` the model spent reasoning (already counted there, so pricing stays right)."""
    cached_input_tokens: int = 0
    """How many of ``input_tokens`` were read from the vendor's prompt cache (already counted there)."""
    cache_write_tokens: int = 0
    """How many of ``input_tokens`` were written to the vendor's prompt cache (already counted there)."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> _UsageDump:
        """The cache counts appear in a dump only when non-zero, so records without caching keep their shape."""
        data: _UsageDump = handler(self)
        if not data.get("cached_input_tokens"):
            data.pop("cached_input_tokens", None)
        if not data.get("cache_write_tokens"):
            data.pop("cache_write_tokens", None)
        return data

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
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class ThinkingRequest(BaseModel):
    """Ask the model to think before answering, within ``budget`` tokens (providers with a thinking budget)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget: int = Field(ge=1, le=1_000_000)


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
    tool_choice: str | None = None
    """Force the model to answer by calling this one tool (sent only to providers declaring
    ``carries_forced_tool_choice``; the agent refuses the others at run start)."""
    cache_markers: list[dict[str, Any]] = Field(default_factory=list)
    """Provider-neutral prompt-cache breakpoints (Anthropic turns them into ``cache_control``; OpenAI-compatible
    servers get the hint they understand, see ``openai_compatible(cache_hint=...)``)."""
    thinking: ThinkingRequest | None = None
    """A thinking budget for this call (Anthropic, Bedrock and Gemini send it; the others ignore it)."""


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
    """A complete model answer: text, tool calls, reasoning, usage and (when wrapped) every attempt made."""

    model_config = ConfigDict(extra="forbid")

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    reasoning: list[ReasoningBlock] = Field(default_factory=list)
    """The model's reasoning, normalized; never part of ``content``."""
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    id: str | None = None
    """The vendor's id for this response (OpenAI ``id``, Anthropic ``id``, Gemini ``responseId``), when it sends one."""
    finish_reason: str | None = None
    attempts: list[ProviderAttempt] = Field(default_factory=list)

    @property
    def reasoning_text(self) -> str:
        """The readable reasoning (thinking and summaries) joined by blank lines; ``""`` when there is none."""
        return "\n\n".join(block.text for block in self.reasoning if block.text)


class StreamChunk(BaseModel):
    """One streamed piece: a text or reasoning delta, a finished tool call, or ``done`` with the full response."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["text", "reasoning", "tool_call", "done"]
    text: str = ""
    tool_call: ToolCall | None = None
    response: LLMResponse | None = None
