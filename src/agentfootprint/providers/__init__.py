"""Model providers: the request/response models, a scripted mock, HTTP providers, retry and fallback.

Vendor providers load on first use, so importing the package stays light."""

from typing import TYPE_CHECKING

from agentfootprint._lazy import lazy_exports as _lazy_exports
from agentfootprint.providers._models import (
    LLMRequest,
    LLMResponse,
    Message,
    ProviderAttempt,
    ReasoningBlock,
    StreamChunk,
    ThinkingRequest,
    ToolCall,
    ToolSpec,
    Usage,
)
from agentfootprint.providers.base import BaseProvider, Provider
from agentfootprint.providers.errors import (
    MockExhaustedError,
    MockReplyError,
    ModelNotFoundError,
    ModelRequiredError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderServerError,
    ProviderTimeoutError,
    RateLimitError,
)
from agentfootprint.providers.fallback import FallbackProvider, with_fallback
from agentfootprint.providers.mock_provider import MockProvider, mock
from agentfootprint.providers.retry import RetryProvider, with_retry
from agentfootprint.providers.thinking import ThinkingHandler, ThinkTagHandler, think_tags

if TYPE_CHECKING:  # vendor providers load on first use, keeping ``import agentfootprint`` light
    from agentfootprint.providers.anthropic_api import AnthropicProvider, anthropic
    from agentfootprint.providers.azure_openai_api import AzureOpenAIProvider, azure_openai
    from agentfootprint.providers.bedrock_api import BedrockProvider, bedrock
    from agentfootprint.providers.from_env import (
        ProviderNotConfiguredError,
        ProviderPick,
        pick_provider_from_env,
        provider_from_env,
    )
    from agentfootprint.providers.gemini_api import GeminiProvider, gemini
    from agentfootprint.providers.local import (
        JsonToolCallingProvider,
        LocalLLMError,
        LocalLLMMissingError,
        LocalLLMProvider,
        LocalServerCrashedError,
        LocalServerStartError,
        ModelDigestError,
        json_tool_calling,
        local_llm,
    )
    from agentfootprint.providers.ollama_api import OllamaProvider, ollama
    from agentfootprint.providers.openai_compat import OpenAICompatibleProvider, openai_compatible

__all__ = [
    "AnthropicProvider",
    "AzureOpenAIProvider",
    "BaseProvider",
    "BedrockProvider",
    "FallbackProvider",
    "GeminiProvider",
    "JsonToolCallingProvider",
    "LLMRequest",
    "LLMResponse",
    "LocalLLMError",
    "LocalLLMMissingError",
    "LocalLLMProvider",
    "LocalServerCrashedError",
    "LocalServerStartError",
    "Message",
    "MockExhaustedError",
    "MockProvider",
    "MockReplyError",
    "ModelDigestError",
    "ModelNotFoundError",
    "ModelRequiredError",
    "OllamaProvider",
    "OpenAICompatibleProvider",
    "Provider",
    "ProviderAttempt",
    "ProviderAuthError",
    "ProviderConfigError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "ProviderPick",
    "ProviderRequestError",
    "ProviderResponseError",
    "ProviderServerError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ReasoningBlock",
    "RetryProvider",
    "StreamChunk",
    "ThinkTagHandler",
    "ThinkingHandler",
    "ThinkingRequest",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "anthropic",
    "azure_openai",
    "bedrock",
    "gemini",
    "json_tool_calling",
    "local_llm",
    "mock",
    "ollama",
    "openai_compatible",
    "pick_provider_from_env",
    "provider_from_env",
    "think_tags",
    "with_fallback",
    "with_retry",
]
__getattr__, __dir__ = _lazy_exports(
    __name__,
    globals(),
    {
        "AnthropicProvider": ".anthropic_api",
        "AzureOpenAIProvider": ".azure_openai_api",
        "BedrockProvider": ".bedrock_api",
        "GeminiProvider": ".gemini_api",
        "JsonToolCallingProvider": ".local",
        "LocalLLMError": ".local",
        "LocalLLMMissingError": ".local",
        "LocalLLMProvider": ".local",
        "LocalServerCrashedError": ".local",
        "LocalServerStartError": ".local",
        "ModelDigestError": ".local",
        "OllamaProvider": ".ollama_api",
        "OpenAICompatibleProvider": ".openai_compat",
        "ProviderNotConfiguredError": ".from_env",
        "ProviderPick": ".from_env",
        "anthropic": ".anthropic_api",
        "azure_openai": ".azure_openai_api",
        "bedrock": ".bedrock_api",
        "gemini": ".gemini_api",
        "json_tool_calling": ".local",
        "local_llm": ".local",
        "ollama": ".ollama_api",
        "openai_compatible": ".openai_compat",
        "pick_provider_from_env": ".from_env",
        "provider_from_env": ".from_env",
    },
)
