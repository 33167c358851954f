"""The ReAct loop as a recorded chart: seed → injection-engine → slots → call-llm → route → tool-calls | final."""

from __future__ import annotations

from agentfootprint.agent._stages import Stages, read_skill_tool
from agentfootprint.agent._tool_calls import ToolCalls
from agentfootprint.agent._window import WindowStage
from agentfootprint.agent.config import AgentConfig
from agentfootprint.context.window import SummarizeOldest, TokenBudgetWindow
from agentfootprint.events import EventSink
from agentfootprint.flow import FlowChart, flow_chart

STAGE_IDS = (
    "seed",
    "injection-engine",
    "system-prompt",
    "messages",
    "tools",
    "context",
    "window",
    "call-llm",
    "route",
    "tool-calls",
    "wrap-up",
    "final",
)


def build_agent_chart(config: AgentConfig, events: EventSink | None = None) -> FlowChart:
    """Compile the agent's loop; every stage receives its run explicitly as ``scope.deps`` (an ``AgentRun``).

    ``events``: the agent's own listeners, for a run a caller-built chart names in the mount input."""
    stages = Stages(config, events)
    tool_calls = ToolCalls(config, stages.catalog, events)
    builder = flow_chart(
        "Seed",
        stages.seed,
        id="seed",
        description="Seed the turn with the user message",
        max_iterations=config.max_iterations + 3,
    ).then(
        "Injection engine",
        stages.injection_engine,
        id="injection-engine",
        description="Evaluate which context is active this iteration",
    )
    if config.react_mode == "dynamic-grouped":  # one recorded step composes the whole request context
        builder = builder.then(
            "Context", stages.context_slots, id="context", description="Compose system prompt, messages and tools"
        )
    else:
        builder = (
            builder.then(
                "System prompt", stages.system_prompt_slot, id="system-prompt", description="Compose the system prompt"
            )
            .then("Messages", stages.messages_slot, id="messages", description="Compose injected messages")
            .then("Tools", stages.tools_slot, id="tools", description="Compose the tools offered")
        )
    if isinstance(config.window, TokenBudgetWindow | SummarizeOldest):  # no strategy, no stage
        builder = builder.then(
            "Window", WindowStage(config, events), id="window", description="Keep the request inside its token budget"
        )
    route = (
        builder.then("Call LLM", stages.call_llm, id="call-llm", description="Call the model")
        .decider("Route", stages.route, id="route", description="Route on the model's reply")
        .branch(
            "tool-calls", "Tool calls", tool_calls, loop_to="injection-engine", description="Run the requested tools"
        )
    )
    if config.wrap_up_at_max_iterations:
        route = route.branch(
            "wrap-up",
            "Wrap up",
            stages.wrap_up,
            loop_to="injection-engine",
            description="Ask for a final answer with the tools withheld",
        )
    return route.branch("final", "Final answer", stages.final, description="Finish with the answer").end().build()


__all__ = ["STAGE_IDS", "build_agent_chart", "read_skill_tool"]
