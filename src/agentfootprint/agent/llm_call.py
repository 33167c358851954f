"""``LLMCall``: one model call, no tools — the same door, recording, backtrack and events as an Agent turn."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from agentfootprint.agent.agent import Agent
from agentfootprint.agent.builder import AgentBuilder
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.context import Injection
from agentfootprint.providers import Provider


class LLMCallBuildError(AgentBuildError):
    """Something an ``LLMCall`` cannot have (tools, skills, a tool provider); ``what`` names it."""

    code = "ERR_LLM_CALL_BUILD"

    def __init__(self, what: str) -> None:
        super().__init__(f"LLMCall makes one model call with no tools, so it cannot take {what}; use Agent for that")
        self.what = what


class LLMCallBuilder(AgentBuilder):
    """``AgentBuilder`` for one model call: system prompt, context, redaction, pricing; never tools."""

    def tool(self, t: Any) -> LLMCallBuilder:
        raise LLMCallBuildError("tool()")

    def tools(self, tools: Any) -> LLMCallBuilder:
        raise LLMCallBuildError("tools()")

    def skill(self, inj: Injection) -> LLMCallBuilder:
        raise LLMCallBuildError("skill()")

    def tool_provider(self, provider: Any) -> LLMCallBuilder:
        raise LLMCallBuildError("tool_provider()")

    def build(self) -> LLMCall:
        agent = super().build()
        config = agent.config
        offering = sorted(
            {e.name for e in config.extensions if e.tools()} | {e.name for e in config.hooks.provide_tools}
        )
        if offering:  # an extension that offers tools (self_explain, a tool provider) would make it an agent
            raise LLMCallBuildError(f"an extension that offers tools ({', '.join(offering)[:200]})")
        return LLMCall(agent.config)


class LLMCall(Agent):
    """One model call with no tools: ``await LLMCall.create(provider=..., model=...).system(...).build().run(msg)``.

    Its input goes through the same door as an Agent's (refusals name ``LLMCall.run``); the call is recorded
    like an Agent turn (snapshot, narrative, events, ``backtrack``), and it composes in Sequence and Parallel."""

    runner_name = "LLMCall"

    @classmethod
    def create(  # type: ignore[override]
        cls,
        *,
        provider: Provider,
        model: str = "",
        name: str = "llm-call",
        id: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        caching: Literal["on", "off"] = "on",
        record_system_prompt: bool = False,
        checkpoint_key: str | bytes | None = None,
        cost_budget: Any = None,
    ) -> LLMCallBuilder:
        """Start building one model call on ``provider`` (the Agent's options that make sense without tools)."""
        base = Agent.create(
            provider=provider,
            model=model,
            name=name,
            id=id,
            temperature=temperature,
            max_tokens=max_tokens,
            caching=caching,
            record_system_prompt=record_system_prompt,
            checkpoint_key=checkpoint_key,
            cost_budget=cost_budget,
            max_iterations=1,
            wrap_up_at_max_iterations=False,
        )
        return LLMCallBuilder(replace(base._config))

    def __repr__(self) -> str:
        return f"<LLMCall {self.name!r} model={self.config.model!r}>"


__all__ = ["LLMCall", "LLMCallBuildError", "LLMCallBuilder"]
