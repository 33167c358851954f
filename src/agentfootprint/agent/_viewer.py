"""Viewer surfaces (R004-134): structure recorders see every node of an agent's chart when ``build()`` compiles it,
and a group translator turns an agent's or a composition's group metadata (its kind, members and extras) into
whatever a viewer draws, once per runner."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentfootprint.flow import FlowChart

GroupKind = Literal["Agent", "Sequence", "Parallel", "Conditional", "Loop", "Workflow", "Graph", "Composition"]
HOOKS = ("on_stage_added", "on_edge_added", "on_loop_edge_added", "on_decider_complete", "on_subflow_mounted")


@dataclass(frozen=True, slots=True)
class GroupMember:
    """One member of a composition: the id it is mounted under, the runner, and its own translated group (when it
    has a translator of its own)."""

    member_id: str
    runner: Any
    ui_group: Any = None


@dataclass(frozen=True, slots=True)
class GroupMetadata:
    """What a group translator sees: the runner's kind, id and name, its members, and kind-specific extras."""

    kind: str
    id: str
    name: str
    members: tuple[GroupMember, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


GroupTranslator = Callable[[GroupMetadata], Any]


@dataclass(frozen=True, slots=True)
class StructureBuildError:
    """A structure recorder's hook that raised while the chart was replayed to it (the build went on)."""

    recorder: int
    hook: str
    error: str


@dataclass(slots=True)
class _Viewer:
    translator: GroupTranslator | None = None
    errors: tuple[StructureBuildError, ...] = ()
    cached: tuple[Any] | None = None


_VIEWERS: weakref.WeakKeyDictionary[Any, _Viewer] = weakref.WeakKeyDictionary()


def check_recorders(recorders: Iterable[Any]) -> tuple[Any, ...]:
    """Each recorder has at least one structure hook (``on_stage_added`` ...), else it is refused."""
    out = tuple(recorders)
    if len(out) > 64:
        raise ValueError("structure_recorders takes at most 64 recorders")
    for recorder in out:
        if not any(callable(getattr(recorder, hook, None)) for hook in HOOKS):
            raise ValueError("a structure recorder needs one of " + ", ".join(HOOKS))
    return out


def check_translator(translator: Any) -> GroupTranslator:
    if not callable(translator):
        raise ValueError("group_translator takes a function of the group metadata")
    return translator  # type: ignore[no-any-return]


def _events(chart: FlowChart) -> list[tuple[str, dict[str, Any]]]:
    """The chart as build-time events: every stage (a mount as a subflow, never its inside) before any edge."""
    out: list[tuple[str, dict[str, Any]]] = []
    for node in chart.nodes.values():
        spec = {"id": node.id, "name": node.name, "kind": node.kind, "description": node.description}
        out.append(("on_stage_added", spec))
        if node.kind == "subflow" and node.subflow is not None:
            sub = node.subflow
            out.append(("on_subflow_mounted", {"subflow_id": node.id, "subflow_name": sub.name, "root": sub.root}))
    for node in chart.nodes.values():
        if node.next is not None:
            out.append(("on_edge_added", {"from": node.id, "to": node.next, "kind": "next", "label": None}))
        for child in node.children:
            out.append(("on_edge_added", {"from": node.id, "to": child, "kind": "fork-branch", "label": None}))
        for branch, target in node.branches.items():
            edge = {"from": node.id, "to": target, "kind": "decision-branch", "label": branch}
            out.append(("on_edge_added", edge))
        if node.kind in ("decider", "selector"):
            info = {"decider": node.id, "type": node.kind, "branch_ids": list(node.branches), "default": node.default}
            out.append(("on_decider_complete", info))
        if node.loop_to is not None:
            out.append(("on_loop_edge_added", {"from": node.id, "to": node.loop_to}))
    return out


def replay_structure(chart: FlowChart, recorders: Iterable[Any]) -> tuple[StructureBuildError, ...]:
    """Hand every recorder the chart's stages, then its edges, in order; a hook that raises is collected (its error
    class only), and never stops the build or the other recorders."""
    errors: list[StructureBuildError] = []
    events = _events(chart)
    for index, recorder in enumerate(recorders):
        for hook, payload in events:
            fn = getattr(recorder, hook, None)
            if not callable(fn):
                continue
            try:
                fn(dict(payload))
            except Exception as exc:
                errors.append(StructureBuildError(recorder=index, hook=hook, error=type(exc).__name__))
    return tuple(errors)


def bind_viewer(runner: Any, translator: GroupTranslator | None, errors: tuple[StructureBuildError, ...]) -> None:
    """What ``build()`` attaches to the runner it made (its translator, its recorders' errors)."""
    _VIEWERS[runner] = _Viewer(translator=translator, errors=errors)


def structure_build_errors(runner: Any) -> list[StructureBuildError]:
    """The structure recorders' hooks that raised when this agent was built (empty when none did)."""
    viewer = _VIEWERS.get(runner)
    return list(viewer.errors) if viewer is not None else []


def group_metadata(runner: Any) -> GroupMetadata:
    """An agent's or a composition's group: an agent's tools and slots ride in ``extra``; a composition's members
    each carry their own translated group."""
    config = getattr(runner, "config", None)
    if config is not None and hasattr(config, "tools"):
        return GroupMetadata(
            kind="Agent",
            id=str(getattr(runner, "id", None) or runner.name),
            name=str(runner.name),
            extra={
                "slots": ("system-prompt", "messages", "tools"),
                "tool_names": tuple(t.name for t in config.tools),
                "max_iterations": config.max_iterations,
            },
        )
    members = tuple(
        GroupMember(member_id=str(name), runner=member, ui_group=ui_group(member) if _is_runner(member) else None)
        for name, member in getattr(runner, "members", ())
    )
    return GroupMetadata(
        kind=str(getattr(runner, "kind", "Composition")),
        id=str(getattr(getattr(runner, "chart", None), "id", runner.name)),
        name=str(runner.name),
        members=members,
    )


def _is_runner(value: Any) -> bool:
    return hasattr(value, "chart") and hasattr(value, "name")


def ui_group(runner: Any, translator: GroupTranslator | None = None) -> Any:
    """The runner's group as its translator draws it (None without one). The runner's own translator (set with
    ``.group_translator(fn)``) runs once and its result is kept, a raising one included (it then reads None);
    ``translator=`` applies another one now, uncached."""
    if translator is not None:
        return check_translator(translator)(group_metadata(runner))
    viewer = _VIEWERS.get(runner)
    if viewer is None or viewer.translator is None:
        return None
    if viewer.cached is not None:
        return viewer.cached[0]
    viewer.cached = (None,)  # sealed first: a raising translator is not asked again
    value = viewer.translator(group_metadata(runner))
    viewer.cached = (value,)
    return value


__all__ = [
    "HOOKS",
    "GroupMember",
    "GroupMetadata",
    "GroupTranslator",
    "StructureBuildError",
    "bind_viewer",
    "check_recorders",
    "check_translator",
    "group_metadata",
    "replay_structure",
    "structure_build_errors",
    "ui_group",
]
