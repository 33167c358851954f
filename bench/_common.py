"""Shared helpers for benchmarks: timing, retained memory, JSON results."""

from __future__ import annotations

import gc
import json
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


async def time_async(
    fn: Callable[[], Awaitable[Any]],
    *,
    repeat: int = 7,
    warmup: int = 2,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Median time (seconds; wall unless ``clock`` says otherwise) of ``fn`` over ``repeat`` runs after ``warmup``.

    ``clock=time.process_time`` counts this process's CPU time only: on a shared machine a waiting process is not
    charged for another's work, so in-process comparisons stay stable."""
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        t0 = clock()
        await fn()
        samples.append(clock() - t0)
    return statistics.median(samples)


async def retained_bytes(fn: Callable[[], Awaitable[Any]]) -> int:
    """Bytes still allocated after ``fn`` returns while its result is kept alive (the record's footprint)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = await fn()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del result
    return after - before


def write_results(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    payload = {
        "benchmark": name,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **payload,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path
