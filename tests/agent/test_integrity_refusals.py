"""Structural refusals of a handed-back checkpoint, pinned to their exact text and field: a tool answer to a call
never made, a malformed done-call record, a conversation out of order, and the size and depth bounds."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, ask_human, ask_human_typed, define_tool
from agentfootprint.agent import DecisionRequiredError, _integrity
from agentfootprint.agent._integrity import check_bounds, check_history
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.providers import LLMRequest, mock

from ._integrity import Effects, ask_agent, refund_agent, roundtrip


class Refused(InvalidCheckpointError):
    """The error class a caller passes: the checks raise exactly it."""


def refused_by(check: Any, *args: Any) -> tuple[str, str]:
    with pytest.raises(Refused) as info:
        check(*args, Refused)
    assert type(info.value) is Refused
    return str(info.value), info.value.field


# -- a paused turn's calls done before the pause --------------------------------------------------------------------


def _done(cp: dict[str, Any]) -> dict[str, Any]:
    done: dict[str, Any] = cp["flow"]["pause_data"]["completed"][0]
    return done


MALFORMED = "a call done before the pause is malformed"
NEVER_MADE = "a tool answer answers a call that was never made"
DISAGREES = "a tool answer disagrees with its own record"
WHERE = "flow.pause_data.completed.0"

DONE_EDITS: list[tuple[str, Any, str, str]] = [
    ("not a dict", lambda cp: cp["flow"]["pause_data"]["completed"].__setitem__(0, "done"), MALFORMED, WHERE),
    ("no return", lambda cp: _done(cp).pop("return"), MALFORMED, WHERE),
    ("an extra part", lambda cp: _done(cp).update(note="x"), MALFORMED, WHERE),
    ("record not a dict", lambda cp: _done(cp).update(record=["l1"]), MALFORMED, f"{WHERE}.record"),
    ("record unknown key", lambda cp: _done(cp)["record"].update(secret="x"), MALFORMED, f"{WHERE}.record"),
    ("record other iteration", lambda cp: _done(cp)["record"].update(iteration=2), MALFORMED, f"{WHERE}.record"),
    ("return not a dict", lambda cp: _done(cp).update({"return": None}), MALFORMED, f"{WHERE}.return"),
    ("return missing a key", lambda cp: _done(cp)["return"].pop("is_error"), MALFORMED, f"{WHERE}.return"),
    ("return extra key", lambda cp: _done(cp)["return"].update(extra=1), MALFORMED, f"{WHERE}.return"),
    ("message not a message", lambda cp: _done(cp)["message"].update(role="robot"), MALFORMED, WHERE),
    ("record of the wrong type", lambda cp: _done(cp)["record"].update(is_error="no"), MALFORMED, WHERE),
    ("return of the wrong type", lambda cp: _done(cp)["return"].update(content=5), MALFORMED, WHERE),
    ("message from a user", lambda cp: _done(cp)["message"].update(role="user"), NEVER_MADE, f"{WHERE}.message"),
    (
        "message to another call",
        lambda cp: _done(cp)["message"].update(tool_call_id="zz"),
        NEVER_MADE,
        f"{WHERE}.message",
    ),
    ("message of another tool", lambda cp: _done(cp)["message"].update(tool_name="x"), NEVER_MADE, f"{WHERE}.message"),
    ("record of another call", lambda cp: _done(cp)["record"].update(call_id="zz"), NEVER_MADE, f"{WHERE}.record"),
    ("record of another tool", lambda cp: _done(cp)["record"].update(name="x"), NEVER_MADE, f"{WHERE}.record"),
    ("record other args", lambda cp: _done(cp)["record"].update(args={"order_id": "B"}), NEVER_MADE, f"{WHERE}.record"),
    ("record other content", lambda cp: _done(cp)["record"].update(content="x"), DISAGREES, f"{WHERE}.return"),
    ("return other content", lambda cp: _done(cp)["return"].update(content="x"), DISAGREES, f"{WHERE}.return"),
    ("return of another call", lambda cp: _done(cp)["return"].update(call_id="zz"), DISAGREES, f"{WHERE}.return"),
    ("return of another tool", lambda cp: _done(cp)["return"].update(name="x"), DISAGREES, f"{WHERE}.return"),
    ("return other error flag", lambda cp: _done(cp)["return"].update(is_error=True), DISAGREES, f"{WHERE}.return"),
    ("return error flag as 0", lambda cp: _done(cp)["return"].update(is_error=0), MALFORMED, WHERE),
    ("record error flag as 0", lambda cp: _done(cp)["record"].update(is_error=0), MALFORMED, WHERE),
    ("message with a tuple", lambda cp: _done(cp)["message"].update(reasoning=()), MALFORMED, WHERE),
    (
        "completed not a list",
        lambda cp: cp["flow"]["pause_data"].update(completed={"0": 1}),
        "the calls done before the pause are not the model's calls",
        "flow.pause_data.completed",
    ),
    (
        "as many done as called",
        lambda cp: cp["flow"]["pause_data"]["completed"].append(_done(cp)),
        "the calls done before the pause are not the model's calls",
        "flow.pause_data.completed",
    ),
]


async def resumed_after(edit: Any) -> tuple[InvalidCheckpointError | None, Effects, int]:
    """Pause the ask agent, ``edit`` its checkpoint, resume it: (the refusal or None, effects, model calls before)."""
    fx = Effects()
    cp = roundtrip((await ask_agent(fx).run("refund")).checkpoint)
    edit(cp)
    before = fx.model_calls
    try:
        await ask_agent(fx).resume(cp, "A")
    except InvalidCheckpointError as err:
        return err, fx, before
    return None, fx, before


@pytest.mark.parametrize(("what", "edit", "message", "field"), DONE_EDITS, ids=[e[0] for e in DONE_EDITS])
async def test_a_done_call_that_is_malformed_or_answers_a_call_never_made_is_refused_exactly(
    what: str, edit: Any, message: str, field: str
) -> None:
    err, fx, before = await resumed_after(edit)
    assert err is not None and (str(err), err.field, err.code) == (message, field, "ERR_INVALID_CHECKPOINT")
    assert "4111" not in str(err) and "A-1001" not in str(err)
    assert fx.model_calls == before and len(fx.lookups) == 1, "nothing ran: the lookup is the first leg's"


async def test_the_unedited_pause_resumes_control() -> None:
    err, fx, before = await resumed_after(lambda cp: None)
    assert err is None and fx.model_calls == before + 1 and len(fx.lookups) == 1


# -- a conversation's order ---------------------------------------------------------------------------------------


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


def asks(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": i, "name": "lookup", "args": {}} for i in ids]}


def answer(call_id: str, name: str = "lookup") -> dict[str, Any]:
    return {"role": "tool", "content": "ok", "tool_call_id": call_id, "tool_name": name}


HISTORIES: list[tuple[str, list[Any], str, str]] = [
    (
        "answer to a call never made",
        [user(), answer("c1")],
        "a tool message answers a call that was never made",
        "h.1.tool_call_id",
    ),
    (
        "answered twice",
        [user(), asks("c1"), answer("c1"), answer("c1")],
        "a tool message answers a call that was never made",
        "h.3.tool_call_id",
    ),
    (
        "answer without a call id",
        [user(), asks("c1"), {**answer("c1"), "tool_call_id": None}],
        "a tool message answers a call that was never made",
        "h.2.tool_call_id",
    ),
    (
        "answer by another tool",
        [user(), asks("c1"), answer("c1", "other")],
        "a tool message names another tool than the call",
        "h.2.tool_name",
    ),
    ("moved on unanswered", [user(), asks("c1"), user()], "a tool call was never answered", "h.2"),
    (
        "one of two unanswered",
        [user(), asks("c1", "c2"), answer("c1"), asks("c3")],
        "a tool call was never answered",
        "h.3",
    ),
    ("ends unanswered", [user(), asks("c1")], "a tool call was never answered", "h"),
    ("a repeated call id", [user(), asks("c1", "c1")], "an assistant turn repeats a tool call id", "h.1.tool_calls"),
    ("not a message", [user(), {"role": "robot", "content": "x"}], "a conversation message is invalid", "h.1.role"),
    ("not a dict", ["hi"], "a conversation message is invalid", "h.0"),
]


@pytest.mark.parametrize(("what", "history", "message", "field"), HISTORIES, ids=[h[0] for h in HISTORIES])
def test_a_conversation_out_of_order_is_refused_exactly(
    what: str, history: list[Any], message: str, field: str
) -> None:
    assert refused_by(check_history, history, "h") == (message, field)


def test_a_conversation_in_order_passes_control() -> None:
    check_history(
        [user(), asks("c1", "c2"), answer("c2"), answer("c1"), asks("c3"), answer("c3"), user()], "h", Refused
    )
    check_history([], "h", Refused)


def test_a_conversation_is_capped_at_max_history_messages() -> None:
    assert _integrity.MAX_HISTORY == 100_000
    check_history([user()] * 100_000, "h", Refused)
    assert refused_by(check_history, [user()] * 100_001, "h") == (
        "the conversation holds more than 100000 messages",
        "h",
    )


# -- size and depth ----------------------------------------------------------------------------------------------


def nested(levels: int, container: Any = list) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = container([value]) if container is not dict else {"k": value}
    return value


@pytest.mark.parametrize("container", [list, tuple, dict])
def test_a_checkpoint_is_cut_at_200_levels_of_any_container(container: Any) -> None:
    assert _integrity.MAX_DEPTH == 200
    check_bounds({"a": [1, {"b": 2}], "deep": nested(200, container)}, Refused)
    assert refused_by(check_bounds, {"deep": nested(201, container)}) == (
        "the checkpoint is nested more than 200 levels deep",
        "checkpoint",
    )


@pytest.mark.parametrize("value", [{"x": {1, 2}}, {"x": b"bytes"}, {"x": object()}, {("a",): 1}])
def test_a_checkpoint_that_is_not_plain_json_is_refused(value: Any) -> None:
    assert refused_by(check_bounds, value) == ("the checkpoint is not plain JSON", "checkpoint")


def test_a_checkpoint_is_capped_in_json_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _integrity.MAX_CHECKPOINT_CHARS == 64 * 1024 * 1024
    monkeypatch.setattr(_integrity, "MAX_CHECKPOINT_CHARS", 20)
    check_bounds({"k": "x" * 11}, Refused)  # {"k": "xxxxxxxxxxx"} is 20 characters
    assert refused_by(check_bounds, {"k": "x" * 12}) == (
        "the checkpoint is larger than 20 characters of JSON",
        "checkpoint",
    )


# -- the rest of a paused turn: each part against the others, exact text and field ---------------------------------


def _pd(cp: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = cp["flow"]["pause_data"]
    return data


def _log(cp: dict[str, Any]) -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = cp["flow"]["commit_log"]
    return log


def _route(cp: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in _log(cp) if c["stage_id"] == "route")


NOT_PAUSED_THERE = "the run is not paused where an agent pauses (its tool calls)"
NOT_ITS_LOG = "a commit is not what its stage records"
NO_BRANCH = "a decision names no branch of its decider"

PAUSE_EDITS: list[tuple[str, Any, str, str]] = [
    ("run id", lambda cp: cp.update(run_id="x" * 32), "run_id is not the paused flow's run id", "run_id"),
    ("frame node", lambda cp: cp["flow"]["frames"][0].update(node_id="route"), NOT_PAUSED_THERE, "flow.frames"),
    (
        "frame mount",
        lambda cp: cp["flow"]["frames"][0].update(mount_runtime_stage_id="x#1"),
        NOT_PAUSED_THERE,
        "flow.frames",
    ),
    ("frame branches", lambda cp: cp["flow"]["frames"][0].update(done_branches=[]), NOT_PAUSED_THERE, "flow.frames"),
    (
        "paused stage",
        lambda cp: cp["flow"].update(paused_runtime_stage_id="tool-calls#1"),
        "the paused stage is not the last commit of the log",
        "flow.paused_runtime_stage_id",
    ),
    (
        "pause extra",
        lambda cp: _pd(cp).update(note="x"),
        "the pause data holds a field an agent's pause does not have",
        "flow.pause_data",
    ),
    (
        "pause kind",
        lambda cp: _pd(cp).update(kind="approve"),
        "the pause kind is not one an agent makes",
        "flow.pause_data.kind",
    ),
    ("question", lambda cp: _pd(cp).update(question="other"), "question is not the paused flow's", "question"),
    ("call id", lambda cp: _pd(cp).update(tool_call_id="zz"), "tool_call_id is not the paused flow's", "tool_call_id"),
    ("tool", lambda cp: _pd(cp).update(tool_name="zz"), "tool_name is not the paused flow's", "tool_name"),
    (
        "turn's run id",
        lambda cp: cp["flow"]["args"].update(run_id="x"),
        "the turn's run id is not the flow's run input",
        "flow.namespaces..state.run.run_id",
    ),
    (
        "no run id",
        lambda cp: cp["flow"]["args"].pop("run_id"),
        "the flow's run input has no run id",
        "flow.args.run_id",
    ),
    (
        "long run id",
        lambda cp: cp["flow"]["args"].update(run_id="r" * 201),
        "the flow's run input has no run id",
        "flow.args.run_id",
    ),
    ("message", lambda cp: cp["flow"]["args"].update(message=5), "the flow's run input is not an agent's", "flow.args"),
    (
        "history",
        lambda cp: cp["flow"]["args"].update(history="x"),
        "the flow's run input is not an agent's",
        "flow.args",
    ),
    (
        "history answers nothing",
        lambda cp: cp["flow"]["args"].update(
            history=[{"role": "tool", "content": "x", "tool_call_id": "q", "tool_name": "t"}]
        ),
        "a tool message answers a call that was never made",
        "flow.args.history.0.tool_call_id",
    ),
    (
        "identity",
        lambda cp: (cp.update(identity={"principal": "m"}), cp["flow"]["args"].update(identity={"principal": "m"})),
        "identity is not the caller the paused run was for",
        "identity",
    ),
    (
        "not the next call",
        lambda cp: (cp.update(tool_call_id="zz"), _pd(cp).update(tool_call_id="zz")),
        "the paused call is not the model's next call",
        "tool_call_id",
    ),
    (
        "answer type",
        lambda cp: _pd(cp).update(answer_schema={"type": "string"}),
        "the answer type is not the paused tool's",
        "flow.pause_data.answer_schema",
    ),
    (
        "untyped count",
        lambda cp: _pd(cp).update(repeat={"count": 0}),
        "only a typed ask counts its asks",
        "flow.pause_data.repeat",
    ),
    ("request id", lambda cp: _pd(cp).update(request_id="req_x"), "request_id is not the paused call's", "request_id"),
    (
        "counter",
        lambda cp: cp["flow"].update(counter=99),
        "the runtime-id counter is not the commit log's length",
        "flow.counter",
    ),
    ("chart", lambda cp: cp["flow"].update(chart_id="other"), "the flow is not this agent's loop", "flow.chart_id"),
    (
        "writes twice",
        lambda cp: _log(cp)[0]["writes"].append(dict(_log(cp)[0]["writes"][0])),
        "a commit writes one key twice",
        "flow.commit_log.0.writes",
    ),
    ("commit kind", lambda cp: _log(cp)[1].update(kind="decider"), NOT_ITS_LOG, "flow.commit_log.1"),
    ("commit name", lambda cp: _log(cp)[1].update(stage_name="x"), NOT_ITS_LOG, "flow.commit_log.1"),
    (
        "visit",
        lambda cp: _log(cp)[1].update(visit=5),
        "a commit's runtime id or visit is not the loop's",
        "flow.commit_log.1.runtime_stage_id",
    ),
    (
        "visits",
        lambda cp: cp["flow"]["visits"].update(zz=1),
        "the visit counts are not the commit log's",
        "flow.visits",
    ),
    ("no branch", lambda cp: _route(cp)["decision"].update(chosen=["nope"]), NO_BRANCH, "flow.commit_log.6.decision"),
    (
        "two branches",
        lambda cp: _route(cp)["decision"].update(chosen=["a", "b"]),
        NO_BRANCH,
        "flow.commit_log.6.decision",
    ),
]


@pytest.mark.parametrize(("what", "edit", "message", "field"), PAUSE_EDITS, ids=[e[0] for e in PAUSE_EDITS])
async def test_a_paused_turn_whose_parts_disagree_is_refused_exactly(
    what: str, edit: Any, message: str, field: str
) -> None:
    err, fx, before = await resumed_after(edit)
    assert err is not None and (str(err), err.field, type(err)) == (message, field, InvalidCheckpointError)
    assert fx.model_calls == before and len(fx.lookups) == 1


async def test_the_commit_log_is_capped_at_max_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _integrity.MAX_COMMITS == 200_000
    monkeypatch.setattr(_integrity, "MAX_COMMITS", 8)  # the ask agent's pause holds 8 commits
    assert (await resumed_after(lambda cp: None))[0] is None
    monkeypatch.setattr(_integrity, "MAX_COMMITS", 7)
    err = (await resumed_after(lambda cp: None))[0]
    assert err is not None and (str(err), err.field) == ("the commit log holds more than 7 commits", "flow.commit_log")


def typed_agent(fx: Effects) -> Any:
    """An agent whose model asks a typed question (an int, two re-asks) at once."""

    def respond(req: LLMRequest) -> Any:
        fx.model_calls += 1
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "n1", "name": "ask_number", "args": {"question": "How many?"}}]}
        return f"answer: {req.messages[-1].content}"

    ask = ask_human_typed(int, name="ask_number", max_reasks=2)
    return Agent.create(provider=mock(respond=respond), model="m").tool(ask).build()


NOT_A_COUNT = ("the ask count is not a count", "flow.pause_data.repeat")
BEYOND = ("the ask count is beyond the tool's re-asks", "flow.pause_data.repeat.count")


@pytest.mark.parametrize(
    ("repeat", "expected"),
    [
        ({"count": "1"}, NOT_A_COUNT),
        ({"count": True}, NOT_A_COUNT),
        ({"count": 0, "x": 1}, NOT_A_COUNT),
        ({}, NOT_A_COUNT),
        ([0], NOT_A_COUNT),
        ({"count": 3}, BEYOND),
        ({"count": -1}, BEYOND),
        ({"count": 2}, None),
        ({"count": 0}, None),
    ],
)
async def test_a_typed_ask_counts_its_asks_within_its_re_asks(repeat: Any, expected: tuple[str, str] | None) -> None:
    fx = Effects()
    cp = roundtrip((await typed_agent(fx).run("go")).checkpoint)
    assert _pd(cp)["answer_schema"] == {"type": "integer"} and _pd(cp)["repeat"] == {"count": 0}
    _pd(cp)["repeat"] = repeat
    if expected is None:
        assert (await typed_agent(fx).resume(cp, 5)).status == "completed"
        return
    with pytest.raises(InvalidCheckpointError) as err:
        await typed_agent(fx).resume(cp, 5)
    assert (str(err.value), err.value.field) == expected and fx.model_calls == 1


async def test_a_re_asked_typed_question_resumes_past_its_first_pause() -> None:
    fx = Effects()
    first = await typed_agent(fx).run("go")
    again = await typed_agent(fx).resume(roundtrip(first.checkpoint), "not a number")
    assert again.status == "paused" and again.checkpoint is not None
    assert [c["paused"] for c in _log(again.checkpoint)][-2:] == [True, True], "the log walks past a paused commit"
    assert (await typed_agent(fx).resume(roundtrip(again.checkpoint), 5)).status == "completed"


def _write_everywhere(cp: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` in the state and in the commit that last wrote it, so the engine's replay still agrees."""
    writer = next(c for c in reversed(_log(cp)) if any(w["path"] == path for w in c["writes"]))
    next(w for w in writer["writes"] if w["path"] == path)["value"] = value
    cp["flow"]["namespaces"][""]["state"][path] = value


async def test_a_paused_state_value_an_agent_never_writes_is_refused_even_when_the_log_agrees() -> None:
    bad = {"input_tokens": "x", "output_tokens": 7, "reasoning_tokens": 0}
    err, fx, before = await resumed_after(lambda cp: _write_everywhere(cp, "usage_total", bad))
    assert err is not None and (str(err), err.field) == (
        "the paused state holds a value an agent never writes",
        "flow.namespaces..state.usage_total.input_tokens",
    )
    assert fx.model_calls == before


async def test_a_consent_pause_still_needs_a_decision_after_the_checks() -> None:
    fx = Effects()
    paused = await refund_agent(fx).run("refund")
    with pytest.raises(DecisionRequiredError):
        await refund_agent(fx).resume(roundtrip(paused.checkpoint), "yes")
    assert fx.refunds == []


def pair_agent(fx: Effects) -> Any:
    """One batch: a tool given two arguments out of alphabetical order, then a question (the pause)."""

    def respond(req: LLMRequest) -> Any:
        fx.model_calls += 1
        if req.messages[-1].role == "user":
            return {
                "tool_calls": [
                    {"id": "p1", "name": "pair", "args": {"zeta": 1, "alpha": 2}},
                    {"id": "h1", "name": "ask_human", "args": {"question": "Which?"}},
                ]
            }
        return "done"

    pair = define_tool(
        name="pair",
        description="Two numbers",
        input_schema={"type": "object", "properties": {"zeta": {"type": "integer"}, "alpha": {"type": "integer"}}},
        execute=lambda args, ctx: "ok",
    )
    return Agent.create(provider=mock(respond=respond), model="m").tool(pair).tool(ask_human).build()


async def test_a_done_call_with_its_arguments_in_any_key_order_is_the_call() -> None:
    fx = Effects()
    cp = roundtrip((await pair_agent(fx).run("go")).checkpoint)
    assert list(_done(cp)["record"]["args"]) == ["zeta", "alpha"]
    reordered = roundtrip(cp)
    _done(reordered)["record"]["args"] = {"alpha": 2, "zeta": 1}
    for checkpoint in (cp, reordered):
        assert (await pair_agent(fx).resume(checkpoint, "A")).status == "completed"
    _done(cp)["record"]["args"] = {"zeta": 1, "alpha": 3}
    with pytest.raises(InvalidCheckpointError) as err:
        await pair_agent(fx).resume(cp, "A")
    assert (str(err.value), err.value.field) == (NEVER_MADE, f"{WHERE}.record")
