"""The skill-graph walker: the agent moves a cursor over a declared skill graph.

Each turn starts in the skill the start rules pick (or, with ``continuity="conversation"``, where the conversation
left off); the ``read_skill`` menu lists only the skills reachable from the cursor, activating another one is
refused, and every move is recorded (``skill_moves``). The declared map is filed once per run as
``agentfootprint.skill.graph_declared``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from agentfootprint.agent import CallTool, Extension, RunContext, ToolCallRequest
from agentfootprint.agent.chart import read_skill_tool
from agentfootprint.agent.config import READ_SKILL
from agentfootprint.context.skill_graph import SkillGraph
from agentfootprint.events import types as ev
from agentfootprint.events.catalogue import SkillGraphDeclared
from agentfootprint.tools import Tool, ToolOutcome

__all__ = ["CURSOR_KEY", "MOVES_KEY", "SkillGraphWalker"]

CURSOR_KEY = "skill_cursor"
MOVES_KEY = "skill_moves"


class SkillGraphWalker(Extension):
    """Walks ``graph`` with a cursor; ``continuity="conversation"`` carries the cursor on the conversation."""

    name = "skill_graph"

    def __init__(self, *, graph: SkillGraph, continuity: Literal["turn", "conversation"] = "turn") -> None:
        if not isinstance(graph, SkillGraph):
            raise TypeError("skill_graph() takes a graph from skill_graph(skills=..., edges=...)")
        if continuity not in ("turn", "conversation"):
            raise ValueError("continuity must be 'turn' or 'conversation'")
        self.graph = graph
        self.continuity = continuity

    async def before_run(self, ctx: RunContext) -> None:
        declared = self.graph.declared()
        ctx.emit(ev.SKILL_GRAPH_DECLARED, lambda: SkillGraphDeclared(**declared, continuity=self.continuity))

    async def restore(self, ctx: RunContext, data: Any) -> None:
        if self.continuity == "conversation" and isinstance(data, dict):
            ctx.state["restored"] = data.get("cursor")

    async def on_input(self, ctx: RunContext, message: str) -> str:
        restored = ctx.state.get("restored")
        move: dict[str, Any]
        if isinstance(restored, str) and restored in self.graph.ids:
            move = {"to": restored, "by": "resume"}
        else:
            skill, how, witness = self.graph.entry(message)
            move = {"to": skill, "by": how}
            if witness is not None:
                move["witness"] = witness
            if restored is not None:  # a cursor this graph no longer knows is dropped, on the record
                move["dropped_resume"] = str(restored)[:128]
        self._move(ctx, None, move)
        return message

    def _move(self, ctx: RunContext, source: str | None, move: dict[str, Any]) -> None:
        ctx.state["cursor"] = move["to"]
        ctx.record(CURSOR_KEY, move["to"])
        ctx.record(
            MOVES_KEY, [*(ctx.recorded(MOVES_KEY, []) or []), {"iteration": ctx.iteration, "from": source, **move}]
        )

    def _cursor(self, ctx: RunContext) -> str:
        cursor = ctx.state.get("cursor")
        return cursor if isinstance(cursor, str) else str(ctx.recorded(CURSOR_KEY, self.graph.start))

    async def filter_tools(self, ctx: RunContext, tools: Sequence[Tool]) -> Sequence[Tool]:
        reachable = self.graph.reachable(self._cursor(ctx))
        offered = next((t for t in tools if t.name == READ_SKILL), None)
        if offered is None:
            return tools
        menu = [s for s in self.graph.skills if s.id in reachable and s.id in _enum(offered)]
        out = [t for t in tools if t.name != READ_SKILL]
        menu_tool = read_skill_tool(menu)
        if menu_tool is not None:
            out.append(menu_tool)
        return out

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        if call.name != READ_SKILL:
            return await call_next(call)
        cursor = self._cursor(ctx)
        reachable = self.graph.reachable(cursor)
        target = call.args.get("id")
        if target not in reachable:
            listed = ", ".join(reachable)
            return ToolOutcome(
                content=f"Error: that skill is not reachable from '{cursor}'. Available skills: {listed}.",
                is_error=True,
                error_code="ERR_SKILL_UNREACHABLE",
            )
        outcome = await call_next(call)
        if not outcome.is_error and target != cursor:
            self._move(ctx, cursor, {"to": target, "by": "model-pick"})
        return outcome

    def checkpoint(self, ctx: RunContext) -> Any:
        if self.continuity != "conversation":
            return None
        cursor = ctx.state.get("cursor")
        return {"cursor": cursor} if isinstance(cursor, str) else None


def _enum(tool: Tool) -> set[str]:
    schema = tool.to_spec().get("input_schema") or {}
    values = ((schema.get("properties") or {}).get("id") or {}).get("enum")
    return set(values) if isinstance(values, list) else set()
