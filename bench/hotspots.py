"""Profile the engine's 100-stage chain and one agent turn (cProfile) into bench/results/profiles/ (git-ignored).

``python bench/hotspots.py`` writes ``engine.pstats`` and ``agent_turn.pstats`` and prints each one's top rows by own
time; read them again with ``pstats`` (or a viewer such as snakeviz) to see where a recorded stage or a turn goes.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import RESULTS
from engine import our_chain

from agent import QUESTION, our_turn_agent

PROFILES = RESULTS / "profiles"


def profile(name: str, once: Callable[[], Awaitable[Any]], times: int) -> Path:
    async def loop() -> None:
        for _ in range(times):
            await once()

    asyncio.run(loop())  # warm-up: first-call caches and imports stay out of the profile
    prof = cProfile.Profile()
    prof.enable()
    asyncio.run(loop())
    prof.disable()
    PROFILES.mkdir(parents=True, exist_ok=True)
    path = PROFILES / f"{name}.pstats"
    prof.dump_stats(path)
    print(f"== {name}: {times} runs -> {path}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    return path


if __name__ == "__main__":
    chain = our_chain(100)
    profile("engine", lambda: chain.run({"n": 0}), 30)
    agent = our_turn_agent()
    profile("agent_turn", lambda: agent.run(QUESTION), 100)
