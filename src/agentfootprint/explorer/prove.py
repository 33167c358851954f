"""Prove from the page: a localization of one recorded run, rerun on an agent built by the factory, watched live
(reruns done, arms sampled, the sets flipping most so far) and cancellable."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.explain import localize_context_bug
from agentfootprint.explain.localize import DEFAULT_SIMILARITY_THRESHOLD
from agentfootprint.explain.recording import Recording
from agentfootprint.explain.scoring import answer_similarity
from agentfootprint.explorer.catalog import ExplorerError
from agentfootprint.flow import FlowSnapshot

MAX_JOBS = 16
BEST_SHOWN = 5


class LocalizeRequest(BaseModel):
    """What the page sends to start a localization (``POST /api/localize``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str = Field(min_length=1, max_length=200)
    mode: Literal["single", "group", "auto"] = "auto"
    samples: int = Field(default=3, ge=1, le=50)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    budget: int | None = Field(default=None, ge=1, le=100_000)
    """The most reruns the localization may perform (``max_reruns``); None for no cap."""
    keyword: str | None = Field(default=None, min_length=1, max_length=200)
    """The outcome changed when this text is in one answer and not the other (default: the answers differ)."""


class _Arm:
    __slots__ = ("flips", "samples")

    def __init__(self) -> None:
        self.samples = 0
        self.flips = 0


class Job:
    """One localization: its live progress, its report when done, and the task running it."""

    def __init__(self, job_id: str, request: LocalizeRequest) -> None:
        self.id = job_id
        self.request = request
        self.state: Literal["running", "done", "cancelled", "failed"] = "running"
        self.reruns = 0
        self.arms: dict[tuple[str, ...], _Arm] = {}
        self.report: dict[str, Any] | None = None
        self.error: str | None = None
        self.version = 0
        self.task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    def touch(self) -> None:
        self.version += 1
        self._changed.set()

    async def wait(self, seen: int, timeout: float) -> None:
        """Until the job moves past version ``seen`` (or ``timeout`` seconds pass)."""
        if self.version != seen:
            return
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass

    def cancelled(self) -> None:
        """The task was cancelled (before or while it ran)."""
        if self.state == "running":
            self.state = "cancelled"
            self.touch()

    def observe(self, ablated: tuple[str, ...], flipped: bool) -> None:
        arm = self.arms.setdefault(ablated, _Arm())
        arm.samples += 1
        arm.flips += int(flipped)
        self.reruns += 1
        self.touch()

    def progress(self) -> dict[str, Any]:
        """The job as JSON: state, reruns done, every arm's flips so far, the best sets, and the report."""
        ranked = sorted(
            ((ids, a) for ids, a in self.arms.items() if ids and a.flips),
            key=lambda item: (-item[1].flips / item[1].samples, len(item[0]), item[0]),
        )[:BEST_SHOWN]
        arms = [{"ids": list(ids), "samples": a.samples, "flips": a.flips} for ids, a in self.arms.items()]
        best = [{"ids": list(ids), "samples": a.samples, "flips": a.flips} for ids, a in ranked]
        return {
            "job_id": self.id,
            "run_id": self.request.run_id,
            "state": self.state,
            "reruns": self.reruns,
            "arms": arms,
            "best": best,
            "report": self.report,
            "error": self.error,
        }


def outcome_changed(keyword: str | None) -> Callable[[str, str], bool]:
    """With ``keyword``: the outcome changed when it is in one answer and not the other; else explain's default
    (the answers are no longer similar)."""
    if keyword is None:
        return lambda a, b: answer_similarity(a, b) < DEFAULT_SIMILARITY_THRESHOLD
    return lambda a, b: (keyword in a) != (keyword in b)


def run_input_of(snap: FlowSnapshot) -> dict[str, Any]:
    """What the recorded run was given: its message and the conversation it continued (from its seed step)."""
    history: list[Any] = []
    seed = next((c for c in snap.commit_log if c.namespace == "" and c.stage_id == "seed"), None)
    if seed is not None:
        written = next((w.value for w in seed.writes if w.path == "history"), None)
        if isinstance(written, list):
            history = list(written[:-1]) if written and isinstance(written[-1], dict) else list(written)
    message = snap.state.get("user_message")
    return {"message": message if isinstance(message, str) else "", "history": history, "identity": None}


class _Clone:
    """One rerun's agent: runs, then tells the job which sources it ran without and whether the outcome flipped."""

    def __init__(self, inner: Any, ablated: tuple[str, ...], watch: _Watched) -> None:
        self._inner = inner
        self._ablated = ablated
        self._watch = watch

    async def run(self, input: Any, **kwargs: Any) -> Any:
        result = await self._inner.run(input, **kwargs)
        self._watch.observe(self._ablated, str(getattr(result, "answer", None) or ""))
        return result

    def last_snapshot(self) -> Any:
        return self._inner.last_snapshot()


class _Watched:
    """The recorded run bound to the factory's agent (the rerun seam explain takes), each rerun reported."""

    def __init__(self, record: Any, job: Job, changed: Callable[[str, str], bool], original: str) -> None:
        self._record = record
        self._job = job
        self._changed = changed
        self._original = original

    def observe(self, ablated: tuple[str, ...], answer: str) -> None:
        try:
            flipped = bool(self._changed(self._original, answer))
        except Exception:  # the comparison is the user's: a failure counts as no flip here, explain judges itself
            flipped = False
        self._job.observe(tuple(sorted(ablated)), flipped)

    def last_snapshot(self) -> Any:
        return self._record.last_snapshot()

    def last_run_input(self) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._record.last_run_input()
        return found

    def source_ids(self) -> dict[str, str]:
        ids: dict[str, str] = self._record.source_ids()
        return ids

    def ablatable_ids(self) -> dict[str, str]:
        ids: dict[str, str] = self._record.ablatable_ids()
        return ids

    def without(self, *source_ids: str) -> _Clone:
        return _Clone(self._record.without(*source_ids), tuple(source_ids), self)

    def run(self, input: Any, **kwargs: Any) -> Any:
        return _Clone(self._record.runner, (), self).run(input, **kwargs)

    @property
    def name(self) -> str:
        return str(getattr(self._record, "name", "agent"))


def bind_recording(rec: Recording, factory: Callable[[], Any]) -> Any:
    """A record of ``rec`` that reruns on ``factory()``'s agent (explain's rerun seam for a stored run)."""
    from agentfootprint.agent.record import RunRecord

    agent = factory()
    snap = rec.snapshot
    return RunRecord(agent, snap.run_id, snap, run_input=run_input_of(snap))


class Jobs:
    """The localizations started from the page (at most ``MAX_JOBS`` kept; the oldest finished one is dropped)."""

    def __init__(self, factory: Callable[[], Any] | None) -> None:
        self.factory = factory
        self._jobs: dict[str, Job] = {}

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise ExplorerError("no localization with this id", code="ERR_EXPLORER_NO_JOB")
        return job

    def start(self, request: LocalizeRequest, rec: Recording) -> Job:
        """Start localizing ``rec`` in the running loop; refused when no agent factory was given."""
        if self.factory is None:
            raise ExplorerError(
                "a recording alone cannot rerun: start the explorer with an agent factory (--agent module:factory)",
                code="ERR_EXPLORER_NO_AGENT",
            )
        running = [j for j in self._jobs.values() if j.state == "running"]
        if len(running) >= MAX_JOBS:
            raise ExplorerError("too many localizations are running; cancel one first", code="ERR_EXPLORER_BUSY")
        while len(self._jobs) >= MAX_JOBS:
            oldest = next(j for j in self._jobs.values() if j.state != "running")
            del self._jobs[oldest.id]
        try:
            record = bind_recording(rec, self.factory)
        except Exception as exc:
            raise ExplorerError(
                f"the agent factory failed: {type(exc).__name__}", code="ERR_EXPLORER_FACTORY"
            ) from None
        job = Job(uuid.uuid4().hex, request)
        self._jobs[job.id] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job, record))
        job.task.add_done_callback(lambda task: job.cancelled() if task.cancelled() else None)
        return job

    async def _run(self, job: Job, record: Any) -> None:
        req = job.request
        changed = outcome_changed(req.keyword)
        original = str(record.last_snapshot().state.get("answer") or "")
        watched = _Watched(record, job, changed, original)
        try:
            report = await localize_context_bug(
                watched,
                samples=req.samples,
                search=req.mode,
                confidence=req.confidence,
                max_reruns=req.budget,
                max_suspects=None,
                outcome_changed=changed,
                progress=False,
            )
        except Exception as exc:
            job.state = "failed"
            job.error = f"{type(exc).__name__}: {getattr(exc, 'code', '')}".rstrip(": ")
            job.touch()
            return
        job.report = report.model_dump(mode="json")
        job.state = "done"
        job.touch()

    def cancel(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.task is not None and not job.task.done():
            job.task.cancel()
        return job

    async def close(self) -> None:
        for job in self._jobs.values():
            if job.task is not None and not job.task.done():
                job.task.cancel()


__all__ = ["Job", "Jobs", "LocalizeRequest", "bind_recording", "outcome_changed", "run_input_of"]
