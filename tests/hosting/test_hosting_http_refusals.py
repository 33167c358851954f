"""Every refusal class of seed 001, over HTTP: a 4xx JSON error naming the field, never echoing the value."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from agui_http import body, client, factory, turn, types, user
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentfootprint.hosting import REFUSALS, FrontendTool, ValidationScope, ag_ui_app
from agentfootprint.hosting.refusal import RUN_INPUT_REASONS
from agentfootprint.providers import mock

SECRET = "SENTINEL-VALUE-7f3a"
PICK = FrontendTool(name="pick_color", description="Pick a color.")


def _refuse_state(value: Any, scope: ValidationScope) -> Any:
    raise ValueError(f"bad {value!r}")


def nested(depth: int) -> Any:
    value: Any = SECRET
    for _ in range(depth):
        value = [value]
    return value


def app_with(**options: Any) -> Any:
    return ag_ui_app(factory(mock(respond=lambda r: "fine")), max_body_bytes=4096, **options)


CASES: list[tuple[str, Any, dict[str, Any], int, str, str | None]] = [
    ("not json", b"{not json " + SECRET.encode(), {}, 400, "ERR_AGUI_NOT_JSON", None),
    ("not utf-8", b'{"x": "\xff\xfe"}', {}, 400, "ERR_AGUI_NOT_JSON", None),
    ("nan", b'{"threadId": NaN}', {}, 400, "ERR_AGUI_NOT_JSON", None),
    ("not an object", json.dumps([SECRET]).encode(), {}, 400, "ERR_AGUI_NOT_OBJECT", None),
    (
        "duplicate key",
        b'{"threadId": "a", "threadId": "' + SECRET.encode() + b'"}',
        {},
        400,
        "ERR_AGUI_DUPLICATE_KEY",
        None,
    ),
    ("too deep", json.dumps(body(user("u1"), state=nested(70))).encode(), {}, 400, "ERR_AGUI_TOO_DEEP", "state"),
    ("declared too large", b"{}", {"content-length": "999999"}, 413, "ERR_AGUI_BODY_TOO_LARGE", None),
    (
        "streamed too large",
        json.dumps(body(user("u1", SECRET * 400))).encode(),
        {},
        413,
        "ERR_AGUI_BODY_TOO_LARGE",
        None,
    ),
    ("bad content-length", b"{}", {"content-length": "-1"}, 400, "ERR_AGUI_BAD_CONTENT_LENGTH", None),
    ("missing threadId", {"runId": "r1", "messages": [user("u1")]}, {}, 400, "ERR_AGUI_FIELD_MISSING", "threadId"),
    ("threadId type", {"threadId": 7, "runId": "r1", "messages": []}, {}, 400, "ERR_AGUI_FIELD_TYPE", "threadId"),
    ("id too long", body(user("u1"), thread="t" * 129), {}, 400, "ERR_AGUI_ID_TOO_LONG", "threadId"),
    ("id format", body(user("u1"), run=SECRET + "/../x"), {}, 400, "ERR_AGUI_ID_FORMAT", "runId"),
    ("missing messages", {"threadId": "t1", "runId": "r1"}, {}, 400, "ERR_AGUI_FIELD_MISSING", "messages"),
    (
        "system message",
        body({"id": "s1", "role": "system", "content": SECRET}, user("u1")),
        {},
        400,
        "ERR_AGUI_SYSTEM_MESSAGE",
        "messages[0].role",
    ),
    (
        "developer message",
        body(user("u1"), {"id": "d1", "role": "developer", "content": SECRET}),
        {},
        400,
        "ERR_AGUI_SYSTEM_MESSAGE",
        "messages[1].role",
    ),
    (
        "unknown role",
        body({"id": "x1", "role": SECRET, "content": "x"}),
        {},
        400,
        "ERR_AGUI_MESSAGE_ROLE",
        "messages[0].role",
    ),
    ("duplicate message id", body(user("u1"), user("u1", SECRET)), {}, 400, "ERR_AGUI_DUPLICATE_ID", "messages[1].id"),
    ("empty messages", body(), {}, 400, "ERR_AGUI_NO_USER_MESSAGE", "messages"),
    (
        "newest not user",
        body(user("u1"), {"id": "a1", "role": "assistant", "content": SECRET}),
        {},
        400,
        "ERR_AGUI_NO_USER_MESSAGE",
        "messages[1].role",
    ),
    ("empty message", body(user("u1", "   ")), {}, 400, "ERR_AGUI_EMPTY_MESSAGE", "messages[0].content"),
    (
        "no text",
        body(user("u1", [{"type": "image", "source": {"type": "url", "value": "https://x.test/a.png"}}])),
        {},
        400,
        "ERR_AGUI_TEXT_REQUIRED",
        "messages[0].content",
    ),
    (
        "bad content part",
        body(user("u1", [{"type": "text", "text": 5, "x": SECRET}])),
        {},
        400,
        "ERR_AGUI_CONTENT",
        "messages[0].content[0].text",
    ),
    (
        "lone surrogate",
        b'{"threadId": "t1", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "\\ud800"}]}',
        {},
        400,
        "ERR_AGUI_TEXT_INVALID",
        "messages",
    ),
    (
        "tool result not held",
        body(user("u1"), {"id": "t1", "role": "tool", "toolCallId": "c1", "content": SECRET}),
        {},
        409,
        "ERR_AGUI_TOOL_RESULT_NOT_HELD",
        "messages[1].toolCallId",
    ),
    (
        "resume not held",
        body(user("u1"), resume=[{"interruptId": "i1", "status": "resolved", "payload": SECRET}]),
        {},
        409,
        "ERR_AGUI_RESUME_NOT_HELD",
        "resume[0].interruptId",
    ),
    (
        "resume status",
        body(user("u1"), resume=[{"interruptId": "i1", "status": SECRET}]),
        {},
        400,
        "ERR_AGUI_FIELD_VALUE",
        "resume[0].status",
    ),
    ("tool name", body(user("u1"), tools=[{"name": "bad name!"}]), {}, 400, "ERR_AGUI_TOOL_NAME", "tools[0].name"),
    (
        "duplicate tool",
        body(user("u1"), tools=[{"name": "pick_color"}, {"name": "pick_color"}]),
        {},
        400,
        "ERR_AGUI_DUPLICATE_TOOL",
        "tools[1].name",
    ),
    ("state not accepted", body(user("u1"), state={"admin": SECRET}), {}, 400, "ERR_AGUI_STATE_NOT_ACCEPTED", "state"),
    (
        "context not accepted",
        body(user("u1"), context=[{"description": "d", "value": SECRET}]),
        {},
        400,
        "ERR_AGUI_CONTEXT_NOT_ACCEPTED",
        "context",
    ),
]


@pytest.mark.parametrize(("name", "payload", "headers", "status", "code", "field"), CASES, ids=[c[0] for c in CASES])
async def test_each_refusal_is_json_naming_the_field_never_the_value(
    name: str, payload: Any, headers: dict[str, str], status: int, code: str, field: str | None
) -> None:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    async with client(app_with(frontend_tools=[PICK])) as http:
        response = await http.post("/agui", content=raw, headers={"content-type": "application/json", **headers})
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"code", "field", "message", "reason"}
    assert error["reason"] == code and error["field"] == field
    assert error["code"] == ("ERR_INVALID_RUN_INPUT" if code in RUN_INPUT_REASONS else code)
    assert error["message"] == REFUSALS[code][1]
    assert SECRET not in response.text


async def test_a_state_validator_refusal_is_422_without_the_value() -> None:
    async with client(app_with(accept_state=_refuse_state)) as http:
        status, refused = await turn(http, body(user("u1"), state={"role": SECRET}))
    assert (
        status == 422 and refused["error"]["reason"] == "ERR_AGUI_STATE_INVALID" and SECRET not in json.dumps(refused)
    )


async def test_empty_state_and_context_count_as_not_carried() -> None:
    async with client(app_with()) as http:
        status, events = await turn(http, body(user("u1"), state={}, context=[]))
        status2, events2 = await turn(http, body(user("v1"), thread="t2", state=None))
    assert status == 200 and status2 == 200 and types(events)[-1] == types(events2)[-1] == "RUN_FINISHED"
    assert "STATE_SNAPSHOT" not in types(events)


def hostile_app() -> Any:
    """A fresh app for each test and each hypothesis example: no session one leaves behind is seen by another, so
    the tests pass in any order and any number of times in one process."""
    return ag_ui_app(factory(mock(respond=lambda r: "fine")), frontend_tools=[PICK])


json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
any_json = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=25,
)
keys = st.sampled_from(["threadId", "runId", "messages", "tools", "context", "state", "resume", "forwardedProps"])
message = st.fixed_dictionaries(
    {"id": st.sampled_from(["m1", "m1", "x" * 130, "", "a b"]) | st.text(max_size=5), "role": st.text(max_size=9)},
    optional={"content": any_json, "toolCallId": any_json, "toolCalls": any_json},
)
hostile_body = (
    st.dictionaries(keys, any_json, max_size=6)
    | st.fixed_dictionaries(
        {"threadId": st.sampled_from(["t1", "t2"]), "runId": st.sampled_from(["r1", "r2"])},
        optional={
            "messages": st.lists(message | any_json, max_size=4),
            "resume": any_json,
            "tools": any_json,
            "state": any_json,
            "context": any_json,
        },
    )
    | any_json
)


async def test_shape_and_id_refusals_carry_err_invalid_run_input_R001_07() -> None:
    """R001-07: every shape/id refusal of the request door is 400 with code ERR_INVALID_RUN_INPUT (detail: reason)."""
    shape = [case for case in CASES if case[4] in RUN_INPUT_REASONS]
    assert {case[4] for case in shape} >= {
        "ERR_AGUI_ID_TOO_LONG",
        "ERR_AGUI_ID_FORMAT",
        "ERR_AGUI_FIELD_MISSING",
        "ERR_AGUI_FIELD_TYPE",
        "ERR_AGUI_SYSTEM_MESSAGE",
        "ERR_AGUI_NOT_JSON",
    }
    async with client(app_with(frontend_tools=[PICK])) as http:
        for name, payload, headers, _status, reason, _field in shape:
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            response = await http.post("/agui", content=raw, headers={"content-type": "application/json", **headers})
            error = response.json()["error"]
            assert (response.status_code, error["code"], error["reason"]) == (400, "ERR_INVALID_RUN_INPUT", reason), (
                name
            )
        for where in ("threadId", "runId", "parentRunId"):
            response = await http.post("/agui", json={**body(user("u1")), where: "x" * 129})
            assert (response.status_code, response.json()["error"]["code"]) == (400, "ERR_INVALID_RUN_INPUT")
            assert response.json()["error"]["field"] == where
        busy_free = await http.post("/agui", json=body(user("u1"), user("u1")))
    assert busy_free.json()["error"]["code"] == "ERR_INVALID_RUN_INPUT", "a duplicate message id is a shape refusal"


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=hostile_body | st.binary(max_size=64))
async def test_hostile_bodies_get_a_4xx_code_or_a_stream_never_a_5xx(payload: Any) -> None:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    async with client(hostile_app()) as http:
        response = await http.post("/agui", content=raw, headers={"content-type": "application/json"})
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        assert response.status_code == 200
        return
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]["reason"] in REFUSALS


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=hostile_body | st.binary(max_size=64), thread=st.text(max_size=140) | st.sampled_from(["t1", "x" * 129]))
@example(payload={}, thread="requir")  # a word of the refusal's own text is not an echo
@example(payload={}, thread='"reason"')  # the body's own wrapper neither
async def test_hostile_input_to_invoke_and_the_thread_endpoints_never_a_5xx_or_an_echo(
    payload: Any, thread: str
) -> None:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    async with client(hostile_app()) as http:
        invoked = await http.post("/agui/invoke", content=raw, headers={"content-type": "application/json"})
        path = "/agui/threads/" + quote(thread, safe="")
        reads = [
            await http.get(path),
            await http.delete(path),
            await http.get("/agui/threads", params={"limit": thread}),
        ]
    assert invoked.status_code in (200, 202) or 400 <= invoked.status_code < 500, invoked.text
    if invoked.status_code >= 400:
        assert invoked.json()["error"]["reason"] in REFUSALS
    for response in reads:
        assert response.status_code < 500, response.text
    for response in [invoked, *reads]:
        for value in (thread, raw.decode("utf-8", "replace")):
            if len(value) >= 6 and value not in ("hello", "fine"):
                assert value not in _beyond_catalog(response) or response.status_code in (200, 202)


def _beyond_catalog(response: Any) -> str:
    """What a refusal's body says beyond its fixed parts (field names, reason code, catalog message): a value that is
    a word of "a required field is missing" or of the body's own field names is no echo; anywhere else it is one."""
    try:
        body = response.json()
        reason = body["error"]["reason"]
    except (ValueError, KeyError, TypeError):
        return str(response.text)
    fixed = {reason, REFUSALS[reason][1]} if reason in REFUSALS else {reason}
    said = [v for v in body["error"].values() if v not in fixed]
    return json.dumps([said, [v for k, v in body.items() if k != "error"]])


async def test_the_server_still_serves_a_good_request_after_the_hostile_ones() -> None:
    async with client(hostile_app()) as http:
        for name, payload, headers, *_ in CASES:
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            response = await http.post("/agui", content=raw, headers={"content-type": "application/json", **headers})
            assert response.status_code < 500, name
            for thread in ("t1", "x" * 129, SECRET + "/../x"):
                path = "/agui/threads/" + quote(thread, safe="")
                assert all(r.status_code < 500 for r in (await http.get(path), await http.delete(path))), name
        status, events = await turn(http, body(user("good-1", "hello"), thread="after-hostility"))
    assert status == 200 and types(events)[-1] == "RUN_FINISHED"
