"""Extensions that plug into every agent through ``AgentBuilder.use``: middleware, tool providers, reliability,
credentials, tool sessions, artifacts, integrity, receipts, skill visibility, the answer contract and declared
structure (builder sugar loads each one only
when an agent asks for it)."""

from typing import TYPE_CHECKING

from agentfootprint._lazy import lazy_exports

if TYPE_CHECKING:  # the lazily loaded names, typed for checkers
    from agentfootprint.extensions.answer_contract import (
        AnswerContract,
        AnswerView,
        ArgumentRule,
        answer_check,
        ask,
        assume,
    )
    from agentfootprint.extensions.declared_structure import DeclaredStructure
    from agentfootprint.extensions.middleware import Allow, Deny, MessageDeniedError, allow, deny
    from agentfootprint.extensions.reliability import (
        CircuitBreaker,
        CircuitOpenError,
        ReliabilityFailFastError,
        ReliabilityProvider,
        ReliabilityScope,
        classify_error,
        rule,
    )
    from agentfootprint.extensions.tool_provider import ToolProviders

_EXPORTS = {
    "AnswerContract": ".answer_contract",
    "DeclaredStructure": ".declared_structure",
    "AnswerView": ".answer_contract",
    "ArgumentRule": ".answer_contract",
    "answer_check": ".answer_contract",
    "ask": ".answer_contract",
    "assume": ".answer_contract",
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
__all__ = [
    "Allow",
    "AnswerContract",
    "AnswerView",
    "ArgumentRule",
    "CircuitBreaker",
    "CircuitOpenError",
    "DeclaredStructure",
    "Deny",
    "MessageDeniedError",
    "ReliabilityFailFastError",
    "ReliabilityProvider",
    "ReliabilityScope",
    "ToolProviders",
    "allow",
    "answer_check",
    "ask",
    "assume",
    "classify_error",
    "deny",
    "rule",
]
