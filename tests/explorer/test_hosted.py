"""``ag_ui_app(..., explorer=True)``: the explorer at ``/explorer/`` on the AG-UI host lists the signed-in caller's
own threads' runs (never another caller's), proves on the host's agent factory, and refuses anonymous callers."""

from __future__ import annotations

import json
from typing import Any

from starlette.testclient import TestClient

from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.hosting import ag_ui_app


def by_header(request: Any) -> dict[str, str] | None:
    name = request.headers.get("x-user")
    return {"tenant": "acme", "principal": name} if name else None


def turn(client: TestClient, thread: str, user: str, text: str) -> None:
    payload = {
        "threadId": thread,
        "runId": f"run-{thread}",
        "messages": [{"id": f"m-{thread}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    res = client.post("/agui", json=payload, headers={"x-user": user, "accept": "text/event-stream"})
    assert res.status_code == 200
    assert '"RUN_FINISHED"' in res.text


def test_each_caller_sees_only_their_own_threads_runs() -> None:
    app = ag_ui_app(refunds_agent, bind_thread=by_header, explorer=True)
    with TestClient(app) as client:
        turn(client, "t-alice", "alice", QUESTION)
        turn(client, "t-bob-1", "bob", "Should order B-2002 be refunded?")
        turn(client, "t-bob-2", "bob", QUESTION)
        alice = client.get("/explorer/api/runs", headers={"x-user": "alice"}).json()
        bob = client.get("/explorer/api/runs", headers={"x-user": "bob"}).json()
        assert alice["total"] == 1 and alice["runs"][0]["question"] == QUESTION
        assert bob["total"] == 2
        assert {r["run_id"] for r in alice["runs"]}.isdisjoint({r["run_id"] for r in bob["runs"]})
        alice_run = alice["runs"][0]["run_id"]
        refused = client.get(f"/explorer/api/runs/{alice_run}", headers={"x-user": "bob"})
        assert (refused.status_code, refused.json()["error"]["code"]) == (404, "ERR_EXPLORER_NO_RUN")
        anonymous = client.get("/explorer/api/runs")
        assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "ERR_EXPLORER_SIGN_IN_REQUIRED")
        page = client.get("/explorer/", headers={"x-user": "alice"})
        assert '<script src="/explorer/static/app.js" defer></script>' in page.text
        assert client.get("/explorer/static/app.js").status_code == 200

        job = client.post(
            "/explorer/api/localize",
            json={"run_id": alice_run, "keyword": "APPROVED", "mode": "single"},
            headers={"x-user": "alice"},
        ).json()
        assert client.get(f"/explorer/api/localize/{job['job_id']}", headers={"x-user": "bob"}).status_code == 404
        last: dict[str, Any] = {}
        with client.stream(
            "GET", f"/explorer/api/localize/{job['job_id']}/events", headers={"x-user": "alice"}
        ) as events:
            for line in events.iter_lines():
                if line.startswith('data: {"job_id"'):
                    last = json.loads(line[6:])
        confirmed = [s["id"] for s in last["report"]["suspects"] if s["verdict"] == "confirmed"]
        assert confirmed == ["vip-override-fact"]


def test_the_explorer_is_off_unless_asked() -> None:
    with TestClient(ag_ui_app(refunds_agent, bind_thread=by_header)) as client:
        assert client.get("/explorer/api/runs", headers={"x-user": "alice"}).status_code == 404


def test_a_refused_recording_is_left_out_not_fatal(monkeypatch: Any) -> None:
    import agentfootprint.hosting.app as host_app
    from agentfootprint.flow import CheckpointSealError

    opened = host_app.open_recording

    def refuse_one(thread_id: str, owner: Any, data: Any, keys: Any) -> Any:
        if thread_id == "t-edited":
            raise CheckpointSealError("ag_ui stored recording", "missing or malformed")
        return opened(thread_id, owner, data, keys)

    monkeypatch.setattr(host_app, "open_recording", refuse_one)
    with TestClient(ag_ui_app(refunds_agent, bind_thread=by_header, explorer=True)) as client:
        turn(client, "t-kept", "alice", QUESTION)
        turn(client, "t-edited", "alice", "Should order B-2002 be refunded?")
        listed = client.get("/explorer/api/runs", headers={"x-user": "alice"})
    assert listed.status_code == 200
    assert [r["question"] for r in listed.json()["runs"]] == [QUESTION]
