"""What explain works on: a record (an agent, a composition, a snapshot, a recording or its JSON), and what can
be rerun (an agent or a composition)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from agentfootprint.flow import FlowSnapshot, Recorded

if TYPE_CHECKING:
    from agentfootprint.explain.recording import Recording

RecordLike: TypeAlias = "Recorded | FlowSnapshot | Recording | Mapping[str, Any]"
"""Anything ``backtrack`` reads a run from."""


@runtime_checkable
class Rerunnable(Recorded, Protocol):
    """A runner explain can rerun: its last input, its ablatable sources, and a copy without some of them."""

    def last_run_input(self) -> dict[str, Any] | None: ...

    def source_ids(self) -> dict[str, str]: ...

    def without(self, *source_ids: str) -> Rerunnable: ...

    def run(self, input: Any, *, identity: Any = None, seed: int | None = None) -> Awaitable[Any]: ...


def as_target(target: Any) -> Any:
    """A ``RunResult`` as its run's record (explain reads a run, never its agent's memory); anything else as is."""
    if "agentfootprint.agent.models" not in sys.modules:  # no result exists before the agent layer is loaded
        return target
    from agentfootprint.agent.record import record_of

    return record_of(target)


def explained(agent: Any, run: Any) -> Any:
    """What a verb explains: ``run`` (a ``RunResult``'s record, rerun with ``agent``) when given, else ``agent``
    itself: a result's record, a recording, or an agent's latest finished run."""
    if run is None:
        return as_target(agent)
    record = as_target(run)
    if record is run:  # a recording or a snapshot: read as it is
        return record
    from agentfootprint.agent.record import bound

    runner = as_target(agent)
    return bound(record, runner) if runner is not None and runner is not record and hasattr(runner, "run") else record


__all__ = ["RecordLike", "Rerunnable", "as_target", "explained"]
