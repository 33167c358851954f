"""agentfootprint: the explainable agent framework."""

from typing import TYPE_CHECKING

from agentfootprint._features import install_features as _install_features
from agentfootprint._lazy import lazy_exports as _lazy_exports
from agentfootprint._version import __version__ as __version__

__all__ = [
    "Agent",
    "AgentBuildError",
    "AgentBuilder",
    "AgentFootprintError",
    "Assessment",
    "CheckInPack",
    "CheckpointSealError",
    "Conditional",
    "ConversationMismatchError",
    "CostBudget",
    "DecisionRequiredError",
    "EmptyAnswerWarning",
    "Graph",
    "Identity",
    "InMemoryMemoryStore",
    "Injection",
    "InjectionContext",
    "InvalidConversationError",
    "InvalidLimitError",
    "InvalidRunConfigError",
    "InvalidRunInputError",
    "LLMCall",
    "Loop",
    "MemberIdentityError",
    "NoConversationError",
    "NoOutputSchemaError",
    "OutputContractUnmet",
    "OutputSchemaError",
    "OutputStrategyUnsupportedError",
    "Parallel",
    "ParentRunRefusedError",
    "PendingQuestionError",
    "PolicyHaltError",
    "ResumeDecisionError",
    "ResumeIdentityConflictError",
    "ResumeRedactionError",
    "ResumeRequestConflictError",
    "RunCheckpointError",
    "RunInFlightError",
    "RunResult",
    "SQLiteMemoryStore",
    "Sequence",
    "StoppedEarly",
    "Tool",
    "ToolContext",
    "UnknownSourceError",
    "UnsupportedValuesError",
    "Workflow",
    "ask_human",
    "ask_human_typed",
    "assess",
    "check_in_approved",
    "check_in_declined",
    "define_fact",
    "define_instruction",
    "define_memory",
    "define_rag",
    "define_skill",
    "define_steering",
    "define_tool",
    "explain_answer",
    "normalize_run_input",
    "recorded_chat",
    "tool",
]

if TYPE_CHECKING:  # every public name loads on first use, so `import agentfootprint` stays cheap
    from agentfootprint.agent import (
        Agent,
        AgentBuilder,
        AgentBuildError,
        CheckpointSealError,
        ConversationMismatchError,
        CostBudget,
        DecisionRequiredError,
        EmptyAnswerWarning,
        InvalidConversationError,
        InvalidLimitError,
        InvalidRunConfigError,
        InvalidRunInputError,
        LLMCall,
        MemberIdentityError,
        NoConversationError,
        NoOutputSchemaError,
        OutputContractUnmet,
        OutputSchemaError,
        OutputStrategyUnsupportedError,
        ParentRunRefusedError,
        PendingQuestionError,
        PolicyHaltError,
        ResumeDecisionError,
        ResumeIdentityConflictError,
        ResumeRedactionError,
        RunCheckpointError,
        RunInFlightError,
        RunResult,
        StoppedEarly,
        UnknownSourceError,
        check_in_approved,
        check_in_declined,
        normalize_run_input,
    )
    from agentfootprint.compose import (
        Conditional,
        Graph,
        Loop,
        Parallel,
        ResumeRequestConflictError,
        Sequence,
        Workflow,
    )
    from agentfootprint.context import (
        Injection,
        InjectionContext,
        InMemoryMemoryStore,
        SQLiteMemoryStore,
        define_fact,
        define_instruction,
        define_memory,
        define_rag,
        define_skill,
        define_steering,
    )
    from agentfootprint.errors import (
        AgentFootprintError,
    )
    from agentfootprint.honesty import (
        Assessment,
        CheckInPack,
        UnsupportedValuesError,
        assess,
        explain_answer,
        recorded_chat,
    )
    from agentfootprint.identity import (
        Identity,
    )
    from agentfootprint.tools import (
        Tool,
        ToolContext,
        ask_human,
        ask_human_typed,
        define_tool,
        tool,
    )

__getattr__, __dir__ = _lazy_exports(
    __name__,
    globals(),
    {
        "Agent": "agentfootprint.agent",
        "AgentBuilder": "agentfootprint.agent",
        "AgentBuildError": "agentfootprint.agent",
        "check_in_approved": "agentfootprint.agent",
        "check_in_declined": "agentfootprint.agent",
        "CheckpointSealError": "agentfootprint.agent",
        "ConversationMismatchError": "agentfootprint.agent",
        "CostBudget": "agentfootprint.agent",
        "DecisionRequiredError": "agentfootprint.agent",
        "EmptyAnswerWarning": "agentfootprint.agent",
        "InvalidConversationError": "agentfootprint.agent",
        "InvalidLimitError": "agentfootprint.agent",
        "InvalidRunConfigError": "agentfootprint.agent",
        "InvalidRunInputError": "agentfootprint.agent",
        "LLMCall": "agentfootprint.agent",
        "MemberIdentityError": "agentfootprint.agent",
        "NoConversationError": "agentfootprint.agent",
        "NoOutputSchemaError": "agentfootprint.agent",
        "normalize_run_input": "agentfootprint.agent",
        "OutputContractUnmet": "agentfootprint.agent",
        "OutputSchemaError": "agentfootprint.agent",
        "OutputStrategyUnsupportedError": "agentfootprint.agent",
        "ParentRunRefusedError": "agentfootprint.agent",
        "PendingQuestionError": "agentfootprint.agent",
        "PolicyHaltError": "agentfootprint.agent",
        "ResumeDecisionError": "agentfootprint.agent",
        "ResumeIdentityConflictError": "agentfootprint.agent",
        "ResumeRedactionError": "agentfootprint.agent",
        "RunCheckpointError": "agentfootprint.agent",
        "RunInFlightError": "agentfootprint.agent",
        "RunResult": "agentfootprint.agent",
        "StoppedEarly": "agentfootprint.agent",
        "UnknownSourceError": "agentfootprint.agent",
        "define_fact": "agentfootprint.context",
        "define_instruction": "agentfootprint.context",
        "define_memory": "agentfootprint.context",
        "define_rag": "agentfootprint.context",
        "define_skill": "agentfootprint.context",
        "define_steering": "agentfootprint.context",
        "Injection": "agentfootprint.context",
        "InjectionContext": "agentfootprint.context",
        "InMemoryMemoryStore": "agentfootprint.context",
        "SQLiteMemoryStore": "agentfootprint.context",
        "AgentFootprintError": "agentfootprint.errors",
        "Identity": "agentfootprint.identity",
        "ask_human": "agentfootprint.tools",
        "ask_human_typed": "agentfootprint.tools",
        "define_tool": "agentfootprint.tools",
        "Tool": "agentfootprint.tools",
        "tool": "agentfootprint.tools",
        "ToolContext": "agentfootprint.tools",
        "Conditional": "agentfootprint.compose",
        "Graph": "agentfootprint.compose",
        "Loop": "agentfootprint.compose",
        "Parallel": "agentfootprint.compose",
        "ResumeRequestConflictError": "agentfootprint.compose",
        "Sequence": "agentfootprint.compose",
        "Workflow": "agentfootprint.compose",
        "Assessment": "agentfootprint.honesty.assessment",
        "assess": "agentfootprint.honesty.assessment",
        "explain_answer": "agentfootprint.honesty.chat",
        "recorded_chat": "agentfootprint.honesty.chat",
        "CheckInPack": "agentfootprint.honesty.checkin",
        "UnsupportedValuesError": "agentfootprint.honesty.evidence",
    },
)


if TYPE_CHECKING:  # the features the agent's builder constructs, loaded by _Features only when asked for
    from agentfootprint._features import ExtensionFactory as _ExtensionFactory
    from agentfootprint.extensions.answer_contract import AnswerContract as _AnswerContract
    from agentfootprint.extensions.artifacts import Artifacts as _Artifacts
    from agentfootprint.extensions.credentials import Credentials as _Credentials
    from agentfootprint.extensions.declared_structure import DeclaredStructure as _DeclaredStructure
    from agentfootprint.extensions.integrity import Integrity as _Integrity
    from agentfootprint.extensions.middleware import MessageMiddlewareChain as _MessageMiddlewareChain
    from agentfootprint.extensions.middleware import ToolMiddlewareChain as _ToolMiddlewareChain
    from agentfootprint.extensions.receipts import Receipts as _Receipts
    from agentfootprint.extensions.reliability import Reliability as _Reliability
    from agentfootprint.extensions.skill_graph import SkillGraphWalker as _SkillGraphWalker
    from agentfootprint.extensions.skill_visibility import SkillVisibility as _SkillVisibility
    from agentfootprint.extensions.tool_provider import ToolProviders as _ToolProviders
    from agentfootprint.extensions.tool_sessions import ToolSessions as _ToolSessions
    from agentfootprint.honesty.extension import EvidenceGate as _EvidenceGate
    from agentfootprint.honesty.extension import Honesty as _Honesty
    from agentfootprint.honesty.extension import SelfExplain as _SelfExplain


class _Features:
    """The composition root's answer to ``agentfootprint._features.Features``: each feature class where it lives,
    imported on first ask, and the default list every agent gets (honesty, tool sessions, receipts, integrity)."""

    def defaults(self) -> "tuple[_ExtensionFactory, ...]":
        return (self.honesty, self.tool_sessions, self.receipts, self.integrity)

    @property
    def honesty(self) -> "type[_Honesty]":
        from agentfootprint.honesty.extension import Honesty

        return Honesty

    @property
    def evidence_gate(self) -> "type[_EvidenceGate]":
        from agentfootprint.honesty.extension import EvidenceGate

        return EvidenceGate

    @property
    def self_explain(self) -> "type[_SelfExplain]":
        from agentfootprint.honesty.extension import SelfExplain

        return SelfExplain

    @property
    def tool_sessions(self) -> "type[_ToolSessions]":
        from agentfootprint.extensions.tool_sessions import ToolSessions

        return ToolSessions

    @property
    def receipts(self) -> "type[_Receipts]":
        from agentfootprint.extensions.receipts import Receipts

        return Receipts

    @property
    def message_middleware(self) -> "type[_MessageMiddlewareChain]":
        from agentfootprint.extensions.middleware import MessageMiddlewareChain

        return MessageMiddlewareChain

    @property
    def tool_middleware(self) -> "type[_ToolMiddlewareChain]":
        from agentfootprint.extensions.middleware import ToolMiddlewareChain

        return ToolMiddlewareChain

    @property
    def tool_providers(self) -> "type[_ToolProviders]":
        from agentfootprint.extensions.tool_provider import ToolProviders

        return ToolProviders

    @property
    def reliability(self) -> "type[_Reliability]":
        from agentfootprint.extensions.reliability import Reliability

        return Reliability

    @property
    def credentials(self) -> "type[_Credentials]":
        from agentfootprint.extensions.credentials import Credentials

        return Credentials

    @property
    def artifacts(self) -> "type[_Artifacts]":
        from agentfootprint.extensions.artifacts import Artifacts

        return Artifacts

    @property
    def integrity(self) -> "type[_Integrity]":
        from agentfootprint.extensions.integrity import Integrity

        return Integrity

    @property
    def skill_visibility(self) -> "type[_SkillVisibility]":
        from agentfootprint.extensions.skill_visibility import SkillVisibility

        return SkillVisibility

    @property
    def skill_graph(self) -> "type[_SkillGraphWalker]":
        from agentfootprint.extensions.skill_graph import SkillGraphWalker

        return SkillGraphWalker

    @property
    def answer_contract(self) -> "type[_AnswerContract]":
        from agentfootprint.extensions.answer_contract import AnswerContract

        return AnswerContract

    @property
    def declared_structure(self) -> "type[_DeclaredStructure]":
        from agentfootprint.extensions.declared_structure import DeclaredStructure

        return DeclaredStructure


_install_features(_Features())
