"""Import cost: ``import agentfootprint`` against ``import pydantic_ai``, in fresh processes, side by side.

Each round runs three fresh interpreters in turn: a bare one (``pass``), one importing agentfootprint and one
importing pydantic_ai; an import's cost is its process CPU time (user + system) minus the bare one's of the same
round, and the ratio is taken round by round (so a machine that drifts in speed moves both sides). Budget: <= 0.5.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys

from _common import write_results

ROUNDS = 15
BUDGET = 0.5
PROBES = {
    "bare": "pass",
    "agentfootprint": "import agentfootprint",
    "pydantic_ai": "import pydantic_ai",
}


def _cpu(code: str) -> float:
    """CPU seconds (user + system) of one fresh interpreter running ``code``: on a shared machine the process is
    not charged for the time it waited for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _modules(code: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(len(sys.modules))"], check=True, capture_output=True
    )
    return int(out.stdout.strip())


def main() -> None:
    for code in PROBES.values():  # warm the file cache and the bytecode
        _cpu(code)
    costs: dict[str, list[float]] = {"agentfootprint": [], "pydantic_ai": []}
    ratios: list[float] = []
    for _ in range(ROUNDS):
        bare = _cpu(PROBES["bare"])
        ours = max(_cpu(PROBES["agentfootprint"]) - bare, 1e-6)
        theirs = max(_cpu(PROBES["pydantic_ai"]) - bare, 1e-6)
        costs["agentfootprint"].append(ours)
        costs["pydantic_ai"].append(theirs)
        ratios.append(ours / theirs)
    ratio = statistics.median(ratios)
    payload = {
        "ratios": {"import.vs_pydantic_ai": round(ratio, 3)},
        "targets": {"import.vs_pydantic_ai": BUDGET},
        "rounds": ROUNDS,
        "import_ms_median": {k: round(statistics.median(v) * 1000, 2) for k, v in costs.items()},
        "modules_loaded": {k: _modules(code) for k, code in PROBES.items()},
        "ratio_median": round(ratio, 3),
        "ratio_min": round(min(ratios), 3),
        "ratio_max": round(max(ratios), 3),
        "budget": BUDGET,
        "within_budget": ratio <= BUDGET,
    }
    path = write_results("imports", payload)
    print(f"import agentfootprint / import pydantic_ai = {ratio:.3f} (budget {BUDGET}); {path}")


if __name__ == "__main__":
    main()
