"""Recorded runs that exercise every kind of backtrack source: shared by the exact backtrack tests."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

from agentfootprint import Agent, define_fact, define_instruction, define_skill, define_tool
from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.compose import Parallel, Sequence
from agentfootprint.context import InMemoryMemoryStore, define_memory, define_rag, define_steering
from agentfootprint.context.window import SUMMARY_PREFIX
from agentfootprint.providers import LLMRequest, mock

DOCS = [
    {"id": "policy-refunds", "text": "Refunds are accepted within 30 days of purchase with a receipt."},
    {"id": "policy-shipping", "text": "Shipping takes 3 to 5 business days; express shipping is next day."},
    {"id": "policy-warranty", "text": "Electronics carry a one year warranty against defects."},
]


def _tool(name: str, result: str, description: str = "") -> Any:
    return define_tool(
        name=name,
        description=description or f"{name} tool",
        input_schema={"type": "object"},
        execute=lambda args, ctx: result,
    )


async def flagship() -> Any:
    agent = refunds_agent()
    await agent.run(QUESTION)
    return agent


async def rag_and_steering() -> Any:
    agent = (
        Agent.create(provider=mock(reply="Within 30 days."), model="m")
        .system("base")
        .rag(define_rag(id="kb", documents=DOCS, k=2))
        .steering(define_steering(id="tone", prompt="Answer in one sentence."))
        .build()
    )
    await agent.run("What is the refunds window in days?")
    return agent


async def rules_skills_and_tool_returns() -> Any:
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "r1", "name": "read_skill", "args": {"id": "returns"}}]},
            {"tool_calls": [{"id": "s1", "name": "search_docs", "args": {"q": "returns", "n": 2}}]},
            "Use the returns form and cite the doc.",
        ]
    )
    agent = (
        Agent.create(provider=provider, model="m", max_iterations=6)
        .tool(_tool("search_docs", "doc: returns need a form"))
        .tool(_tool("unused_tool", "never", "never called"))
        .fact(define_fact(id="vip-rule", data="VIP customer.", active_when=lambda ctx: "vip" in ctx.user_message))
        .instruction(define_instruction(id="cite", prompt="Cite the document.", on_tool_return="search_docs"))
        .skill(define_skill(id="returns", description="How to process returns", body="Use the returns form."))
        .build()
    )
    await agent.run("vip asks about returns")
    return agent


async def memory_across_runs() -> Any:
    store = InMemoryMemoryStore()

    def build(reply: str) -> Agent:
        return (
            Agent.create(provider=mock(reply=reply), model="m")
            .memory(define_memory(id="mem", store=store, recall=4))
            .build()
        )

    identity = {"tenant": "t", "principal": "p", "conversation_id": "c"}
    await build("Noted: you like tea.").run("I like tea.", identity=identity)
    agent = build("You like tea.")
    await agent.run("What do I like?", identity=identity)
    return agent


async def a_turn_that_only_asked_for_a_tool() -> Any:
    provider = mock(replies=[{"tool_calls": [{"id": "c1", "name": "look", "args": {"x": "y" * 80}}]}, "Seen."])
    agent = Agent.create(provider=provider, model="m").tool(_tool("look", "a view")).build()
    await agent.run("look")
    return agent


async def a_fold_in_this_run() -> Any:
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "look", "args": {}}]} for i in range(6)]
    agent = (
        # the scenario is about a fold: the six identical looks would otherwise carry the repeated-call note (R004-94)
        Agent.create(provider=mock(replies=[*replies, "done"]), model="m", max_iterations=10, repeated_call_nudge=False)
        .tool(_tool("look", "a long observation " * 20))
        .compaction(threshold_tokens=150, summarizer=lambda ms: "observations were all the same", keep_recent_turns=1)
        .build()
    )
    await agent.run("Please look around several times and report what you see in detail.")
    return agent


def _keep_code(messages: list[Any]) -> str:
    """A deterministic summarizer: earlier summaries and any line about the code carried forward."""
    carried = [m.content.split("\n\n", 1)[1] for m in messages if m.content.startswith(SUMMARY_PREFIX)]
    facts = [m.content for m in messages if "code" in m.content and not m.content.startswith(SUMMARY_PREFIX)]
    return " ".join(carried + facts)[:300] or f"{len(messages)} messages of small talk."


async def folds_across_runs() -> Any:
    def respond(req: LLMRequest) -> str:
        return "The code is 7731." if req.messages[-1].content == "code?" else "Noted, the weather is fine today."

    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .system("You are helpful.")
        .compaction(threshold_tokens=200, summarizer=_keep_code, keep_recent_turns=2)
        .build()
    )
    await agent.run("Remember: the vault code is 7731 and keep it safe please.")
    for i in range(10):
        await agent.follow_up(f"Turn {i}: it is sunny and warm here with a light breeze from the west.")
    await agent.follow_up("code?")
    return agent


def _member(name: str, reply: str, fact: str) -> Any:
    return (
        Agent.create(provider=mock(reply=reply), model="m", name=name)
        .fact(define_fact(id=fact, data=f"{fact} data"))
        .build()
    )


async def a_sequence() -> Any:
    seq = (
        Sequence.create()
        .step("research", _member("research", "R says 1", "rf"))
        .step("write", _member("writer", "W done", "wf"))
        .build()
    )
    await seq.run("go")
    return seq


async def a_parallel_merge() -> Any:
    par = (
        Parallel.create()
        .branch("a", _member("a", "A1", "af"))
        .branch("b", _member("b", "B1", "bf"))
        .merge_with(lambda answers: " | ".join(f"{k}:{v}" for k, v in sorted(answers.items())))
        .build()
    )
    await par.run("go")
    return par


async def a_nested_sequence() -> Any:
    inner = Sequence.create().step("research", _member("research", "R says 1", "rf")).build()
    outer = Sequence.create().step("inner", inner).step("write", _member("writer", "W done", "wf")).build()
    await outer.run("go")
    return outer


async def one_tool_twice() -> Any:
    calls = [
        {"id": "c1", "name": "look", "args": {"at": "left"}},
        {"id": "c2", "name": "look", "args": {"at": "right"}},
    ]
    provider = mock(replies=[{"tool_calls": calls}, "Both sides seen."])
    agent = Agent.create(provider=provider, model="m").tool(_tool("look", "a view")).build()
    await agent.run("look both ways")
    return agent


async def a_fact_in_the_messages_slot() -> Any:
    agent = (
        Agent.create(provider=mock(reply="Noted."), model="m")
        .fact(define_fact(id="reminder", data="Reminder: be brief.", slot="messages"))
        .build()
    )
    await agent.run("hello")
    return agent


SCENARIOS: dict[str, tuple[Callable[[], Awaitable[Any]], str | None]] = {
    "flagship": (flagship, None),
    "flagship-at-first-call": (flagship, "call-llm#5"),
    "flagship-at-a-route": (flagship, "route#6"),
    "rag-and-steering": (rag_and_steering, None),
    "rules-skills-and-tool-returns": (rules_skills_and_tool_returns, None),
    "memory-across-runs": (memory_across_runs, None),
    "a-turn-that-only-asked-for-a-tool": (a_turn_that_only_asked_for_a_tool, None),
    "a-fold-in-this-run": (a_fold_in_this_run, None),
    "folds-across-runs": (folds_across_runs, None),
    "a-sequence": (a_sequence, None),
    "a-parallel-merge": (a_parallel_merge, None),
    "a-nested-sequence": (a_nested_sequence, None),
    "one-tool-twice": (one_tool_twice, None),
    "a-fact-in-the-messages-slot": (a_fact_in_the_messages_slot, None),
}


@contextmanager
def fixed_run_ids() -> Iterator[None]:
    """Run ids (random per run) counted up instead, so two recordings of one scenario are equal."""
    counter = itertools.count(0xA11CE0000)
    with patch("uuid.uuid4", lambda: uuid.UUID(int=next(counter))):
        yield
