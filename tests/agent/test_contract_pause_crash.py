"""Contract (API.md §2, seed 004): ask_human pause/resume across instances, PendingQuestionError, abandon_pause,
checkpoint validation, crash checkpoints with resume_on_error, and stopped_early."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import (
    Agent,
    EmptyAnswerWarning,
    NoConversationError,
    PendingQuestionError,
    RunCheckpointError,
    RunInFlightError,
    ask_human,
    define_tool,
)
from agentfootprint.errors import AgentFootprintError
from agentfootprint.providers import LLMRequest, mock

from .conftest import ORDER, lookup_calls, lookup_order

SYSTEM = "You are a refunds assistant."
QUESTION = "Which order number do you mean?"
ANSWER = "A-1001, the laptop"


def build(provider: Any, **kw: Any) -> Agent:
    return (
        Agent.create(provider=provider, model="mock-1", **kw).system(SYSTEM).tool(lookup_order).tool(ask_human).build()
    )


def ask(call_id: str = "h1", question: str = QUESTION) -> dict[str, Any]:
    return {"id": call_id, "name": "ask_human", "args": {"question": question}}


def lookup(call_id: str = "l1", order: str = "A-1001") -> dict[str, Any]:
    return {"id": call_id, "name": "lookup_order", "args": {"orderId": order}}


def roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))


# ------------------------------------------------------------------------------------------ ask_human


async def test_ask_human_pauses_then_resumes_on_a_fresh_agent_after_json_roundtrip() -> None:
    p1 = mock(replies=[{"content": "", "tool_calls": [ask("h1")]}])
    a1 = build(p1)
    paused = await a1.run("Refund my order")
    assert paused.status == "paused"
    assert paused.question == QUESTION
    assert paused.answer is None
    assert isinstance(paused.checkpoint, dict)
    stored = roundtrip(paused.checkpoint)
    assert stored == paused.checkpoint
    assert p1.calls == 1

    p2 = mock(respond=lambda req: f"thanks, resolving {req.messages[-1].content}")
    a2 = build(p2)
    done = await a2.resume(stored, ANSWER)
    assert done.status == "completed"
    assert done.answer == f"thanks, resolving {ANSWER}"
    assert done.question is None
    assert p2.calls == 1
    msgs = p2.requests[0].messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[0].content == "Refund my order"
    assert msgs[1].tool_calls[0].id == "h1" and msgs[1].tool_calls[0].name == "ask_human"
    tool_msg = msgs[2]
    assert (tool_msg.tool_call_id, tool_msg.tool_name, tool_msg.content) == ("h1", "ask_human", ANSWER)
    # R004-17: the resumed leg is a new run (fresh id), linked to the leg it continues
    assert done.run_id != paused.run_id and done.resumed_from == paused.run_id
    # and its conversation can be followed up on the resuming agent
    await a2.follow_up("one more thing")
    assert [m.role for m in p2.requests[1].messages] == ["user", "assistant", "tool", "assistant", "user"]


def test_ask_human_pause_resume_sync_twins() -> None:
    a1 = build(mock(replies=[{"tool_calls": [ask()]}]))
    paused = a1.run_sync("go")
    assert paused.status == "paused"
    a2 = build(mock(respond=lambda req: req.messages[-1].content))
    done = a2.resume_sync(roundtrip(paused.checkpoint), "yes")
    assert done.status == "completed" and done.answer == "yes"


async def test_resume_on_the_same_agent_clears_the_pending_question() -> None:
    provider = mock(replies=[{"tool_calls": [ask()]}, "resolved", "next"])
    agent = build(provider)
    paused = await agent.run("go")
    done = await agent.resume(paused.checkpoint, ANSWER)  # type: ignore[arg-type]
    assert done.status == "completed" and done.answer == "resolved"
    assert provider.requests[1].messages[-1].content == ANSWER
    again = await agent.run("new turn")  # no PendingQuestionError any more
    assert again.answer == "next"


async def test_non_string_answer_is_json_dumped_as_the_tool_content() -> None:
    a1 = build(mock(replies=[{"tool_calls": [ask()]}]))
    paused = await a1.run("go")
    p2 = mock(reply="ok")
    await build(p2).resume(roundtrip(paused.checkpoint), {"order": "A-1001", "qty": 2})
    assert json.loads(p2.requests[0].messages[-1].content) == {"order": "A-1001", "qty": 2}


async def test_batch_lookup_then_ask_human_lookup_runs_once_across_pause_resume() -> None:
    a1 = build(mock(replies=[{"tool_calls": [lookup("l1"), ask("h1")]}]))
    paused = await a1.run("refund?")
    assert paused.status == "paused"
    assert lookup_calls == [{"orderId": "A-1001"}]

    p2 = mock(reply="final")
    done = await build(p2).resume(roundtrip(paused.checkpoint), ANSWER)
    assert done.status == "completed" and done.answer == "final"
    assert lookup_calls == [{"orderId": "A-1001"}]  # NOT run a second time
    msgs = p2.requests[0].messages
    assert [(m.role, m.tool_call_id) for m in msgs] == [
        ("user", None),
        ("assistant", None),
        ("tool", "l1"),
        ("tool", "h1"),
    ]
    assert msgs[2].content == ORDER and msgs[2].tool_name == "lookup_order"
    assert msgs[3].content == ANSWER and msgs[3].tool_name == "ask_human"


async def test_batch_ask_human_then_lookup_lookup_runs_once_after_resume() -> None:
    a1 = build(mock(replies=[{"tool_calls": [ask("h1"), lookup("l1")]}]))
    paused = await a1.run("refund?")
    assert paused.status == "paused"
    assert lookup_calls == []  # calls after the pausing one wait for the answer
    p2 = mock(reply="final")
    done = await build(p2).resume(roundtrip(paused.checkpoint), ANSWER)
    assert done.status == "completed"
    assert lookup_calls == [{"orderId": "A-1001"}]
    msgs = p2.requests[0].messages
    assert [(m.role, m.tool_call_id) for m in msgs][2:] == [("tool", "h1"), ("tool", "l1")]
    assert msgs[2].content == ANSWER and msgs[3].content == ORDER


async def test_second_ask_human_after_resume_pauses_again_and_resumes() -> None:
    script = [{"tool_calls": [ask("h1", "first?")]}, {"tool_calls": [ask("h2", "second?")]}, "both answered"]
    a1 = build(mock(replies=script[:1]))
    p1 = await a1.run("go")
    a2 = build(mock(replies=script[1:2]))
    p2 = await a2.resume(roundtrip(p1.checkpoint), "one")
    assert p2.status == "paused" and p2.question == "second?"
    p3 = mock(replies=script[2:])
    done = await build(p3).resume(roundtrip(p2.checkpoint), "two")
    assert done.answer == "both answered"
    tools = [(m.tool_call_id, m.content) for m in p3.requests[0].messages if m.role == "tool"]
    assert tools == [("h1", "one"), ("h2", "two")]


# ------------------------------------------------------------------------------------------ while paused


async def test_pending_question_error_when_a_different_message_arrives() -> None:
    provider = mock(replies=[{"tool_calls": [ask()]}, "after abandon"])
    agent = build(provider)
    paused = await agent.run("go")
    assert paused.status == "paused"
    with pytest.raises(PendingQuestionError) as info:
        await agent.run("something else entirely")
    assert info.value.code == "ERR_PENDING_QUESTION"
    assert provider.calls == 1
    with pytest.raises(PendingQuestionError):
        await agent.run("another", continue_from=None)
    # follow_up while paused is refused too (there is no completed conversation, and a question pends)
    with pytest.raises((PendingQuestionError, NoConversationError)):
        await agent.follow_up("hello?")
    assert provider.calls == 1

    dropped = agent.abandon_pause()
    assert dropped is not None
    assert dropped.get("question") == QUESTION
    assert agent.abandon_pause() is None  # nothing left to drop
    r = await agent.run("start over")
    assert r.status == "completed" and r.answer == "after abandon"
    assert [m.content for m in provider.requests[1].messages] == ["start over"]


def test_abandon_pause_on_a_fresh_agent_returns_none() -> None:
    assert build(mock(reply="x")).abandon_pause() is None


# ------------------------------------------------------------------------------------------ checkpoint validation


async def _paused_checkpoint() -> dict[str, Any]:
    paused = await build(mock(replies=[{"tool_calls": [ask()]}])).run("go")
    assert paused.checkpoint is not None
    return roundtrip(paused.checkpoint)


@pytest.mark.parametrize(
    ("field", "mutate"),
    [
        ("run_id", lambda cp: cp.pop("run_id")),
        ("question", lambda cp: cp.pop("question")),
        ("tool_call_id", lambda cp: cp.__setitem__("tool_call_id", 12345)),
        ("format", lambda cp: cp.__setitem__("format", "agentfootprint.conversation")),
        ("version", lambda cp: cp.__setitem__("version", 99)),
        ("flow", lambda cp: cp.pop("flow")),
    ],
)
async def test_malformed_resume_checkpoint_refused_with_a_typed_error_naming_the_field(field: str, mutate: Any) -> None:
    cp = await _paused_checkpoint()
    mutate(cp)
    provider = mock(reply="never")
    with pytest.raises(AgentFootprintError) as info:
        await build(provider).resume(cp, ANSWER)
    err = info.value
    assert isinstance(err, ValueError)
    assert getattr(err, "field", "").split(".")[0] == field
    assert field in str(err)
    assert provider.calls == 0


@pytest.mark.parametrize("bad", [None, "checkpoint", 42, [], {}])
async def test_non_checkpoint_values_are_refused(bad: Any) -> None:
    provider = mock(reply="never")
    with pytest.raises(AgentFootprintError) as info:
        await build(provider).resume(bad, ANSWER)
    assert isinstance(info.value, ValueError) and getattr(info.value, "field", None)
    assert provider.calls == 0


async def test_refusal_never_quotes_the_rejected_value() -> None:
    cp = await _paused_checkpoint()
    secret = "TOPSECRET-" + "z" * 400
    cp["run_id"] = secret
    with pytest.raises(AgentFootprintError) as info:
        await build(mock(reply="never")).resume(cp, ANSWER)
    assert "TOPSECRET" not in str(info.value) and "TOPSECRET" not in repr(info.value)


async def test_conversation_checkpoint_is_not_a_resume_checkpoint() -> None:
    a1 = build(mock(reply="done"))
    await a1.run("hi")
    conv = a1.checkpoint()
    provider = mock(reply="never")
    with pytest.raises(AgentFootprintError) as info:
        await build(provider).resume(conv, ANSWER)  # type: ignore[arg-type]
    assert getattr(info.value, "field", None)
    assert provider.calls == 0


async def test_unserialisable_answer_refused() -> None:
    cp = await _paused_checkpoint()
    provider = mock(reply="never")
    with pytest.raises(AgentFootprintError) as info:
        await build(provider).resume(cp, object())
    assert getattr(info.value, "field", None) == "answer"
    assert provider.calls == 0


# ------------------------------------------------------------------------------------------ crash mid-run


class ProviderDown(Exception):
    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def _crash_on_second_call() -> Any:
    count = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        count["n"] += 1
        if count["n"] == 1:
            return {"tool_calls": [lookup("l1")]}
        raise ProviderDown("upstream 503", status=503)

    return mock(respond=respond)


async def test_crash_mid_run_carries_the_last_good_conversation_and_resumes_on_a_fresh_agent() -> None:
    agent = build(_crash_on_second_call())
    with pytest.raises(ProviderDown) as info:
        await agent.run("Refund A-1001?")
    err = info.value
    assert isinstance(err, RunCheckpointError)
    assert isinstance(err, ProviderDown)
    assert err.status == 503  # the original error's attributes survive
    assert "upstream 503" in str(err)
    cp = err.checkpoint
    stored = roundtrip(cp)
    assert stored == cp
    roles = [m["role"] for m in stored["history"]]
    assert roles == ["user", "assistant", "tool"]
    assert stored["history"][2]["content"] == ORDER
    assert lookup_calls == [{"orderId": "A-1001"}]

    p2 = mock(respond=lambda req: f"answer from {len(req.messages)} messages")
    fresh = build(p2)
    done = await fresh.resume_on_error(stored)
    assert done.status == "completed" and done.answer == "answer from 3 messages"
    msgs = p2.requests[0].messages
    assert [m.role for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[0].content == "Refund A-1001?" and msgs[2].tool_call_id == "l1"
    assert lookup_calls == [{"orderId": "A-1001"}]  # the completed tool call is not run again


async def test_crashed_agent_is_not_left_in_flight() -> None:
    count = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        count["n"] += 1
        if count["n"] == 1:
            raise ProviderDown("boom", status=500)
        return "fine"

    agent = build(mock(respond=respond))
    with pytest.raises(RunCheckpointError):
        await agent.run("a")
    assert (await agent.run("b")).answer == "fine"


async def test_crash_on_first_call_checkpoint_holds_the_user_turn() -> None:
    def respond(req: LLMRequest) -> Any:
        raise ProviderDown("nope", status=500)

    with pytest.raises(RunCheckpointError) as info:
        await build(mock(respond=respond)).run("only the question")
    cp = roundtrip(info.value.checkpoint)
    assert [(m["role"], m["content"]) for m in cp["history"]] == [("user", "only the question")]
    done = await build(mock(respond=lambda req: req.messages[-1].content)).resume_on_error(cp)
    assert done.answer == "only the question"


async def test_crash_with_a_builtin_connection_error_is_both_classes() -> None:
    count = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        count["n"] += 1
        if count["n"] == 1:
            return {"tool_calls": [lookup("l1")]}
        raise ConnectionError("connection refused")

    with pytest.raises(RunCheckpointError) as info:
        await build(mock(respond=respond)).run("go")
    assert isinstance(info.value, ConnectionError)


@pytest.mark.parametrize("bad", [{}, {"history": []}, "x", None])
async def test_resume_on_error_refuses_malformed_checkpoints(bad: Any) -> None:
    provider = mock(reply="never")
    with pytest.raises(AgentFootprintError) as info:
        await build(provider).resume_on_error(bad)
    assert isinstance(info.value, ValueError) and getattr(info.value, "field", None)
    assert provider.calls == 0


# ------------------------------------------------------------------------------------------ stopped_early


async def test_max_iterations_last_call_still_asking_for_tools() -> None:
    always = mock(
        respond=lambda req: {"content": "partial", "tool_calls": [lookup(f"l{len(req.messages)}"), lookup("x")]}
    )
    agent = build(always, max_iterations=1, wrap_up_at_max_iterations=False)  # cut short: no wrap-up call
    r = await agent.run("go")
    assert r.status == "completed"
    assert r.answer == "partial"
    assert lookup_calls == []  # the last allowed call's tools are not run
    stopped = agent.stopped_early()
    assert stopped is not None
    assert stopped.reason == "max-iterations"
    assert stopped.iteration == 1
    assert stopped.pending_tool_calls == 2
    assert always.calls == 1


async def test_max_iterations_two_runs_one_tool_batch() -> None:
    provider = mock(respond=lambda req: {"content": "", "tool_calls": [lookup(f"l{len(req.messages)}")]})
    agent = build(provider, max_iterations=2)
    with pytest.warns(EmptyAnswerWarning):  # R004-90: the answer handed back is empty
        r = await agent.run("go")
    assert r.status == "completed"
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.iteration == 2 and stopped.pending_tool_calls == 1
    assert len(lookup_calls) == 1 and provider.calls == 3  # R004-92: two allowed calls, then the wrap-up


async def test_finishing_exactly_on_the_last_allowed_call_is_not_stopped_early() -> None:
    provider = mock(replies=[{"tool_calls": [lookup()]}, "done"])
    agent = build(provider, max_iterations=2)
    r = await agent.run("go")
    assert r.answer == "done" and agent.stopped_early() is None


async def test_stopped_early_resets_on_the_next_normal_run() -> None:
    count = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        count["n"] += 1
        return {"tool_calls": [lookup()]} if count["n"] == 1 else "normal"

    agent = build(mock(respond=respond), max_iterations=1)
    await agent.run("a")
    assert agent.stopped_early() is not None
    await agent.run("b")
    assert agent.stopped_early() is None


def test_stopped_early_is_none_before_any_run() -> None:
    assert build(mock(reply="x")).stopped_early() is None


# ------------------------------------------------------------------------------------------ edges


async def test_identity_survives_pause_and_resume_on_a_fresh_agent() -> None:
    seen: list[Any] = []
    whoami = define_tool(
        name="whoami", description="d", input_schema={"type": "object"}, execute=lambda a, ctx: seen.append(ctx) or "me"
    )

    def make(provider: Any) -> Agent:
        return Agent.create(provider=provider, model="m").tool(ask_human).tool(whoami).build()

    a1 = make(mock(replies=[{"tool_calls": [ask("h1")]}]))
    paused = await a1.run("go", identity={"tenant": "acme", "principal": "ann"})
    a2 = make(mock(replies=[{"tool_calls": [{"id": "w", "name": "whoami", "args": {}}]}, "done"]))
    done = await a2.resume(roundtrip(paused.checkpoint), "ok")
    assert done.status == "completed"
    assert seen and seen[0].identity.tenant == "acme" and seen[0].identity.principal == "ann"
    assert seen[0].run_id == done.run_id != paused.run_id  # R004-17: the resumed leg is a new run of the turn


async def test_pending_question_error_carries_the_question() -> None:
    agent = build(mock(replies=[{"tool_calls": [ask()]}]))
    await agent.run("go")
    with pytest.raises(PendingQuestionError) as info:
        await agent.run("other")
    assert info.value.question == QUESTION


async def test_ask_human_on_the_last_allowed_call_does_not_pause() -> None:
    provider = mock(replies=[{"content": "need info", "tool_calls": [ask()]}, "fine"])
    agent = build(provider, max_iterations=1, wrap_up_at_max_iterations=False)
    r = await agent.run("go")
    assert r.status == "completed" and r.answer == "need info" and r.question is None
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.pending_tool_calls == 1
    assert (await agent.run("next")).answer == "fine"  # nothing is pending: not refused


async def test_resume_refused_while_the_same_pause_is_being_resumed() -> None:
    """R004-33 for resume: a second resume of a pause whose resume is in flight is refused (the paused tool would
    be answered twice); a new conversation on the same instance is not held up meanwhile (issue 32)."""
    import asyncio

    cp = await _paused_checkpoint()
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(req: LLMRequest) -> str:
        if str(req.messages[-1].content) == "other":
            return "other answer"
        started.set()
        await release.wait()
        return "slow"

    agent = build(mock(respond=slow))
    task = asyncio.create_task(agent.resume(cp, ANSWER))
    await started.wait()
    with pytest.raises(RunInFlightError) as info:
        await agent.resume(cp, ANSWER)
    assert info.value.code == "ERR_RUN_IN_FLIGHT"
    assert (await agent.run("other")).answer == "other answer"
    release.set()
    assert (await task).answer == "slow"


async def test_cancelled_run_does_not_leave_the_agent_in_flight() -> None:
    import asyncio

    started = asyncio.Event()
    never = asyncio.Event()
    count = {"n": 0}

    async def respond(req: LLMRequest) -> str:
        count["n"] += 1
        if count["n"] == 1:
            started.set()
            await never.wait()
        return "second run ok"

    agent = build(mock(respond=respond))
    task = asyncio.create_task(agent.run("first"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await agent.run("second")).answer == "second run ok"
