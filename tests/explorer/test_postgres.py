"""The explorer over store URLs: a PostgreSQL recordings store (a throwaway server on loopback) lists, searches,
filters and pages in SQL exactly as memory does, rows stored without summaries included; its runs open, compare
and refuse like any other; ``sqlite:///`` URLs serve a SQLite file; bad URLs are refused by code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from starlette.testclient import TestClient
from typer.testing import CliRunner

from agentfootprint.cli import app
from agentfootprint.explain import Recording
from agentfootprint.explorer import ExplorerError, MemoryCatalog, RunQuery, explorer_app, open_catalog
from agentfootprint.explorer.catalog import PostgresCatalog, SQLiteCatalog
from agentfootprint.stores import open_store
from tests.explorer import _runs
from tests.explorer.test_catalog import QUERIES, T0, ids
from tests.stores.conftest import postgres_server, postgres_url  # noqa: F401 - the throwaway server's fixtures


@pytest.fixture
def pg(postgres_url: str, timed: list[tuple[Recording, float]]) -> Iterator[str]:  # noqa: F811 - fixtures
    """A PostgreSQL store of the six runs, half stored without question and answer (as ``save_recording`` does)."""
    family = open_store(postgres_url)
    try:
        _runs.put_all(family.recordings, timed[::2], summaries=False)
        _runs.put_all(family.recordings, timed[1::2], summaries=True)
    finally:
        family.close()
    yield postgres_url


def test_a_postgresql_url_lists_searches_and_pages_in_sql(
    pg: str, runs: dict[str, Recording], timed: list[tuple[Recording, float]]
) -> None:
    cat = open_catalog(pg)
    assert isinstance(cat, PostgresCatalog)
    try:
        first = cat.page(RunQuery(limit=4))
        assert ids(first) == [rec.snapshot.run_id for rec, _ in reversed(timed)][:4]
        assert (first.total, first.next_offset, first.agents) == (6, 4, ["helpdesk", "refunds", "vault"])
        assert ids(cat.page(RunQuery(limit=4, offset=4))) == [r.snapshot.run_id for r in (runs["fixed"], runs["wrong"])]
        assert ids(cat.page(RunQuery(q="declined"))) == ["failed-b", runs["fixed"].snapshot.run_id]
        assert ids(cat.page(RunQuery(q="APPROVED"))) == ["failed-a", runs["wrong"].snapshot.run_id]
        assert ids(cat.page(RunQuery(agent="helpdesk"))) == [runs["paused"].snapshot.run_id]
        assert ids(cat.page(RunQuery(paused=True))) == [runs["paused"].snapshot.run_id]
        assert ids(cat.page(RunQuery(failed=True))) == ["failed-b", "failed-a"]
        assert ids(cat.page(RunQuery(since=T0 + 3600.0, until=T0 + 3 * 3600.0))) == [
            runs["paused"].snapshot.run_id,
            runs["fixed"].snapshot.run_id,
        ]
        wrong = cat.page(RunQuery(q=runs["wrong"].snapshot.run_id)).runs[0]
        assert (wrong.question, wrong.agent) == (runs["wrong"].snapshot.state["user_message"], "refunds")
        assert "APPROVED" in wrong.answer  # stored without summaries: read from the body, in SQL
        assert cat.body(runs["paused"].snapshot.run_id).model_dump() == runs["paused"].model_dump()
        with pytest.raises(ExplorerError) as missing:
            cat.body("no-such-run")
        assert missing.value.code == "ERR_EXPLORER_NO_RUN"
    finally:
        cat.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES)
def test_postgresql_and_memory_catalogs_agree(query: RunQuery, pg: str, timed: list[tuple[Recording, float]]) -> None:
    memory = MemoryCatalog(timed)
    sql = open_catalog(pg)
    try:
        a, b = memory.page(query), sql.page(query)
    finally:
        sql.close()
    assert [(r.run_id, r.paused, r.failed, r.question, r.answer, r.created_at) for r in a.runs] == [
        (r.run_id, r.paused, r.failed, r.question, r.answer, r.created_at) for r in b.runs
    ]
    assert (a.total, a.next_offset) == (b.total, b.next_offset)


def test_the_page_api_over_postgresql(pg: str, runs: dict[str, Recording]) -> None:
    wrong, fixed = runs["wrong"].snapshot.run_id, runs["fixed"].snapshot.run_id
    with TestClient(explorer_app(pg)) as client:
        listed = client.get("/api/runs", params={"q": "approved", "failed": "false"}).json()
        assert [r["run_id"] for r in listed["runs"]] == [wrong]
        fact = client.get(f"/api/runs/{wrong}/sources/vip-override-fact").json()
        assert [hop["kind"] for hop in fact["trail"]["hops"]] == ["answer", "read", "landed", "allowed", "born"]
        diff = client.get("/api/diff", params={"a": wrong, "b": fixed}).json()
        assert diff["sources_removed"] == ["vip-override-fact"]
        gone = client.get("/api/runs/no-such-run")
        assert (gone.status_code, gone.json()["error"]["code"]) == (404, "ERR_EXPLORER_NO_RUN")


def test_hostile_rows_and_search_text_in_postgresql(pg: str) -> None:
    family = open_store(pg)
    try:
        family.recordings.put("bad-json", "{not json", created_at=T0 + 99_000)
        family.recordings.put("bad-shape", '{"snapshot": [1, 2]}', created_at=T0 + 99_001)
        family.recordings.put("odd%_\\id", '{"state": {"user_message": "100% sure_ok"}}', created_at=T0 + 99_002)
    finally:
        family.close()
    cat = open_catalog(pg)
    try:
        assert ids(cat.page(RunQuery(limit=3))) == ["odd%_\\id", "bad-shape", "bad-json"]
        assert [(r.question, r.answer) for r in cat.page(RunQuery(limit=3)).runs] == [
            ("100% sure_ok", ""),
            ("", ""),
            ("", ""),
        ]
        assert ids(cat.page(RunQuery(q="%"))) == ["odd%_\\id"]
        assert ids(cat.page(RunQuery(q="_"))) == ["odd%_\\id"]
        assert ids(cat.page(RunQuery(q="\\"))) == ["odd%_\\id"]
        assert cat.page(RunQuery(q="not json")).total == 0
        assert cat.page(RunQuery(q="'; DROP TABLE agentfootprint_recordings; --")).total == 0
        for run_id in ("bad-json", "bad-shape"):
            with pytest.raises(ExplorerError) as err:
                cat.body(run_id)
            assert err.value.code == "ERR_EXPLORER_BAD_RECORDING"
        assert cat.page(RunQuery()).total == 9
    finally:
        cat.close()


def test_an_unreachable_server_is_refused_without_the_url() -> None:
    url = "postgresql://someone:hunter2@127.0.0.1:1/nowhere?connect_timeout=1"
    with pytest.raises(ExplorerError) as err:
        open_catalog(url)
    assert err.value.code == "ERR_EXPLORER_STORE"
    assert "hunter2" not in str(err.value)
    assert "127.0.0.1" not in str(err.value)


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("memory://", "ERR_EXPLORER_PATH"),
        ("mysql://x@y/z", "ERR_EXPLORER_PATH"),
        ("sqlite:///", "ERR_EXPLORER_PATH"),
        ("sqlite:///no/such/file.sqlite", "ERR_EXPLORER_PATH"),
    ],
)
def test_bad_store_urls_are_refused_by_code(url: str, code: str) -> None:
    with pytest.raises(ExplorerError) as err:
        open_catalog(url)
    assert err.value.code == code


def test_a_sqlite_url_serves_the_file(tmp_path: Path, timed: list[tuple[Recording, float]]) -> None:
    path = _runs.write_sqlite(tmp_path / "runs.db", timed)
    cat = open_catalog(f"sqlite:///{path}")
    try:
        assert isinstance(cat, SQLiteCatalog)
        assert ids(cat.page(RunQuery(failed=True))) == ["failed-b", "failed-a"]
    finally:
        cat.close()


def test_the_ui_command_serves_a_postgresql_url(pg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: seen.update(app=application, **kw))
    result = CliRunner().invoke(app(), ["ui", pg, "--port", "8791"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert pg not in result.output
    with TestClient(seen["app"]) as client:
        assert client.get("/api/runs").json()["total"] == 6
