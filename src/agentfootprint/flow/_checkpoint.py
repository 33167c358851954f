"""Checkpoints: what a paused run writes (JSON, real values) and how an untrusted one is read back."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, TypeGuard

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentfootprint.errors import validation_field
from agentfootprint.flow._frame import Paused
from agentfootprint.flow._frozen import deep_equal, thaw
from agentfootprint.flow._namespace import Namespace
from agentfootprint.flow._state import RunState
from agentfootprint.flow.chart import FlowChart
from agentfootprint.flow.commit import Commit, Write
from agentfootprint.flow.errors import InvalidCheckpointError, NotSerializableError, PendingAnswersError
from agentfootprint.flow.pause import CheckpointFrame, FlowCheckpoint, NamespaceCheckpoint


def checkpoint_json(rs: RunState, paused: Paused) -> dict[str, Any]:
    """The paused run as a JSON checkpoint; a state value or pause data that is not JSON is refused by key."""
    for name, ns in rs.namespaces.items():
        for key, value in ns.state.items():
            try:
                to_jsonable_python(value)
            except PydanticSerializationError:
                where = f"subflow '{name}' " if name else ""
                raise NotSerializableError(
                    f"cannot checkpoint: {where}state key '{key[:100]}' holds {type(value).__name__}, not JSON"
                ) from None
    try:
        data = to_jsonable_python(paused.data)
    except PydanticSerializationError:
        raise NotSerializableError(f"pause data of type {type(paused.data).__name__} is not JSON") from None
    _check_log_json(rs)
    cp = FlowCheckpoint(
        chart_id=rs.chart.id,
        chart_fingerprint=rs.chart.fingerprint,
        run_id=rs.run_id,
        counter=rs.counter,
        visits=dict(rs.visits),
        frames=paused.frames,
        namespaces={
            n: NamespaceCheckpoint(state=thaw(ns.state), last_writer=dict(ns.last_writer))
            for n, ns in rs.namespaces.items()
        },
        initial_state=thaw(rs.initial_state),
        args=thaw(rs.args),
        commit_log=list(rs.log),
        pause_data=data,
        paused_runtime_stage_id=paused.rid,
    )
    try:
        return cp.model_dump(mode="json")
    except PydanticSerializationError:  # an initial state or args value later overwritten, a read value
        raise NotSerializableError(
            "cannot checkpoint: the run's initial state, args or log hold a value that is not JSON"
        ) from None


def _check_log_json(rs: RunState) -> None:
    """The log keeps a paused stage's writes and emits as evidence (never applied): they must be JSON too."""
    for c in rs.log:
        for w in c.writes:
            try:
                to_jsonable_python(w.value)
            except PydanticSerializationError:
                raise NotSerializableError(
                    f"cannot checkpoint: stage '{c.runtime_stage_id[:200]}' wrote state key '{w.path[:100]}' "
                    f"holding {type(w.value).__name__}, not JSON"
                ) from None
        for e in c.emits:
            try:
                to_jsonable_python(e["payload"])
            except PydanticSerializationError:
                raise NotSerializableError(
                    f"cannot checkpoint: stage '{c.runtime_stage_id[:200]}' emitted '{str(e['name'])[:100]}' "
                    "with a payload that is not JSON"
                ) from None


# checkpoints this process has already validated, by object identity: id -> (the object, the chart fingerprint)
_loaded: dict[int, tuple[weakref.ref[FlowCheckpoint], str]] = {}


def _remember(cp: FlowCheckpoint, chart: FlowChart) -> FlowCheckpoint:
    key = id(cp)
    _loaded[key] = (weakref.ref(cp, lambda _ref: _loaded.pop(key, None)), chart.fingerprint)
    return cp


def loaded_for(checkpoint: object, chart: FlowChart) -> TypeGuard[FlowCheckpoint]:
    """Whether ``checkpoint`` is the very object ``load_checkpoint`` returned for a chart of this fingerprint."""
    seen = _loaded.get(id(checkpoint))
    return seen is not None and seen[0]() is checkpoint and seen[1] == chart.fingerprint


def load_checkpoint(chart: FlowChart, checkpoint: object) -> FlowCheckpoint:
    """Validate an (untrusted) checkpoint against this chart; errors name the offending field. A checkpoint this
    function already returned for this chart is taken as it is (validated once); any other object is validated."""
    if loaded_for(checkpoint, chart):
        return checkpoint
    if isinstance(checkpoint, FlowCheckpoint):
        checkpoint = checkpoint.model_dump(mode="json")
    if not isinstance(checkpoint, Mapping):
        raise InvalidCheckpointError(f"checkpoint must be a dict, got {type(checkpoint).__name__}", field="checkpoint")
    _check_record_keys(checkpoint)
    try:
        cp = FlowCheckpoint.model_validate(dict(checkpoint), strict=True)
    except ValidationError as err:
        field = validation_field(err)
        raise InvalidCheckpointError(f"checkpoint field '{field[:200]}' is invalid", field=field) from None
    if cp.chart_fingerprint != chart.fingerprint:
        raise InvalidCheckpointError(
            f"checkpoint was taken on a different chart, not this one ('{chart.id}')", field="chart_fingerprint"
        )
    for i, c in enumerate(cp.commit_log):
        if c.idx != i:
            raise InvalidCheckpointError(f"commit_log.{i} has the wrong idx", field=f"commit_log.{i}.idx")
    if cp.counter < len(cp.commit_log) // 2:
        raise InvalidCheckpointError("counter is behind the commit log", field="counter")
    if "" not in cp.namespaces:
        raise InvalidCheckpointError("namespaces has no root namespace", field="namespaces")
    known = _namespaces_of(chart)
    for name, nsc in cp.namespaces.items():
        for idx in nsc.last_writer.values():
            if not 0 <= idx < len(cp.commit_log):
                raise InvalidCheckpointError(
                    "a last_writer entry points outside the log", field=_field_ns(name, known, "last_writer")
                )
    check_frames(chart, cp.frames, "frames")
    check_log(chart, cp)
    return _remember(cp, chart)


_COMMIT_KEYS = frozenset(Commit.model_fields)
_WRITE_KEYS = frozenset(Write.model_fields)


def _check_record_keys(checkpoint: Mapping[str, Any]) -> None:
    """A checkpoint's commits and writes hold only the fields a commit has (nothing is silently dropped), and its
    version is the integer it names."""
    if type(checkpoint.get("version")) is not int:
        raise InvalidCheckpointError("checkpoint field 'version' is invalid", field="version")
    log = checkpoint.get("commit_log")
    if not isinstance(log, list):
        return
    for i, c in enumerate(log):
        if isinstance(c, Mapping) and not _COMMIT_KEYS.issuperset(c):
            raise InvalidCheckpointError(
                f"commit_log.{i} holds a field a commit does not have", field=f"commit_log.{i}"
            )
        writes = c.get("writes") if isinstance(c, Mapping) else None
        for j, w in enumerate(writes if isinstance(writes, list) else ()):
            if isinstance(w, Mapping) and not _WRITE_KEYS.issuperset(w):
                raise InvalidCheckpointError(
                    f"commit_log.{i}.writes.{j} holds a field a write does not have", field=f"commit_log.{i}.writes.{j}"
                )


def _namespaces_of(chart: FlowChart, prefix: str = "", out: dict[str, FlowChart] | None = None) -> dict[str, FlowChart]:
    """Every namespace a run of ``chart`` can write to, with the chart whose stages run there."""
    found = out if out is not None else {prefix: chart}
    for node in chart.nodes.values():
        if node.kind == "subflow" and node.subflow is not None:
            name = prefix + node.id
            found[name] = node.subflow
            _namespaces_of(node.subflow, name + "/", found)
    return found


def _field_ns(name: str, known: Mapping[str, Any], leaf: str) -> str:
    """``namespaces.<name>.<leaf>`` for a namespace of the chart (``namespaces..state`` for the root); a name the
    checkpoint made up is never echoed."""
    return f"namespaces.{name}.{leaf}" if name in known else "namespaces"


def check_log(chart: FlowChart, cp: FlowCheckpoint) -> None:
    """The commit log is the run's own record of how its state came to be: every commit names a stage of the chart
    in a namespace the chart has, under a unique runtime id the counter issued; every read points back to a commit
    that wrote that key; and folding the applied writes reproduces each namespace's state and last writers."""
    charts = _namespaces_of(chart)
    every_stage = {nid for c in charts.values() for nid in c.nodes}
    seen: set[str] = set()
    folds: dict[str, Namespace] = {"": Namespace("", thaw(cp.initial_state))}
    wrote: list[frozenset[str]] = []
    for i, c in enumerate(cp.commit_log):
        where = f"commit_log.{i}"
        if c.namespace not in charts or c.stage_id not in every_stage:
            raise InvalidCheckpointError(f"{where} names a stage or namespace this chart does not have", field=where)
        head, _, number = c.runtime_stage_id.rpartition("#")
        if (
            not head.endswith(c.stage_id)
            or not number.isdigit()
            or int(number) >= cp.counter
            or c.runtime_stage_id in seen
        ):
            raise InvalidCheckpointError(
                f"{where} has a runtime id the run never issued", field=f"{where}.runtime_stage_id"
            )
        seen.add(c.runtime_stage_id)
        if any(not (set(e) == {"name", "payload"} and isinstance(e["name"], str)) for e in c.emits):
            raise InvalidCheckpointError(f"{where} holds an emit that is not one", field=f"{where}.emits")
        for key, j in c.reads.items():
            if j is not None and not (0 <= j < i and key in wrote[j]):
                raise InvalidCheckpointError(
                    f"{where} reads from a commit that did not write it", field=f"{where}.reads"
                )
        check_read_evidence(c, where)
        wrote.append(frozenset(c.keys_written()) if c.applied else frozenset())
        if c.kind == "subflow-enter" and c.namespace:
            folds[c.namespace] = Namespace(c.namespace)
        if c.applied:
            ns = folds.setdefault(c.namespace, Namespace(c.namespace))
            try:
                ns.apply(c.idx, c.writes)
            except (TypeError, ValueError, AttributeError):
                raise InvalidCheckpointError(
                    f"{where} holds a write that cannot apply", field=f"{where}.writes"
                ) from None
    for name, nsc in cp.namespaces.items():
        fold = folds.get(name)
        if fold is None:
            if name not in charts or nsc.state or nsc.last_writer:
                raise InvalidCheckpointError("a namespace is not in the commit log", field="namespaces")
            continue
        if not deep_equal(thaw(fold.state), thaw(nsc.state)):
            raise InvalidCheckpointError(
                "a namespace's state is not what its commit log wrote", field=_field_ns(name, charts, "state")
            )
        if fold.last_writer != nsc.last_writer:
            raise InvalidCheckpointError(
                "a namespace's last writers are not its commit log's", field=_field_ns(name, charts, "last_writer")
            )


def check_read_evidence(c: Commit, where: str) -> None:
    """What the recording dials add is about the commit's own reads: values only for keys it read, and each write's
    provenance a prefix of its reads in the order they were first made."""
    if c.read_values is not None and not set(c.read_values) <= set(c.reads):
        raise InvalidCheckpointError(
            f"{where} holds a read value for a key it did not read", field=f"{where}.read_values"
        )
    order = list(c.reads)
    for k, w in enumerate(c.writes):
        if w.read_keys is not None and w.read_keys != order[: len(w.read_keys)]:
            raise InvalidCheckpointError(
                f"{where} names reads before a write that it did not make", field=f"{where}.writes.{k}.read_keys"
            )


def check_frames(chart: FlowChart, frames: list[CheckpointFrame], where: str) -> None:
    """Every frame names a node of the chart it is in; a fork's pending branches are its own children."""
    current: FlowChart | None = chart
    for depth, fr in enumerate(frames):
        field = f"{where}.{depth}"
        last = depth == len(frames) - 1
        if current is None or fr.node_id not in current.nodes:
            raise InvalidCheckpointError(f"{field} names a stage this chart does not have", field=f"{field}.node_id")
        node = current.nodes[fr.node_id]
        if fr.pending:
            if node.kind != "fork" or not last:
                raise InvalidCheckpointError(f"{field} holds pending branches but is not the paused fork", field=field)
            for branch, p in fr.pending.items():
                if branch not in node.children or p.frames[0].node_id != branch:
                    raise InvalidCheckpointError(f"{field}.pending names a branch this fork does not have", field=field)
                check_frames(current, p.frames, f"{field}.pending.{branch[:80]}.frames")
            continue
        if not last and node.kind == "fork":
            if frames[depth + 1].node_id not in node.children:
                raise InvalidCheckpointError(
                    f"{where}.{depth + 1} is not a branch of this fork", field=f"{where}.{depth + 1}.node_id"
                )
            continue
        current = node.subflow if not last else None
        if not last and node.kind != "subflow":
            raise InvalidCheckpointError(f"{field} is not a subflow mount", field=f"{field}.node_id")


def check_pending_answers(frames: list[CheckpointFrame], answer: Any) -> None:
    """Several pending questions are answered with ``{branch id: answer}`` naming only pending branches (any subset,
    at least one); checked before anything resumes."""
    pending = frames[-1].pending
    if not pending:
        return
    names = list(pending)
    if not isinstance(answer, Mapping):
        raise PendingAnswersError(
            f"several questions are pending: answer with a dict keyed by branch id, not a {type(answer).__name__}",
            pending=names,
        )
    if not answer:
        raise PendingAnswersError("the answer dict names no pending branch", pending=names)
    if any(not isinstance(k, str) or k not in pending for k in answer):
        raise PendingAnswersError("the answer dict names a branch that is not pending", pending=names)
    for branch, value in answer.items():
        check_pending_answers(pending[branch].frames, value)


__all__ = [
    "check_frames",
    "check_log",
    "check_pending_answers",
    "check_read_evidence",
    "checkpoint_json",
    "load_checkpoint",
    "loaded_for",
]
