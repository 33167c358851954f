"""Tool providers plugged into an agent: tools supplied per iteration, recorded per iteration.

``AgentBuilder.tool_provider(p)`` (once per provider) offers ``p``'s tools on each model call beside the static
tools. What each provider offered on each iteration is evidence: a row under ``tools_offered`` and an
``agentfootprint.tools.offered`` event. A provider holding a connection is closed when a run ends (completed or
failed), never on a pause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentfootprint.agent import Extension, RunContext, RunOutcome
from agentfootprint.events.catalogue import ToolsOffered
from agentfootprint.extensions._ledger import file_row
from agentfootprint.tools import ProviderContext, Tool, ToolProvider, list_provider_tools

__all__ = ["OFFERED_KEY", "ToolProviders"]

OFFERED_KEY = "tools_offered"


def provider_context(ctx: RunContext) -> ProviderContext:
    """What a provider may see of the run this hook serves."""
    turn = ctx.turn
    active = tuple(turn.activated_skills) if turn is not None else ()
    return ProviderContext(
        iteration=ctx.iteration,
        run_id=ctx.run_id,
        active_skills=active,
        identity=ctx.identity,
        session_id=ctx.session_id,
    )


class ToolProviders(Extension):
    """Every provider given to ``AgentBuilder.tool_provider``, consulted in declaration order."""

    name = "tool_providers"

    def __init__(self) -> None:
        self.providers: list[ToolProvider] = []
        self._seen: dict[str, str] = {}

    def add(self, provider: ToolProvider) -> None:
        if not isinstance(provider, ToolProvider):
            raise TypeError(f"tool_provider() takes a ToolProvider (id, list(ctx)), got {type(provider).__name__}")
        if any(p.id == provider.id for p in self.providers):
            raise ValueError(f"a tool provider with id '{str(provider.id)[:80]}' is already used")
        self.providers.append(provider)

    def sources(self) -> Mapping[str, str]:
        return {name: "tool" for name in self._seen}

    async def provide_tools(self, ctx: RunContext) -> Sequence[Tool]:
        pctx = provider_context(ctx)
        offered: list[Tool] = []
        for provider in self.providers:
            tools = await list_provider_tools(provider, pctx)
            for t in tools:
                self._seen.setdefault(t.name, provider.id)
            row: dict[str, Any] = {
                "iteration": ctx.iteration,
                "provider": provider.id,
                "tools": [t.name for t in tools],
            }
            file_row(ctx, OFFERED_KEY, row, ToolsOffered)
            offered.extend(tools)
        return offered

    def provider_of(self, tool_name: str) -> str | None:
        """Which provider first offered ``tool_name`` (None: never offered by one)."""
        return self._seen.get(tool_name)

    async def _close(self) -> None:
        for provider in self.providers:
            close = getattr(provider, "aclose", None)
            if close is None:
                continue
            try:
                await close()
            except Exception:  # closing is best effort: the run's outcome stands
                continue

    async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
        if outcome.status == "completed":
            await self._close()

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        await self._close()
