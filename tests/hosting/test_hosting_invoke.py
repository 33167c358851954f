"""``POST {path}/invoke``: the same door as the SSE endpoint, answering the final RunResult as JSON (202 + poll
when the turn pauses), for callers that are not browsers."""

from __future__ import annotations

import json
import uuid

import httpx2
from agui_http import asking, body, client, factory, text_of, turn, user

from agentfootprint import ask_human
from agentfootprint.hosting import ag_ui_app
from agentfootprint.providers import ProviderError, mock

SECRET = "sk-live-00ff00ff"


async def test_a_turn_answers_its_run_result_as_json() -> None:
    provider = mock(replies=["Paris is the capital.", "About 2.1 million.", "That is all."])
    async with client(ag_ui_app(factory(provider))) as http:
        first = await http.post("/agui/invoke", json=body(user("u1", "Capital of France?")))
        second = await http.post("/agui/invoke", json=body(user("u1", "x"), user("u2", "Population?"), run="r2"))
        status, events = await turn(http, body(user("u1"), user("u2"), user("u3", "And?"), run="r3"))
    assert first.status_code == 200 and first.headers["content-type"] == "application/json"
    result = first.json()
    assert result["status"] == "completed" and result["answer"] == "Paris is the capital."
    assert result["thread_id"] == "t1" and result["outcome"] == {"type": "success"}
    assert "checkpoint" not in result and result["usage"]["input_tokens"] > 0
    assert second.json()["answer"] == "About 2.1 million.", "the thread's conversation carried over"
    roles = [m.role for m in provider.requests[1].messages]
    assert roles == ["user", "assistant", "user"]
    assert status == 200 and text_of(events) == "That is all.", "the SSE door shares the thread"


async def test_a_pause_is_202_with_where_to_poll_and_the_answer_resumes_it() -> None:
    app = ag_ui_app(factory(asking("Which city?", "Booked Paris."), ask_human))
    async with client(app) as http:
        paused = await http.post("/agui/invoke", json=body(user("u1", "Book a trip")))
        assert paused.status_code == 202 and paused.headers["location"] == "/agui/threads/t1"
        result = paused.json()
        assert result["status"] == "paused" and result["question"] == "Which city?" and "checkpoint" not in result
        assert result["poll"] == "/agui/threads/t1"
        (interrupt,) = result["outcome"]["interrupts"]
        polled = (await http.get(result["poll"])).json()
        assert polled["paused"] is True and polled["outcome"]["interrupts"] == [interrupt]
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": "Paris"}]
        done = await http.post("/agui/invoke", json=body(user("u1", "Book a trip"), run="r2", resume=resume))
        again = await http.post("/agui/invoke", json=body(user("u1", "Book a trip"), run="r3", resume=resume))
        polled = (await http.get("/agui/threads/t1")).json()
    assert done.status_code == 200 and done.json()["answer"] == "Booked Paris."
    assert again.status_code == 409 and again.json()["error"]["reason"] == "ERR_AGUI_RESUME_NOT_HELD"
    assert polled["paused"] is False and polled["outcome"] is None


async def test_invoke_refuses_like_the_stream_and_never_echoes() -> None:
    app = ag_ui_app(factory(mock("x")))
    async with client(app) as http:
        long_id = await http.post("/agui/invoke", json=body(user("u1"), thread="t" * 129))
        system = await http.post(
            "/agui/invoke", json=body({"id": "s1", "role": "system", "content": SECRET}, user("u1"))
        )
        not_json = await http.post("/agui/invoke", content=SECRET.encode())
    assert long_id.status_code == 400 and long_id.json()["error"]["code"] == "ERR_INVALID_RUN_INPUT"
    assert system.status_code == 400 and system.json()["error"]["field"] == "messages[0].role"
    assert not_json.status_code == 400 and not_json.json()["error"]["reason"] == "ERR_AGUI_NOT_JSON"
    for response in (long_id, system, not_json):
        assert SECRET not in response.text and "t" * 129 not in response.text


async def test_a_failed_run_is_a_json_error_in_fixed_words_and_the_thread_is_freed() -> None:
    def respond(request: object) -> str:
        raise ProviderError(f"upstream said {SECRET}", provider="mock")

    provider = mock(respond=respond)
    async with client(ag_ui_app(factory(provider))) as http:
        failed = await http.post("/agui/invoke", json=body(user("u1")))
        again = await http.post("/agui/invoke", json=body(user("u1"), user("u2"), run="r2"))
    assert failed.status_code == 500 and SECRET not in failed.text
    assert failed.json()["error"]["message"] == "the model provider failed"
    assert again.status_code == 500, "not 409: the failed turn freed the thread"


async def test_invoke_over_a_live_server(live_agui: str) -> None:
    thread = f"inv-{uuid.uuid4().hex[:8]}"
    async with httpx2.AsyncClient(timeout=30) as http:
        payload = {"threadId": thread, "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "hi"}]}
        done = await http.post(f"{live_agui}/agui/invoke", json=payload, headers={"x-test-user": "alice"})
        ask = {**payload, "threadId": thread + "-p", "messages": [{"id": "u1", "role": "user", "content": "ask me"}]}
        paused = await http.post(f"{live_agui}/agui/invoke", json=ask, headers={"x-test-user": "alice"})
        poll = await http.get(f"{live_agui}{paused.headers['location']}", headers={"x-test-user": "alice"})
        stranger = await http.get(f"{live_agui}{paused.headers['location']}", headers={"x-test-user": "bob"})
    assert done.status_code == 200 and done.json()["answer"] == "Hello from uvicorn, streamed word by word."
    assert paused.status_code == 202 and json.loads(paused.text)["question"] == "Tea or coffee?"
    assert poll.status_code == 200 and poll.json()["paused"] is True
    assert stranger.status_code == 404
