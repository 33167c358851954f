"""What explain works on: a record (an agent, a composition, a snapshot, a recording or its JSON), and what can
be rerun (an agent or a composition)."""

from __future__ import annotations

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


__all__ = ["RecordLike", "Rerunnable"]
