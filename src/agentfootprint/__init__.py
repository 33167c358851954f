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
from agentfootprint.context import (
    Injection,
    InjectionContext,
    define_fact,
    define_instruction,
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
    "Identity",
    "Injection",
    "InjectionContext",
    "InvalidConversationError",
    "InvalidRunInputError",
    "NoConversationError",
    "OutputSchemaError",
    "PendingQuestionError",
    "PolicyHaltError",
    "RunCheckpointError",
    "RunInFlightError",
    "RunResult",
    "StoppedEarly",
    "Tool",
    "ToolContext",
    "UnknownSourceError",
    "ask_human",
    "define_fact",
    "define_instruction",
    "define_skill",
    "define_steering",
    "define_tool",
    "normalize_run_input",
    "tool",
]
__version__ = "0.1.0"
