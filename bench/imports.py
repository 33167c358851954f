"""Import cost: ``import agentfootprint`` against ``import pydantic_ai``, in fresh processes, side by side.

Each round runs three fresh interpreters in turn: a bare one (``pass``), one importing agentfootprint and one
importing pydantic_ai; an import's cost is its process CPU time (user + system) minus the bare one's of the same
round, and the ratio is taken round by round (so a machine that drifts in speed moves both sides). Budget: <= 0.5.

``import agentfootprint`` loads only the package root (every public name resolves on first use), so the bench also
reports what a user's first line costs: ``from agentfootprint import Agent`` against ``from pydantic_ai import Agent``.
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
    "agentfootprint_agent": "from agentfootprint import Agent",
    "pydantic_ai_agent": "from pydantic_ai import Agent",
}
PAIRS = {  # ratio name -> (ours, theirs)
    "import.vs_pydantic_ai": ("agentfootprint", "pydantic_ai"),
    "import.agent_vs_pydantic_ai_agent": ("agentfootprint_agent", "pydantic_ai_agent"),
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
    costs: dict[str, list[float]] = {name: [] for name in PROBES if name != "bare"}
    ratios: dict[str, list[float]] = {pair: [] for pair in PAIRS}
    for _ in range(ROUNDS):
        bare = _cpu(PROBES["bare"])
        for name in costs:
            costs[name].append(max(_cpu(PROBES[name]) - bare, 1e-6))
        for pair, (ours, theirs) in PAIRS.items():
            ratios[pair].append(costs[ours][-1] / costs[theirs][-1])
    main = ratios["import.vs_pydantic_ai"]
    ratio = statistics.median(main)
    payload = {
        "ratios": {pair: round(statistics.median(values), 3) for pair, values in ratios.items()},
        "targets": {"import.vs_pydantic_ai": BUDGET},
        "rounds": ROUNDS,
        "import_ms_median": {k: round(statistics.median(v) * 1000, 2) for k, v in costs.items()},
        "modules_loaded": {k: _modules(code) for k, code in PROBES.items()},
        "ratio_median": round(ratio, 3),
        "ratio_min": round(min(main), 3),
        "ratio_max": round(max(main), 3),
        "budget": BUDGET,
        "within_budget": ratio <= BUDGET,
    }
    path = write_results("imports", payload)
    agent = round(statistics.median(ratios["import.agent_vs_pydantic_ai_agent"]), 3)
    print(f"import agentfootprint / import pydantic_ai = {ratio:.3f} (budget {BUDGET}); Agent: {agent}; {path}")


if __name__ == "__main__":
    main()
