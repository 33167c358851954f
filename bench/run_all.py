"""Run every benchmark in this folder and write JSON results to bench/results/."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent
ORDER = [
    "imports.py",
    "engine.py",
    "agent.py",
    "explain.py",
    "ctxbug.py",
    "citations.py",
    "host.py",
    "scale.py",
    "mcp_bench.py",
    "mcp_limits.py",
    "long_runs.py",
    "observers.py",
    "hostile_input.py",
    "fork.py",
    "interop.py",
    "interop_frameworks.py",
    "explorer.py",
]

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    wanted = sys.argv[1:] or [n for n in ORDER if (HERE / n).exists()]
    for name in wanted:
        print(f"== {name}", flush=True)
        runpy.run_path(str(HERE / name), run_name="__main__")
