"""Seed 004 (the Agent runner): one behaviour probe per rule not probed elsewhere by id, each quoting its rule id."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentfootprint import (
    Agent,
    InvalidRunInputError,
    NoConversationError,
    PendingQuestionError,
    ask_human,
    define_tool,
)
from agentfootprint.agent import AgentBuilder, OutputSchemaError
from agentfootprint.events import types as ev
from agentfootprint.providers import LLMRequest, mock


class Model:
    """A scripted model: replies in order (the last one repeats), keeping every request."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies) or ["ok"]
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> Any:
        self.requests.append(request)
        return self.replies[min(len(self.requests), len(self.replies)) - 1]

    def said(self, i: int = -1) -> list[str]:
        return [m.content for m in self.requests[i].messages]


def _tool(name: str = "lookup", result: str = "found 7") -> Any:
    return define_tool(
        name=name,
        description="Look up.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        execute=lambda a: result,
    )


def _call(name: str = "lookup", i: int = 1, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": f"c{i}", "name": name, "args": args}]}


ASK = {"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "Which?"}}]}


def _agent(model: Model, *tools: Any, **create: Any) -> Agent:
    builder = Agent.create(provider=mock(respond=model), model="m", **create)
    for t in tools:
        builder = builder.tool(t)
    return builder.build()


def _events(agent: Agent) -> list[Any]:
    seen: list[Any] = []
    agent.on("*", seen.append)
    return seen


# -- events ---------------------------------------------------------------------------------------------------------


def test_R004_01_turn_start_and_turn_end_are_emitted() -> None:
    """R004-01: agent.turn_start and agent.turn_end are emitted for a run."""
    agent = _agent(Model("hi"))
    seen = _events(agent)
    agent.run_sync("go")
    types = [e.type for e in seen]
    assert types[0] == ev.AGENT_TURN_START and types[-1] == ev.AGENT_TURN_END


def test_R004_02_iteration_start_and_end_bracket_each_iteration() -> None:
    """R004-02: agent.iteration_start and agent.iteration_end bracket each iteration."""
    agent = _agent(Model(_call(), "done"), _tool())
    seen = _events(agent)
    agent.run_sync("go")
    marks = [e.type for e in seen if e.type in (ev.AGENT_ITERATION_START, ev.AGENT_ITERATION_END)]
    assert marks == [ev.AGENT_ITERATION_START, ev.AGENT_ITERATION_END] * 2


def test_R004_03_route_decided_on_each_routing_decision() -> None:
    """R004-03: agent.route_decided is emitted on each routing decision."""
    agent = _agent(Model(_call(), _call(i=2), "done"), _tool())
    seen = _events(agent)
    agent.run_sync("go")
    assert sum(e.type == ev.AGENT_ROUTE_DECIDED for e in seen) == 3


def test_R004_04_llm_start_and_end_bracket_every_model_call() -> None:
    """R004-04: stream.llm_start / stream.llm_end bracket every model call."""
    model = Model(_call(), "done")
    agent = _agent(model, _tool())
    seen = _events(agent)
    agent.run_sync("go")
    marks = [e.type for e in seen if e.type in (ev.STREAM_LLM_START, ev.STREAM_LLM_END)]
    assert marks == [ev.STREAM_LLM_START, ev.STREAM_LLM_END] * len(model.requests) and len(model.requests) == 2


def test_R004_05_tool_start_and_end_bracket_every_tool_call() -> None:
    """R004-05: stream.tool_start / stream.tool_end bracket every tool call."""
    both = {"tool_calls": [{"id": "a", "name": "lookup", "args": {}}, {"id": "b", "name": "lookup", "args": {}}]}
    agent = _agent(Model(both, "done"), _tool())
    seen = _events(agent)
    agent.run_sync("go")
    marks = [e.type for e in seen if e.type in (ev.STREAM_TOOL_START, ev.STREAM_TOOL_END)]
    assert marks == [ev.STREAM_TOOL_START, ev.STREAM_TOOL_END] * 2


def test_R004_06_context_events_are_emitted() -> None:
    """R004-06: context.* events (evaluated / injected) are emitted for the context pipeline."""
    from agentfootprint import define_fact

    agent = Agent.create(provider=mock(reply="x"), model="m").fact(define_fact(id="f", data="The sky is blue.")).build()
    seen = _events(agent)
    agent.run_sync("go")
    types = {e.type for e in seen}
    assert {ev.CONTEXT_EVALUATED, ev.CONTEXT_INJECTED} <= types


# -- sessions, builder -----------------------------------------------------------------------------------------------


def test_R004_10_an_unhosted_run_has_no_session_anywhere() -> None:
    """R004-10: session_id is never derived from the run id: an unhosted run has no session anywhere."""
    agent = _agent(Model("x"))
    seen = _events(agent)
    result = agent.run_sync("go")
    assert result.session_id is None
    assert all(getattr(e, "session_id", None) is None for e in seen)
    assert agent.checkpoint().get("session_id") is None


def test_R004_114_create_returns_a_builder_and_build_the_runner() -> None:
    """R004-114: Agent.create(opts) returns a builder; build() returns the Agent runner."""
    builder = Agent.create(provider=mock(reply="x"))
    assert isinstance(builder, AgentBuilder)
    agent = builder.build()
    assert isinstance(agent, Agent) and agent.run_sync("go").answer == "x"


# -- conversations ---------------------------------------------------------------------------------------------------


def test_R004_29_the_same_conversation_id_does_not_continue_a_conversation() -> None:
    """R004-29: the same identity.conversation_id in two run() calls does NOT continue the conversation."""
    model = Model("one", "two")
    agent = _agent(model)
    ident = {"tenant": "t", "principal": "p", "conversation_id": "c1"}
    agent.run_sync("first question", identity=ident)
    agent.run_sync("second question", identity=ident)
    assert model.said() == ["second question"]


def test_R004_32_each_run_is_one_turn_of_a_new_conversation() -> None:
    """R004-32: a second run() does not see the first."""
    model = Model("a", "b")
    agent = _agent(model)
    agent.run_sync("first")
    agent.run_sync("second")
    assert model.said(0) == ["first"] and model.said(1) == ["second"]


def test_R004_34_the_in_flight_guard_is_cleared_when_a_run_throws() -> None:
    """R004-34: a run that throws does not leave the agent refusing afterwards."""

    def flaky(request: LLMRequest) -> str:
        if not flaky.failed:  # type: ignore[attr-defined]
            flaky.failed = True  # type: ignore[attr-defined]
            raise RuntimeError("provider down")
        return "back"

    flaky.failed = False  # type: ignore[attr-defined]
    agent = Agent.create(provider=mock(respond=flaky), model="m").build()
    with pytest.raises(RuntimeError):
        agent.run_sync("go")
    assert not agent.in_flight
    assert agent.run_sync("again").answer == "back"


def test_R004_35_follow_up_continues_the_last_conversation() -> None:
    """R004-35: follow_up(message) continues the last completed conversation: the model sees what was said."""
    model = Model("Paris.", "About 2 million.")
    agent = _agent(model)
    agent.run_sync("Capital of France?")
    agent.follow_up_sync("How many people live there?")
    assert model.said() == ["Capital of France?", "Paris.", "How many people live there?"]


def test_R004_36_follow_up_is_sugar_over_continue_from_checkpoint() -> None:
    """R004-36: follow_up shows the model the same thing as run({message, continue_from: checkpoint()})."""
    a, b = Model("Paris.", "x"), Model("Paris.", "x")
    first, second = _agent(a), _agent(b)
    first.run_sync("Capital?")
    second.run_sync("Capital?")
    first.follow_up_sync("And people?")
    second.run_sync("And people?", continue_from=second.checkpoint())
    assert a.said() == b.said() == ["Capital?", "Paris.", "And people?"]


def test_R004_37_follow_up_without_a_completed_run_is_refused() -> None:
    """R004-37: follow_up with no completed run -> NoConversationError (never silently a first turn)."""
    model = Model("x")
    with pytest.raises(NoConversationError):
        _agent(model).follow_up_sync("hi")
    assert model.requests == []


def test_R004_38_a_refused_first_turn_leaves_no_conversation() -> None:
    """R004-38: a refused first turn leaves no conversation: follow_up then raises NoConversationError."""
    agent = _agent(Model("x"))
    with pytest.raises(InvalidRunInputError):
        agent.run_sync({})
    with pytest.raises(NoConversationError):
        agent.follow_up_sync("hi")


def test_R004_39_checkpoint_is_none_before_any_completed_run() -> None:
    """R004-39: checkpoint() is None before any run has completed."""
    assert _agent(Model("x")).checkpoint() is None


def test_R004_40_checkpoint_appends_the_final_answer() -> None:
    """R004-40: checkpoint() appends the final assistant answer to the stored history."""
    agent = _agent(Model("The answer."))
    agent.run_sync("Q?")
    history = agent.checkpoint()["history"]
    assert [(m["role"], m["content"]) for m in history] == [("user", "Q?"), ("assistant", "The answer.")]


def test_R004_41_checkpoint_is_a_detached_copy() -> None:
    """R004-41: mutating checkpoint() cannot change the live conversation a later follow_up continues."""
    model = Model("A1", "A2")
    agent = _agent(model)
    agent.run_sync("Q1")
    copy = agent.checkpoint()
    copy["history"][0]["content"] = "tampered"
    copy["history"].append({"role": "user", "content": "injected"})
    agent.follow_up_sync("Q2")
    assert model.said() == ["Q1", "A1", "Q2"]


def test_R004_44_a_stored_conversation_continues_on_a_fresh_instance() -> None:
    """R004-44: a stored conversation continues on a fresh instance after a JSON round trip."""
    first = _agent(Model("Paris."))
    first.run_sync("Capital?")
    stored = json.loads(json.dumps(first.checkpoint()))
    model = Model("2 million.")
    _agent(model).run_sync("People?", continue_from=stored)
    assert model.said() == ["Capital?", "Paris.", "People?"]


def test_R004_46_the_conversation_grows_every_turn_and_nothing_trims_it() -> None:
    """R004-46: the stored conversation grows every turn (no silent cap)."""
    agent = _agent(Model("a"))
    agent.run_sync("q0")
    for i in range(1, 30):
        agent.follow_up_sync(f"q{i}")
    assert len(agent.checkpoint()["history"]) == 60


# -- snapshots and stopping early ------------------------------------------------------------------------------------


def test_R004_79_last_snapshot_is_none_until_a_run_then_the_latest() -> None:
    """R004-79: last_snapshot() is None until a run started; then the most recent run's snapshot, across turns."""
    agent = _agent(Model("a", "b"))
    assert agent.last_snapshot() is None
    first = agent.run_sync("q1")
    second = agent.follow_up_sync("q2")
    snap = agent.last_snapshot()
    assert snap is not None and snap.run_id == second.run_id != first.run_id


def test_R004_81_last_narrative_is_an_empty_list_before_any_run() -> None:
    """R004-81: the last narrative is an empty list (not None) when no run has completed."""
    agent = _agent(Model("a"))
    assert agent.last_narrative() == []
    agent.run_sync("go")
    assert agent.last_narrative() != []


def test_R004_86_stopped_early_is_none_on_a_normal_finish_even_at_the_budget() -> None:
    """R004-86: stopped_early() is None on a normal finish, including a turn that used its whole max_iterations."""
    agent = _agent(Model(_call(), "done"), _tool(), max_iterations=2)
    result = agent.run_sync("go")
    assert result.iterations == 2 and result.answer == "done"
    assert agent.stopped_early() is None and result.stopped_early is None


def test_R004_87_max_iterations_with_tools_still_asked_stops_without_raising() -> None:
    """R004-87: at max_iterations with the model still asking for tools: no raise, the tools do not run, and
    stopped_early() says max-iterations, the iteration and the pending calls."""
    ran: list[Any] = []
    schema = {"type": "object", "properties": {}}
    tool = define_tool(name="lookup", description="L.", input_schema=schema, execute=lambda a: ran.append(a) or "r")
    agent = _agent(Model(_call()), tool, max_iterations=2, wrap_up_at_max_iterations=False)
    agent.run_sync("go")
    stopped = agent.stopped_early()
    assert stopped is not None
    assert (stopped.reason, stopped.iteration, stopped.pending_tool_calls) == ("max-iterations", 2, 1)
    assert len(ran) == 1  # the first iteration's call ran; the last one's did not


def test_R004_88_a_halting_cost_budget_stops_the_run_early() -> None:
    """R004-88: a cost budget with on_exceed 'halt' that is crossed stops the run: reason 'cost-budget'."""
    model = Model({**_call(), "usage": {"input_tokens": 10_000, "output_tokens": 0}}, "done")
    agent = (
        Agent.create(provider=mock(respond=model), model="m")
        .tool(_tool())
        .pricing({"*": {"input": 1.0, "output": 1.0}})
        .cost_budget(0.5, on_exceed="halt")
        .build()
    )
    result = agent.run_sync("go")
    assert result.stopped_early is not None and result.stopped_early.reason == "cost-budget"


def test_R004_89_stopped_early_is_provable_from_the_snapshot() -> None:
    """R004-89: the stopped-early value is in the snapshot's state (stopped_early)."""
    agent = _agent(Model(_call()), _tool(), max_iterations=1, wrap_up_at_max_iterations=False)
    result = agent.run_sync("go")
    assert result.record.snapshot.state["stopped_early"]["reason"] == "max-iterations"


# -- typed output ----------------------------------------------------------------------------------------------------


class Answer(BaseModel):
    city: str
    people: int


def test_R004_95_with_an_output_schema_run_still_returns_the_raw_string() -> None:
    """R004-95: with an output schema, run() returns the raw string; typed mode is opt-in (run_typed)."""
    raw = '{"city": "Paris", "people": 2}'
    agent = Agent.create(provider=mock(reply=raw), model="m").output_schema(Answer).build()
    assert agent.run_sync("go").answer == raw


def test_R004_98_run_typed_returns_the_model_or_raises_naming_paths() -> None:
    """R004-98: run_typed returns the validated output, and raises OutputSchemaError naming paths on failure."""
    good = Agent.create(provider=mock(reply='{"city": "Paris", "people": 2}'), model="m").output_schema(Answer).build()
    assert good.run_typed_sync("go") == Answer(city="Paris", people=2)
    many = '{"city": "Paris", "people": "many"}'
    bad = Agent.create(provider=mock(reply=many), model="m").output_schema(Answer).build()
    with pytest.raises(OutputSchemaError) as err:
        bad.run_typed_sync("go", retries=0)
    assert "people" in str(err.value)


def test_R004_100_run_typed_raises_if_the_run_pauses() -> None:
    """R004-100: run_typed throws if the run pauses (use run() when pauses are expected)."""
    model = Model(ASK)
    agent = Agent.create(provider=mock(respond=model), model="m").tool(ask_human).output_schema(Answer).build()
    with pytest.raises(OutputSchemaError) as err:
        agent.run_typed_sync("go")
    assert "pause" in str(err.value).lower()


# -- pricing, window, pauses -----------------------------------------------------------------------------------------


def test_R004_137_a_pricing_table_prices_each_call_by_model() -> None:
    """R004-137: a pricing table prices each call by model; the run's cost is the sum."""
    usage = {"input_tokens": 1000, "output_tokens": 500}
    model = Model({**_call(), "usage": usage}, {"content": "done", "usage": usage})
    agent = (
        Agent.create(provider=mock(respond=model), model="gpt-x")
        .tool(_tool())
        .pricing({"gpt-x": {"input": 0.5, "output": 1.5}})
        .build()
    )
    result = agent.run_sync("go")
    assert result.cost == pytest.approx(2 * (1.0 * 0.5 + 0.5 * 1.5))


def test_R004_120_the_window_bounds_what_the_model_sees_not_the_stored_conversation() -> None:
    """R004-120: .window() bounds what the model is shown (whole oldest turns), never the stored conversation."""
    model = Model("a")
    agent = Agent.create(provider=mock(respond=model), model="m").window(max_turns=2).build()
    agent.run_sync("q0")
    agent.follow_up_sync("q1")
    agent.follow_up_sync("q2")
    assert model.said() == ["q1", "a", "q2"]  # q0 and its answer dropped from view, whole
    assert len(agent.checkpoint()["history"]) == 6
    plain = Model("a")
    unbounded = _agent(plain)
    unbounded.run_sync("q0")
    unbounded.follow_up_sync("q1")
    assert plain.said() == ["q0", "a", "q1"]


def test_R004_49_a_paused_run_refuses_a_new_run_until_answered() -> None:
    """R004-49: a run paused to ask a person refuses run() with PendingQuestionError until answered or abandoned."""
    model = Model(ASK, "thanks")
    agent = Agent.create(provider=mock(respond=model), model="m").tool(ask_human).build()
    paused = agent.run_sync("go")
    with pytest.raises(PendingQuestionError):
        agent.run_sync("another")
    assert agent.resume_sync(paused.checkpoint, "the blue one").answer == "thanks"
    assert agent.run_sync("now").status == "completed"


def test_R004_50_follow_up_after_a_pause_is_refused() -> None:
    """R004-50: follow_up after a pause is refused with PendingQuestionError (a pause has its own door)."""
    model = Model(ASK)
    agent = Agent.create(provider=mock(respond=model), model="m").tool(ask_human).build()
    agent.run_sync("go")
    with pytest.raises(PendingQuestionError):
        agent.follow_up_sync("more")


def test_R004_51_abandon_pause_returns_what_was_dropped() -> None:
    """R004-51: abandon_pause() returns {tool name, call id, question} (None when nothing pending); runs proceed."""
    model = Model(ASK, "fresh")
    agent = Agent.create(provider=mock(respond=model), model="m").tool(ask_human).build()
    assert agent.abandon_pause() is None
    agent.run_sync("go")
    dropped = agent.abandon_pause()
    assert dropped is not None
    assert (dropped["tool_name"], dropped["tool_call_id"], dropped["question"]) == ("ask_human", "h", "Which?")
    assert agent.run_sync("next").answer == "fresh"


def test_R004_52_abandon_pause_leaves_the_checkpoint_resumable() -> None:
    """R004-52: abandon_pause() does not touch the paused run's checkpoint: it stays resumable."""
    model = Model(ASK, "resumed")
    agent = Agent.create(provider=mock(respond=model), model="m").tool(ask_human).build()
    paused = agent.run_sync("go")
    agent.abandon_pause()
    assert agent.resume_sync(paused.checkpoint, "blue").answer == "resumed"


def test_R004_53_a_completing_resume_clears_the_pending_question() -> None:
    """R004-53: the pending question is cleared by a completing resume(): run() proceeds afterwards."""
    model = Model(ASK, "ok")
    agent = Agent.create(provider=mock(respond=model), model="m").tool(ask_human).build()
    paused = agent.run_sync("go")
    assert agent.pending() is not None
    agent.resume_sync(paused.checkpoint, "blue")
    assert agent.pending() is None and agent.run_sync("next").status == "completed"


def test_R004_55_resume_works_on_a_fresh_agent_from_the_json_checkpoint() -> None:
    """R004-55: resume() works on a freshly built agent (another process) from the JSON checkpoint."""

    def build(model: Model) -> Agent:
        return Agent.create(provider=mock(respond=model), model="m").tool(ask_human).build()

    paused = build(Model(ASK)).run_sync("go")
    stored = json.loads(json.dumps(paused.checkpoint))
    model = Model("you said blue")
    assert build(model).resume_sync(stored, "blue").answer == "you said blue"
    assert model.said()[-1] == "blue"
