"""Run one spec in this process: import the factory, build a fresh agent, ablate, run, return a JSON-safe outcome."""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from agentfootprint._loader import FactoryPathError, import_path
from agentfootprint._sync import run_sync
from agentfootprint.agent import Agent, RunResult
from agentfootprint.scale.spec import AgentFactoryError, RunOutcome, RunSpec, describe_error

AgentFactory = Callable[[], Agent]


@functools.lru_cache(maxsize=128)
def load_agent_factory(path: str) -> AgentFactory:
    """Import ``module:function`` (cached per process; the current directory is importable, as for ``serve``) and
    return the callable; ``AgentFactoryError`` if not."""
    try:
        value = import_path(path, from_cwd=True)
    except FactoryPathError as err:
        raise AgentFactoryError(f"agent factory: {err}") from None
    if isinstance(value, Agent) or not callable(value):
        raise AgentFactoryError("an agent factory must be a no-argument function returning an Agent")
    factory: AgentFactory = value
    return factory


def build_agent(path: str) -> Agent:
    """A fresh Agent from the factory at ``path``."""
    agent = load_agent_factory(path)()
    if not isinstance(agent, Agent):
        raise AgentFactoryError(f"agent factory {path!r} returned {type(agent).__name__}, expected an Agent")
    return agent


def _recording(source: Agent | RunResult | None) -> dict[str, Any] | None:
    """The run's recording as JSON: a result's own record, or (after a crash) the agent's latest leg."""
    if source is None or source.last_snapshot() is None:
        return None
    from agentfootprint.explain.recording import recording_of

    try:
        return recording_of(source).model_dump(mode="json")
    except Exception:
        return None


def worker_label() -> str:
    """``host:pid`` of the process that ran a spec."""
    return f"{socket.gethostname()}:{os.getpid()}"


async def run_spec(spec: RunSpec) -> RunOutcome:
    """Run ``spec`` on a fresh agent; every failure becomes an ``error`` outcome (never raised)."""
    started = time.perf_counter()
    agent: Agent | None = None
    try:
        agent = build_agent(spec.agent_factory)
        if spec.ablate:
            agent = agent.without(*spec.ablate)
        kwargs: dict[str, Any] = {"identity": spec.identity, "seed": spec.seed}
        if spec.history:
            kwargs["continue_from"] = {"run_id": "rerun", "history": spec.history}
        result = await agent.run(spec.message, **kwargs)
    except Exception as exc:
        return RunOutcome(
            status="error",
            error=describe_error(exc),
            recording=_recording(agent),
            elapsed_s=time.perf_counter() - started,
            worker=worker_label(),
        )
    return RunOutcome(
        status=result.status,
        answer=result.answer,
        run_id=result.run_id,
        recording=_recording(result),
        elapsed_s=time.perf_counter() - started,
        worker=worker_label(),
    )


def run_spec_json(spec_json: str) -> str:
    """Blocking JSON-in, JSON-out twin of :func:`run_spec` (what a Ray task runs)."""
    try:
        spec = RunSpec.model_validate_json(spec_json)
    except Exception as exc:
        return RunOutcome(status="error", error=describe_error(exc), worker=worker_label()).model_dump_json()
    return run_sync(run_spec(spec), "await run_spec(...)").model_dump_json()
