"""Per-caller admission (turns per minute/hour, turns at once) as 429 + Retry-After; body and message caps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest
from agui_http import body, client, factory, text_of, turn, user
from agui_live import live_server
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.hosting import AdmissionLimits, HostingConfigError, WireRequestRefusal, ag_ui_app, memory_sessions
from agentfootprint.hosting.limits import Admission
from agentfootprint.providers import mock


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_turns_per_minute_slide_and_retry_after_says_when_a_slot_frees() -> None:
    clock = Clock()
    admission = Admission(AdmissionLimits(turns_per_minute=3), clock)
    for step in (0, 10, 20):
        clock.now = 1000 + step
        admission.admit("alice").done()
    clock.now = 1030
    with pytest.raises(WireRequestRefusal) as limited:
        admission.admit("alice")
    refusal = limited.value
    assert (refusal.status, refusal.code, refusal.field) == (429, "ERR_AGUI_RATE_LIMITED", None)
    assert refusal.headers == {"Retry-After": "30"}, "the first turn leaves the window at 1060"
    admission.admit("bob").done()  # callers are counted apart
    clock.now = 1060.5
    admission.admit("alice").done()
    with pytest.raises(WireRequestRefusal) as again:
        admission.admit("alice")
    assert again.value.headers == {"Retry-After": "10"}


def test_turns_per_hour_and_the_minute_limit_together() -> None:
    clock = Clock()
    admission = Admission(AdmissionLimits(turns_per_minute=2, turns_per_hour=3), clock)
    admission.admit("a").done()
    admission.admit("a").done()
    clock.now += 61
    admission.admit("a").done()
    clock.now += 61
    with pytest.raises(WireRequestRefusal) as hourly:
        admission.admit("a")
    assert hourly.value.headers == {"Retry-After": str(3600 - 122)}


def test_concurrent_turns_free_when_done_and_refunds_do_not_count() -> None:
    clock = Clock()
    admission = Admission(AdmissionLimits(concurrent_turns=2, turns_per_minute=3), clock)
    first, second = admission.admit("a"), admission.admit("a")
    with pytest.raises(WireRequestRefusal) as busy:
        admission.admit("a")
    assert (busy.value.reason, busy.value.headers) == ("ERR_AGUI_TOO_MANY_RUNNING", {"Retry-After": "1"})
    first.done()
    first.done()  # idempotent
    second.refund()
    third = admission.admit("a")
    third.refund()
    admission.admit("a").done()
    admission.admit("a").done()
    with pytest.raises(WireRequestRefusal) as rate:
        admission.admit("a")
    assert rate.value.reason == "ERR_AGUI_RATE_LIMITED", "three counted starts; the two refunded never counted"


def test_idle_callers_are_forgotten_past_the_cap_so_memory_stays_bounded() -> None:
    admission = Admission(AdmissionLimits(turns_per_minute=5, max_callers=100), Clock())
    running = admission.admit("keeps-running")
    for i in range(1000):
        admission.admit(f"caller-{i}").done()
    assert len(admission) == 100
    assert "keeps-running" in admission._callers, "a caller with a running turn is never forgotten"
    running.done()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0, 30)), max_size=80), st.integers(1, 6))
def test_no_window_of_60_seconds_ever_admits_more_than_the_limit(steps: list[tuple[int, float]], limit: int) -> None:
    clock = Clock()
    admission = Admission(AdmissionLimits(turns_per_minute=limit), clock)
    admitted: dict[int, list[float]] = {}
    for who, wait in steps:
        clock.now += wait
        try:
            admission.admit(str(who)).done()
        except WireRequestRefusal as refusal:
            assert refusal.status == 429 and int(refusal.headers["Retry-After"]) >= 1
            continue
        admitted.setdefault(who, []).append(clock.now)
    for times in admitted.values():
        for at in times:
            assert sum(1 for t in times if at - 60 < t <= at) <= limit


def test_limits_are_checked_at_configuration() -> None:
    with pytest.raises(HostingConfigError):
        ag_ui_app(factory(mock("x")), limits={"turns_per_minute": 0})
    with pytest.raises(HostingConfigError):
        ag_ui_app(factory(mock("x")), limits={"per_day": 3})
    with pytest.raises(HostingConfigError):
        ag_ui_app(factory(mock("x")), max_message_bytes=0)


async def test_a_refused_request_does_not_use_up_the_callers_turns() -> None:
    app = ag_ui_app(factory(mock(replies=["one", "two"])), limits={"turns_per_minute": 2})
    async with client(app) as http:
        for _ in range(3):
            status, _ = await turn(http, body(user("u1"), {"id": "s", "role": "system", "content": "x"}))
            assert status == 400
        status, events = await turn(http, body(user("u1")))
        assert status == 200 and text_of(events) == "one"
        status, _ = await turn(http, body(user("u1"), thread="t2"))
        assert status == 200
        limited = await http.post("/agui", json=body(user("u1"), thread="t3"))
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "ERR_AGUI_RATE_LIMITED"
    assert int(limited.headers["retry-after"]) in range(1, 61)


async def test_the_message_cap_refuses_a_large_message_by_field() -> None:
    provider = mock(replies=["ok"])
    app = ag_ui_app(factory(provider), max_message_bytes=1000)
    async with client(app) as http:
        big = await http.post("/agui", json=body(user("u1", "é" * 501)))
        parts = [{"type": "text", "text": "a" * 600}, {"type": "text", "text": "b" * 600}]
        big_parts = await http.post("/agui", json=body(user("u1", parts)))
        status, events = await turn(http, body(user("u1", "a" * 1000)))
    for response in (big, big_parts):
        assert response.status_code == 413 and response.json()["error"] == {
            "code": "ERR_AGUI_MESSAGE_TOO_LARGE",
            "field": "messages[0].content",
            "message": "a message is larger than this server accepts",
            "reason": "ERR_AGUI_MESSAGE_TOO_LARGE",
        }
    assert status == 200 and text_of(events) == "ok" and provider.calls == 1


async def test_limits_and_caps_over_a_live_server(tmp_path: Path) -> None:
    limits = json.dumps({"turns_per_minute": 2, "concurrent_turns": 1})
    with live_server(tmp_path / "threads.db", limits=limits, max_message_bytes="64", max_body_bytes="4096") as base:
        agui = f"{base}/agui"
        async with httpx2.AsyncClient(timeout=30) as http:
            alice = {"x-test-user": "alice"}
            started = asyncio.Event()

            async def hang() -> None:
                payload = {
                    "threadId": "h",
                    "runId": "r1",
                    "messages": [{"id": "u1", "role": "user", "content": "hang"}],
                }
                async with http.stream("POST", agui, json=payload, headers=alice) as response:
                    async for text in response.aiter_text():
                        if "RUN_STARTED" in text:
                            started.set()

            task = asyncio.create_task(hang())
            await asyncio.wait_for(started.wait(), 30)
            two = await http.post(agui, json=body(user("u1"), thread="t2"), headers=alice)
            assert two.status_code == 429 and two.json()["error"]["reason"] == "ERR_AGUI_TOO_MANY_RUNNING"
            assert two.headers["retry-after"] == "1"
            bob = await http.post(agui, json=body(user("u1"), thread="t3"), headers={"x-test-user": "bob"})
            assert bob.status_code == 200, "another caller is not held back"
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            for _ in range(100):  # the hung turn's slot frees once the server sees the disconnect
                response = await http.post(agui, json=body(user("u1"), thread="t4"), headers=alice)
                if response.status_code != 429 or response.json()["error"]["reason"] != "ERR_AGUI_TOO_MANY_RUNNING":
                    break
                await asyncio.sleep(0.1)
            assert response.status_code == 200
            rate = await http.post(agui, json=body(user("u1"), thread="t5"), headers=alice)
            assert rate.status_code == 429 and rate.json()["error"]["reason"] == "ERR_AGUI_RATE_LIMITED"
            assert 1 <= int(rate.headers["retry-after"]) <= 60

            carol = {"x-test-user": "carol"}
            long_message = await http.post(agui, json=body(user("u1", "x" * 65), thread="c1"), headers=carol)
            assert long_message.status_code == 413 and long_message.json()["error"]["field"] == "messages[0].content"
            huge = await http.post(agui, json=body(user("u1", "x" * 5000), thread="c2"), headers=carol)
            assert huge.status_code == 413 and huge.json()["error"]["reason"] == "ERR_AGUI_BODY_TOO_LARGE"
            assert "x" * 65 not in long_message.text + huge.text


async def test_a_client_gone_before_the_stream_starts_frees_its_slot_and_thread() -> None:
    """The response could not even start (the client left): the turn's admission slot and thread lease are freed."""
    store = memory_sessions()
    app = ag_ui_app(factory(mock(replies=["one", "two"])), sessions=store, limits={"concurrent_turns": 1})
    raw = json.dumps(body(user("u1"))).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/agui",
        "raw_path": b"/agui",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 80),
    }
    messages = [{"type": "http.request", "body": raw, "more_body": False}]

    async def receive() -> dict[str, object]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        raise OSError("the client is gone")

    with pytest.raises(OSError):
        await app(scope, receive, send)
    async with client(app) as http:
        status, events = await turn(http, body(user("u1")))
    assert status == 200 and text_of(events) == "one", "neither 409 busy nor 429: both were freed"
