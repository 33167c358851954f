"""Per-role skill visibility: a checker decides, each iteration, which skills the caller may see and activate.

``AgentBuilder.skill_visibility(checker)``; ``checker(skill_id, ctx)`` returns ``"allow"`` / ``"gate_open"`` / True
to show a skill; anything else — or raising — hides it (fail closed). Hidden skills leave the ``read_skill`` menu and
cannot be activated; the hidden ids of each iteration are recorded under ``skills_hidden``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from agentfootprint.agent import CallTool, Extension, RunContext, ToolCallRequest
from agentfootprint.agent.chart import read_skill_tool
from agentfootprint.agent.config import READ_SKILL
from agentfootprint.extensions._ledger import file_row
from agentfootprint.extensions.tool_provider import provider_context
from agentfootprint.tools import Tool, ToolOutcome

__all__ = ["HIDDEN_KEY", "SkillVisibility"]

HIDDEN_KEY = "skills_hidden"
_SHOWN = ("allow", "gate_open")


class SkillVisibility(Extension):
    """Rebuilds the ``read_skill`` menu from the skills the checker shows; refuses activating a hidden one."""

    name = "skill_visibility"

    def __init__(self, *, checker: Callable[[str, Any], Any]) -> None:
        if not callable(checker):
            raise TypeError("skill_visibility() takes a checker fn(skill_id, ctx)")
        self.checker = checker

    async def _visible(self, ctx: RunContext) -> list[str]:
        pctx = provider_context(ctx)
        shown: list[str] = []
        for skill in ctx.config.skills:
            try:
                verdict = self.checker(skill.id, pctx)
                if inspect.isawaitable(verdict):
                    verdict = await verdict
            except Exception:  # a policy that did not answer did not say yes
                verdict = "deny"
            if verdict is True or verdict in _SHOWN:
                shown.append(skill.id)
        return shown

    async def filter_tools(self, ctx: RunContext, tools: Sequence[Tool]) -> Sequence[Tool]:
        skills = ctx.config.skills
        if not skills:
            return tools
        shown = await self._visible(ctx)
        ctx.state["shown"] = shown
        hidden = [s.id for s in skills if s.id not in shown]
        file_row(ctx, HIDDEN_KEY, {"iteration": ctx.iteration, "hidden": hidden})
        if not hidden:
            return tools
        visible = [s for s in skills if s.id in shown]
        out = [t for t in tools if t.name != READ_SKILL]
        menu_tool = read_skill_tool(visible)
        if menu_tool is not None:
            out.append(menu_tool)
        return out

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        if call.name == READ_SKILL:
            shown = ctx.state.get("shown")
            if shown is None:
                shown = await self._visible(ctx)
            if call.args.get("id") not in shown:
                listed = ", ".join(sorted(shown))
                return ToolOutcome(
                    content=f"Error: unknown skill. Available skills: {listed}.",
                    is_error=True,
                    error_code="ERR_UNKNOWN_SKILL",
                )
        return await call_next(call)
