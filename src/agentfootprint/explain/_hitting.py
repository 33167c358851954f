"""Reiter's hitting-set tree over culprit sets: each path removes one member of every set found so far from the
search, so the sets left to find (another culprit set, a conjunctive partner) are looked for until none remains."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agentfootprint.explain._arms import Arm


async def hitting_sets(
    everything: Arm,
    found: list[Arm],
    *,
    max_sets: int,
    flips: Callable[[Arm], Awaitable[bool]],
    locate: Callable[[Arm], Awaitable[Arm | None]],
    order: Callable[[Arm], list[str]],
) -> bool:
    """Grow ``found`` with the sets ``locate(path)`` returns (None: nothing confirmed along that path); ``flips``
    says whether ablating what a path leaves still flips. True when ``max_sets`` stopped the tree with work left."""
    closed: list[Arm] = []
    queue: list[Arm] = [frozenset()]
    seen: set[Arm] = set()
    while queue:
        if len(found) >= max_sets:
            return True
        path = queue.pop(0)
        if path in seen or any(c <= path for c in closed):
            continue
        seen.add(path)
        label = next((f for f in found if not (f & path)), None)
        if label is None:
            rest = everything - path
            located = await locate(path) if rest and (not path or await flips(rest)) else None
            if located is None:
                closed.append(path)
                continue
            label = located
            found.append(label)
        queue.extend(path | {m} for m in order(label))
    return False
