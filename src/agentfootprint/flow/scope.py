"""The stage's view of state: tracked reads (which commit each saw), staged writes, read-your-writes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentfootprint.flow._frozen import (
    FrozenDict,
    FrozenList,
    deep_equal,
    freeze,
    freeze_over,
    list_tail_if_extended,
)
from agentfootprint.flow._namespace import MISSING, Namespace
from agentfootprint.flow._trusted import inline
from agentfootprint.flow.commit import Write
from agentfootprint.flow.errors import InvalidStateKeyError
from agentfootprint.flow.recording import DEFAULT_DIALS

if TYPE_CHECKING:
    from agentfootprint.flow._frame import StageFrame
    from agentfootprint.flow.snapshot import FlowSnapshot

MAX_KEY_LENGTH = 512
_WRITE_FIELDS = ("path", "verb", "value")
_build_write = inline(Write, _WRITE_FIELDS)


def _write(path: str, verb: str, value: Any) -> Write:
    """``Write(path=..., verb=..., value=...)`` for an engine-made write (a str key, a known verb), built directly
    with its values inline (no ``__dict__`` object per record until something reads it)."""
    return _build_write(path, verb, value, None)


def check_key(key: Any) -> str:
    """State keys are non-empty strings up to 512 characters; anything else is refused by type/length."""
    if type(key) is not str:
        raise InvalidStateKeyError(f"state keys must be str, got {type(key).__name__}")
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidStateKeyError(f"state key length must be 1..{MAX_KEY_LENGTH}, got {len(key)}")
    return key


class Scope:
    """Read and write shared state inside one stage; writes commit when the stage ends, net change only."""

    __slots__ = (
        "_break",
        "_capture",
        "_emits",
        "_frame",
        "_ns",
        "_provenance",
        "_read_values",
        "_reads",
        "_staged",
        "_used_args",
    )

    def __init__(self, ns: Namespace, frame: StageFrame | None = None) -> None:
        self._ns = ns
        self._frame = frame
        self._staged: dict[str, tuple[str, Any]] = {}
        self._reads: dict[str, int | None] = {}
        self._capture: list[str] | None = None
        self._emits: list[dict[str, Any]] = []
        self._break: str | None = None
        self._used_args = False
        dials = frame.run.dials if frame is not None else DEFAULT_DIALS
        self._read_values: dict[str, Any] | None = {} if dials.read_tracking == "full" else None
        self._provenance: dict[str, list[str]] | None = {} if dials.write_provenance == "reads-prefix" else None

    # -- reads -------------------------------------------------------------------------------------------
    def _lookup(self, key: str) -> Any:
        """The value a read sees (MISSING when absent); a committed read is tracked and told to read listeners."""
        if type(key) is not str or not key or len(key) > MAX_KEY_LENGTH:
            check_key(key)  # raises: what check_key refuses, refused the same way
        st = self._staged.get(key)
        if st is not None:
            verb, staged = st
            if self._capture is not None:
                self._capture.append(key)
            if verb == "set":
                return staged
            if verb == "delete":
                return MISSING
        ns = self._ns  # the committed read, inline: one call per read
        value = ns.state.get(key, MISSING)
        reads = self._reads
        if key not in reads:
            reads[key] = ns.last_writer.get(key)
            if self._read_values is not None and value is not MISSING:
                self._read_values[key] = value  # frozen: kept by reference, never copied
        if self._capture is not None:
            self._capture.append(key)
        frame = self._frame
        if frame is not None and frame.run.dispatch.on_read:
            frame.run.dispatch.read(frame, key, value)
        if st is None:
            return value
        if verb == "append":  # a staged append or merge reads through to the committed base
            merged = FrozenList(value if isinstance(value, list) else ())
            list.extend(merged, staged)
            return merged
        return FrozenDict({**(value if isinstance(value, dict) else {}), **staged})

    def __getitem__(self, key: str) -> Any:
        value = self._lookup(key)
        if value is MISSING:
            raise KeyError(key[:100] if isinstance(key, str) else key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        """Tracked read with a default for a missing key (the absence is recorded as a read too)."""
        value = self._lookup(key)
        return default if value is MISSING else value

    def __contains__(self, key: object) -> bool:
        return self._lookup(key) is not MISSING  # type: ignore[arg-type]

    @property
    def args(self) -> FrozenDict:
        """The run's frozen input: untracked (flagged on the commit as an untracked source); writes raise."""
        self._used_args = True
        if self._frame is None:
            return FrozenDict()
        return self._frame.run.args

    # -- writes ------------------------------------------------------------------------------------------
    def _notify(self, key: str, verb: str, value: Any) -> None:
        if self._provenance is not None:
            self._provenance[key] = list(self._reads)
        frame = self._frame
        if frame is not None and frame.run.dispatch.on_write:
            frame.run.dispatch.write(frame, key, verb, value)

    def __setitem__(self, key: str, value: Any) -> None:
        if type(key) is not str or not key or len(key) > MAX_KEY_LENGTH:
            check_key(key)  # raises
        base = self._ns.state.get(key) if type(value) is list else None
        frozen = freeze_over(value, base) if type(base) is FrozenList else freeze(value)
        self._staged[key] = ("set", frozen)
        if self._provenance is not None:  # _notify inlined (one call per write fewer)
            self._provenance[key] = list(self._reads)
        frame = self._frame
        if frame is not None and frame.run.dispatch.on_write:
            frame.run.dispatch.write(frame, key, "set", frozen)

    def set(self, key: str, value: Any) -> None:
        self[key] = value

    def __delitem__(self, key: str) -> None:
        check_key(key)
        self._staged[key] = ("delete", None)
        self._notify(key, "delete", None)

    def delete(self, key: str) -> None:
        del self[key]

    def update(self, key: str, fn: Callable[[Any], Any], default: Any = None) -> Any:
        """Read ``key`` (tracked), write ``fn(value)`` back, and return the new value."""
        new = fn(self.get(key, default))
        self[key] = new
        return self._staged[key][1]

    def append(self, key: str, *items: Any) -> None:
        """Append to a list without copying it; recorded as an ``append`` delta holding only the new items."""
        check_key(key)
        self._append_frozen(key, [freeze(i) for i in items])

    def _append_frozen(self, key: str, frozen: list[Any]) -> None:
        """``append`` (of a checked key) of items already frozen, kept by reference: values of this run's state or
        built only from them, read-only for good (never a top-level list the engine grows in place)."""
        st = self._staged.get(key)
        if st is None:
            base = self._ns.state.get(key, MISSING)
            if base is not MISSING and not isinstance(base, list):
                raise TypeError(f"cannot append to state key '{key[:100]}': it holds {type(base).__name__}")
            self._staged[key] = ("append", frozen)
        else:
            verb, value = st
            if verb == "append":
                value.extend(frozen)
            elif verb == "delete":
                self._staged[key] = ("set", FrozenList(frozen))
            elif verb == "set" and isinstance(value, list):
                grown = FrozenList(value)
                list.extend(grown, frozen)
                self._staged[key] = ("set", grown)
            else:
                raise TypeError(f"cannot append to state key '{key[:100]}': it holds a non-list value")
        self._notify(key, "append", frozen)

    def _grow_committed(self, key: str, items: tuple[Any, ...]) -> bool:
        """Stage ``self[key] = [*committed, *items]`` at the cost of ``items`` alone, when nothing can tell the two
        apart: the key holds a committed list not yet written in this stage, ``items`` is not empty and no recorder
        watches writes. Returns False (nothing staged) otherwise."""
        frame = self._frame
        if not items or key in self._staged or (frame is not None and frame.run.dispatch.on_write):
            return False
        if type(self._ns.state.get(key)) is not FrozenList:
            return False
        self._staged[key] = ("append", [freeze(i, 1) for i in items])  # commits as the same append delta
        if self._provenance is not None:
            self._provenance[key] = list(self._reads)
        return True

    def merge(self, key: str, fields: dict[str, Any]) -> None:
        """Shallow-merge ``fields`` into a dict value; recorded as a ``merge`` delta of the changed fields."""
        check_key(key)
        if not isinstance(fields, dict):
            raise TypeError(f"merge into '{key[:100]}' needs a dict, got {type(fields).__name__}")
        frozen = {check_key(k): freeze(v) for k, v in fields.items()}
        st = self._staged.get(key)
        if st is None:
            base = self._ns.state.get(key, MISSING)
            if base is not MISSING and not isinstance(base, dict):
                raise TypeError(f"cannot merge into state key '{key[:100]}': it holds {type(base).__name__}")
            self._staged[key] = ("merge", frozen)
        else:
            verb, value = st
            if verb == "merge":
                value.update(frozen)
            elif verb == "delete":
                self._staged[key] = ("set", FrozenDict(frozen))
            elif verb == "set" and isinstance(value, dict):
                self._staged[key] = ("set", FrozenDict({**value, **frozen}))
            else:
                raise TypeError(f"cannot merge into state key '{key[:100]}': it holds a non-dict value")
        self._notify(key, "merge", frozen)

    # -- control -----------------------------------------------------------------------------------------
    def emit(self, name: str, payload: Any = None) -> None:
        """Record a named event on this stage's commit and hand it to recorders."""
        if not isinstance(name, str) or not name:
            raise TypeError("emit name must be a non-empty str")
        event = {"name": name[:200], "payload": freeze(payload)}
        self._emits.append(event)
        frame = self._frame
        if frame is not None and frame.run.dispatch.on_emit:
            frame.run.dispatch.emit(frame, event["name"], event["payload"])

    def break_(self, reason: str = "break") -> None:
        """Stop the flow after this stage commits (the first reason wins)."""
        if self._break is None:
            self._break = str(reason)[:500]

    @property
    def deps(self) -> Any:
        """The per-run dependencies the run was given (``run(deps=...)``; a subflow mount may map them): untracked,
        never recorded or checkpointed (handles such as clients, listeners, identity)."""
        return self._ns.deps

    def bind_deps(self, deps: Any) -> None:
        """Hand this namespace's later stages ``deps`` (a mounted chart adopting the run its input named): like
        ``deps``, never recorded or checkpointed; the parent's own deps are untouched."""
        self._ns.deps = deps

    @property
    def runtime_stage_id(self) -> str | None:
        return self._frame.runtime_stage_id if self._frame is not None else None

    @property
    def namespace(self) -> str:
        """The chart namespace this stage runs in ("" at the root, the mount path inside a subflow)."""
        return self._ns.name

    def live_snapshot(self) -> FlowSnapshot | None:
        """The served (redacted) snapshot of the run this stage belongs to, as it stands now (mid-run)."""
        frame = self._frame
        return frame.run.snapshot(served=True) if frame is not None else None

    @property
    def run_id(self) -> str | None:
        return self._frame.run.run_id if self._frame is not None else None

    # -- engine internals --------------------------------------------------------------------------------
    def _is_redacted(self, key: str) -> bool:
        frame = self._frame
        return frame is not None and frame.run.redactor.key_redacted(key)

    @contextmanager
    def _capture_reads(self, into: list[str]) -> Iterator[None]:
        previous = self._capture
        self._capture = into
        try:
            yield
        finally:
            self._capture = previous

    def _net_writes(self) -> list[Write]:
        """Staged operations reduced to net changes against committed state (no-ops drop out)."""
        out = self._delta_writes()
        if self._frame is not None and self._frame.run.dials.commit_values == "full":
            out = [self._whole(w) for w in out]
        if self._provenance is not None:
            prov = self._provenance
            out = [Write.model_construct(path=w.path, verb=w.verb, value=w.value, read_keys=prov[w.path]) for w in out]
        return out

    def _whole(self, w: Write) -> Write:
        """A delta write as the whole value it leaves (``commit_values="full"``)."""
        base = self._ns.state.get(w.path, MISSING)
        if w.verb == "append":
            grown = FrozenList(base if isinstance(base, list) else ())
            list.extend(grown, w.value)
            return Write.model_construct(path=w.path, verb="set", value=grown)
        if w.verb == "merge":
            return Write.model_construct(
                path=w.path, verb="set", value=FrozenDict({**(base if isinstance(base, dict) else {}), **w.value})
            )
        return w

    def _delta_writes(self) -> list[Write]:
        state = self._ns.state
        out: list[Write] = []
        for key, (verb, value) in self._staged.items():
            base = state.get(key, MISSING)
            if verb == "set":
                if base is not MISSING and deep_equal(base, value):
                    continue
                if isinstance(base, list) and isinstance(value, list):
                    tail = list_tail_if_extended(base, value)
                    if tail is not None:
                        out.append(_write(key, "append", FrozenList(tail)))
                        continue
                out.append(_write(key, "set", value))
            elif verb == "append":
                if value or base is MISSING:
                    out.append(_write(key, "append", FrozenList(value)))
            elif verb == "merge":
                base_d = base if isinstance(base, dict) else {}
                changed = {f: v for f, v in value.items() if f not in base_d or not deep_equal(base_d[f], v)}
                if changed or base is MISSING:
                    out.append(_write(key, "merge", FrozenDict(changed)))
            elif base is not MISSING:
                out.append(_write(key, "delete", None))
        return out
