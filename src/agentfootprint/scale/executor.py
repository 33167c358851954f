"""The Executor seam: submit independent run specs, get outcomes back; the default runs them here on asyncio."""

from __future__ import annotations

import asyncio
import weakref
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ValidationError

from agentfootprint.errors import validation_field
from agentfootprint.scale.run import run_spec, worker_label
from agentfootprint.scale.spec import RunOutcome, RunSpec, ScaleError, describe_error

ProgressFn = Callable[[int, int, RunOutcome], None]
Rerun = Callable[[int, Sequence[str]], Awaitable[str]]


class RerunFailedError(ScaleError, RuntimeError):
    """A rerun submitted to an executor came back as an error outcome; names the error type, never its text."""

    code = "ERR_RERUN_FAILED"


@runtime_checkable
class Executor(Protocol):
    """Runs one spec somewhere and returns its outcome; run failures come back as ``error`` outcomes."""

    async def submit(self, spec: RunSpec) -> RunOutcome: ...

    def rerunner(
        self, agent_factory: str, run_input: Mapping[str, Any], *, read: Callable[[RunOutcome], str] | None = None
    ) -> Rerun: ...


class ExecutorBase(ABC):
    """What every executor shares: ``rerunner`` (the seam explain's reruns use), built on ``submit``."""

    @abstractmethod
    async def submit(self, spec: RunSpec) -> RunOutcome:
        """Run ``spec`` somewhere (each executor says where)."""

    def rerunner(
        self, agent_factory: str, run_input: Mapping[str, Any], *, read: Callable[[RunOutcome], str] | None = None
    ) -> Rerun:
        """``rerun(seed, ablate) -> answer`` (or ``read(outcome)``) re-running ``run_input`` on agents built by
        ``agent_factory`` here.

        Refuses (``ScaleError``) at once when the input cannot travel as a ``RunSpec``; a failed rerun raises
        ``RerunFailedError``."""
        identity = run_input.get("identity")
        base = {
            "agent_factory": agent_factory,
            "message": run_input.get("message"),
            "identity": identity.model_dump(exclude_none=True) if isinstance(identity, BaseModel) else identity,
            "history": run_input.get("history") or [],
        }
        try:
            RunSpec(**base)
        except ValidationError as err:
            raise ScaleError(f"the rerun cannot travel as a RunSpec: field '{validation_field(err, 'spec')}'") from None

        async def rerun(seed: int, ablate: Sequence[str]) -> str:
            outcome = await self.submit(RunSpec(**base, ablate=list(ablate), seed=seed))
            if read is not None:
                text = read(outcome)  # reads the recording even of a failed rerun (its model calls count)
            if outcome.error is not None:
                raise RerunFailedError(f"rerun failed on the executor: {outcome.error.type}")
            return text if read is not None else str(outcome.answer or "")

        return rerun


async def run_specs(
    executor: Executor,
    specs: Sequence[RunSpec],
    *,
    concurrency: int | None = None,
    progress: ProgressFn | None = None,
) -> list[RunOutcome]:
    """Submit every spec (at most ``concurrency`` in flight); outcomes in spec order; ``progress(done, total, o)``."""
    if concurrency is not None and concurrency < 1:
        raise ScaleError("concurrency must be >= 1")
    total = len(specs)
    sem = asyncio.Semaphore(concurrency or max(total, 1))
    done = 0

    async def one(spec: RunSpec) -> RunOutcome:
        nonlocal done
        async with sem:
            try:
                outcome = await executor.submit(spec)
            except Exception as exc:
                outcome = RunOutcome(status="error", error=describe_error(exc), worker=worker_label())
        done += 1
        if progress is not None:
            progress(done, total, outcome)
        return outcome

    return list(await asyncio.gather(*(one(s) for s in specs)))


class InProcessExecutor(ExecutorBase):
    """Runs specs in this process on the running event loop, at most ``concurrency`` at a time."""

    def __init__(self, concurrency: int = 8) -> None:
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ScaleError("InProcessExecutor concurrency must be an int >= 1")
        self.concurrency = concurrency
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"InProcessExecutor(concurrency={self.concurrency})"

    def _sem(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._sems.get(loop)
        if sem is None:
            sem = self._sems[loop] = asyncio.Semaphore(self.concurrency)
        return sem

    async def submit(self, spec: RunSpec) -> RunOutcome:
        """Run ``spec`` here once a concurrency slot is free."""
        async with self._sem():
            return await run_spec(spec)

    async def map(self, specs: Sequence[RunSpec], *, progress: ProgressFn | None = None) -> list[RunOutcome]:
        """Every spec, ``concurrency`` at a time; outcomes in spec order."""
        return await run_specs(self, specs, concurrency=self.concurrency, progress=progress)
