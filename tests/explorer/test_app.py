"""The JSON API: listing shape and filters, a run, its backtrack and sources, compare, localization started,
streamed over SSE and cancelled; refusals by code; the page is local-first; a redacted secret never leaves."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from agentfootprint._flagship import refunds_agent
from agentfootprint.explain import Recording
from agentfootprint.explorer import explorer_app
from agentfootprint.flow import render_narrative
from agentfootprint.providers import BaseProvider, LLMRequest, LLMResponse
from tests.explorer import _runs


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, runs: dict[str, Recording]) -> Path:
    return _runs.write_dir(tmp_path_factory.mktemp("recs"), runs)


@pytest.fixture
def client(folder: Path) -> Iterator[TestClient]:
    with TestClient(explorer_app(folder, agent_factory=refunds_agent)) as c:
        yield c


def events(client: TestClient, job_id: str) -> list[dict[str, Any]]:
    """Every progress event of a job's SSE stream, to its end."""
    seen: list[dict[str, Any]] = []
    kind = ""
    with client.stream("GET", f"/api/localize/{job_id}/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "progress":
                seen.append(json.loads(line[6:]))
    return seen


def test_runs_listing_shape(client: TestClient, runs: dict[str, Recording]) -> None:
    body = client.get("/api/runs").json()
    assert set(body) == {"runs", "total", "offset", "limit", "next_offset", "agents"}
    assert body["total"] == 4
    row = next(r for r in body["runs"] if r["run_id"] == runs["wrong"].snapshot.run_id)
    assert set(row) == {"run_id", "agent", "created_at", "question", "answer", "paused", "failed", "bytes"}
    assert row["question"] == runs["wrong"].snapshot.state["user_message"]
    assert row["answer"] == runs["wrong"].snapshot.state["answer"]
    assert client.get("/api/runs", params={"q": "DECLINED"}).json()["total"] == 1
    assert client.get("/api/runs", params={"paused": "true"}).json()["runs"][0]["agent"] == "helpdesk"
    assert client.get("/api/runs", params={"agent": "vault"}).json()["total"] == 1
    assert client.get("/api/runs", params={"since": "2000-01-01", "until": "2000-01-02"}).json()["total"] == 0
    assert client.get("/api/runs", params={"limit": 2}).json()["next_offset"] == 2


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"paused": "maybe"}, "paused"),
        ({"since": "yesterday"}, "since"),
        ({"limit": "0"}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"offset": "-3"}, "offset"),
    ],
)
def test_bad_filters_are_refused_by_code(client: TestClient, params: dict[str, str], field: str) -> None:
    res = client.get("/api/runs", params=params)
    assert res.status_code == 400
    assert res.json()["error"]["code"] == "ERR_EXPLORER_QUERY"
    assert field in res.json()["error"]["message"]
    assert next(iter(params.values())) not in res.json()["error"]["message"]


def test_run_backtrack_source_and_compare(client: TestClient, runs: dict[str, Recording]) -> None:
    wrong, fixed = runs["wrong"].snapshot.run_id, runs["fixed"].snapshot.run_id
    run = client.get(f"/api/runs/{wrong}").json()
    assert (run["run_id"], run["can_prove"], run["trigger"]) == (wrong, True, "call-llm#12")
    lines = len(render_narrative(runs["wrong"].snapshot))
    assert len(run["narrative"]) == lines
    assert len(client.get(f"/api/runs/{wrong}/narrative").json()["narrative"]) == lines
    light = client.get(f"/api/runs/{wrong}", params={"sources": "false", "narrative": "false"}).json()
    assert (light["sources"], light["narrative"], light["question"]) == (None, None, run["question"])
    bt = client.get(f"/api/runs/{wrong}/backtrack", params={"at": "call-llm#5"}).json()
    assert bt["trigger"] == "call-llm#5"
    src = client.get(f"/api/runs/{wrong}/sources/vip-override-fact").json()
    assert src["born"]["detail"] == "define_fact('vip-override-fact')"
    d = client.get("/api/diff", params={"a": wrong, "b": fixed}).json()
    assert d["sources_removed"] == ["vip-override-fact"]
    assert client.get(f"/api/runs/{wrong}/sources/nope").json()["error"]["code"] == "ERR_EXPLORER_NO_SOURCE"
    assert client.get("/api/diff", params={"a": wrong}).status_code == 400
    missing = client.get("/api/runs/does-not-exist")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "ERR_EXPLORER_NO_RUN")
    assert client.get("/api/nothing-here").status_code == 404


def test_localize_confirms_the_planted_culprit_over_sse(client: TestClient, runs: dict[str, Recording]) -> None:
    wrong = runs["wrong"].snapshot.run_id
    started = client.post(
        "/api/localize", json={"run_id": wrong, "mode": "single", "samples": 3, "keyword": "APPROVED"}
    )
    assert started.status_code == 202
    job = started.json()
    assert (job["state"], job["reruns"]) == ("running", 0)
    stream = events(client, job["job_id"])
    last = stream[-1]
    assert last["state"] == "done"
    report = last["report"]
    assert [s["id"] for s in report["suspects"] if s["verdict"] == "confirmed"] == ["vip-override-fact"]
    confirmed = next(s for s in report["suspects"] if s["id"] == "vip-override-fact")
    assert confirmed["p_value"] is not None and confirmed["p_value"] <= 0.05
    assert [c["ids"] for c in report["culprit_sets"] if c["verdict"] == "confirmed"] == [["vip-override-fact"]]
    assert last["reruns"] == report["reruns"]
    assert last["best"][0] == {
        "ids": ["vip-override-fact"],
        "samples": last["best"][0]["samples"],
        "flips": last["best"][0]["samples"],
    }
    arms = {tuple(a["ids"]) for a in last["arms"]}
    assert {(), ("vip-override-fact",), ("style-fact",), ("lookup_order",)} <= arms
    assert client.get(f"/api/localize/{job['job_id']}").json()["state"] == "done"


class Stalled(BaseProvider):
    """A model that never answers (a rerun in flight until cancelled)."""

    name = "stalled"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_cancel_a_running_localization(folder: Path, runs: dict[str, Recording]) -> None:
    with TestClient(explorer_app(folder, agent_factory=lambda: refunds_agent(Stalled()))) as client:
        job = client.post("/api/localize", json={"run_id": runs["wrong"].snapshot.run_id}).json()
        cancelled = client.post(f"/api/localize/{job['job_id']}/cancel")
        assert cancelled.status_code == 200
        stream = events(client, job["job_id"])
        assert stream[-1]["state"] == "cancelled"
        assert stream[-1]["report"] is None
        again = client.get(f"/api/localize/{job['job_id']}").json()
        assert again["state"] == "cancelled"


def test_localize_refusals(folder: Path, client: TestClient, runs: dict[str, Recording]) -> None:
    wrong = runs["wrong"].snapshot.run_id
    with TestClient(explorer_app(folder)) as bare:
        res = bare.post("/api/localize", json={"run_id": wrong})
        assert (res.status_code, res.json()["error"]["code"]) == (409, "ERR_EXPLORER_NO_AGENT")
        assert "--agent module:factory" in res.json()["error"]["message"]
        assert bare.get(f"/api/runs/{wrong}").json()["can_prove"] is False
    for body, field in (
        ({"run_id": wrong, "samples": 0}, "samples"),
        ({"run_id": wrong, "confidence": 1.5}, "confidence"),
        ({"run_id": wrong, "mode": "everything"}, "mode"),
        ({"run_id": wrong, "budget": -1}, "budget"),
        ({"run_id": wrong, "extra": 1}, "extra"),
        ({}, "run_id"),
    ):
        res = client.post("/api/localize", json=body)
        assert (res.status_code, res.json()["error"]["code"]) == (400, "ERR_EXPLORER_LOCALIZE")
        assert field in res.json()["error"]["message"]
    res = client.post("/api/localize", content=b"{not json", headers={"content-type": "application/json"})
    assert res.json()["error"]["code"] == "ERR_EXPLORER_LOCALIZE"
    assert client.post("/api/localize", json={"run_id": "nope"}).json()["error"]["code"] == "ERR_EXPLORER_NO_RUN"
    assert client.get("/api/localize/nope").json()["error"]["code"] == "ERR_EXPLORER_NO_JOB"
    assert client.post("/api/localize/nope/cancel").status_code == 404


def test_the_page_is_local_first(client: TestClient) -> None:
    page = client.get("/")
    assert page.headers["content-security-policy"].startswith("default-src 'none'; script-src 'self'")
    texts = [page.text, client.get("/static/app.js").text, client.get("/static/app.css").text]
    for text in texts:
        assert re.findall(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text) == []
    assert ".innerHTML" not in texts[1] and "insertAdjacentHTML" not in texts[1]
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/other.js").status_code == 404


def test_a_redacted_secret_never_leaves_the_explorer(folder: Path, runs: dict[str, Recording]) -> None:
    secret = runs["secret"].snapshot.run_id
    wrong = runs["wrong"].snapshot.run_id
    with TestClient(explorer_app(folder, agent_factory=_runs.secret_agent)) as client:
        bodies = [
            client.get("/").text,
            client.get("/static/app.js").text,
            client.get("/api/runs").text,
            client.get("/api/runs", params={"q": "key"}).text,
            client.get("/api/runs", params={"q": _runs.SENTINEL}).text,
            client.get(f"/api/runs/{secret}").text,
            client.get(f"/api/runs/{secret}/backtrack").text,
            client.get("/api/diff", params={"a": secret, "b": wrong}).text,
            client.get(f"/api/runs/{_runs.SENTINEL}").text,
            client.get(f"/api/runs/{secret}/sources/{_runs.SENTINEL}").text,
            client.post("/api/localize", json={"run_id": _runs.SENTINEL}).text,
        ]
        view = client.get(f"/api/runs/{secret}").json()
        for source in view["sources"]:
            bodies.append(client.get(f"/api/runs/{secret}/sources/{source['id']}").text)
        job = client.post("/api/localize", json={"run_id": secret, "keyword": "key is"}).json()
        stream = events(client, job["job_id"])
        bodies.extend(json.dumps(e) for e in stream)
        assert stream[-1]["state"] == "done"
    assert "[REDACTED]" in bodies[5]
    assert [b for b in bodies if _runs.SENTINEL in b] == []


@settings(max_examples=60, deadline=None)
@given(
    params=st.dictionaries(
        st.sampled_from(["q", "agent", "since", "until", "paused", "failed", "offset", "limit"]),
        st.text(max_size=40),
        max_size=5,
    )
)
def test_hostile_query_strings_get_a_listing_or_a_typed_refusal(folder: Path, params: dict[str, str]) -> None:
    with TestClient(explorer_app(folder)) as client:
        res = client.get("/api/runs", params=params)
    assert res.status_code in (200, 400)
    if res.status_code == 400:
        assert res.json()["error"]["code"] == "ERR_EXPLORER_QUERY"
    else:
        assert res.json()["total"] >= 0
