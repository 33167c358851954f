"""The recorded flowchart engine: stages over shared state, every read, write and decision kept as evidence."""

from agentfootprint.flow._frozen import FrozenDict, FrozenList, freeze, thaw
from agentfootprint.flow.builder import DeciderBuilder, FlowChartBuilder, SelectorBuilder, flow_chart
from agentfootprint.flow.cancel import CancelToken
from agentfootprint.flow.causal import CausalEdge, CausalNode, CausalSlice, causal_chain, slice_for_key
from agentfootprint.flow.chart import FlowChart
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.decide import DecisionEvidence, DecisionResult, decide, select
from agentfootprint.flow.errors import (
    ChartBuildError,
    FlowCancelledError,
    FlowError,
    InvalidCheckpointError,
    InvalidStateKeyError,
    LoopLimitError,
    NotSerializableError,
    ParallelBranchError,
    ParallelMergeConflictError,
    PauseNotAllowedError,
    PendingAnswersError,
    UnknownBranchError,
)
from agentfootprint.flow.narrative import NarrativeEntry, narrative_text, render_narrative
from agentfootprint.flow.pause import FlowCheckpoint, pause, resume_answer
from agentfootprint.flow.recorder import Recorder, RecorderFailure
from agentfootprint.flow.recording import RecordingDials
from agentfootprint.flow.redaction import REDACTED, RedactionPolicy, Redactor
from agentfootprint.flow.result import FlowResult
from agentfootprint.flow.scope import Scope
from agentfootprint.flow.seal import CheckpointSealError, SealKey, check_seal, seal, seal_key
from agentfootprint.flow.snapshot import FlowSnapshot, Recorded, TreeNode

__all__ = [
    "REDACTED",
    "CancelToken",
    "CausalEdge",
    "CausalNode",
    "CausalSlice",
    "ChartBuildError",
    "CheckpointSealError",
    "Commit",
    "DeciderBuilder",
    "DecisionEvidence",
    "DecisionResult",
    "FlowCancelledError",
    "FlowChart",
    "FlowChartBuilder",
    "FlowCheckpoint",
    "FlowError",
    "FlowResult",
    "FlowSnapshot",
    "FrozenDict",
    "FrozenList",
    "InvalidCheckpointError",
    "InvalidStateKeyError",
    "LoopLimitError",
    "NarrativeEntry",
    "NotSerializableError",
    "ParallelBranchError",
    "ParallelMergeConflictError",
    "PauseNotAllowedError",
    "PendingAnswersError",
    "Recorded",
    "Recorder",
    "RecorderFailure",
    "RecordingDials",
    "RedactionPolicy",
    "Redactor",
    "Scope",
    "SealKey",
    "SelectorBuilder",
    "TreeNode",
    "UnknownBranchError",
    "Write",
    "causal_chain",
    "check_seal",
    "decide",
    "flow_chart",
    "freeze",
    "narrative_text",
    "pause",
    "render_narrative",
    "resume_answer",
    "seal",
    "seal_key",
    "select",
    "slice_for_key",
    "thaw",
]
