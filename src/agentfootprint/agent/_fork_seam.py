"""The seam a what-if rerun reaches a composition through without knowing it: its mounted agents by namespace, and
the same runner with every agent swapped for a rebuilt one (compositions implement it; explain only reads it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

from agentfootprint.agent.agent import Agent
from agentfootprint.flow import FlowChart

__all__ = ["AgentSwap", "MemberRunner", "MountedAgent", "agent_mounts", "always_run"]

AgentSwap = Callable[[Agent], Agent]


@runtime_checkable
class MemberRunner(Protocol):
    """A runner whose model calls are made by mounted agents (a composition)."""

    chart: FlowChart

    def agents(self) -> Iterator[Agent]:
        """Every agent the runner mounts, nested runners included."""
        ...

    def with_agents(self, swap: AgentSwap) -> Any:
        """The same runner (members, order, names, key) with each agent replaced by ``swap(agent)``."""
        ...


class MountedAgent:
    """One subflow mount of a chart: its namespace path, its place in declaration order, whether it runs beside
    its siblings (a parallel branch), and the agent it runs (None for a mount that is not one of the agents)."""

    __slots__ = ("agent", "concurrent", "order", "path")

    def __init__(self, path: str, agent: Agent | None, order: int, *, concurrent: bool) -> None:
        self.path = path
        self.agent = agent
        self.order = order
        self.concurrent = concurrent


def always_run(chart: FlowChart) -> set[str]:
    """Node ids every finished run of ``chart`` passes: the ``next`` chain from the root, up to a decision."""
    seen: set[str] = set()
    node = chart.nodes.get(chart.root)
    while node is not None and node.id not in seen and node.kind in ("stage", "subflow", "fork") and not node.loop_to:
        seen.add(node.id)
        seen.update(node.children)
        node = chart.nodes.get(node.next) if node.next else None
    return seen


def agent_mounts(chart: FlowChart, agents: Iterable[Agent], prefix: str = "") -> list[MountedAgent]:
    """Every subflow mount of ``chart`` in declaration order (nested mounts follow theirs), each matched to the
    agent whose chart it mounts."""
    by_chart = {id(a.chart): a for a in agents}
    concurrent = {c for n in chart.nodes.values() if n.kind == "fork" for c in n.children}
    out: list[MountedAgent] = []
    for order, node in enumerate(chart.nodes.values()):
        if node.kind != "subflow" or node.subflow is None:
            continue
        path = prefix + node.id
        agent = by_chart.get(id(node.subflow))
        out.append(MountedAgent(path, agent, order, concurrent=node.id in concurrent))
        if agent is None:
            out.extend(agent_mounts(node.subflow, by_chart.values(), path + "/"))
    return out
