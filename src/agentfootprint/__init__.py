"""agentfootprint: the explainable agent framework."""

from typing import TYPE_CHECKING

from agentfootprint import _wiring  # noqa: F401  (registers the extensions above the agent)
from agentfootprint._lazy import lazy_exports as _lazy_exports
from agentfootprint.agent import (
    Agent,
    AgentBuilder,
    AgentBuildError,
    InvalidConversationError,
    InvalidRunInputError,
    MemberIdentityError,
    NoConversationError,
    OutputSchemaError,
    ParentRunRefusedError,
    PendingQuestionError,
    PolicyHaltError,
    RunCheckpointError,
    RunInFlightError,
    RunResult,
    StoppedEarly,
    UnknownSourceError,
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
from agentfootprint.errors import AgentFootprintError
from agentfootprint.identity import Identity
from agentfootprint.tools import Tool, ToolContext, ask_human, define_tool, tool

__all__ = [
    "Agent",
    "AgentBuildError",
    "AgentBuilder",
    "AgentFootprintError",
    "Assessment",
    "CheckInPack",
    "Conditional",
    "Graph",
    "Identity",
    "InMemoryMemoryStore",
    "Injection",
    "InjectionContext",
    "InvalidConversationError",
    "InvalidRunInputError",
    "Loop",
    "MemberIdentityError",
    "NoConversationError",
    "OutputSchemaError",
    "Parallel",
    "ParentRunRefusedError",
    "PendingQuestionError",
    "PolicyHaltError",
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
    "assess",
    "define_fact",
    "define_instruction",
    "define_memory",
    "define_rag",
    "define_skill",
    "define_steering",
    "define_tool",
    "explain_answer",
    "recorded_chat",
    "tool",
]
__version__ = "0.1.0"

if TYPE_CHECKING:  # loaded on first use: compositions and the honesty layer sit above the agent
    from agentfootprint.compose import (
        Conditional,
        Graph,
        Loop,
        Parallel,
        ResumeRequestConflictError,
        Sequence,
        Workflow,
    )
    from agentfootprint.honesty import (
        Assessment,
        CheckInPack,
        UnsupportedValuesError,
        assess,
        explain_answer,
        recorded_chat,
    )

__getattr__, __dir__ = _lazy_exports(
    __name__,
    globals(),
    {
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
