"""The long-run examples (retrieval over a knowledge base, a compacted conversation with memory) run offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_example(name: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, check=True, timeout=180
    )
    return done.stdout.splitlines()


def test_knowledge_base_example_traces_and_ablates_a_chunk() -> None:
    assert run_example("knowledge_base.py") == [
        "indexed 4 chunks from 3 documents",
        "answer: Yes: opened electronics carry a 15% restocking fee.",
        "chunk policies/refunds.md#1 of policies/refunds.md",
        "chunk policies/refunds.md#0 of policies/refunds.md",
        "without that chunk: I could not find that in the knowledge base.",
    ]


def test_long_conversation_example_stays_under_budget_and_remembers() -> None:
    assert run_example("long_conversation.py") == [
        "answer: The code is 7731.",
        "largest request: 246 tokens (budget 250)",
        "folds carried on the conversation: 10",
        "traced to: Remember: the door code is 7731. via 10 summaries",
        "memory: The code is 2048.",
        "another user: The code is unknown.",
    ]
