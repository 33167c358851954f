"""What ``chart.run()`` returns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, computed_field

from agentfootprint.flow._frozen import thaw
from agentfootprint.flow.narrative import NarrativeEntry, render_narrative
from agentfootprint.flow.recorder import RecorderFailure
from agentfootprint.flow.snapshot import FlowSnapshot

_STATE: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


class FlowResult(BaseModel):
    """Final state and output, or a pause with its JSON checkpoint; the snapshot and narrative explain the run."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    output: Any = None
    paused: bool = False
    pause_data: Any = None
    checkpoint: dict[str, Any] | None = None
    snapshot: FlowSnapshot
    break_reason: str | None = None
    recorder_failures: list[RecorderFailure] = Field(default_factory=list)
    _narrative: list[NarrativeEntry] | None = PrivateAttr(default=None)
    _state: dict[str, Any] | None = PrivateAttr(default=None)
    _raw_state: dict[str, Any] | None = PrivateAttr(default=None)
    _committed: dict[str, Any] | None = PrivateAttr(default=None)

    def __init__(self, *, state: Mapping[str, Any] | None = None, **data: Any) -> None:
        """``state``: the final state as served; None: the plain copy of ``_committed``, made on first read."""
        super().__init__(**data)
        if state is not None:
            self._state = _STATE.validate_python(state)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def state(self) -> dict[str, Any]:
        """Final state (redacted under a policy): the caller's plain copy."""
        if self._state is None:
            self._state = thaw(self._committed) if self._committed is not None else {}
        return self._state

    def raw_state(self) -> dict[str, Any]:
        """Final state with REAL values even under a redaction policy: for the runtime, never to serve."""
        if self._raw_state is None and self._committed is not None:
            self._raw_state = thaw(self._committed)  # copied on first use: the run is over, its state is final
        return self._raw_state if self._raw_state is not None else self.state

    def committed_state(self) -> Mapping[str, Any]:
        """The final root state as committed (REAL values, read-only, nothing copied): for the runtime to read."""
        return self._committed if self._committed is not None else self.raw_state()

    @property
    def commit_log(self) -> list[Any]:
        return self.snapshot.commit_log

    @property
    def narrative(self) -> list[NarrativeEntry]:
        """Readable sentences per stage, step, decision, fork, loop, subflow, pause and error."""
        if self._narrative is None:
            self._narrative = render_narrative(self.snapshot)
        return self._narrative

    def narrative_text(self) -> str:
        return "\n".join("  " * e.depth + e.text for e in self.narrative)
