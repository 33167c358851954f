"""Compositions: any runner composes into any other, and one record covers the whole pipeline."""

from agentfootprint.compose._base import Composition, CompositionBuildError
from agentfootprint.compose._dataflow import StepMessageError, StepOutputError
from agentfootprint.compose.conditional import Conditional
from agentfootprint.compose.graph import END, Graph, GraphBudgetError
from agentfootprint.compose.loop import Loop
from agentfootprint.compose.member_run import (
    MemberIdentityError,
    ParentRunRefusedError,
    ResumeRequestConflictError,
)
from agentfootprint.compose.parallel import Parallel
from agentfootprint.compose.patterns import debate, map_reduce, reflection, router, self_consistency
from agentfootprint.compose.sequence import Sequence
from agentfootprint.compose.workflow import Workflow

__all__ = [
    "END",
    "Composition",
    "CompositionBuildError",
    "Conditional",
    "Graph",
    "GraphBudgetError",
    "Loop",
    "MemberIdentityError",
    "Parallel",
    "ParentRunRefusedError",
    "ResumeRequestConflictError",
    "Sequence",
    "StepMessageError",
    "StepOutputError",
    "Workflow",
    "debate",
    "map_reduce",
    "reflection",
    "router",
    "self_consistency",
]
