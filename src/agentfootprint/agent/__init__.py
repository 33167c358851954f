"""The Agent: a recorded ReAct loop on the flowchart engine, and the one seam extensions plug into."""

from agentfootprint.agent._answer import (
    AnswerCheck,
    AnswerCoverage,
    AnswerNegatives,
    AnswerStanding,
    AnswerValidationError,
    AnswerValidationReport,
    AssumedValue,
    CoverageItem,
    NegativeStatement,
    PeriodEntry,
)
from agentfootprint.agent._checkpoints import load_conversation, load_pause_checkpoint
from agentfootprint.agent._clock import InvalidTimeError
from agentfootprint.agent._ledgers import DecisionLedgerError
from agentfootprint.agent._limits import WRAP_UP_INSTRUCTION, CostBudget, EmptyAnswerWarning
from agentfootprint.agent._observers import ObserverDrainResult
from agentfootprint.agent._options import InvalidRunOptionError
from agentfootprint.agent._output import OutputContractUnmet
from agentfootprint.agent._run_config import InvalidRunConfigError, RunConfig, RunConfigContext
from agentfootprint.agent._run_input import InvalidRunInputError, RunInput, normalize_run_input
from agentfootprint.agent._seal import CheckpointSealError
from agentfootprint.agent.agent import Agent
from agentfootprint.agent.builder import AgentBuilder
from agentfootprint.agent.consent import (
    ConsentDecision,
    DecisionLedger,
    InMemoryDecisionLedger,
    PostgresDecisionLedger,
    SQLiteDecisionLedger,
    check_in_approved,
    check_in_declined,
)
from agentfootprint.agent.errors import (
    AgentBuildError,
    ConversationMismatchError,
    DecisionRequiredError,
    InvalidConversationError,
    InvalidLimitError,
    MemberIdentityError,
    MessageRoleError,
    NoConversationError,
    NoOutputSchemaError,
    OptionUnavailableError,
    OutputSchemaError,
    OutputStrategyUnsupportedError,
    ParentRunRefusedError,
    PendingQuestionError,
    PolicyHaltError,
    ResumeDecisionError,
    ResumeIdentityConflictError,
    ResumeRedactionError,
    RunCheckpointError,
    RunDataError,
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
from agentfootprint.agent.llm_call import LLMCall, LLMCallBuilder, LLMCallBuildError
from agentfootprint.agent.models import AgentPauseCheckpoint, ConversationCheckpoint, RunResult, StoppedEarly
from agentfootprint.agent.recipe import AgentRecipe, define_agent_recipe
from agentfootprint.agent.turn import Turn
from agentfootprint.agent.voice import Voice

__all__ = [
    "WRAP_UP_INSTRUCTION",
    "Agent",
    "AgentBuildError",
    "AgentBuilder",
    "AgentPauseCheckpoint",
    "AgentRecipe",
    "AnswerCheck",
    "AnswerCoverage",
    "AnswerNegatives",
    "AnswerStanding",
    "AnswerValidationError",
    "AnswerValidationReport",
    "AssumedValue",
    "CallModel",
    "CallTool",
    "CheckpointSealError",
    "ConsentDecision",
    "ConversationCheckpoint",
    "ConversationMismatchError",
    "CostBudget",
    "CoverageItem",
    "DecisionLedger",
    "DecisionLedgerError",
    "DecisionRequiredError",
    "EmptyAnswerWarning",
    "Extension",
    "ExtensionError",
    "InMemoryDecisionLedger",
    "InputRefusedError",
    "InvalidConversationError",
    "InvalidLimitError",
    "InvalidRunConfigError",
    "InvalidRunInputError",
    "InvalidRunOptionError",
    "InvalidTimeError",
    "LLMCall",
    "LLMCallBuildError",
    "LLMCallBuilder",
    "MemberIdentityError",
    "MessageRoleError",
    "NegativeStatement",
    "NoConversationError",
    "NoOutputSchemaError",
    "ObserverDrainResult",
    "OptionUnavailableError",
    "OutputContractUnmet",
    "OutputSchemaError",
    "OutputStrategyUnsupportedError",
    "ParentRunRefusedError",
    "PendingQuestionError",
    "PeriodEntry",
    "PolicyHaltError",
    "PostgresDecisionLedger",
    "ResumeDecisionError",
    "ResumeIdentityConflictError",
    "ResumeRedactionError",
    "RunCheckpointError",
    "RunConfig",
    "RunConfigContext",
    "RunContext",
    "RunDataError",
    "RunInFlightError",
    "RunInput",
    "RunOutcome",
    "RunResult",
    "SQLiteDecisionLedger",
    "StoppedEarly",
    "ToolCallRequest",
    "Turn",
    "UnknownSourceError",
    "Voice",
    "check_in_approved",
    "check_in_declined",
    "define_agent_recipe",
    "load_conversation",
    "load_pause_checkpoint",
    "normalize_run_input",
]
