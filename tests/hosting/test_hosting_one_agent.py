"""Issue 32: one Agent instance serves every thread of a host at once; each turn streams and stores only its own run."""

from __future__ import annotations

import asyncio
from typing import Any

from agui_http import body, client, of, text_of, turn, user

from agentfootprint import Agent
from agentfootprint.explain import backtrack
from agentfootprint.explain.recording import Recording
from agentfootprint.explain.report import question_of
from agentfootprint.hosting import ag_ui_app
from agentfootprint.hosting.memory_store import memory_sessions
from agentfootprint.providers import LLMRequest, mock


async def _respond(req: LLMRequest) -> str:
    for _ in range(3):  # let the other turns' stages run in between
        await asyncio.sleep(0)
    return f"reply to {req.messages[-1].content}"


async def test_fifty_threads_at_once_on_one_agent_instance() -> None:
    built: list[Agent] = []
    agent = Agent.create(provider=mock(respond=_respond), model="mock-model").system("You answer.").build()
    built.append(agent)
    sessions = memory_sessions()
    app = ag_ui_app(agent, sessions=sessions)

    async def one(http: Any, k: int) -> tuple[int, list[dict[str, Any]]]:
        status, events = await turn(http, body(user("u1", f"question {k}"), thread=f"t-{k}", run=f"r-{k}"))
        return status, events

    async with client(app) as http:
        answers = await asyncio.gather(*(one(http, k) for k in range(50)))
    for k, (status, events) in enumerate(answers):
        assert status == 200
        assert text_of(events) == f"reply to question {k}"
        finished = of(events, "RUN_FINISHED")
        assert [e["threadId"] for e in finished] == [f"t-{k}"]
        stored = await sessions.read_recording(f"t-{k}", None)
        assert stored is not None
        recording = Recording.model_validate(stored)
        assert question_of(backtrack(recording)) == f"question {k}"
    assert not agent.in_flight


async def test_a_second_turn_on_one_instance_continues_its_own_thread() -> None:
    agent = Agent.create(provider=mock(respond=_respond), model="mock-model").build()
    app = ag_ui_app(agent)
    async with client(app) as http:
        first = await asyncio.gather(
            turn(http, body(user("u1", "a1"), thread="ta", run="r1")),
            turn(http, body(user("u1", "b1"), thread="tb", run="r1")),
        )
        assert [text_of(events) for _, events in first] == ["reply to a1", "reply to b1"]
        _, again = await turn(
            http,
            body(
                user("u1", "a1"),
                {"id": "a1", "role": "assistant", "content": "reply to a1"},
                user("u2", "a2"),
                thread="ta",
                run="r2",
            ),
        )
    assert text_of(again) == "reply to a2"
