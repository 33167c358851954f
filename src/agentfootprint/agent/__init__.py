"""The Agent: a recorded ReAct loop on the flowchart engine, and the one seam extensions plug into."""

from agentfootprint.agent._checkpoints import load_conversation, load_pause_checkpoint
from agentfootprint.agent._observers import ObserverDrainResult
from agentfootprint.agent._run_input import InvalidRunInputError, RunInput
from agentfootprint.agent.agent import Agent
from agentfootprint.agent.builder import AgentBuilder
from agentfootprint.agent.errors import (
    AgentBuildError,
    InvalidConversationError,
    MemberIdentityError,
    MessageRoleError,
    NoConversationError,
    OutputSchemaError,
    ParentRunRefusedError,
    PendingQuestionError,
    PolicyHaltError,
    RunCheckpointError,
    RunInFlightError,
    UnknownSourceError,
)
from agentfootprint.agent.extension import (
    CallModel,
    CallTool,
    Extension,
    ExtensionError,
    InputRefusedError,
    RunContext,
    RunOutcome,
    ToolCallRequest,
)
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint, RunResult, StoppedEarly
from agentfootprint.agent.turn import Turn

__all__ = [
    "Agent",
    "AgentBuildError",
    "AgentBuilder",
    "AgentPauseCheckpoint",
    "CallModel",
    "CallTool",
    "ConversationCheckpoint",
    "Extension",
    "ExtensionError",
    "InputRefusedError",
    "InvalidConversationError",
    "InvalidRunInputError",
    "MemberIdentityError",
    "MessageRoleError",
    "NoConversationError",
    "ObserverDrainResult",
    "OutputSchemaError",
    "ParentRunRefusedError",
    "PendingQuestionError",
    "PolicyHaltError",
    "RunCheckpointError",
    "RunContext",
    "RunInFlightError",
    "RunInput",
    "RunOutcome",
    "RunResult",
    "StoppedEarly",
    "ToolCallRequest",
    "Turn",
    "UnknownSourceError",
    "load_conversation",
    "load_pause_checkpoint",
]
