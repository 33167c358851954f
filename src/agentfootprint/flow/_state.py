"""Per-run bookkeeping of the executor: the log, runtime ids, visits, namespaces, recorders, snapshots."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from agentfootprint.flow._frozen import EMPTY_LIST, FrozenDict, freeze, thaw
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._trusted import shape, trusted
from agentfootprint.flow.cancel import CancelToken
from agentfootprint.flow.chart import FlowChart, Node
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.errors import FlowCancelledError
from agentfootprint.flow.pause import _NO_ANSWER
from agentfootprint.flow.recorder import Dispatch, Recorder, RecorderFailure
from agentfootprint.flow.recording import DEFAULT_DIALS, RecordingDials
from agentfootprint.flow.redaction import RedactionPolicy, Redactor
from agentfootprint.flow.scope import check_key
from agentfootprint.flow.snapshot import FlowSnapshot

_commit = trusted(Commit)
_write = trusted(Write)
_STAGE_FIELDS_SET = (
    *("idx", "stage_id", "runtime_stage_id", "stage_name", "namespace", "redacted_paths", "description"),
    *("kind", "reads", "read_values", "writes", "emits", "parent_runtime_stage_id", "visit", "break_reason"),
    *("used_args", "decision", "control_idx"),
)
"""The fields ``record`` is given for a completed stage, in the order it is given them (``record_stage``)."""
_build_stage_commit = shape(Commit, _STAGE_FIELDS_SET)
_NO_ITEMS: list[Any] = EMPTY_LIST
"""A commit's empty list (no writes, emits or redacted paths): one shared and immutable, so a record keeps none."""


class RunState:
    """Per-run bookkeeping: the log, the runtime-id counter, visit counts, namespaces, recorders."""

    def __init__(
        self,
        chart: FlowChart,
        *,
        run_id: str,
        args: Mapping[str, Any] | None,
        initial_state: Mapping[str, Any] | None,
        recorders: Iterable[Recorder],
        redaction: RedactionPolicy | None,
        cancel: CancelToken | None,
        timeout: float | None,
        deps: Any = None,
        dials: RecordingDials | None = None,
    ) -> None:
        self.chart = chart
        self.dials = dials if dials is not None else DEFAULT_DIALS
        self.deps = deps
        self.run_id = run_id
        self.args: FrozenDict = freeze(dict(args or {}))
        for key in initial_state or {}:
            check_key(key)
        self.initial_state: dict[str, Any] = thaw(dict(initial_state or {}))
        self.log: list[Commit] = []
        self.counter = 0
        self.visits: dict[str, int] = {}
        self.namespaces: dict[str, Namespace] = {"": Namespace("", self.initial_state, deps)}
        self.redactor = Redactor(redaction or RedactionPolicy())
        self.failures: list[RecorderFailure] = []
        self.dispatch = Dispatch(recorders, self.redactor, self.failures)
        self.cancel = cancel
        self.deadline = (time.monotonic() + timeout) if timeout is not None else None
        self.resume_answer: Any = _NO_ANSWER
        self.output: Any = None
        self.current_rid: str | None = None
        self.resumed_from: dict[str, Any] | None = None

    # -- ids and records -----------------------------------------------------------------------------------
    def next_rid(self, prefix: str, node_id: str) -> str:
        rid = f"{prefix}{node_id}#{self.counter}"
        self.counter += 1
        return rid

    def _redacted_paths(self, writes: Iterable[Write]) -> list[str]:
        keys = self.redactor.policy.keys  # key_redacted(path) is ``path in keys``: no call per write, none without keys
        return ([w.path for w in writes if w.path in keys] or _NO_ITEMS) if keys else _NO_ITEMS

    def _logged(self, commit: Commit) -> Commit:
        self.log.append(commit)
        if self.dispatch.on_commit:
            self.dispatch.fire("on_commit", self._served_commit(commit))
        return commit

    def record(self, node: Node, rid: str, namespace: str, **fields: Any) -> Commit:
        commit = _commit(
            idx=len(self.log),
            stage_id=node.id,
            runtime_stage_id=rid,
            stage_name=node.name,
            namespace=namespace,
            redacted_paths=self._redacted_paths(fields.get("writes", ())),
            description=node.description,
            **fields,
        )
        return self._logged(commit)

    def record_stage(
        self,
        node: Node,
        rid: str,
        namespace: str,
        kind: str,
        reads: dict[str, int | None],
        read_values: dict[str, Any] | None,
        writes: list[Write],
        emits: list[dict[str, Any]],
        parent_rid: str | None,
        visit: int,
        break_reason: str | None,
        used_args: bool,
        decision: dict[str, Any] | None,
        control_idx: int | None,
    ) -> Commit:
        """``record`` for a stage that ran to its end (these fields, in this order): the same Commit, built directly."""
        data = {
            "idx": len(self.log),
            "stage_id": node.id,
            "runtime_stage_id": rid,
            "stage_name": node.name,
            "kind": kind,
            "namespace": namespace,
            "reads": reads,
            "read_values": read_values,
            "writes": writes or _NO_ITEMS,
            "failed": False,
            "paused": False,
            "error": None,
            "redacted_paths": self._redacted_paths(writes),
            "decision": decision,
            "emits": emits or _NO_ITEMS,
            "parent_runtime_stage_id": parent_rid,
            "fork_branch": None,
            "control_idx": control_idx,
            "sources": {},
            "visit": visit,
            "break_reason": break_reason,
            "used_args": used_args,
            "description": node.description,
        }
        commit = _build_stage_commit(data)
        return self._logged(commit)

    def _served_commit(self, commit: Commit) -> Commit:
        return redact_commit(commit, self.redactor) if self.redactor.active else commit

    def check_boundary(self, node: Node) -> None:
        if self.cancel is not None and self.cancel.cancelled:
            raise FlowCancelledError(
                f"run cancelled before stage '{node.id}': {self.cancel.reason}",
                stage_id=node.id,
                reason="cancelled",
            )
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise FlowCancelledError(f"run timed out before stage '{node.id}'", stage_id=node.id, reason="timeout")

    def result_state(self) -> dict[str, Any] | None:
        """The caller's copy of the final root state when a policy redacts it; None: the result copies the committed
        state when it is first read."""
        if not self.redactor.active:
            return None
        return {k: self.redactor.redact(v, k) for k, v in thaw(self.namespaces[""].state).items()}

    # -- snapshots -----------------------------------------------------------------------------------------
    def snapshot(self, *, served: bool, final: bool = False) -> FlowSnapshot:
        """The run's record as it stands; ``final``: the run is over, so its root state is kept as committed
        (read-only values, nothing copied: no stage grows them again)."""
        red = self.redactor
        log = self.log
        root = self.namespaces[""].state
        state = dict(root) if final else thaw(root)
        initial = thaw(self.initial_state)
        subs = {name: thaw(ns.state) for name, ns in self.namespaces.items() if name}
        redacted = False
        if served and red.active:
            for c in log:
                for w in c.writes:
                    red.observe(w.path, w.value)
            for k, v in self.initial_state.items():
                red.observe(k, v)
            log = [redact_commit(c, red) for c in log]
            state = {k: red.redact(v, k) for k, v in state.items()}
            initial = {k: red.redact(v, k) for k, v in initial.items()}
            subs = {n: {k: red.redact(v, k) for k, v in s.items()} for n, s in subs.items()}
            redacted = True
        return FlowSnapshot(
            run_id=self.run_id,
            chart_id=self.chart.id,
            chart_name=self.chart.name,
            state=state,
            initial_state=initial,
            subflow_states=subs,
            commit_log=list(log),
            redacted=redacted,
            resumed_from=dict(self.resumed_from) if self.resumed_from is not None else None,
        )


def redact_commit(commit: Commit, red: Redactor) -> Commit:
    """A copy of a commit with redacted values replaced (the original keeps real values)."""
    writes = [
        _write(path=w.path, verb=w.verb, value=red.redact(w.value, w.path), read_keys=w.read_keys)
        for w in commit.writes
    ]
    seen = commit.read_values
    read_values = {k: red.redact(v, k) for k, v in seen.items()} if seen is not None else None
    emits = [{"name": e["name"], "payload": red.redact(e["payload"])} for e in commit.emits]
    decision = red.redact(commit.decision) if commit.decision is not None else None
    error = red.scrub_text(commit.error) if commit.error else commit.error
    brk = red.scrub_text(commit.break_reason) if commit.break_reason else commit.break_reason
    return commit.model_copy(
        update={
            "writes": writes,
            "read_values": read_values,
            "emits": emits,
            "decision": decision,
            "error": error,
            "break_reason": brk,
        }
    )


__all__ = ["RunState", "redact_commit"]
