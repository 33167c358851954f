"""Scale fixtures: a local Ray (2 CPUs, no dashboard, token auth off) and the hosting tests' throwaway PostgreSQL."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentfootprint.scale import RayExecutor

_HOSTING_CONFTEST = Path(__file__).parents[1] / "hosting" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_af_hosting_fixtures", _HOSTING_CONFTEST)
assert _spec is not None and _spec.loader is not None
_hosting = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_hosting)

postgres_dsn = _hosting.postgres_dsn
free_port = _hosting.free_port


def normalized(recording: dict[str, Any] | None) -> Any:
    """A recording without what differs run to run (run ids, timings), for equality across executors."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("run_id", "elapsed_ms")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(recording)


@pytest.fixture(scope="session")
def ray_executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayExecutor]:
    """One local Ray instance for the session (``num_cpus=2``, no dashboard, ``RAY_AUTH_MODE=disabled``)."""
    pytest.importorskip("ray", reason="ray is not installed (pip install 'agentfootprint[ray]')")
    previous = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # no usage reporting: tests stay off the network
    import ray

    if ray.is_initialized():
        pytest.skip("a Ray instance is already initialized in this process")
    temp = tmp_path_factory.mktemp("ray")
    executor = RayExecutor(
        num_cpus=2,
        init_kwargs={
            "_temp_dir": str(temp),
            "object_store_memory": 200 * 1024**2,
            "_node_ip_address": "127.0.0.1",
            "include_dashboard": False,
        },
    )
    try:
        executor.start()
        yield executor
    finally:
        executor.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
        if previous is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = previous
