"""Extensions that plug into every agent through ``AgentBuilder.use``: middleware, tool providers, reliability,
credentials, tool sessions, artifacts, integrity, receipts, skill visibility, the skill graph, the answer contract
and declared structure. Each is an object: ``Agent.create(...).use(Reliability(post_decide=[...]))`` is what the
builder sugar ``.reliability(post_decide=[...])`` does (each module loads on first use)."""

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
    from agentfootprint.extensions.artifacts import Artifacts
    from agentfootprint.extensions.credentials import Credentials
    from agentfootprint.extensions.declared_structure import DeclaredStructure
    from agentfootprint.extensions.integrity import Integrity
    from agentfootprint.extensions.middleware import (
        Allow,
        Deny,
        MessageDeniedError,
        MessageMiddlewareChain,
        ToolMiddlewareChain,
        allow,
        deny,
    )
    from agentfootprint.extensions.receipts import Receipts
    from agentfootprint.extensions.reliability import (
        CircuitBreaker,
        CircuitOpenError,
        Reliability,
        ReliabilityFailFastError,
        ReliabilityProvider,
        ReliabilityScope,
        classify_error,
        rule,
    )
    from agentfootprint.extensions.skill_graph import SkillGraphWalker
    from agentfootprint.extensions.skill_visibility import SkillVisibility
    from agentfootprint.extensions.tool_provider import ToolProviders
    from agentfootprint.extensions.tool_sessions import ToolSessions

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
    "MessageMiddlewareChain": ".middleware",
    "ToolMiddlewareChain": ".middleware",
    "Reliability": ".reliability",
    "Artifacts": ".artifacts",
    "Credentials": ".credentials",
    "Integrity": ".integrity",
    "Receipts": ".receipts",
    "SkillGraphWalker": ".skill_graph",
    "SkillVisibility": ".skill_visibility",
    "ToolSessions": ".tool_sessions",
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
    "Artifacts",
    "CircuitBreaker",
    "CircuitOpenError",
    "Credentials",
    "DeclaredStructure",
    "Deny",
    "Integrity",
    "MessageDeniedError",
    "MessageMiddlewareChain",
    "Receipts",
    "Reliability",
    "ReliabilityFailFastError",
    "ReliabilityProvider",
    "ReliabilityScope",
    "SkillGraphWalker",
    "SkillVisibility",
    "ToolMiddlewareChain",
    "ToolProviders",
    "ToolSessions",
    "allow",
    "answer_check",
    "ask",
    "assume",
    "classify_error",
    "deny",
    "rule",
]
