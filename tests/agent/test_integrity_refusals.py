"""Structural refusals of a handed-back checkpoint, pinned to their exact text and field: a tool answer to a call
never made, a malformed done-call record, a conversation out of order, and the size and depth bounds."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.agent import _integrity
from agentfootprint.agent._integrity import check_bounds, check_history
from agentfootprint.flow import InvalidCheckpointError

from ._integrity import Effects, ask_agent, roundtrip


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
