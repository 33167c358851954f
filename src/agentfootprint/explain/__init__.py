"""Explain: backtrack an answer to the context that reached it, rank suspects, prove them by ablation, diff runs."""

from agentfootprint.explain._diff import RunDiff, diff
from agentfootprint.explain._runs import WhatIfError
from agentfootprint.explain._slice import forward_slice
from agentfootprint.explain._timeline import (
    ForeignLegError,
    KeyChange,
    KeyWrite,
    RunTimeline,
    TimelineError,
    TimelineStep,
    timeline,
)
from agentfootprint.explain.backtrack import Backtrack, BacktrackError, Hop, SourceTrail, backtrack
from agentfootprint.explain.dropped import (
    DroppedContext,
    RestorationError,
    RestorationReport,
    confirm_by_restoration,
    find_dropped_context,
)
from agentfootprint.explain.localize import (
    CulpritSet,
    LocalizationReport,
    LocalizeError,
    RerunReport,
    RestoreCheck,
    Suspect,
    localize_context_bug,
    localize_sync,
    rank_suspects,
    rerun_without_sources,
)
from agentfootprint.explain.recording import (
    InvalidRecordingError,
    Recording,
    load_recording,
    recording_of,
    save_recording,
)
from agentfootprint.explain.report import report_html
from agentfootprint.explain.scoring import (
    CharFrequencyEmbedder,
    Embedder,
    LexicalScorer,
    RankingConfidence,
    Scorer,
    SemanticScorer,
    lexical,
    ranking_confidence,
    semantic,
)

__all__ = [
    "Backtrack",
    "BacktrackError",
    "CharFrequencyEmbedder",
    "CulpritSet",
    "DroppedContext",
    "Embedder",
    "ForeignLegError",
    "Hop",
    "InvalidRecordingError",
    "KeyChange",
    "KeyWrite",
    "LexicalScorer",
    "LocalizationReport",
    "LocalizeError",
    "RankingConfidence",
    "Recording",
    "RerunReport",
    "RestorationError",
    "RestorationReport",
    "RestoreCheck",
    "RunDiff",
    "RunTimeline",
    "Scorer",
    "SemanticScorer",
    "SourceTrail",
    "Suspect",
    "TimelineError",
    "TimelineStep",
    "WhatIfError",
    "backtrack",
    "confirm_by_restoration",
    "diff",
    "find_dropped_context",
    "forward_slice",
    "lexical",
    "load_recording",
    "localize_context_bug",
    "localize_sync",
    "rank_suspects",
    "ranking_confidence",
    "recording_of",
    "report_html",
    "rerun_without_sources",
    "save_recording",
    "semantic",
    "timeline",
]
