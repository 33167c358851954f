"""Committed state of one namespace (the root chart or a mounted subflow) and how writes apply to it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentfootprint.flow._frozen import FrozenDict, FrozenList, extend_in_place, freeze
from agentfootprint.flow.commit import Write

MISSING: Any = object()


class Namespace:
    """Frozen values by key, the idx of each key's last writer, which lists the state owns, and the per-run
    dependencies its stages receive (``Scope.deps``: never recorded, never checkpointed)."""

    __slots__ = ("deps", "last_writer", "name", "owned", "state")

    def __init__(self, name: str, state: dict[str, Any] | None = None, deps: Any = None) -> None:
        self.name = name
        self.deps = deps
        self.state: dict[str, Any] = {k: freeze(v) for k, v in (state or {}).items()}
        self.last_writer: dict[str, int] = {}
        self.owned: set[str] = set()

    def apply(self, idx: int, writes: Iterable[Write]) -> None:
        """Apply one commit's writes; appends extend an owned list in place (no copy of the whole list)."""
        state, owned = self.state, self.owned
        for w in writes:
            key = w.path
            verb = w.verb
            if verb == "set":
                state[key] = w.value
                owned.discard(key)
            elif verb == "append":
                base = state.get(key, MISSING)
                if base is MISSING or not isinstance(base, list):
                    state[key] = FrozenList(w.value)
                elif key in owned:
                    extend_in_place(base, w.value)
                else:
                    grown = FrozenList(base)
                    extend_in_place(grown, w.value)
                    state[key] = grown
                owned.add(key)
            elif verb == "merge":
                base = state.get(key, MISSING)
                merged = dict(base) if isinstance(base, dict) else {}
                merged.update(w.value)
                state[key] = FrozenDict(merged)
                owned.discard(key)
            else:  # delete
                state.pop(key, None)
                owned.discard(key)
            self.last_writer[key] = idx
