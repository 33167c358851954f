"""The Agent: a recorded ReAct loop on the flowchart engine."""

from agentfootprint.agent.agent import Agent, AgentBuilder, load_conversation, load_pause_checkpoint
from agentfootprint.agent.errors import (
    AgentBuildError,
    InvalidConversationError,
    NoConversationError,
    OutputSchemaError,
    PendingQuestionError,
    PolicyHaltError,
    RunCheckpointError,
    RunInFlightError,
    UnknownSourceError,
)
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint, RunResult, StoppedEarly
from agentfootprint.agent.run_input import InvalidRunInputError, RunInput, normalize_run_input

__all__ = [
    "Agent",
    "AgentBuildError",
    "AgentBuilder",
    "AgentPauseCheckpoint",
    "ConversationCheckpoint",
    "InvalidConversationError",
    "InvalidRunInputError",
    "NoConversationError",
    "OutputSchemaError",
    "PendingQuestionError",
    "PolicyHaltError",
    "RunCheckpointError",
    "RunInFlightError",
    "RunInput",
    "RunResult",
    "StoppedEarly",
    "UnknownSourceError",
    "load_conversation",
    "load_pause_checkpoint",
    "normalize_run_input",
]
