"""Run-scoped tool sessions, artifact stores and filed recordings, per-call receipts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent, ToolContext, ask_human, define_tool
from agentfootprint.agent import AgentBuildError
from agentfootprint.extensions.artifacts import RECORDING_KIND, DirectoryArtifactStore, InMemoryArtifactStore
from agentfootprint.providers import MockExhaustedError, mock

CLOSED: list[str] = []


def sandbox_tool() -> Any:
    def execute(args: dict[str, Any], ctx: ToolContext) -> str:
        outcome = ctx.on_teardown(lambda: CLOSED.append(ctx.run_id), key="sandbox")
        return f"sandbox {outcome}"

    return define_tool(
        name="sandbox", description="Run code.", input_schema={"type": "object", "properties": {}}, execute=execute
    )


def sandbox_calls(n: int, then: list[Any]) -> list[Any]:
    return [{"tool_calls": [{"id": f"s{i}", "name": "sandbox", "args": {}}]} for i in range(n)] + then


async def test_R004_64_run_scoped_teardown_fires_when_the_run_completes_never_on_a_pause() -> None:
    """R004-64: 'run'-scoped tool teardown fires when the run really ended (completed or crashed), never on a
    pause (the resume needs what is open)."""
    CLOSED.clear()
    replies = sandbox_calls(
        2, [{"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "go on?"}}]}, "done"]
    )
    agent = Agent.create(provider=mock(replies=replies)).tool(sandbox_tool()).tool(ask_human).build()
    paused = await agent.run("run it")
    assert paused.status == "paused" and CLOSED == []
    results = agent.last_snapshot().state["tool_results"]  # type: ignore[union-attr]
    assert [r["content"] for r in results] == ["sandbox started", "sandbox reused"]
    done = await agent.resume(paused.checkpoint, "yes")
    assert done.status == "completed" and CLOSED == [paused.run_id]


async def test_R004_64_teardown_fires_when_the_run_crashes() -> None:
    """R004-64: a crash is a terminal: what the run opened is closed."""
    CLOSED.clear()
    agent = Agent.create(provider=mock(replies=sandbox_calls(1, []))).tool(sandbox_tool()).build()
    with pytest.raises(MockExhaustedError):
        await agent.run("run it")
    assert len(CLOSED) == 1


async def test_R004_14_session_events_carry_the_real_run_id() -> None:
    """R004-14: run-scoped tool sessions close with agentfootprint.tools.session_* events carrying the real run
    id (never a placeholder); a failing cleanup is reported, never raised into the run."""
    seen: list[tuple[str, str | None, str]] = []

    def failing(args: dict[str, Any], ctx: ToolContext) -> str:
        def cleanup() -> None:
            raise OSError("already gone")

        ctx.on_teardown(cleanup, key="b")
        return "ok"

    bad = define_tool(
        name="browser", description="Browse.", input_schema={"type": "object", "properties": {}}, execute=failing
    )
    replies = [
        {"tool_calls": [{"id": "s", "name": "sandbox", "args": {}}, {"id": "b", "name": "browser", "args": {}}]},
        "done",
    ]
    agent = Agent.create(provider=mock(replies=replies)).tool(sandbox_tool()).tool(bad).build()
    agent.on("tools.*", lambda e: seen.append((e.type.split(".")[-1], e.meta.run_id, e.payload.get("tool", ""))))
    result = await agent.run("go")
    assert result.answer == "done"
    assert [(kind, tool) for kind, _, tool in seen] == [
        ("session_started", "sandbox"),
        ("session_started", "browser"),
        ("session_close_failed", "browser"),
        ("session_closed", "sandbox"),
    ]
    assert {run_id for _, run_id, _ in seen} == {result.run_id}


async def test_call_scoped_teardown_closes_after_the_call() -> None:
    closed: list[str] = []

    def execute(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.on_teardown(lambda: closed.append(ctx.tool_call_id), scope="call")
        return "ok"

    t = define_tool(name="once", description="x", input_schema={"type": "object", "properties": {}}, execute=execute)
    replies = [
        {"tool_calls": [{"id": "a", "name": "once", "args": {}}, {"id": "b", "name": "once", "args": {}}]},
        "done",
    ]
    await Agent.create(provider=mock(replies=replies)).tool(t).build().run("x")
    assert closed == ["a", "b"]


async def test_R004_16_a_completed_run_s_recording_is_filed_never_a_pause() -> None:
    """R004-16: with an artifact store + recordings, a COMPLETED run's recording is filed (never for a pause)."""
    store = InMemoryArtifactStore()
    replies = [{"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "ok?"}}]}, "filed"]
    agent = Agent.create(provider=mock(replies=replies)).tool(ask_human).artifacts(store, recordings=True).build()
    paused = await agent.run("hi", identity={"principal": "dana"})
    assert paused.status == "paused" and await store.list("dana") == [] and "artifacts" not in paused.extensions
    done = await agent.resume(paused.checkpoint, "yes")
    filed = done.extensions["artifacts"]["recording"]
    metas = await store.list("dana")
    assert [m.kind for m in metas] == [RECORDING_KIND] and metas[0].ref == filed["ref"]
    got = await store.get("dana", filed["ref"])
    assert got is not None
    recording = json.loads(got[1])
    assert recording["run_id"] == done.run_id and recording["snapshot"]["state"]["answer"] == "filed"
    assert "agentfootprint.stream.llm_start" in [e["type"] for e in recording["events"]]


async def test_R004_16_a_filing_failure_never_fails_the_run_and_is_reported() -> None:
    """R004-16: a filing failure never fails the run and is reported as agentfootprint.artifacts.refused."""
    refused: list[dict[str, Any]] = []
    agent = (
        Agent.create(provider=mock(reply="answer"))
        .artifacts(InMemoryArtifactStore(max_bytes=10), recordings=True)
        .build()
    )
    agent.on("artifacts.refused", lambda e: refused.append(e.payload))
    result = await agent.run("hi")
    assert result.answer == "answer" and result.status == "completed"
    assert refused == [
        {"kind": RECORDING_KIND, "reason": "ArtifactStoreError: artifact is larger than the store's limit of 10 bytes"}
    ]
    assert result.extensions["artifacts"] == {"refused": {"reason": refused[0]["reason"]}}


async def test_R004_85_get_artifact_store_is_the_store_or_none(tmp_path: Any) -> None:
    """R004-85: get_artifact_store(): the artifact store the agent was built with, or None; tools reach it bound
    to the run's scope."""
    store = DirectoryArtifactStore(tmp_path)
    assert Agent.create(provider=mock(reply="x")).build().get_artifact_store() is None

    async def save(args: dict[str, Any], ctx: ToolContext) -> str:
        meta = await ctx.service("artifacts").put(kind="report", media_type="text/plain", data="big report")
        return meta.ref

    t = define_tool(name="save", description="Save.", input_schema={"type": "object", "properties": {}}, execute=save)
    replies = [{"tool_calls": [{"id": "s", "name": "save", "args": {}}]}, "saved"]
    agent = Agent.create(provider=mock(replies=replies)).tool(t).artifacts(store).build()
    assert agent.get_artifact_store() is store
    result = await agent.run("save it", session_id="sess-1")
    ref = agent.last_snapshot().state["tool_results"][0]["content"]  # type: ignore[union-attr]
    got = await store.get("sess-1", ref)
    assert got is not None and got[1] == b"big report" and got[0].origin == {"run_id": result.run_id}
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x")).artifacts(object())


async def test_R004_147_every_model_call_mints_a_receipt_and_false_changes_nothing_else() -> None:
    """R004-147: record_receipt (on by default): every model call mints a receipt; False declines the mint and
    changes nothing else."""
    replies = [{"tool_calls": [{"id": "s", "name": "sandbox", "args": {}}]}, "done"]
    on = Agent.create(provider=mock(replies=list(replies))).tool(sandbox_tool()).build()
    off = Agent.create(provider=mock(replies=list(replies))).tool(sandbox_tool()).record_receipt(False).build()
    a = await on.run("go", seed=7)
    b = await off.run("go", seed=7)
    receipts = on.last_snapshot().state["model_receipts"]  # type: ignore[union-attr]
    assert [(r["iteration"], r["message_count"], r["tools"]) for r in receipts] == [
        (1, 1, ["sandbox"]),
        (2, 3, ["sandbox"]),
    ]
    assert all(len(r["request_digest"]) == 64 and len(r["response_digest"]) == 64 for r in receipts)
    state_on = dict(on.last_snapshot().state)  # type: ignore[union-attr]
    state_on.pop("model_receipts")
    state_off = dict(off.last_snapshot().state)  # type: ignore[union-attr]
    for state in (state_on, state_off):
        state.pop("run"), state.pop("tool_results")
    assert state_on == state_off and a.answer == b.answer
    again = Agent.create(provider=mock(replies=list(replies))).tool(sandbox_tool()).build()
    await again.run("go", seed=7)
    assert [r["request_digest"] for r in again.last_snapshot().state["model_receipts"]] == [  # type: ignore[union-attr]
        r["request_digest"] for r in receipts
    ]
