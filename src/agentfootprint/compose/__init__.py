"""Compositions: any runner composes into any other, and one record covers the whole pipeline."""

from agentfootprint.compose._base import Composition, CompositionBuildError
from agentfootprint.compose._choice import ModelChoiceError
from agentfootprint.compose._dataflow import StepMessageError, StepOutputError
from agentfootprint.compose.conditional import Conditional
from agentfootprint.compose.graph import END, Graph, GraphBudgetError
from agentfootprint.compose.llm_router import LLMRouter, llm_router
from agentfootprint.compose.loop import Loop
from agentfootprint.compose.member_run import (
    MemberIdentityError,
    ParentRunRefusedError,
    ResumeRequestConflictError,
)
from agentfootprint.compose.parallel import Parallel
from agentfootprint.compose.patterns import (
    debate,
    handoff_marker,
    llm_swarm,
    map_reduce,
    reflection,
    router,
    self_consistency,
    swarm,
)
from agentfootprint.compose.sequence import Sequence
from agentfootprint.compose.tree_of_thoughts import TreeOfThoughts, tree_of_thoughts
from agentfootprint.compose.workflow import Workflow

__all__ = [
    "END",
    "Composition",
    "CompositionBuildError",
    "Conditional",
    "Graph",
    "GraphBudgetError",
    "LLMRouter",
    "Loop",
    "MemberIdentityError",
    "ModelChoiceError",
    "Parallel",
    "ParentRunRefusedError",
    "ResumeRequestConflictError",
    "Sequence",
    "StepMessageError",
    "StepOutputError",
    "TreeOfThoughts",
    "Workflow",
    "debate",
    "handoff_marker",
    "llm_router",
    "llm_swarm",
    "map_reduce",
    "reflection",
    "router",
    "self_consistency",
    "swarm",
    "tree_of_thoughts",
]
