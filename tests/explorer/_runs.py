"""Recorded runs for the explorer tests: the flagship's wrong answer, its fixed twin, a paused run, a run holding a
secret behind a redaction pattern, a long run of many iterations, and stores (a directory of JSON, a SQLite file)
holding them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentfootprint import Agent, ask_human
from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.explain import Recording, recording_of
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.stores.recordings import RecordingStore, SQLiteRecordingStore
from agentfootprint.tools import define_tool

SENTINEL = "sk-SENTINEL-7f3a9c1d2e"
"""A secret that reaches the run (a fact, a tool result and the question) and must never leave the explorer."""

T0 = 1_796_000_000.0
"""When the first of the catalog tests' timed runs was made."""


def wrong() -> Recording:
    """The flagship run: the planted fact ``vip-override-fact`` turns the answer to APPROVED."""
    return recording_of(refunds_agent().run_sync(QUESTION))


def fixed() -> Recording:
    """The same agent without the planted fact: DECLINED."""
    return recording_of(refunds_agent().without("vip-override-fact").run_sync(QUESTION))


def paused() -> Recording:
    """A run that pauses on ask_human."""

    def respond(req: LLMRequest) -> Any:
        return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "Which order?"}}]}

    agent = Agent.create(provider=mock(respond=respond), model="m", name="helpdesk").tool(ask_human).build()
    return recording_of(agent.run_sync("Refund my order"))


def long_run(iterations: int) -> Recording:
    """A run that calls a tool ``iterations - 1`` times before answering (one model call per iteration)."""

    def respond(req: LLMRequest) -> Any:
        calls = sum(1 for m in req.messages if m.role == "tool")
        if calls < iterations - 1:
            return {"tool_calls": [{"id": f"c{calls}", "name": "step", "args": {"n": calls}}]}
        return f"done after {calls} steps"

    step = define_tool(
        name="step",
        description="One step of a long task.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        execute=lambda args, ctx: f"step {args['n']} ok",
    )
    agent = (
        Agent.create(provider=mock(respond=respond), model="m", name="long", max_iterations=iterations + 1)
        .system("Work through the steps.")
        .tool(step)
        .build()
    )
    return recording_of(agent.run_sync("Do the long task"))


def secret_agent() -> Agent:
    """An agent whose fact and answer carry ``SENTINEL``, served under a redaction pattern."""
    from agentfootprint.context import define_fact

    def respond(req: LLMRequest) -> Any:
        return f"The key is {SENTINEL}" if "key" in req.system_prompt else "I cannot say."

    return (
        Agent.create(provider=mock(respond=respond), model="m", name="vault")
        .system("You guard keys.")
        .fact(define_fact(id="api-key-fact", data=f"The API key is {SENTINEL}."))
        .redact(patterns=[r"sk-SENTINEL-[0-9a-f]+"])
        .build()
    )


def secret() -> Recording:
    """A run whose fact, question and answer carry ``SENTINEL`` (the served recording holds it redacted)."""
    return recording_of(secret_agent().run_sync(f"What is the key? I think it is {SENTINEL}"))


def failed_copy(rec: Recording, run_id: str) -> Recording:
    """``rec`` under another run id with its last step marked failed (a run that ended in an error)."""
    raw = json.loads(rec.model_dump_json())
    raw["snapshot"]["run_id"] = run_id
    raw["snapshot"]["commit_log"][-1]["failed"] = True
    raw["snapshot"]["commit_log"][-1]["error"] = "RuntimeError"
    return Recording.model_validate(raw)


def write_dir(folder: Path, recs: dict[str, Recording]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rec in recs.items():
        (folder / f"{name}.json").write_text(rec.model_dump_json())
    return folder


def write_sqlite(path: Path, recs: list[tuple[Recording, float]], *, summaries: bool = True) -> Path:
    """A SQLite store of ``recs`` (created at the given times); ``summaries=False`` leaves the question and answer
    columns empty, as ``save_recording`` does."""
    store = SQLiteRecordingStore(path)
    try:
        put_all(store, recs, summaries=summaries)
    finally:
        store.close()
    return path


def put_all(store: RecordingStore, recs: list[tuple[Recording, float]], *, summaries: bool = True) -> None:
    """Put ``recs`` into ``store`` (created at the given times), with or without the question and answer."""
    for rec, when in recs:
        state = rec.snapshot.state
        store.put(
            rec.snapshot.run_id,
            rec.model_dump_json(),
            agent=rec.agent,
            created_at=when,
            question=str(state.get("user_message") or "") if summaries else "",
            answer=str(state.get("answer") or "") if summaries else "",
        )
