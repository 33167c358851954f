"""Context engineering: every piece of context is an Injection (slot × trigger × cache), born tracked."""

from agentfootprint.context.budget import (
    ContextBudget,
    WindowPolicy,
)
from agentfootprint.context.factories import define_fact, define_instruction, define_skill, define_steering
from agentfootprint.context.injection import (
    Injection,
    InjectionContext,
    InvalidInjectionError,
    ToolReturn,
    Trigger,
)
from agentfootprint.context.memory import (
    InMemoryMemoryStore,
    MemoryEntry,
    MemoryInjection,
    MemoryNamespace,
    MemoryStore,
    SQLiteMemoryStore,
    define_memory,
    memory_namespace,
)
from agentfootprint.context.rag import BM25Index, Chunk, RagInjection, define_rag
from agentfootprint.context.window import (
    SUMMARY_PREFIX,
    FoldedSpan,
    SummarizeOldest,
    TokenBudgetWindow,
    folded_span_for,
    is_compacted_summary,
    summarize_oldest,
    token_budget,
)

__all__ = [
    "SUMMARY_PREFIX",
    "BM25Index",
    "Chunk",
    "ContextBudget",
    "FoldedSpan",
    "InMemoryMemoryStore",
    "Injection",
    "InjectionContext",
    "InvalidInjectionError",
    "MemoryEntry",
    "MemoryInjection",
    "MemoryNamespace",
    "MemoryStore",
    "RagInjection",
    "SQLiteMemoryStore",
    "SummarizeOldest",
    "TokenBudgetWindow",
    "ToolReturn",
    "Trigger",
    "WindowPolicy",
    "define_fact",
    "define_instruction",
    "define_memory",
    "define_rag",
    "define_skill",
    "define_steering",
    "folded_span_for",
    "is_compacted_summary",
    "memory_namespace",
    "summarize_oldest",
    "token_budget",
]
