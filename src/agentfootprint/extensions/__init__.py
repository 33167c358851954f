"""Extensions that plug into every agent through ``AgentBuilder.use``: middleware, tool providers, reliability,
credentials, tool sessions, artifacts, integrity, receipts and skill visibility (builder sugar loads each one only
when an agent asks for it)."""

from agentfootprint._lazy import lazy_exports

_EXPORTS = {
    "allow": ".middleware",
    "deny": ".middleware",
    "Allow": ".middleware",
    "Deny": ".middleware",
    "MessageDeniedError": ".middleware",
    "ToolProviders": ".tool_provider",
    "CircuitBreaker": ".reliability",
    "CircuitOpenError": ".reliability",
    "ReliabilityFailFastError": ".reliability",
    "ReliabilityProvider": ".reliability",
    "ReliabilityScope": ".reliability",
    "classify_error": ".reliability",
    "rule": ".reliability",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
__all__ = sorted(_EXPORTS)
