"""Run integrity (seed 004): consent spent once, redaction that travels with a pause, identity, run ids and event
meta. Each test names the rule it makes hold."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentfootprint import (
    Agent,
    ConversationMismatchError,
    DecisionRequiredError,
    Identity,
    InvalidConversationError,
    ResumeDecisionError,
    ResumeIdentityConflictError,
    ResumeRedactionError,
    Sequence,
    ask_human,
    check_in_approved,
    check_in_declined,
    define_memory,
    define_tool,
)
from agentfootprint.agent import InMemoryDecisionLedger, InvalidRunOptionError, SQLiteDecisionLedger
from agentfootprint.events import AgentEvent
from agentfootprint.flow import REDACTED, CancelToken, FlowCancelledError, InvalidCheckpointError, RedactionPolicy
from agentfootprint.providers import LLMRequest, mock

from ._integrity import Effects, ask_agent, chat_agent, refund_agent, roundtrip

CARD = "4111-1111-1111-1111"


# ------------------------------------------------------------------------------------------ consent spent once


async def test_r004_57_an_answer_that_is_not_a_decision_is_refused_and_the_tool_never_runs() -> None:
    """R004-57: a consent gate answered with something that is not a decision -> DecisionRequiredError."""
    fx = Effects()
    paused = await refund_agent(fx).run("refund A-1001")
    assert paused.status == "paused" and paused.request_id is not None
    for answer in ("yes", True, None, 1, {"approved": True}, {"decision": "maybe"}):
        fresh = refund_agent(fx)
        calls = fx.model_calls
        with pytest.raises(DecisionRequiredError) as err:
            await fresh.resume(roundtrip(paused.checkpoint), answer)
        assert err.value.code == "ERR_DECISION_REQUIRED" and err.value.gate == "check_in"
        assert "maybe" not in str(err.value) and fx.model_calls == calls
    assert fx.refunds == []


async def test_r004_58_a_decision_must_name_the_request_the_run_is_paused_on() -> None:
    """R004-58: a decision naming no request, or another request -> ResumeDecisionError; the tool never runs."""
    fx = Effects()
    paused = await refund_agent(fx).run("refund A-1001")
    other = await refund_agent(fx).run("refund A-1001")  # another paused run: another request
    assert other.request_id != paused.request_id
    for decision, reason in (
        (check_in_approved(by="ann"), "no-request"),
        (check_in_approved(other, by="ann"), "other-request"),
        (check_in_approved("req_0123", by="ann"), "other-request"),
    ):
        with pytest.raises(ResumeDecisionError) as err:
            await refund_agent(fx).resume(roundtrip(paused.checkpoint), decision)
        assert err.value.reason == reason and err.value.code == "ERR_RESUME_DECISION"
    assert fx.refunds == []
    done = await refund_agent(fx).resume(roundtrip(paused.checkpoint), check_in_approved(paused, by="ann"))
    assert done.status == "completed" and fx.refunds == [{"order_id": "A-1001", "amount": 480}]


async def test_r004_58_the_request_id_binds_the_exact_call_shown() -> None:
    """R004-58: the request id is derived from the call's arguments: an edited amount is another request."""
    fx = Effects()
    paused = await refund_agent(fx).run("refund A-1001")
    forged = roundtrip(paused.checkpoint)
    state = forged["flow"]["namespaces"][""]["state"]
    state["last_response"]["tool_calls"][0]["args"]["amount"] = 99999
    with pytest.raises(InvalidCheckpointError):
        await refund_agent(fx).resume(forged, check_in_approved(paused))
    assert fx.refunds == []


async def test_r004_59_one_approval_runs_the_tool_once_on_this_agent_and_on_fresh_ones() -> None:
    """R004-59: an answered consent request is spent: resuming the same checkpoint again is refused before the tool
    runs (today's defect: one approval ran a refund three times)."""
    fx = Effects()
    agent = refund_agent(fx)
    paused = await agent.run("refund A-1001")
    decision = check_in_approved(paused, by="ann")
    done = await agent.resume(roundtrip(paused.checkpoint), decision)
    assert done.status == "completed"
    for resumer in (agent, refund_agent(fx), refund_agent(fx)):
        calls = fx.model_calls
        with pytest.raises(ResumeDecisionError) as err:
            await resumer.resume(roundtrip(paused.checkpoint), decision)
        assert err.value.reason == "spent" and fx.model_calls == calls
    assert fx.refunds == [{"order_id": "A-1001", "amount": 480}]


async def test_r004_59_a_declined_request_is_spent_too() -> None:
    """R004-59: a decline answers the request; approving it afterwards is refused."""
    fx = Effects()
    paused = await refund_agent(fx).run("refund A-1001")
    await refund_agent(fx).resume(roundtrip(paused.checkpoint), check_in_declined(paused, note="no"))
    with pytest.raises(ResumeDecisionError):
        await refund_agent(fx).resume(roundtrip(paused.checkpoint), check_in_approved(paused))
    assert fx.refunds == []


async def test_r004_59_concurrent_resumes_of_one_consent_run_the_tool_once() -> None:
    """R004-59: two resumes racing on one approval: the ledger lets one through."""
    fx = Effects()
    paused = await refund_agent(fx).run("refund A-1001")
    decision = check_in_approved(paused)
    results = await asyncio.gather(
        *(refund_agent(fx).resume(roundtrip(paused.checkpoint), decision) for _ in range(5)), return_exceptions=True
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(isinstance(r, ResumeDecisionError) for r in results if isinstance(r, BaseException))
    assert len(fx.refunds) == 1


async def test_r004_140_the_decision_ledger_is_pluggable(tmp_path: Any) -> None:
    """R004-140: decision_ledger= is where consent requests are spent; default one process-wide ledger."""
    fx = Effects()
    own = InMemoryDecisionLedger()
    paused = await refund_agent(fx).run("refund A-1001")
    decision = check_in_approved(paused)
    await refund_agent(fx, decision_ledger=own).resume(roundtrip(paused.checkpoint), decision)
    assert own.is_spent(paused.request_id or "") and len(own) == 1
    # another ledger (another host) has not seen it: the process ledger decides for agents that name none
    await refund_agent(fx).resume(roundtrip(paused.checkpoint), decision)
    with pytest.raises(ResumeDecisionError):
        await refund_agent(fx).resume(roundtrip(paused.checkpoint), decision)
    assert len(fx.refunds) == 2
    # SQLite: two hosts opening one file share it
    path = tmp_path / "decisions.sqlite"
    paused2 = await refund_agent(fx).run("refund A-1001")
    one, two = SQLiteDecisionLedger(path), SQLiteDecisionLedger(path)
    await refund_agent(fx, decision_ledger=one).resume(roundtrip(paused2.checkpoint), check_in_approved(paused2))
    with pytest.raises(ResumeDecisionError) as err:
        await refund_agent(fx, decision_ledger=two).resume(roundtrip(paused2.checkpoint), check_in_approved(paused2))
    assert err.value.reason == "spent" and len(fx.refunds) == 3


def test_r004_140_a_ledger_must_spend_and_tell() -> None:
    """R004-140: decision_ledger must answer spend() and is_spent()."""
    from agentfootprint import AgentBuildError

    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), decision_ledger=object())  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ redaction travels


async def test_r004_61_a_run_redact_policy_covers_the_resumed_leg_without_being_handed_again() -> None:
    """R004-61: redact given to run() is carried by the pause: a fresh agent's resumed leg is covered by it."""
    fx = Effects()
    paused = await ask_agent(fx).run("refund", redact={"keys": ["card"]})
    assert paused.checkpoint is not None and paused.checkpoint["redaction"]["keys"] == ["card"]
    fresh = ask_agent(fx, name="agent")
    seen: list[AgentEvent] = []
    fresh.on("*", seen.append)
    done = await fresh.resume(roundtrip(paused.checkpoint), f"the card {CARD}")
    assert done.status == "completed"
    snap = fresh.last_snapshot()
    assert snap is not None and CARD not in snap.model_dump_json()
    assert CARD not in str([e.payload for e in seen]) and CARD not in str(done.answer)


async def test_r004_62_a_callers_pattern_is_never_compiled_from_a_checkpoint() -> None:
    """R004-62: resume() without the run's own pattern is refused (ResumeRedactionError 'unknown-pattern')."""
    fx = Effects()
    pattern = r"4111-\d{4}-\d{4}-\d{4}"
    paused = await ask_agent(fx).run("refund", redact=RedactionPolicy.of(patterns=[pattern]))
    assert paused.checkpoint is not None and pattern not in str(paused.checkpoint["redaction"])
    calls = fx.model_calls
    with pytest.raises(ResumeRedactionError) as err:
        await ask_agent(fx).resume(roundtrip(paused.checkpoint), "ok")
    assert err.value.reason == "unknown-pattern" and fx.model_calls == calls
    done = await ask_agent(fx).resume(roundtrip(paused.checkpoint), f"use {CARD}", redact={"patterns": [pattern]})
    assert done.status == "completed" and CARD not in str(done.answer)
    declared = Agent.create(provider=mock(reply="ok"), model="m").tool(lookup_tool_of(fx)).tool(ask_human)
    done2 = await declared.redact(patterns=[pattern]).build().resume(roundtrip(paused.checkpoint), "ok")
    assert done2.status == "completed"


def lookup_tool_of(fx: Effects) -> Any:
    from ._integrity import lookup_tool

    return lookup_tool(fx)


async def test_r004_74_follow_up_takes_the_same_run_options() -> None:
    """R004-74: follow_up is a new run covered by what it is given (redact, correlation, session...)."""
    fx = Effects()
    agent = chat_agent(fx)
    await agent.run(f"my card is {CARD}")
    seen: list[AgentEvent] = []
    agent.on("*", seen.append)
    await agent.follow_up("again", redact={"patterns": [r"4111-[\d-]+"]}, correlation_id="c-1", session_id="s-1")
    snap = agent.last_snapshot()
    assert snap is not None and CARD not in snap.model_dump_json()
    assert seen and all(e.meta.correlation_id == "c-1" and e.meta.session_id == "s-1" for e in seen)
    with pytest.raises(InvalidRunOptionError):
        await agent.follow_up("again", timeout=-1)


async def test_r004_78_a_tool_is_handed_the_run_redaction_and_signal_to_pass_on() -> None:
    """R004-78: ctx.redact and ctx.signal let a tool that runs another agent pass its run's policy on."""
    inner_provider = mock(respond=lambda req: f"echo {req.messages[-1].content}")
    specialist = Agent.create(provider=inner_provider, model="m").build()
    handed: list[Any] = []

    async def delegate(args: dict[str, Any], ctx: Any) -> str:
        handed.append((ctx.redact, ctx.signal))
        result = await specialist.run(args["text"], redact=ctx.redact, signal=ctx.signal)
        return result.answer or ""

    tool = define_tool(
        name="delegate",
        description="d",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        execute=delegate,
    )
    script = [{"tool_calls": [{"id": "d1", "name": "delegate", "args": {"text": f"card {CARD}"}}]}, "done"]
    agent = Agent.create(provider=mock(replies=script), model="m").tool(tool).redact(keys=["ssn"]).build()
    await agent.run("go", redact={"patterns": [r"4111-[\d-]+"]})
    policy, signal = handed[0]
    assert isinstance(policy, RedactionPolicy) and policy.keys == {"ssn"} and len(policy.patterns) == 1
    assert isinstance(signal, CancelToken)
    inner = specialist.last_snapshot()
    assert inner is not None and CARD not in inner.model_dump_json() and REDACTED in inner.model_dump_json()


# ------------------------------------------------------------------------------------------ identity


async def test_r004_19_a_session_without_identity_scopes_memory_to_the_session() -> None:
    """R004-19: a run with a session and no identity scopes memory to {conversation_id: session_id}."""
    memory = define_memory(id="mem")

    def build() -> tuple[Agent, Any]:
        provider = mock(respond=lambda req: "ok")
        return Agent.create(provider=provider, model="m").memory(memory).build(), provider

    a, _ = build()
    await a.run("my name is Ann", session_id="s-1")
    b, pb = build()
    await b.run("who am I?", session_id="s-1")
    assert "my name is Ann" in pb.requests[0].system_prompt
    c, pc = build()
    await c.run("who am I?", session_id="s-2")
    assert "my name is Ann" not in pc.requests[0].system_prompt
    d, pd = build()  # an explicit identity wins over the session
    await d.run("who am I?", session_id="s-1", identity={"conversation_id": "other"})
    assert "my name is Ann" not in pd.requests[0].system_prompt


async def test_r004_20_the_inputs_identity_wins_over_the_option() -> None:
    """R004-20: identity on the input and as an option: the input's wins."""
    fx = Effects()
    script = [{"tool_calls": [{"id": "l", "name": "lookup_order", "args": {"order_id": "A"}}]}, "ok"]
    from ._integrity import lookup_tool

    agent = Agent.create(provider=mock(replies=script), model="m").tool(lookup_tool(fx)).build()
    await agent.run({"message": "go", "identity": {"principal": "input"}}, identity={"principal": "option"})
    assert fx.contexts[0].identity == Identity(principal="input")


@pytest.mark.parametrize("paused_for", [{"principal": "ann"}, None], ids=["ann", "no-caller"])
async def test_r004_25_a_resume_for_another_caller_is_refused_before_anything_runs(paused_for: Any) -> None:
    """R004-25: resume() naming a caller that is not the paused run's (also when it had none) is refused."""
    fx = Effects()
    paused = await ask_agent(fx).run("refund", identity=paused_for)
    fresh = ask_agent(fx)
    seen: list[AgentEvent] = []
    fresh.on("*", seen.append)
    calls = fx.model_calls
    with pytest.raises(ResumeIdentityConflictError) as err:
        await fresh.resume(roundtrip(paused.checkpoint), "ok", identity={"principal": "mallory"})
    assert err.value.field == "identity" and err.value.code == "ERR_RESUME_IDENTITY_CONFLICT"
    assert "mallory" not in str(err.value) and seen == [] and fx.model_calls == calls
    done = await fresh.resume(roundtrip(paused.checkpoint), "ok", identity=paused_for)
    assert done.status == "completed"


async def test_r003_17_composition_resume_for_another_caller_raises_the_same_error() -> None:
    """R003-17 / R004-25: Composition.resume naming another caller raises ResumeIdentityConflictError."""
    fx = Effects()
    seq = Sequence.create().step("ask", ask_agent(fx)).build()
    paused = await seq.run("refund")
    with pytest.raises(ResumeIdentityConflictError):
        await seq.resume(roundtrip(paused.checkpoint), "ok", identity={"principal": "mallory"})


async def test_r004_26_a_tool_sees_only_the_callers_identity_and_the_session_beside_it() -> None:
    """R004-26: ctx.identity is what the caller passed (never a session-derived namespace); ctx.session_id too."""
    fx = Effects()
    from ._integrity import lookup_tool

    script = [{"tool_calls": [{"id": "l", "name": "lookup_order", "args": {"order_id": "A"}}]}, "ok"]
    agent = Agent.create(provider=mock(replies=script * 2), model="m").tool(lookup_tool(fx)).build()
    await agent.run("go", session_id="s-9")
    assert fx.contexts[0].identity is None and fx.contexts[0].session_id == "s-9"
    await agent.run("go", session_id="s-9", identity={"tenant": "t"})
    assert fx.contexts[1].identity == Identity(tenant="t") and fx.contexts[1].session_id == "s-9"


async def test_r004_30_a_named_agent_refuses_another_named_agents_conversation() -> None:
    """R004-30: a conversation stamped by an agent whose id was chosen is refused by a differently-named one."""
    fx = Effects()
    billing = chat_agent(fx, id="billing")
    await billing.run("what do I owe?")
    conversation = billing.checkpoint()
    assert conversation is not None and conversation["agent"] == {"id": "billing"}
    support = chat_agent(fx, id="support")
    calls = fx.model_calls
    with pytest.raises(ConversationMismatchError) as err:
        await support.run("and my ticket?", continue_from=conversation)
    assert err.value.stored_agent_id == "billing" and err.value.agent_id == "support"
    with pytest.raises(ConversationMismatchError, match=r"recorded by agent 'billing'.*handed to agent 'support'"):
        await support.resume_on_error(conversation)
    assert fx.model_calls == calls
    # the same id after a deploy, and agents that never chose one, are never refused
    assert (await chat_agent(fx, id="billing").run("more", continue_from=conversation)).status == "completed"
    plain = chat_agent(fx)
    await plain.run("hi")
    unnamed = plain.checkpoint()
    assert unnamed is not None and "agent" not in unnamed
    assert (await chat_agent(fx, id="support").run("again", continue_from=unnamed)).status == "completed"
    assert (await chat_agent(fx).run("again", continue_from=conversation)).status == "completed"


def test_r004_31_agents_have_a_readonly_name_and_id() -> None:
    """R004-31: Agent exposes readonly name and id (id defaults to 'agent' when not chosen)."""
    plain = Agent.create(provider=mock(reply="x"), name="helper").build()
    assert (plain.name, plain.id) == ("helper", "agent")
    chosen = Agent.create(provider=mock(reply="x"), id="billing").build()
    assert chosen.id == "billing"
    with pytest.raises(AttributeError):
        chosen.id = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        chosen.name = "other"  # type: ignore[misc]


# ------------------------------------------------------------------------------------------ run ids, conversations


async def test_r004_17_resume_mints_a_fresh_run_id_linked_to_the_paused_one() -> None:
    """R004-17: a pause and its resume are one turn across two runs (linked in the record)."""
    fx = Effects()
    paused = await ask_agent(fx).run("refund")
    fresh = ask_agent(fx)
    seen: list[AgentEvent] = []
    fresh.on("*", seen.append)
    done = await fresh.resume(roundtrip(paused.checkpoint), "A-1001")
    assert done.run_id != paused.run_id and done.resumed_from == paused.run_id
    assert {e.meta.run_id for e in seen} == {done.run_id}
    snap = fresh.last_snapshot()
    assert snap is not None and snap.run_id == done.run_id
    assert snap.resumed_from is not None and snap.resumed_from["run_id"] == paused.run_id
    assert fx.contexts[-1].run_id == paused.run_id  # the lookup ran in the first leg, under its id


async def test_r004_43_after_a_pause_checkpoint_is_the_conversation_as_of_the_pause() -> None:
    """R004-43: checkpoint() after a paused run is the conversation as of the pause, with no answer appended."""
    fx = Effects()
    agent = ask_agent(fx)
    assert agent.checkpoint() is None
    paused = await agent.run("refund please")
    conversation = agent.checkpoint()
    assert conversation is not None and paused.status == "paused"
    assert [m["role"] for m in conversation["history"]] == ["user"]
    assert conversation["history"][0]["content"] == "refund please"


async def test_r004_80_last_snapshot_is_live_during_a_run() -> None:
    """R004-80: a listener or tool mid-run sees the in-flight run, partially filled."""
    fx = Effects()
    agent = ask_agent(fx)
    await agent.run("first")
    agent.abandon_pause()
    previous = agent.last_snapshot()
    at_start: list[Any] = []
    mid_tool: list[Any] = []
    agent.on("agent.turn_start", lambda e: at_start.append(agent.last_snapshot()))
    agent.on("stream.tool_start", lambda e: mid_tool.append(agent.last_snapshot()))
    paused = await agent.run("second")
    assert at_start[0] is not None and at_start[0].run_id == paused.run_id and at_start[0].commit_log == []
    assert previous is not None and previous.run_id != paused.run_id
    live = mid_tool[0]
    assert live.run_id == paused.run_id and [c.stage_id for c in live.commit_log][-1] == "route"
    assert len(live.commit_log) < len(agent.last_snapshot().commit_log)  # type: ignore[union-attr]


async def test_r004_84_can_explain_needs_self_explain_and_a_completed_turn() -> None:
    """R004-84: can_explain() is False without .self_explain() or before a completed turn; True after one."""
    plain = Agent.create(provider=mock(reply="x"), model="m").build()
    assert plain.can_explain() is False
    await plain.run("one")
    assert plain.can_explain() is False
    explains = Agent.create(provider=mock(reply="x"), model="m").self_explain().build()
    assert explains.can_explain() is False
    await explains.run("one")
    assert explains.can_explain() is True


# ------------------------------------------------------------------------------------------ event meta, abort


async def test_r004_07_correlation_id_rides_on_every_event() -> None:
    """R004-07: run(correlation_id=...) is forwarded onto every emitted event's meta."""
    fx = Effects()
    agent = ask_agent(fx)
    seen: list[AgentEvent] = []
    agent.on("*", seen.append)
    paused = await agent.run("refund", correlation_id="corr-7")
    await agent.resume(paused.checkpoint, "A", correlation_id="corr-8")  # type: ignore[arg-type]
    first = [e for e in seen if e.meta.run_id == paused.run_id]
    assert first and all(e.meta.correlation_id == "corr-7" for e in first)
    assert all(e.meta.correlation_id == "corr-8" for e in seen[len(first) :])


async def test_r004_08_trace_id_explicit_wins_over_env() -> None:
    """R004-08: trace_id on every event's meta; env's trace_id is the fallback; explicit wins."""
    agent = chat_agent(Effects())
    seen: list[AgentEvent] = []
    agent.on("*", seen.append)
    await agent.run("a", env={"trace_id": "from-env"})
    assert seen and {e.meta.trace_id for e in seen} == {"from-env"}
    seen.clear()
    await agent.run("b", trace_id="explicit", env={"trace_id": "from-env"})
    assert {e.meta.trace_id for e in seen} == {"explicit"}
    with pytest.raises(InvalidRunOptionError) as err:
        await agent.run("c", env={"traceId": "x"})
    assert err.value.option == "env"


async def test_r004_09_session_id_rides_on_every_event_of_run_and_resume() -> None:
    """R004-09: session_id is on EVERY emitted event's meta (run and resume; the resume inherits the pause's)."""
    fx = Effects()
    agent = ask_agent(fx)
    seen: list[AgentEvent] = []
    agent.on("*", seen.append)
    paused = await agent.run("refund", session_id="sess-1")
    fresh = ask_agent(fx)
    fresh.on("*", seen.append)
    await fresh.resume(roundtrip(paused.checkpoint), "A")
    assert len(seen) > 10 and {e.meta.session_id for e in seen} == {"sess-1"}
    unhosted = chat_agent(fx)
    quiet: list[AgentEvent] = []
    unhosted.on("*", quiet.append)
    await unhosted.run("x")
    assert {e.meta.session_id for e in quiet} == {None}


async def test_r004_132_signal_and_timeout_abort_a_run_cleanly() -> None:
    """R004-132: a signal (CancelToken) or a timeout aborts the run with a typed error; the agent is free after."""
    stop = CancelToken()

    def cancel_then_lookup(args: dict[str, Any], ctx: Any) -> str:
        ctx.signal.cancel("user pressed stop")
        return "looked"

    tool = define_tool(name="lookup", description="d", input_schema={"type": "object"}, execute=cancel_then_lookup)
    script = [{"tool_calls": [{"id": "l", "name": "lookup", "args": {}}]}, "never"]
    provider = mock(replies=script)
    agent = Agent.create(provider=provider, model="m").tool(tool).build()
    with pytest.raises(FlowCancelledError) as err:
        await agent.run("go", signal=stop)
    assert err.value.reason == "cancelled" and provider.calls == 1 and not agent.in_flight

    async def never(req: LLMRequest) -> str:
        await asyncio.Event().wait()
        return "x"

    slow = Agent.create(provider=mock(respond=never), model="m").build()
    with pytest.raises(FlowCancelledError) as err2:
        await slow.run("go", env={"timeout_ms": 20})
    assert err2.value.reason == "timeout" and not slow.in_flight
    with pytest.raises(FlowCancelledError):
        await slow.run("go", timeout=0.02)


async def test_bad_run_options_are_refused_by_name_without_quoting() -> None:
    agent = chat_agent(Effects())
    for kwargs, option in (
        ({"correlation_id": 5}, "correlation_id"),
        ({"trace_id": "x" * 500}, "trace_id"),
        ({"signal": "stop"}, "signal"),
        ({"timeout": float("nan")}, "timeout"),
        ({"env": {"timeout_ms": -1}}, "env.timeout_ms"),
        ({"redact": {"patterns": ["(unclosed-SECRET"]}}, "redact"),
    ):
        with pytest.raises(InvalidRunOptionError) as err:
            await agent.run("x", **kwargs)
        assert err.value.option == option and "SECRET" not in str(err.value)


async def test_a_conversation_with_a_tool_answer_to_a_call_never_made_is_refused() -> None:
    agent = chat_agent(Effects())
    forged = {
        "format": "agentfootprint.conversation",
        "version": 1,
        "run_id": "r",
        "history": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "42", "tool_call_id": "x"}],
    }
    with pytest.raises(InvalidConversationError) as err:
        await agent.run("next", continue_from=forged)
    assert err.value.field == "history.1.tool_call_id"


# ------------------------------------------------------------------------------------------ losses


async def test_a_retry_that_gives_up_records_every_attempt_in_the_run() -> None:
    """When with_retry gives up, each failed attempt is on the record (snapshot, audit, events), not only on the
    exception."""
    from agentfootprint import RunCheckpointError
    from agentfootprint.audit import export_audit
    from agentfootprint.providers import RateLimitError, with_retry

    def limited(req: LLMRequest) -> Any:
        raise RateLimitError("slow down", provider="mock")

    async def no_wait(seconds: float) -> None:
        return None

    provider = with_retry(mock(respond=limited), max_attempts=3, sleep=no_wait)
    agent = Agent.create(provider=provider, model="m").keep_events().build()
    errors: list[AgentEvent] = []
    agent.on("error.provider", errors.append)
    with pytest.raises(RunCheckpointError):
        await agent.run("go")
    snap = agent.last_snapshot()
    assert snap is not None
    failed = snap.commit_log[-1]
    assert failed.failed and failed.stage_id == "call-llm"
    recorded = next(w.value for w in failed.writes if w.path == "failed_call")
    assert [a["attempt"] for a in recorded["attempts"]] == [1, 2, 3]
    assert {a["outcome"] for a in recorded["attempts"]} == {"error"}
    assert [a["attempt"] for a in errors[0].payload["attempts"]] == [1, 2, 3]
    audit = export_audit(agent)
    assert any("failed_call" in json.dumps(r["payload"]) for r in audit if r["meta"]["kind"] == "commit")
