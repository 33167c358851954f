"""The composition examples run offline and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_example(name: str) -> str:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, check=True, timeout=120
    ).stdout


def test_support_desk_graph_localizes_the_wrong_answer_to_one_specialist_fact() -> None:
    """R003-16: a Graph with a cycle; its wrong answer is backtracked and localized to the billing fact."""
    out = run_example("support_desk_graph.py")
    assert "answer: OK: APPROVE the refund of A-1001" in out
    assert "path: triage -> billing -> review -> billing -> review" in out
    assert "VIA      review#" in out and "out:billing handed over from billing's answer" in out
    assert "BORN     define_fact('vip-rule')" in out
    assert "fact 'vip-rule' score" in out and "CONFIRMED  CAUSAL: ablating fact 'vip-rule' flipped" in out
    assert "NOT CONFIRMED: ablating fact 'refund-policy'" in out and "NOT CONFIRMED: ablating fact 'tone'" in out
