"""agentfootprint: the explainable agent framework."""

from agentfootprint.agent import (
    Agent,
    AgentBuilder,
    AgentBuildError,
    InvalidConversationError,
    InvalidRunInputError,
    NoConversationError,
    OutputSchemaError,
    PendingQuestionError,
    PolicyHaltError,
    RunCheckpointError,
    RunInFlightError,
    RunResult,
    StoppedEarly,
    UnknownSourceError,
    normalize_run_input,
)
from agentfootprint.compose import (
    Conditional,
    Graph,
    Loop,
    MemberIdentityError,
    Parallel,
    ParentRunRefusedError,
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
    "normalize_run_input",
    "recorded_chat",
    "tool",
]
__version__ = "0.1.0"

_LAZY = {
    "Assessment": "agentfootprint.agent.assessment",
    "assess": "agentfootprint.agent.assessment",
    "explain_answer": "agentfootprint.agent.chat",
    "recorded_chat": "agentfootprint.agent.chat",
    "CheckInPack": "agentfootprint.agent.checkin",
    "UnsupportedValuesError": "agentfootprint.agent.evidence",
}


def __getattr__(name: str) -> object:
    """Honesty features load on first use, keeping ``import agentfootprint`` light."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentfootprint' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
