"""Catalogs: the same listing (search, agent, dates, pause and error flags, paging) from a directory of JSON, a
SQLite store and memory; rows written without summaries still show and search; hostile stores refused by code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.explain import Recording
from agentfootprint.explorer import ExplorerError, MemoryCatalog, RunQuery, open_catalog
from agentfootprint.explorer.catalog import FileCatalog, SQLiteCatalog
from agentfootprint.stores.recordings import SQLiteRecordingStore
from tests.explorer import _runs

T0 = _runs.T0


@pytest.fixture(scope="module")
def sqlite_path(tmp_path_factory: pytest.TempPathFactory, timed: list[tuple[Recording, float]]) -> Path:
    return _runs.write_sqlite(tmp_path_factory.mktemp("store") / "runs.sqlite", timed)


def ids(page: object) -> list[str]:
    return [r.run_id for r in page.runs]  # type: ignore[attr-defined]


def test_sqlite_lists_newest_first_with_totals_and_agents(
    sqlite_path: Path, timed: list[tuple[Recording, float]]
) -> None:
    cat = open_catalog(sqlite_path)
    assert isinstance(cat, SQLiteCatalog)
    page = cat.page(RunQuery(limit=4))
    assert ids(page) == [rec.snapshot.run_id for rec, _ in reversed(timed)][:4]
    assert (page.total, page.offset, page.next_offset) == (6, 0, 4)
    assert page.agents == ["helpdesk", "refunds", "vault"]
    rest = cat.page(RunQuery(limit=4, offset=4))
    assert ids(rest) == [timed[1][0].snapshot.run_id, timed[0][0].snapshot.run_id]
    assert rest.next_offset is None
    cat.close()


def test_sqlite_filters(sqlite_path: Path, runs: dict[str, Recording]) -> None:
    cat = open_catalog(sqlite_path)
    assert ids(cat.page(RunQuery(q="declined"))) == ["failed-b", runs["fixed"].snapshot.run_id]
    assert ids(cat.page(RunQuery(agent="helpdesk"))) == [runs["paused"].snapshot.run_id]
    assert ids(cat.page(RunQuery(paused=True))) == [runs["paused"].snapshot.run_id]
    assert ids(cat.page(RunQuery(failed=True))) == ["failed-b", "failed-a"]
    assert cat.page(RunQuery(failed=False, paused=False)).total == 3
    assert ids(cat.page(RunQuery(since=T0 + 3600.0, until=T0 + 3 * 3600.0))) == [
        runs["paused"].snapshot.run_id,
        runs["fixed"].snapshot.run_id,
    ]
    assert ids(cat.page(RunQuery(q="failed-"))) == ["failed-b", "failed-a"]  # the run id is searched too
    assert cat.page(RunQuery(q="%")).total == 0  # LIKE wildcards are literal
    assert cat.page(RunQuery(q="_")).total == 0


def test_rows_without_summaries_show_and_search_from_the_body(
    tmp_path: Path, timed: list[tuple[Recording, float]]
) -> None:
    path = _runs.write_sqlite(tmp_path / "bare.db", timed, summaries=False)
    cat = open_catalog(path)
    page = cat.page(RunQuery())
    wrong = timed[0][0]
    row = next(r for r in page.runs if r.run_id == wrong.snapshot.run_id)
    assert row.question == wrong.snapshot.state["user_message"]
    assert row.answer == wrong.snapshot.state["answer"]
    assert ids(cat.page(RunQuery(q="APPROVED"))) == ["failed-a", wrong.snapshot.run_id]


def test_directory_and_single_file(tmp_path: Path, runs: dict[str, Recording]) -> None:
    folder = _runs.write_dir(tmp_path / "recs", runs)
    (folder / "notes.json").write_text('{"not": "a recording"}')
    (folder / "broken.json").write_text("{")
    cat = open_catalog(folder)
    assert isinstance(cat, FileCatalog)
    assert sorted(ids(cat.page(RunQuery()))) == sorted(r.snapshot.run_id for r in runs.values())
    assert ids(cat.page(RunQuery(paused=True))) == [runs["paused"].snapshot.run_id]
    assert cat.body(runs["wrong"].snapshot.run_id).snapshot.run_id == runs["wrong"].snapshot.run_id
    one = open_catalog(folder / "wrong.json")
    assert ids(one.page(RunQuery())) == [runs["wrong"].snapshot.run_id]
    (folder / "late.json").write_text(_runs.failed_copy(runs["wrong"], "late-run").model_dump_json())
    assert cat.page(RunQuery(failed=True)).runs[0].run_id == "late-run"  # a new file is picked up


def test_unknown_run_and_bad_paths_are_refused_by_code(tmp_path: Path, sqlite_path: Path) -> None:
    with pytest.raises(ExplorerError) as no_run:
        open_catalog(sqlite_path).body("no-such-run")
    assert no_run.value.code == "ERR_EXPLORER_NO_RUN"
    with pytest.raises(ExplorerError) as missing:
        open_catalog(tmp_path / "absent.sqlite")
    assert missing.value.code == "ERR_EXPLORER_PATH"
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(ExplorerError) as wrong_kind:
        open_catalog(tmp_path / "x.txt")
    assert wrong_kind.value.code == "ERR_EXPLORER_PATH"
    (tmp_path / "other.db").write_bytes(b"")
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE unrelated (a)")
    conn.close()
    with pytest.raises(ExplorerError) as no_table:
        open_catalog(tmp_path / "other.db")
    assert no_table.value.code == "ERR_EXPLORER_STORE"
    (tmp_path / "garbage.sqlite").write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(ExplorerError) as garbage:
        open_catalog(tmp_path / "garbage.sqlite")
    assert garbage.value.code == "ERR_EXPLORER_STORE"


def test_hostile_rows_are_listed_and_refused_on_open(tmp_path: Path, runs: dict[str, Recording]) -> None:
    path = _runs.write_sqlite(tmp_path / "h.sqlite", [(runs["wrong"], T0)])
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO recordings (run_id, created_at, body) VALUES ('bad-json', ?, '{not json')", (T0 + 1,))
    conn.execute("INSERT INTO recordings (run_id, created_at, body) VALUES ('bad-shape', ?, '{\"a\": 1}')", (T0 + 2,))
    conn.commit()
    conn.close()
    cat = open_catalog(path)
    page = cat.page(RunQuery(failed=False))
    assert ids(page) == ["bad-shape", "bad-json", runs["wrong"].snapshot.run_id]
    assert cat.page(RunQuery(q="not json")).total == 0
    for run_id in ("bad-json", "bad-shape"):
        with pytest.raises(ExplorerError) as err:
            cat.body(run_id)
        assert err.value.code == "ERR_EXPLORER_BAD_RECORDING"
        assert "not json" not in str(err.value)


def test_query_bounds_are_typed() -> None:
    with pytest.raises(ValueError):
        RunQuery(limit=0)
    with pytest.raises(ValueError):
        RunQuery(limit=201)
    with pytest.raises(ValueError):
        RunQuery(offset=-1)


QUERIES = st.builds(
    RunQuery,
    q=st.one_of(st.none(), st.sampled_from(["APPROVED", "declined", "key", "order", "failed", "zzz", "A-1001"])),
    agent=st.one_of(st.none(), st.sampled_from(["refunds", "helpdesk", "vault", "nobody"])),
    since=st.one_of(st.none(), st.sampled_from([T0, T0 + 3600.0, T0 + 5 * 3600.0])),
    until=st.one_of(st.none(), st.sampled_from([T0 + 1.0, T0 + 4 * 3600.0])),
    paused=st.one_of(st.none(), st.booleans()),
    failed=st.one_of(st.none(), st.booleans()),
    offset=st.integers(0, 7),
    limit=st.integers(1, 7),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES)
def test_sqlite_and_memory_catalogs_agree(
    query: RunQuery, sqlite_path: Path, timed: list[tuple[Recording, float]]
) -> None:
    memory = MemoryCatalog(timed)
    sql = open_catalog(sqlite_path)
    try:
        a, b = memory.page(query), sql.page(query)
    finally:
        sql.close()
    assert [(r.run_id, r.paused, r.failed, r.question, r.answer) for r in a.runs] == [
        (r.run_id, r.paused, r.failed, r.question, r.answer) for r in b.runs
    ]
    assert (a.total, a.next_offset) == (b.total, b.next_offset)


def test_a_sqlite_listing_follows_writes_made_after_it_opened(tmp_path: Path, runs: dict[str, Recording]) -> None:
    path = _runs.write_sqlite(tmp_path / "live.sqlite", [(runs["wrong"], T0)])
    cat = open_catalog(path)
    assert cat.page(RunQuery()).total == 1
    _runs.write_sqlite(path, [(runs["paused"], T0 + 10), (_runs.failed_copy(runs["wrong"], "later"), T0 + 20)])
    assert ids(cat.page(RunQuery())) == ["later", runs["paused"].snapshot.run_id, runs["wrong"].snapshot.run_id]
    assert ids(cat.page(RunQuery(failed=True))) == ["later"]
    store = SQLiteRecordingStore(path)
    store.delete("later")
    store.close()
    assert ids(cat.page(RunQuery(failed=True))) == []
    assert cat.page(RunQuery()).total == 2
