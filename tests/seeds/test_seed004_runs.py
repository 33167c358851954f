"""Seed 004 (the Agent runner), crashes, identities and redaction: one behaviour probe per rule, quoting its id."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.agent import InvalidRunOptionError, RunCheckpointError
from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import RedactionPolicy
from agentfootprint.providers import LLMRequest, mock
from tests.seeds._tools import refund_tool

SECRET = "4111-1111-1111-1111"


class Down(Exception):
    """The provider failed (a crash mid-run)."""


class Script:
    """Replies in order; a reply that is an exception is raised instead (the last reply repeats)."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> Any:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply


def _card(seen: list[Any] | None = None) -> Any:
    def run(args: dict[str, Any], ctx: Any) -> str:
        if seen is not None:
            seen.append(ctx)
        return json.dumps({"card": SECRET})

    return define_tool(
        name="card", description="The card.", input_schema={"type": "object", "properties": {}}, execute=run
    )


CALL = {"tool_calls": [{"id": "c1", "name": "card", "args": {}}]}
ASK = {"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "Which?"}}]}
ALICE = {"tenant": "t", "principal": "alice"}
BOB = {"tenant": "t", "principal": "bob"}


def _agent(script: Script, *tools: Any, redact: list[str] | None = None) -> Agent:
    builder = Agent.create(provider=mock(respond=script), model="m", name="bot")
    for t in tools:
        builder = builder.tool(t)
    if redact:
        builder = builder.redact(keys=redact)
    return builder.build()


def _crash(agent: Agent, message: str = "go", **kwargs: Any) -> RunCheckpointError:
    with pytest.raises(RunCheckpointError) as err:
        agent.run_sync(message, **kwargs)
    return err.value


# -- crashes and resume_on_error -------------------------------------------------------------------------------------


def test_R004_66_a_crash_carries_a_checkpoint_and_keeps_its_class() -> None:
    """R004-66: a crash raises an error carrying .checkpoint that is still the original error class."""
    err = _crash(_agent(Script(CALL, Down("503")), _card()))
    assert isinstance(err, Down) and str(err).startswith("503")
    assert [m["role"] for m in err.checkpoint["history"]] == ["user", "assistant", "tool"]


def test_R004_18_resume_on_error_runs_under_a_fresh_run_id_correlated_to_the_failure() -> None:
    """R004-18: resume_on_error runs under a fresh run id; checkpoint.run_id names the failing run."""
    agent = _agent(Script(CALL, Down("503"), "done"), _card())
    err = _crash(agent)
    snapshot = agent.last_snapshot()
    assert snapshot is not None and err.checkpoint["run_id"] == snapshot.run_id
    done = agent.resume_on_error_sync(err.checkpoint)
    assert done.run_id != snapshot.run_id and done.answer == "done"


def test_R004_67_resume_on_error_replays_the_restored_history_and_retries_the_call() -> None:
    """R004-67: resume_on_error replays from the last completed iteration: restored history, failed call retried."""
    err = _crash(_agent(Script(CALL, Down("503")), _card()))
    script = Script("recovered")
    assert _agent(script, _card()).resume_on_error_sync(err.checkpoint).answer == "recovered"
    assert [m.role for m in script.requests[0].messages] == ["user", "assistant", "tool"]


def test_R004_45_continue_from_adds_the_message_resume_on_error_does_not() -> None:
    """R004-45: continue_from ADDS this turn's user message; resume_on_error does NOT (not asked twice)."""
    err = _crash(_agent(Script(Down("503")), _card()), "the question")
    script = Script("answer")
    _agent(script).resume_on_error_sync(err.checkpoint)
    assert [m.content for m in script.requests[0].messages] == ["the question"]
    again = Script("answer")
    _agent(again).run_sync("next", continue_from=err.checkpoint)
    assert [m.content for m in again.requests[0].messages] == ["the question", "next"]


def test_R004_68_resume_on_error_resets_iterations_and_accumulators() -> None:
    """R004-68: the iteration counter and max_iterations budget reset; usage restarts at zero."""
    usage = {"input_tokens": 100, "output_tokens": 10}
    err = _crash(_agent(Script({**CALL, "usage": usage}, Down("503")), _card()))
    script = Script({**CALL, "usage": {"input_tokens": 7, "output_tokens": 1}}, {"content": "done", "usage": usage})
    agent = Agent.create(provider=mock(respond=script), model="m", max_iterations=2).tool(_card()).build()
    done = agent.resume_on_error_sync(err.checkpoint)
    assert done.answer == "done" and done.iterations == 2
    assert done.usage.input_tokens == 107


def test_R004_69_the_crash_checkpoint_keeps_real_values_under_history_redaction() -> None:
    """R004-69: the crash checkpoint keeps REAL values even when the redaction policy names history."""
    err = _crash(_agent(Script(CALL, Down("503")), _card(), redact=["history"]))
    assert SECRET in err.checkpoint["history"][2]["content"]


def test_R004_70_tool_calls_of_the_failed_iteration_run_again_on_resume() -> None:
    """R004-70: the failed iteration's tool calls are not in the checkpoint and run again on resume (a policy halt
    after the batch's first tool ran fails the iteration)."""
    ran: list[Any] = []
    batch = {"tool_calls": [{"id": "c1", "name": "card", "args": {}}, {"id": "s1", "name": "stop", "args": {}}]}
    stop = define_tool(name="stop", description="S.", input_schema={"type": "object", "properties": {}}, execute=str)
    halts = iter([True])

    def permission(name: str, args: Any, ctx: Any) -> str:
        return "halt" if name == "stop" and next(halts, False) else "allow"

    def build() -> Agent:
        builder = Agent.create(provider=mock(respond=Script(batch, "done")), model="m").tool(_card(ran)).tool(stop)
        return builder.permission(permission).build()

    with pytest.raises(RunCheckpointError) as err:
        build().run_sync("go")
    checkpoint = err.value.checkpoint
    assert [m["role"] for m in checkpoint["history"]] == ["user"] and len(ran) == 1
    assert build().resume_on_error_sync(checkpoint).answer == "done" and len(ran) == 2


@pytest.mark.parametrize("bad", [{}, {"history": "x"}, None, "checkpoint", {"history": [{"role": "user"}]}])
def test_R004_71_a_malformed_crash_checkpoint_is_refused_naming_the_field(bad: Any) -> None:
    """R004-71: resume_on_error validates what it is given; a refusal names the field, never the value."""
    script = Script("never")
    with pytest.raises(AgentFootprintError) as err:
        _agent(script).resume_on_error_sync(bad)
    assert getattr(err.value, "field", None) and script.requests == []


# -- identity --------------------------------------------------------------------------------------------------------


def test_R004_21_follow_up_carries_the_identity_or_the_stored_one() -> None:
    """R004-21: follow_up(message, identity=...) carries it; omitted, the conversation's stored identity is used."""
    seen: list[Any] = []
    agent = _agent(Script(CALL, "a", CALL, "b", CALL, "c"), _card(seen))
    agent.run_sync("q1", identity=ALICE)
    agent.follow_up_sync("q2")
    agent.follow_up_sync("q3", identity=BOB)
    assert [c.identity.principal for c in seen] == ["alice", "alice", "bob"]


def test_R004_22_resume_on_error_carries_an_identity_or_the_stored_one() -> None:
    """R004-22: resume_on_error(checkpoint, identity=...) carries it; omitted, the stored identity is used."""
    err = _crash(_agent(Script(Down("503")), _card()), identity=ALICE)
    for given, expected in ((None, "alice"), (BOB, "bob")):
        seen: list[Any] = []
        agent = _agent(Script(CALL, "done"), _card(seen))
        kwargs = {} if given is None else {"identity": given}
        agent.resume_on_error_sync(err.checkpoint, **kwargs)
        assert seen[0].identity.principal == expected


def test_R004_23_a_resume_runs_for_the_paused_runs_caller() -> None:
    """R004-23: resume() runs for the paused run's caller, never whoever this instance ran last."""
    seen: list[Any] = []
    agent = _agent(Script(ASK, "x"), ask_human)
    paused = agent.run_sync("go", identity=ALICE)
    other = _agent(Script("x"))
    other.run_sync("meanwhile", identity=BOB)
    agent.abandon_pause()
    agent.run_sync("meanwhile", identity=BOB)
    rebuilt = _agent(Script(CALL, "done"), ask_human, _card(seen))
    rebuilt.resume_sync(paused.checkpoint, "blue")
    assert [c.identity.principal for c in seen] == ["alice"]


def test_R004_24_a_resumed_legs_session_is_the_calls_else_the_paused_runs() -> None:
    """R004-24: resume()'s session is the call's session_id, else the paused run's."""
    agent = Agent.create(provider=mock(respond=Script(ASK, "done")), model="m").tool(ask_human).build()
    paused = agent.run_sync("go", session_id="s-1")
    assert agent.resume_sync(paused.checkpoint, "a").session_id == "s-1"
    again = Agent.create(provider=mock(respond=Script(ASK, "done")), model="m").tool(ask_human).build()
    paused = again.run_sync("go", session_id="s-1")
    assert again.resume_sync(paused.checkpoint, "a", session_id="s-2").session_id == "s-2"


def test_R004_27_a_checkpoint_stores_only_a_chosen_identity() -> None:
    """R004-27: checkpoint() carries an identity only when the caller chose one."""
    agent = _agent(Script("a"))
    agent.run_sync("go")
    assert agent.checkpoint().get("identity") is None
    agent.run_sync("go", identity=ALICE)
    assert agent.checkpoint()["identity"]["principal"] == "alice"


def test_R004_28_continue_from_adopts_the_conversations_identity() -> None:
    """R004-28: continue_from adopts the conversation's identity (memory lands where earlier turns are)."""
    first = _agent(Script("a"))
    first.run_sync("q1", identity=ALICE)
    seen: list[Any] = []
    _agent(Script(CALL, "b"), _card(seen)).run_sync("q2", continue_from=first.checkpoint())
    assert seen[0].identity.principal == "alice"


# -- pauses and consent ----------------------------------------------------------------------------------------------


def test_R004_54_resuming_a_pause_answers_the_pending_question() -> None:
    """R004-54: resuming clears the pending state and returns the run's answer."""
    agent = Agent.create(provider=mock(respond=Script(ASK, "done")), model="m").tool(ask_human).build()
    paused = agent.run_sync("go")
    assert agent.pending() is not None
    done = agent.resume_sync(paused.checkpoint, "blue")
    assert (done.answer, agent.pending(), agent.pending_check_in()) == ("done", None, None)


def test_R004_56_a_check_in_tool_pauses_for_consent_without_a_builder_call() -> None:
    """R004-56: a tool that declares check-in pauses for consent before it runs (no .check_in() needed)."""
    ran: list[Any] = []
    refund = refund_tool(ran, check_in=True)
    script = Script({"tool_calls": [{"id": "r", "name": "refund", "args": {}}]}, "done")
    result = Agent.create(provider=mock(respond=script), model="m").tool(refund).build().run_sync("refund it")
    assert result.status == "paused" and ran == []


def test_R004_65_tools_that_ran_before_the_pause_do_not_run_again() -> None:
    """R004-65: tools that ran before the pause in the same batch do not run again on resume."""
    ran: list[Any] = []
    batch = {"tool_calls": [{"id": "c1", "name": "card", "args": {}}, ASK["tool_calls"][0]]}
    script = Script(batch, "done")
    agent = _agent(script, _card(ran), ask_human)
    paused = agent.run_sync("go")
    assert agent.resume_sync(paused.checkpoint, "blue").answer == "done"
    assert len(ran) == 1


# -- redaction -------------------------------------------------------------------------------------------------------


def test_R004_42_redaction_never_changes_what_the_agent_continues_from() -> None:
    """R004-42: checkpoint() / follow_up keep real values while last_snapshot() serves placeholders."""
    script = Script(CALL, "done", "again")
    agent = _agent(script, _card(), redact=["history"])
    agent.run_sync("go")
    assert SECRET in json.dumps(agent.checkpoint())
    assert SECRET not in json.dumps(agent.last_snapshot().model_dump(mode="json")["state"])
    agent.follow_up_sync("more")
    assert any(SECRET in m.content for m in script.requests[-1].messages)


def test_R004_63_a_redact_given_to_resume_adds_to_the_runs_policy() -> None:
    """R004-63: a redact passed to resume() ADDS to the run's policy (it covers the resumed leg)."""
    agent = _agent(Script(ASK, CALL, "done"), ask_human, _card())
    paused = agent.run_sync("go")
    done = agent.resume_sync(paused.checkpoint, "blue", redact={"keys": ["tool_results"]})
    assert SECRET not in json.dumps(done.record.snapshot.model_dump(mode="json")["state"].get("tool_results"))


def test_R004_72_a_runs_redact_is_joined_with_the_agents() -> None:
    """R004-72: a redact passed to run() is joined with the agent's own: it adds names, never removes one."""
    agent = _agent(Script(CALL, "done"), _card(), redact=["history"])
    result = agent.run_sync("go", redact={"keys": ["tool_results"]})
    state = json.dumps(result.record.snapshot.model_dump(mode="json")["state"])
    assert SECRET not in state


@pytest.mark.parametrize("bad", [{"keys": "history"}, {"keys": [""]}, {"patterns": ["("]}, 5])
def test_R004_73_a_runs_redact_is_validated_before_the_run(bad: Any) -> None:
    """R004-73: a malformed run redact is refused before the run (no model call)."""
    script = Script("x")
    with pytest.raises(InvalidRunOptionError):
        _agent(script).run_sync("go", redact=bad)
    assert script.requests == []


def test_R004_75_under_redact_last_snapshot_is_the_served_view() -> None:
    """R004-75: last_snapshot() shows the placeholder wherever the policy selected a value, and no initial state."""
    agent = _agent(Script(CALL, "done"), _card(), redact=["tool_results"])
    agent.run_sync("go")
    snap = agent.last_snapshot()
    assert snap is not None and snap.initial_state == {}
    assert SECRET not in json.dumps(snap.model_dump(mode="json"))


def test_R004_76_narrative_lines_never_show_a_selected_value() -> None:
    """R004-76: under redact, narrative lines read [REDACTED] for a selected key and never show the value."""
    agent = _agent(Script(CALL, "done"), _card(), redact=["tool_results"])
    agent.run_sync("go")
    lines = [str(getattr(n, "text", n)) for n in agent.last_narrative()]
    assert not any(SECRET in line for line in lines)
    assert any("tool_results" in line and "REDACTED" in line for line in lines)


def test_R004_77_stopped_early_reads_the_live_run_under_redaction() -> None:
    """R004-77: stopped_early() reads the live run even when the agent's redact names stopped_early."""
    script = Script(CALL)
    agent = Agent.create(provider=mock(respond=script), model="m", max_iterations=1, wrap_up_at_max_iterations=False)
    built = agent.tool(_card()).redact(keys=["stopped_early"]).build()
    built.run_sync("go")
    stopped = built.stopped_early()
    assert stopped is not None and stopped.reason == "max-iterations"


def test_R004_143_emitted_events_carry_the_served_payload() -> None:
    """R004-143: under the agent's redact, emitted events carry the placeholder, never the selected value."""
    agent = _agent(Script(CALL, "done"), _card(), redact=["tool_results", "history"])
    events: list[Any] = []
    agent.on("*", events.append)
    policy = RedactionPolicy(patterns=[r"4111-\d{4}-\d{4}-\d{4}"])
    agent.run_sync("go", redact=policy)
    assert events and not any(SECRET in json.dumps(e.payload, default=str) for e in events)


def test_R004_144_the_agents_redact_covers_the_resumed_leg() -> None:
    """R004-144: values seen before the pause stay hidden after it (the agent's redact covers the resumed leg)."""
    agent = _agent(Script(CALL, ASK, "done"), _card(), ask_human, redact=["tool_results"])
    paused = agent.run_sync("go")
    events: list[Any] = []
    agent.on("*", events.append)
    done = agent.resume_sync(paused.checkpoint, "blue")
    assert SECRET not in json.dumps(done.record.snapshot.model_dump(mode="json")["state"].get("tool_results"))
