"""Model providers: the request/response models, a scripted mock, HTTP providers, retry and fallback."""

from agentfootprint.providers._models import (
    LLMRequest,
    LLMResponse,
    Message,
    ProviderAttempt,
    ReasoningBlock,
    StreamChunk,
    ToolCall,
    ToolSpec,
    Usage,
)
from agentfootprint.providers.anthropic_api import AnthropicProvider, anthropic
from agentfootprint.providers.azure_openai import AzureOpenAIProvider, azure_openai
from agentfootprint.providers.base import BaseProvider, Provider
from agentfootprint.providers.bedrock_api import BedrockProvider, bedrock
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
from agentfootprint.providers.mock_provider import MockProvider, mock
from agentfootprint.providers.ollama_api import OllamaProvider, ollama
from agentfootprint.providers.openai_compat import OpenAICompatibleProvider, openai_compatible
from agentfootprint.providers.retry import RetryProvider, with_retry

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
    "with_fallback",
    "with_retry",
]
