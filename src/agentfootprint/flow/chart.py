"""A built, immutable flowchart: nodes, edges, description, Mermaid, fingerprint; runs via the executor."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentfootprint._sync import run_sync

if TYPE_CHECKING:
    from agentfootprint.flow.cancel import CancelToken
    from agentfootprint.flow.pause import FlowCheckpoint
    from agentfootprint.flow.recorder import Recorder
    from agentfootprint.flow.recording import RecordingDials
    from agentfootprint.flow.redaction import RedactionPolicy
    from agentfootprint.flow.result import FlowResult

NodeKind = Literal["stage", "decider", "selector", "fork", "subflow"]
StageFn = Callable[..., Any]
MergeFn = Callable[[str, dict[str, Any]], Any]
InputMap = Callable[[Any], Mapping[str, Any]] | Mapping[str, str] | Iterable[str] | None
OutputMap = Callable[[Any], Mapping[str, Any]] | Mapping[str, str] | Iterable[str] | None

DEFAULT_MAX_ITERATIONS = 1000


@dataclass(slots=True, eq=False)
class Node:
    """One chart node; ``next``/``loop_to`` are node ids, ``branches`` maps a branch id to its node id."""

    id: str
    name: str
    kind: NodeKind
    fn: StageFn | None = None
    description: str | None = None
    next: str | None = None
    loop_to: str | None = None
    branches: dict[str, str] = field(default_factory=dict)
    default: str | None = None
    children: list[str] = field(default_factory=list)
    merge: MergeFn | None = None
    fail_fast: bool = False
    subflow: FlowChart | None = None
    deps_map: Callable[[Any], Any] | None = None
    input_map: Any = None
    output_map: Any = None
    propagate_break: bool = False
    branch_of: str | None = None


class FlowChart:
    """A validated chart. Immutable and not bound to an event loop: run it as often and as concurrently as you like."""

    def __init__(self, name: str, root: str, nodes: dict[str, Node], *, max_iterations: int) -> None:
        self.name = name
        self.root = root
        self.nodes = nodes
        self.max_iterations = max_iterations
        self.id = root
        self.fingerprint = self._fingerprint()
        self.description = self._describe()

    # -- structure -----------------------------------------------------------------------------------------
    def _structure(self) -> list[Any]:
        out: list[Any] = []
        for n in self.nodes.values():
            out.append(
                [
                    n.id,
                    n.kind,
                    n.next,
                    n.loop_to,
                    sorted(n.branches.items()),
                    n.default,
                    list(n.children),
                    n.subflow.fingerprint if n.subflow is not None else None,
                ]
            )
        return out

    def _fingerprint(self) -> str:
        raw = json.dumps([self.root, self._structure()], separators=(",", ":"), sort_keys=False)
        return hashlib.sha256(raw.encode()).hexdigest()[:32]

    def _walk_order(self) -> list[Node]:
        """Nodes in declaration order (the order the builder added them)."""
        return list(self.nodes.values())

    def _describe(self) -> str:
        lines = [f"FlowChart: {self.name}", "Steps:"]
        number: dict[str, int] = {}
        for i, node in enumerate(self._walk_order(), start=1):
            number[node.id] = i
        for node in self._walk_order():
            text = f"{number[node.id]}. {node.name}"
            if node.description:
                text += f" — {node.description}"
            if node.kind == "decider":
                text += f" (branches: {', '.join(node.branches)})"
            elif node.kind == "selector":
                text += f" (selects from: {', '.join(node.branches)})"
            elif node.kind == "fork":
                text += f" (in parallel: {', '.join(node.children)})"
            elif node.kind == "subflow" and node.subflow is not None:
                text += f" (subflow: {node.subflow.name})"
            if node.branch_of:
                text = "   " + text
            lines.append(text)
            if node.loop_to:
                lines.append(f"   → loops back to step {number.get(node.loop_to, '?')} ({node.loop_to})")
        return "\n".join(lines)

    def to_mermaid(self) -> str:
        """Mermaid ``flowchart TD`` text: decisions as diamonds, loops dotted, subflows as subgraphs."""
        lines = ["flowchart TD"]
        self._mermaid_into(lines, "")
        return "\n".join(lines)

    def _mermaid_into(self, lines: list[str], prefix: str) -> None:
        def mid(node_id: str) -> str:
            return "n_" + hashlib.sha1((prefix + node_id).encode()).hexdigest()[:10]

        def label(text: str) -> str:
            return text.replace('"', "'").replace("\n", " ")[:80]

        for node in self.nodes.values():
            nid = mid(node.id)
            if node.kind in ("decider", "selector"):
                lines.append(f'    {nid}{{"{label(node.name)}"}}')
            elif node.kind == "fork":
                lines.append(f'    {nid}[["{label(node.name)}"]]')
            elif node.kind == "subflow" and node.subflow is not None:
                lines.append(f'    subgraph {nid}["{label(node.name)}"]')
                node.subflow._mermaid_into(lines, prefix + node.id + "/")
                lines.append("    end")
            else:
                lines.append(f'    {nid}["{label(node.name)}"]')
        for node in self.nodes.values():
            nid = mid(node.id)
            for bid, target in node.branches.items():
                lines.append(f"    {nid} -->|{label(bid)}| {mid(target)}")
            for child in node.children:
                if child not in node.branches.values():
                    lines.append(f"    {nid} --> {mid(child)}")
                    if node.next:
                        lines.append(f"    {mid(child)} --> {mid(node.next)}")
            if node.next and not (node.kind == "fork" and node.children):
                lines.append(f"    {nid} --> {mid(node.next)}")
            if node.loop_to:
                lines.append(f"    {nid} -.->|loop| {mid(node.loop_to)}")

    def __repr__(self) -> str:
        return f"<FlowChart {self.name!r} root={self.root!r} nodes={len(self.nodes)}>"

    # -- running -------------------------------------------------------------------------------------------
    async def run(
        self,
        state: Mapping[str, Any] | None = None,
        *,
        args: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
        recorders: Iterable[Recorder] = (),
        redaction: RedactionPolicy | None = None,
        run_id: str | None = None,
        deps: Any = None,
        recording: RecordingDials | None = None,
    ) -> FlowResult:
        """Run the chart from its root over ``state``; raises a failing stage's own exception (with ``.snapshot``).

        ``deps`` are per-run dependencies every stage receives as ``scope.deps`` (never recorded); ``recording``
        sets how much the commit log keeps (see :class:`RecordingDials`; the defaults keep the least)."""
        from agentfootprint.flow._run import execute

        return await execute(
            self,
            state=state,
            args=args,
            timeout=timeout,
            cancel=cancel,
            recorders=recorders,
            redaction=redaction,
            run_id=run_id,
            deps=deps,
            recording=recording,
        )

    async def resume(
        self,
        checkpoint: Mapping[str, Any] | FlowCheckpoint,
        answer: Any = None,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
        recorders: Iterable[Recorder] = (),
        redaction: RedactionPolicy | None = None,
        deps: Any = None,
        run_id: str | None = None,
        origin: Mapping[str, Any] | None = None,
        recording: RecordingDials | None = None,
    ) -> FlowResult:
        """Continue a paused run: the paused stage re-runs and its ``pause()`` returns ``answer``. ``checkpoint`` is
        the JSON mapping (validated here) or what :meth:`load_checkpoint` returned for this chart (not validated again).

        By default the resumed leg keeps the paused run's id; ``run_id`` gives it a fresh one. Either way with
        ``run_id`` or ``origin`` the snapshot's ``resumed_from`` names the run it continues (plus ``origin``)."""
        from agentfootprint.flow._run import execute_resume

        return await execute_resume(
            self,
            checkpoint,
            answer,
            timeout=timeout,
            cancel=cancel,
            recorders=recorders,
            redaction=redaction,
            deps=deps,
            run_id=run_id,
            origin=origin,
            recording=recording,
        )

    def load_checkpoint(self, checkpoint: Any) -> FlowCheckpoint:
        """Validate an untrusted checkpoint against this chart, as ``resume`` does first: its shape, that it was
        taken on this chart, and that its state is what its own commit log wrote. Refusals name the field."""
        from agentfootprint.flow._checkpoint import load_checkpoint

        return load_checkpoint(self, checkpoint)

    def run_sync(self, state: Mapping[str, Any] | None = None, **kwargs: Any) -> FlowResult:
        """Blocking twin of :meth:`run` for scripts (no event loop may be running in this thread)."""
        return run_sync(self.run(state, **kwargs), "await chart.run(...)")

    def resume_sync(
        self, checkpoint: Mapping[str, Any] | FlowCheckpoint, answer: Any = None, **kwargs: Any
    ) -> FlowResult:
        """Blocking twin of :meth:`resume`."""
        return run_sync(self.resume(checkpoint, answer, **kwargs), "await chart.resume(...)")
