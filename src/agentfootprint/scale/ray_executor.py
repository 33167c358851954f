"""``RayExecutor``: each run spec becomes a Ray task that imports the factory, runs, and returns the outcome as JSON."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentfootprint.scale.executor import ExecutorBase, ProgressFn, run_specs
from agentfootprint.scale.run import run_spec_json, worker_label
from agentfootprint.scale.spec import (
    RayExecutorError,
    RayUnavailableError,
    RunOutcome,
    RunSpec,
    ScaleError,
    describe_error,
    scrub_message,
)

RAY_HINT = "RayExecutor needs ray: pip install 'agentfootprint[ray]'"


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(RAY_HINT) from None
    return ray


def _ray_task(spec_json: str) -> str:
    """The body of every Ray task: JSON spec in, JSON outcome out (plain data both ways)."""
    return run_spec_json(spec_json)


class RayExecutor(ExecutorBase):
    """Runs each spec as a Ray task: a new local Ray (``address=None``) or a running cluster (``"auto"``, ``"ray://…"``).

    If Ray is already initialized in this process, that connection is used as is; ``init_kwargs`` go to ``ray.init``."""

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        cpus_per_run: float = 1.0,
        runtime_env: dict[str, Any] | None = None,
        max_in_flight: int | None = None,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if num_cpus is not None and (not isinstance(num_cpus, int) or num_cpus < 1):
            raise ScaleError("RayExecutor num_cpus must be an int >= 1")
        if cpus_per_run <= 0 or (max_in_flight is not None and max_in_flight < 1):
            raise ScaleError("RayExecutor cpus_per_run must be > 0 and max_in_flight >= 1")
        self.address = address
        self.num_cpus = num_cpus
        self.cpus_per_run = cpus_per_run
        self.runtime_env = runtime_env
        self.max_in_flight = max_in_flight
        self.init_kwargs = dict(init_kwargs or {})
        self._remote: Any = None
        self._started_ray = False

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r}, num_cpus={self.num_cpus!r})"

    def start(self) -> None:
        """Connect to (or start) Ray now; ``submit`` does this on first use."""
        if self._remote is not None:
            return
        ray = _import_ray()
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, **self.init_kwargs}
            kwargs["address"] = self.address or "local"
            if self.address is None and self.num_cpus is not None:
                kwargs["num_cpus"] = self.num_cpus
            if self.runtime_env is not None:
                kwargs["runtime_env"] = self.runtime_env
            try:
                ray.init(**kwargs)
            except Exception as exc:
                where = self.address or "a local Ray instance"
                raise RayExecutorError(scrub_message(f"could not start or reach {where}: {exc}")) from None
            self._started_ray = True
        self._remote = ray.remote(num_cpus=self.cpus_per_run, max_retries=0)(_ray_task)

    async def submit(self, spec: RunSpec) -> RunOutcome:
        """Run ``spec`` as one Ray task; a lost worker or task failure comes back as an ``error`` outcome."""
        self.start()
        ref = self._remote.remote(spec.model_dump_json())
        try:
            text = await asyncio.wrap_future(ref.future())
        except Exception as exc:
            return RunOutcome(status="error", error=describe_error(exc), worker=worker_label())
        return RunOutcome.model_validate_json(text)

    async def map(self, specs: Sequence[RunSpec], *, progress: ProgressFn | None = None) -> list[RunOutcome]:
        """Every spec as a Ray task (Ray schedules by CPU; ``max_in_flight`` caps submissions); spec order kept."""
        return await run_specs(self, specs, concurrency=self.max_in_flight, progress=progress)

    def shutdown(self) -> None:
        """Disconnect if this executor called ``ray.init`` (a local instance stops; a remote cluster keeps running)."""
        if self._remote is None:
            return
        ray = _import_ray()
        self._remote = None
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
        self._started_ray = False
