"""A 200-turn conversation kept under a token budget by compaction, with semantic memory across sessions; the late
answer is traced back through the summaries to the early turn it rests on. Runs offline."""

from __future__ import annotations

import asyncio
import re

from agentfootprint import Agent
from agentfootprint.context import SUMMARY_PREFIX, define_memory
from agentfootprint.context.embedders import HashingEmbedder
from agentfootprint.context.memory_strategies import semantic_top_k
from agentfootprint.explain import backtrack
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, Message, mock


def keep_facts(messages: list[Message]) -> str:
    """A summarizer that carries earlier summaries and every line about the code forward."""
    carried = [m.content.split("\n\n", 1)[1] for m in messages if m.content.startswith(SUMMARY_PREFIX)]
    facts = [m.content for m in messages if "code" in m.content and not m.content.startswith(SUMMARY_PREFIX)]
    return " ".join(carried + facts)[:300] or f"{len(messages)} messages of small talk."


def model(request: LLMRequest) -> str:
    seen = request.system_prompt + " ".join(m.content for m in request.messages)
    if request.messages[-1].content.endswith("?"):
        found = re.search(r"code is (\d+)", seen)
        return f"The code is {found.group(1) if found else 'unknown'}."
    return "Noted."


async def main() -> None:
    provider = mock(respond=model)
    agent = (
        Agent.create(provider=provider, model="m")
        .compaction(threshold_tokens=250, summarizer=keep_facts, keep_recent_turns=4)
        .build()
    )
    sizes = [(await agent.run("Remember: the door code is 7731.")).usage.input_tokens]
    for i in range(198):
        sizes.append((await agent.follow_up(f"Turn {i}: the weather is mild and calm today.")).usage.input_tokens)
    final = await agent.follow_up("What is the door code?")
    print("answer:", final.answer)
    print("largest request:", max(sizes), "tokens (budget 250)")
    print("folds carried on the conversation:", len((agent.checkpoint() or {})["folded"]))
    early = [s for s in backtrack(agent).sources if s.trigger == "folded" and "7731" in s.text]
    print("traced to:", early[0].text, "via", sum(h.kind == "via" for h in early[0].hops), "summaries")

    memory = define_memory(id="notes", strategy=semantic_top_k(embedder=HashingEmbedder(), k=2))
    helper = Agent.create(provider=mock(respond=model), model="m").memory(memory).build()
    ana = Identity(principal="ana")
    await helper.run("My gate code is 2048.", identity=ana)
    for i in range(30):
        await helper.run(f"Session {i}: nothing new to report.", identity=ana)
    print("memory:", (await helper.run("What is my gate code?", identity=ana)).answer)
    print("another user:", (await helper.run("What is my gate code?", identity=Identity(principal="bo"))).answer)


if __name__ == "__main__":
    asyncio.run(main())
