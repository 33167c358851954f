"""The AG-UI host stores the checkpoints a keyed agent seals, unchanged: a held pause resumes, and a stored pause or
conversation edited behind the host's back is refused at the agent's door (nothing runs)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agui_http import body, client, of, turn, user

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.hosting import ag_ui_app, memory_sessions
from agentfootprint.providers import LLMRequest, mock

KEY = "host key"


class Tampering:
    """A session store that hands back what was stored, edited by ``edit`` once armed."""

    def __init__(self) -> None:
        self.inner = memory_sessions()
        self.edit: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def acquire(self, thread_id: str, owner: str | None) -> Any:
        lease = await self.inner.acquire(thread_id, owner)
        if self.edit is None:
            return lease
        return replace(lease, record=self.edit(lease.record))


def _provider() -> Any:
    def respond(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user" and len(req.messages) == 1:
            return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "Which city?"}}]}
        return f"Noted: {req.messages[-1].content}"

    return mock(respond=respond)


def _factory(provider: Any) -> Any:
    lookup = define_tool(name="lookup", description="d", input_schema={"type": "object"}, execute=lambda a, c: "x")
    return lambda: Agent.create(provider=provider, checkpoint_key=KEY).tool(ask_human).tool(lookup).build()


def _resume(interrupt: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"answer": "Paris"}}]


async def test_a_keyed_agents_pause_is_stored_sealed_and_resumes() -> None:
    store = Tampering()
    async with client(ag_ui_app(_factory(_provider()), sessions=store)) as http:
        _, events = await turn(http, body(user("u1", "Weather?")))
        (interrupt,) = events[-1]["outcome"]["interrupts"]
        lease = await store.inner.acquire("t1", None)
        assert lease.record.pause.checkpoint["seal"]  # what the host holds is what the agent sealed
        await store.inner.release(lease)
        status, events = await turn(http, body(user("u1", "Weather?"), run="r2", resume=_resume(interrupt)))
    assert status == 200 and of(events, "RUN_FINISHED")


async def test_a_stored_pause_edited_behind_the_hosts_back_is_refused_before_anything_runs() -> None:
    store = Tampering()
    provider = _provider()
    async with client(ag_ui_app(_factory(provider), sessions=store)) as http:
        _, events = await turn(http, body(user("u1", "Weather?")))
        (interrupt,) = events[-1]["outcome"]["interrupts"]
        calls = provider.calls

        def edit(record: Any) -> Any:
            checkpoint = {**record.pause.checkpoint, "session_id": "someone-else"}
            return record.model_copy(update={"pause": record.pause.model_copy(update={"checkpoint": checkpoint})})

        store.edit = edit
        status, events = await turn(http, body(user("u1", "Weather?"), run="r2", resume=_resume(interrupt)))
    (error,) = of(events, "RUN_ERROR")
    assert status == 200 and error["code"] == "ERR_CHECKPOINT_SEAL" and provider.calls == calls
