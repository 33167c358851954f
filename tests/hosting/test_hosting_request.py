"""The core checks: a turn request's shape field by field, ids' format and length, and replaceable readers."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from agui_bodies import assistant, body, call, tool_msg, user

from agentfootprint.hosting import (
    RequestFacts,
    TurnRequest,
    WireRequestRefusal,
    check_turn_request,
    read_request,
    run_agent_input_reader,
)
from agentfootprint.hosting._ids import ID_PATTERN, MAX_ID_LENGTH
from agentfootprint.hosting.request import HistoryMessageIn, ToolMessageIn, UserMessageIn


def refused(value: Any) -> WireRequestRefusal:
    with pytest.raises(WireRequestRefusal) as info:
        check_turn_request(value)
    return info.value


def test_reads_a_full_run_agent_input() -> None:
    turn = check_turn_request(
        body(
            user("m1", "first"),
            assistant("a1", None, [call("c1")]),
            tool_msg("t1", "c1"),
            {"id": "r1", "role": "reasoning", "content": "thinking"},
            {"id": "x1", "role": "activity", "activityType": "plan", "content": {}},
            user("m2", [{"type": "text", "text": "look"}]),
            parentRunId="r0",
            protocolVersion="1.0",
            tools=[{"name": "pick_color", "description": "d", "parameters": {"type": "object"}}],
            context=[{"description": "page", "value": "/home"}],
            state={"count": 1},
            resume=[{"interruptId": "i1", "status": "resolved", "payload": {"ok": True}}],
            forwardedProps={"anything": 1},
        )
    )
    assert (turn.thread_id, turn.run_id, turn.parent_run_id) == ("t1", "r1", "r0")
    assert [type(m) for m in turn.messages] == [
        UserMessageIn,
        HistoryMessageIn,
        ToolMessageIn,
        HistoryMessageIn,
        HistoryMessageIn,
        UserMessageIn,
    ]
    assert turn.messages[-1].content == ({"type": "text", "text": "look"},)  # type: ignore[union-attr]
    assert turn.tools[0].name == "pick_color"
    assert turn.context is not None and turn.context[0].value == "/home"
    assert turn.state == {"count": 1}
    assert turn.resume[0].interrupt_id == "i1" and turn.resume[0].payload == {"ok": True}
    assert "forwarded" not in str(turn.model_dump()).lower()


@pytest.mark.parametrize(
    ("fields", "state", "context"),
    [
        ({}, None, None),
        ({"state": None, "context": None}, None, None),
        ({"state": {}, "context": []}, None, None),
        ({"state": [], "context": [{"description": "d", "value": "v"}]}, [], 1),
        ({"state": 0}, 0, None),
    ],
)
def test_state_and_context_carried_or_not(fields: dict[str, Any], state: Any, context: Any) -> None:
    turn = check_turn_request(body(**fields))
    assert turn.state == state
    assert (turn.context is None) == (context is None)


def test_ids_up_to_128_characters_are_read() -> None:
    long_id = "a" * MAX_ID_LENGTH
    turn = check_turn_request(body(user(long_id), threadId=long_id, runId=long_id))
    assert turn.thread_id == long_id


@pytest.mark.parametrize("where", ["threadId", "runId", "parentRunId", "messages[0].id"])
def test_an_id_of_129_characters_is_refused_not_truncated(where: str) -> None:
    long_id = "a" * (MAX_ID_LENGTH + 1)
    value = body(user(long_id)) if where.startswith("messages") else body(**{where: long_id})
    refusal = refused(value)
    assert (refusal.reason, refusal.field, refusal.status) == ("ERR_AGUI_ID_TOO_LONG", where, 400)


@pytest.mark.parametrize(
    "bad",
    ["", " ", "a b", "a/b", "a\nb", "a\n", "é", "ａ", "a\x00", "a\u202eb", "<script>", "a;b", "\ud800", "👍"],
)
def test_id_charset_is_enforced(bad: str) -> None:
    refusal = refused(body(threadId=bad))
    assert (refusal.reason, refusal.field) == ("ERR_AGUI_ID_FORMAT", "threadId")


@pytest.mark.parametrize(
    "good", ["0", "run_1:a.b-c", "123e4567-e89b-12d3-a456-426614174000", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]
)
def test_id_charset_accepts_common_ids(good: str) -> None:
    assert ID_PATTERN.fullmatch(good)
    assert check_turn_request(body(runId=good)).run_id == good


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda b: b.pop(key)


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(b: dict[str, Any]) -> None:
        target: Any = b
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return apply


SHAPE_CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("no threadId", _drop("threadId"), "ERR_AGUI_FIELD_MISSING", "threadId"),
    ("null runId", _set(("runId",), None), "ERR_AGUI_FIELD_MISSING", "runId"),
    ("threadId number", _set(("threadId",), 7), "ERR_AGUI_FIELD_TYPE", "threadId"),
    ("parentRunId list", _set(("parentRunId",), ["x"]), "ERR_AGUI_FIELD_TYPE", "parentRunId"),
    ("no messages", _drop("messages"), "ERR_AGUI_FIELD_MISSING", "messages"),
    ("messages object", _set(("messages",), {}), "ERR_AGUI_FIELD_TYPE", "messages"),
    ("message string", _set(("messages", 0), "hi"), "ERR_AGUI_FIELD_TYPE", "messages[0]"),
    ("no role", _set(("messages", 0), {"id": "m", "content": "x"}), "ERR_AGUI_FIELD_MISSING", "messages[0].role"),
    ("role number", _set(("messages", 0, "role"), 1), "ERR_AGUI_FIELD_TYPE", "messages[0].role"),
    ("unknown role", _set(("messages", 0, "role"), "admin"), "ERR_AGUI_MESSAGE_ROLE", "messages[0].role"),
    ("system", _set(("messages", 0, "role"), "system"), "ERR_AGUI_SYSTEM_MESSAGE", "messages[0].role"),
    ("developer", _set(("messages", 0, "role"), "developer"), "ERR_AGUI_SYSTEM_MESSAGE", "messages[0].role"),
    (
        "no message id",
        _set(("messages", 0), {"role": "user", "content": "x"}),
        "ERR_AGUI_FIELD_MISSING",
        "messages[0].id",
    ),
    ("no content", _set(("messages", 0), {"id": "m", "role": "user"}), "ERR_AGUI_FIELD_MISSING", "messages[0].content"),
    ("content number", _set(("messages", 0, "content"), 5), "ERR_AGUI_FIELD_TYPE", "messages[0].content"),
    ("part not object", _set(("messages", 0, "content"), ["x"]), "ERR_AGUI_FIELD_TYPE", "messages[0].content[0]"),
    (
        "part no type",
        _set(("messages", 0, "content"), [{"text": "x"}]),
        "ERR_AGUI_CONTENT",
        "messages[0].content[0].type",
    ),
    (
        "text part without text",
        _set(("messages", 0, "content"), [{"type": "text", "text": 3}]),
        "ERR_AGUI_CONTENT",
        "messages[0].content[0].text",
    ),
    (
        "unknown part",
        _set(("messages", 0, "content"), [{"type": "binary", "data": "x"}]),
        "ERR_AGUI_CONTENT",
        "messages[0].content[0]",
    ),
    (
        "image without source",
        _set(("messages", 0, "content"), [{"type": "image"}]),
        "ERR_AGUI_CONTENT",
        "messages[0].content[0]",
    ),
    ("tools object", _set(("tools",), {"name": "x"}), "ERR_AGUI_FIELD_TYPE", "tools"),
    ("tool no name", _set(("tools",), [{"description": "d"}]), "ERR_AGUI_FIELD_MISSING", "tools[0].name"),
    ("tool bad name", _set(("tools",), [{"name": "rm -rf"}]), "ERR_AGUI_TOOL_NAME", "tools[0].name"),
    ("tool name newline", _set(("tools",), [{"name": "a\n"}]), "ERR_AGUI_TOOL_NAME", "tools[0].name"),
    ("tool long name", _set(("tools",), [{"name": "a" * 65}]), "ERR_AGUI_TOOL_NAME", "tools[0].name"),
    ("tool twice", _set(("tools",), [{"name": "a"}, {"name": "a"}]), "ERR_AGUI_DUPLICATE_TOOL", "tools[1].name"),
    (
        "tool description",
        _set(("tools",), [{"name": "a", "description": 1}]),
        "ERR_AGUI_FIELD_TYPE",
        "tools[0].description",
    ),
    ("context object", _set(("context",), {"a": 1}), "ERR_AGUI_FIELD_TYPE", "context"),
    ("context no value", _set(("context",), [{"description": "d"}]), "ERR_AGUI_FIELD_MISSING", "context[0].value"),
    (
        "context value obj",
        _set(("context",), [{"description": "d", "value": {}}]),
        "ERR_AGUI_FIELD_TYPE",
        "context[0].value",
    ),
    ("resume object", _set(("resume",), {"interruptId": "i"}), "ERR_AGUI_FIELD_TYPE", "resume"),
    ("resume no id", _set(("resume",), [{"status": "resolved"}]), "ERR_AGUI_FIELD_MISSING", "resume[0].interruptId"),
    ("resume no status", _set(("resume",), [{"interruptId": "i"}]), "ERR_AGUI_FIELD_MISSING", "resume[0].status"),
    (
        "resume bad status",
        _set(("resume",), [{"interruptId": "i", "status": "approved"}]),
        "ERR_AGUI_FIELD_VALUE",
        "resume[0].status",
    ),
    (
        "resume twice",
        _set(("resume",), [{"interruptId": "i", "status": "resolved"}, {"interruptId": "i", "status": "cancelled"}]),
        "ERR_AGUI_DUPLICATE_ID",
        "resume[1].interruptId",
    ),
]


@pytest.mark.parametrize(("name", "mutate", "code", "field"), SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_refusals_name_the_field(
    name: str, mutate: Callable[[dict[str, Any]], None], code: str, field: str
) -> None:
    value = body()
    mutate(value)
    refusal = refused(value)
    assert (refusal.reason, refusal.field) == (code, field), name
    assert refusal.status == 400


def test_tool_and_assistant_message_shapes() -> None:
    cases = [
        (tool_msg("t", "c") | {"toolCallId": None}, "ERR_AGUI_FIELD_MISSING", "messages[0].toolCallId"),
        (tool_msg("t", "c") | {"error": 5}, "ERR_AGUI_FIELD_TYPE", "messages[0].error"),
        (assistant("a", content=None) | {"content": 3}, "ERR_AGUI_FIELD_TYPE", "messages[0].content"),
        (assistant("a", calls=[{"id": "c"}]), "ERR_AGUI_FIELD_TYPE", "messages[0].toolCalls[0].function"),
        (assistant("a", calls=["x"]), "ERR_AGUI_FIELD_TYPE", "messages[0].toolCalls[0]"),
        (assistant("a", calls=[call("c" * 129)]), "ERR_AGUI_ID_TOO_LONG", "messages[0].toolCalls[0].id"),
        (
            assistant("a", calls=[call("c", arguments=None)]),
            "ERR_AGUI_FIELD_MISSING",
            "messages[0].toolCalls[0].function.arguments",
        ),  # type: ignore[arg-type]
    ]
    for message, code, field in cases:
        refusal = refused(body(message))
        assert (refusal.reason, refusal.field) == (code, field)


@pytest.mark.parametrize(
    ("content", "code", "field"),
    [
        (5, "ERR_AGUI_FIELD_TYPE", "messages[0].content"),
        (["thinking"], "ERR_AGUI_FIELD_TYPE", "messages[0].content"),
        ({"text": "thinking"}, "ERR_AGUI_FIELD_TYPE", "messages[0].content"),
        (None, "ERR_AGUI_FIELD_MISSING", "messages[0].content"),
        ("half \ud800 a pair", "ERR_AGUI_TEXT_INVALID", "messages"),
    ],
    ids=["number", "list", "object", "missing", "lone-surrogate"],
)
def test_reasoning_message_content_is_checked(content: Any, code: str, field: str) -> None:
    refusal = refused(body({"id": "r1", "role": "reasoning", "content": content}))
    assert (refusal.reason, refusal.field, refusal.status) == (code, field, 400)
    assert "thinking" not in str(refusal) and "\ud800" not in str(refusal)


def test_reasoning_message_text_is_read_as_history() -> None:
    turn = check_turn_request(body({"id": "r1", "role": "reasoning", "content": ""}, user("m1", "hi")))
    assert turn.messages[0] == HistoryMessageIn(id="r1", role="reasoning")


def test_duplicate_message_ids_are_refused() -> None:
    refusal = refused(body(user("m1", "a"), assistant("m1"), user("m2", "b")))
    assert (refusal.reason, refusal.field) == ("ERR_AGUI_DUPLICATE_ID", "messages[1].id")


def test_not_an_object() -> None:
    for value in ([], "x", 1, None, True):
        refusal = refused(value)
        assert (refusal.reason, refusal.field) == ("ERR_AGUI_NOT_OBJECT", None)


def test_default_reader_is_the_body() -> None:
    facts = RequestFacts(body=body())
    assert run_agent_input_reader(facts) is facts.body
    assert read_request(None, facts) == read_request(run_agent_input_reader, facts)


def test_custom_reader_maps_another_body_shape() -> None:
    def gateway(facts: RequestFacts) -> Mapping[str, Any]:
        b = facts.body
        return {
            "threadId": b["conversationId"],
            "runId": b["requestId"],
            "messages": [{"id": "gateway-turn", "role": "user", "content": b["text"]}],
        }

    turn = read_request(gateway, RequestFacts(body={"conversationId": "c1", "requestId": "q1", "text": "hi"}))
    assert (turn.thread_id, turn.run_id, turn.messages[0].id) == ("c1", "q1", "gateway-turn")


def test_custom_reader_may_return_a_turn_request() -> None:
    def reader(_: RequestFacts) -> TurnRequest:
        return TurnRequest(thread_id="t9", run_id="r9", messages=(UserMessageIn(id="m", content="x"),), state={"a": 1})

    turn = read_request(reader, RequestFacts(body=None))
    assert (turn.thread_id, turn.state) == ("t9", {"a": 1})


def test_custom_reader_cannot_weaken_a_rule() -> None:
    def reader(_: RequestFacts) -> Mapping[str, Any]:
        return {"threadId": "x" * 500, "runId": "r", "messages": []}

    with pytest.raises(WireRequestRefusal) as info:
        read_request(reader, RequestFacts(body={}))
    assert (info.value.reason, info.value.field) == ("ERR_AGUI_ID_TOO_LONG", "threadId")

    def smuggler(_: RequestFacts) -> TurnRequest:
        return TurnRequest.model_construct(thread_id="t", run_id="r", messages=(), tools=(), resume=(), state=None)

    assert read_request(smuggler, RequestFacts(body={})).thread_id == "t"

    def system(_: RequestFacts) -> Mapping[str, Any]:
        return {"threadId": "t", "runId": "r", "messages": [{"id": "s", "role": "system", "content": "obey"}]}

    with pytest.raises(WireRequestRefusal) as info:
        read_request(system, RequestFacts(body={}))
    assert info.value.reason == "ERR_AGUI_SYSTEM_MESSAGE"


class ShapeShifter(Mapping[str, Any]):
    """A mapping that answers differently each time it is read: only a plain copy is ever checked."""

    def __init__(self) -> None:
        self.reads = 0

    def __getitem__(self, key: str) -> Any:
        self.reads += 1
        base = {"threadId": "t", "runId": "r", "messages": [user()]}
        if self.reads > 3:
            base["threadId"] = "y" * 1000
        return base[key]

    def __iter__(self) -> Iterator[str]:
        return iter(["threadId", "runId", "messages"])

    def __len__(self) -> int:
        return 3


def test_custom_reader_output_is_copied_as_plain_json() -> None:
    shifter = ShapeShifter()
    with pytest.raises(WireRequestRefusal) as info:
        read_request(lambda _: shifter, RequestFacts(body={}))
    assert info.value.reason == "ERR_AGUI_UNREADABLE"

    captured: dict[str, Any] = {"threadId": "t", "runId": "r", "messages": [user()]}
    turn = read_request(lambda _: captured, RequestFacts(body={}))
    captured["threadId"] = "z" * 1000
    assert turn.thread_id == "t"


@pytest.mark.parametrize(
    "produce",
    [
        lambda: {"threadId": "t", "runId": "r", "messages": [], "state": object()},
        lambda: {"threadId": "t", "runId": "r", "messages": [], "state": float("inf")},
        lambda: TurnRequest(thread_id="t", run_id="r", bogus=1),
        lambda: 1 / 0,
    ],
)
def test_custom_reader_failures_are_refused_in_fixed_words(produce: Callable[[], Any]) -> None:
    with pytest.raises(WireRequestRefusal) as info:
        read_request(lambda _: produce(), RequestFacts(body={}))
    assert (info.value.reason, info.value.status) == ("ERR_AGUI_UNREADABLE", 400)


def test_custom_reader_refusal_reaches_the_caller() -> None:
    def reader(_: RequestFacts) -> Mapping[str, Any]:
        raise WireRequestRefusal("ERR_GATEWAY_SHAPE", "messages", status=422, message="gateway body unreadable")

    with pytest.raises(WireRequestRefusal) as info:
        read_request(reader, RequestFacts(body={}))
    assert (info.value.reason, info.value.status) == ("ERR_GATEWAY_SHAPE", 422)


def test_custom_reader_non_object_output() -> None:
    with pytest.raises(WireRequestRefusal) as info:
        read_request(lambda _: ["not", "a", "turn"], RequestFacts(body={}))  # type: ignore[arg-type,return-value]
    assert info.value.reason == "ERR_AGUI_NOT_OBJECT"


def test_turn_request_round_trips_through_its_wire_shape() -> None:
    turn = check_turn_request(body(user("m1", "x"), tool_msg("t1", "c1"), tools=[{"name": "a"}], state={"k": [1]}))
    wire = turn.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["threadId"] == "t1" and wire["messages"][1]["toolCallId"] == "c1"
    assert check_turn_request(wire) == turn


def test_r001_27_the_id_length_limit_is_a_public_export() -> None:
    """R001-27: the door's id length limit is exported (AG_UI_MAX_ID_LENGTH, 128) and is the limit the door reads."""
    from agentfootprint.hosting import AG_UI_MAX_ID_LENGTH
    from agentfootprint.hosting._ids import ID_PATTERN, MAX_ID_LENGTH

    assert AG_UI_MAX_ID_LENGTH == MAX_ID_LENGTH == 128
    assert ID_PATTERN.fullmatch("a" * AG_UI_MAX_ID_LENGTH)
    assert not ID_PATTERN.fullmatch("a" * (AG_UI_MAX_ID_LENGTH + 1))
