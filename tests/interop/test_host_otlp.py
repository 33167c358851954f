"""``ag_ui_app(..., otlp=True)``: the OTLP/HTTP receiver at ``/v1/traces`` on the AG-UI host files imported traces
per caller, and the host's explorer lists each caller's own imported runs (never another's)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentfootprint._flagship import refunds_agent
from agentfootprint.explain import Recording, backtrack
from agentfootprint.hosting import HostingConfigError, OtlpReceiver, ag_ui_app, otlp_run_id
from agentfootprint.identity import Identity
from agentfootprint.interop import to_otlp_json
from agentfootprint.stores.recordings import InMemoryRecordingStore
from tests.hosting.test_otlp import JS, PB, protobuf, trace_hex
from tests.interop._frameworks import Captured, capture, one_case


@cache
def run(framework: str) -> Captured:
    return capture(one_case(framework))


def by_header(request: Any) -> dict[str, str] | None:
    name = request.headers.get("x-user")
    return {"tenant": "acme", "principal": name} if name else None


def ann(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"X-User": "ann", **(extra or {})}


def host(**options: Any) -> tuple[TestClient, Any]:
    app = ag_ui_app(refunds_agent, bind_thread=by_header, explorer=True, **options)
    receiver = app.state.agentfootprint_otlp
    return TestClient(app), receiver.recordings if receiver is not None else None


@pytest.mark.parametrize(("kind", "headers"), [("protobuf", PB), ("json", JS)])
def test_an_export_lands_in_the_hosts_store_and_the_callers_explorer(kind: str, headers: dict[str, str]) -> None:
    cap = run("pydantic_ai")
    body = protobuf(cap.spans) if kind == "protobuf" else json.dumps(to_otlp_json(cap.spans)).encode()
    http, store = host(otlp=True)
    with http:
        r = http.post("/v1/traces", content=body, headers=ann(headers))
        assert r.status_code == 200
        run_id = otlp_run_id(Identity(tenant="acme", principal="ann"), trace_hex(cap))
        assert r.headers["x-agentfootprint-runs"] == run_id
        rec = Recording.model_validate_json(store.get(run_id))
        found = {s.id for s in backtrack(rec, at=cap.last_llm).sources}
        assert {"check_calendar", "search_docs", cap.case.planted_id} <= found
        listed = http.get("/explorer/api/runs", headers=ann()).json()
        assert [(r["run_id"], r["answer"]) for r in listed["runs"]] == [(trace_hex(cap), cap.case.misleading)]
        shown = http.get(f"/explorer/api/runs/{trace_hex(cap)}/backtrack", headers=ann())
        assert shown.status_code == 200
        assert http.get("/explorer/api/runs", headers={"X-User": "bob"}).json()["total"] == 0


def test_a_bad_body_is_a_typed_400_with_its_code() -> None:
    http, store = host(otlp=True)
    with http:
        r = http.post("/v1/traces", content=b"{not json", headers=ann(JS))
        assert (r.status_code, r.json()["error"]["code"]) == (400, "ERR_OTLP_NOT_JSON")
        r = http.post("/v1/traces", content=b"\xff\xff\xff", headers=ann(PB))
        assert (r.status_code, r.headers["x-agentfootprint-error"]) == (400, "ERR_OTLP_NOT_PROTOBUF")
        assert store.list().items == ()


def test_a_body_over_the_receivers_cap_is_a_413() -> None:
    store = InMemoryRecordingStore()
    http, _ = host(otlp=OtlpReceiver(store, bind_caller=by_header, require_identity=True, max_body_bytes=2000))
    with http:
        r = http.post("/v1/traces", content=protobuf(run("pydantic_ai").spans), headers=ann(PB))
        assert (r.status_code, r.headers["x-agentfootprint-error"]) == (413, "ERR_OTLP_BODY_TOO_LARGE")
        assert store.list().items == ()


def test_an_unauthenticated_export_is_a_401_when_the_host_binds_callers() -> None:
    http, store = host(otlp=True)
    with http:
        r = http.post("/v1/traces", content=protobuf(run("pydantic_ai").spans), headers=JS)
        assert (r.status_code, r.json()["error"]["code"]) == (401, "ERR_OTLP_SIGN_IN_REQUIRED")
        assert store.list().items == ()


def test_a_host_without_identity_files_anonymously() -> None:
    store = InMemoryRecordingStore()
    with TestClient(ag_ui_app(refunds_agent, otlp=store)) as http:
        cap = run("pydantic_ai")
        assert http.post("/v1/traces", content=protobuf(cap.spans), headers=PB).status_code == 200
        assert [m.run_id for m in store.list().items] == [otlp_run_id(None, trace_hex(cap))]


def test_the_receiver_is_off_unless_asked() -> None:
    http, store = host()
    with http:
        assert store is None
        assert http.post("/v1/traces", content=b"{}", headers=ann(JS)).status_code == 404


@pytest.mark.parametrize("otlp", ["yes", 1, object()])
def test_an_odd_otlp_option_is_a_config_error(otlp: Any) -> None:
    with pytest.raises(HostingConfigError):
        ag_ui_app(refunds_agent, otlp=otlp)


@pytest.mark.parametrize("flag", [[], ["--otlp"]])
def test_serve_mounts_the_receiver_with_otlp(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, flag: list[str]) -> None:
    from typer.testing import CliRunner

    from agentfootprint.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "otlp_agents", raising=False)
    (tmp_path / "otlp_agents.py").write_text("from agentfootprint._flagship import refunds_agent as make\n")
    served: list[Any] = []
    monkeypatch.setattr("uvicorn.run", lambda application, **kw: served.append(application))
    result = CliRunner().invoke(app(), ["serve", "otlp_agents:make", "--port", "8123", *flag])
    assert (result.exit_code, len(served)) == (0, 1)
    with TestClient(served[0]) as http:
        cap = run("pydantic_ai")
        r = http.post("/v1/traces", content=protobuf(cap.spans), headers=PB)
        if not flag:
            assert (r.status_code, served[0].state.agentfootprint_otlp) == (404, None)
            return
        assert r.status_code == 200
        filed = served[0].state.agentfootprint_otlp.recordings
        assert [m.run_id for m in filed.list().items] == [otlp_run_id(None, trace_hex(cap))]
