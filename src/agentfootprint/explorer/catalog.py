"""The runs an explorer serves: a ``.json`` recording, a directory of them, a SQLite store or a PostgreSQL one,
listed with search, filters and paging (SQL over a store, so 10,000 runs page without reading a body)."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain.recording import InvalidRecordingError, Recording, load_recording
from agentfootprint.stores.errors import StoreError, StoreURLError
from agentfootprint.stores.family import parse_store_url
from agentfootprint.stores.recordings import RecordingSearch, search_where
from agentfootprint.stores.sqlite import connect_sqlite, table_columns

SQLITE_SUFFIXES = (".sqlite", ".db", ".sqlite3")
SUMMARY_CHARS = 500
MAX_PAGE = 200


class ExplorerError(AgentFootprintError, ValueError):
    """A request the explorer cannot serve (unknown run, bad filter, unreadable store); never quotes the value."""

    code = "ERR_EXPLORER"


class RunQuery(RecordingSearch):
    """Which runs a listing shows: text search over run id, question and answer, agent, time window, pause and
    error flags, and a page (``offset``/``limit``), newest first."""

    limit: int = Field(default=50, ge=1, le=MAX_PAGE)


class RunRow(BaseModel):
    """One run in a listing (never its body)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    agent: str = ""
    created_at: float = 0.0
    question: str = ""
    answer: str = ""
    paused: bool = False
    failed: bool = False
    bytes: int = 0


class RunsPage(BaseModel):
    """One page of runs, with the total that matched and the offset of the next page (None at the end)."""

    runs: list[RunRow]
    total: int
    offset: int
    limit: int
    next_offset: int | None
    agents: list[str]


def _clip(text: Any) -> str:
    return str(text or "")[:SUMMARY_CHARS]


def row_of(rec: Recording, *, created_at: float, size: int) -> RunRow:
    """The listing row of a loaded recording."""
    snap = rec.snapshot
    state = snap.state
    answer = state.get("answer")
    if answer is None:
        answer = (
            (state.get("last_response") or {}).get("content") if isinstance(state.get("last_response"), dict) else ""
        )
    return RunRow(
        run_id=snap.run_id,
        agent=rec.agent,
        created_at=created_at,
        question=_clip(state.get("user_message")),
        answer=_clip(answer),
        paused=any(c.paused for c in snap.commit_log),
        failed=any(c.failed for c in snap.commit_log),
        bytes=size,
    )


def _page_of(shown: list[RunRow], total: int, query: RunQuery, agents: list[str]) -> RunsPage:
    """The page holding ``shown`` of ``total`` matching runs."""
    end = query.offset + len(shown)
    return RunsPage(
        runs=shown,
        total=total,
        offset=query.offset,
        limit=query.limit,
        next_offset=end if end < total else None,
        agents=agents,
    )


def _paged(rows: list[RunRow], query: RunQuery) -> RunsPage:
    """One page of the rows ``query`` matches (rows in listing order), with the agents of all rows."""
    picked = [r for r in rows if _matches(r, query)]
    shown = picked[query.offset : query.offset + query.limit]
    return _page_of(shown, len(picked), query, sorted({r.agent for r in rows}))


def _matches(row: RunRow, query: RunQuery) -> bool:
    if query.q:
        needle = query.q.casefold()
        if not any(needle in field.casefold() for field in (row.run_id, row.question, row.answer)):
            return False
    return (
        (query.agent is None or row.agent == query.agent)
        and (query.since is None or row.created_at >= query.since)
        and (query.until is None or row.created_at < query.until)
        and (query.paused is None or row.paused == query.paused)
        and (query.failed is None or row.failed == query.failed)
    )


class Catalog(ABC):
    """Runs by id with a filtered, paged listing."""

    @abstractmethod
    def page(self, query: RunQuery) -> RunsPage:
        """The runs matching ``query``, newest first."""

    @abstractmethod
    def body(self, run_id: str) -> Recording:
        """Run ``run_id``'s recording (``ExplorerError`` with code ``ERR_EXPLORER_NO_RUN`` when unknown)."""

    def close(self) -> None:  # noqa: B027 - most catalogs hold nothing to release
        """Release what the catalog holds."""


def _no_run() -> ExplorerError:
    return ExplorerError("no run with this id in the recordings", code="ERR_EXPLORER_NO_RUN")


def _unreadable() -> ExplorerError:
    return ExplorerError("this run's recording cannot be read", code="ERR_EXPLORER_BAD_RECORDING")


class FileCatalog(Catalog):
    """A ``.json`` recording or a directory of them; rescanned when a file is added, changed or removed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: dict[Path, tuple[float, int, RunRow | None]] = {}
        self._by_id: dict[str, Path] = {}
        self._rows: list[RunRow] = []

    def _files(self) -> list[Path]:
        if self.path.is_file():
            return [self.path]
        return sorted(p for p in self.path.glob("*.json") if p.is_file())

    def _scan(self) -> None:
        files = self._files()
        changed = set(self._seen) != set(files)
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            known = self._seen.get(f)
            if known is not None and known[:2] == (st.st_mtime, st.st_size):
                continue
            changed = True
            try:
                row: RunRow | None = row_of(load_recording(f), created_at=st.st_mtime, size=st.st_size)
            except InvalidRecordingError:
                row = None  # not a recording (or a broken one): left out of the listing
            self._seen[f] = (st.st_mtime, st.st_size, row)
        if changed:
            for gone in set(self._seen) - set(files):
                del self._seen[gone]
            by_id = {entry[2].run_id: f for f, entry in self._seen.items() if entry[2] is not None}
            self._by_id = by_id
            rows = [entry[2] for entry in self._seen.values() if entry[2] is not None]
            self._rows = sorted(rows, key=lambda r: (r.created_at, r.run_id), reverse=True)

    def page(self, query: RunQuery) -> RunsPage:
        with self._lock:
            self._scan()
            rows = list(self._rows)
        return _paged(rows, query)

    def body(self, run_id: str) -> Recording:
        with self._lock:
            self._scan()
            found = self._by_id.get(run_id)
        if found is None:
            raise _no_run()
        try:
            return load_recording(found)
        except InvalidRecordingError:
            raise _unreadable() from None


_COMMIT_FLAGS = re.compile(r'"failed": ?(true|false),\s*"paused": ?(true|false)')
"""A commit's two flags as every recording writes them (``failed`` then ``paused``), in one pass over the text."""


def _flags(body: str) -> tuple[bool, bool]:
    """Whether any commit of the run paused, and whether any failed."""
    paused = failed = False
    for m in _COMMIT_FLAGS.finditer(body):
        failed = failed or m.group(1) == "true"
        paused = paused or m.group(2) == "true"
        if paused and failed:
            break
    return paused, failed


def _listed(row: Sequence[Any]) -> tuple[Any, ...]:
    """A listing row of a stored one: summaries from the columns, else from the body; the pause and error flags."""
    ref, run_id, agent, when, question, answer, size, body = row
    body = body if isinstance(body, str) else ""
    if not question:
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        snap = parsed.get("snapshot", parsed) if isinstance(parsed, dict) else {}
        found_state = snap.get("state") if isinstance(snap, dict) else None
        state: dict[str, Any] = found_state if isinstance(found_state, dict) else {}
        question = state.get("user_message") if isinstance(state.get("user_message"), str) else ""
        found = state.get("answer")
        answer = answer or (found if isinstance(found, str) else "")
    paused, failed = _flags(body)
    return (
        ref,
        str(run_id),
        str(agent or ""),
        float(when or 0.0),
        _clip(question),
        _clip(answer),
        int(paused),
        int(failed),
        int(size or 0),
    )


def _stored(body: Any) -> Recording:
    """The recording a store's row holds: a recording's JSON, or a bare snapshot (what older releases stored)."""
    try:
        return Recording.model_validate_json(body)
    except (ValueError, TypeError, ValidationError):
        pass
    try:
        return Recording.model_validate({"snapshot": json.loads(body)})
    except (ValueError, TypeError, ValidationError):
        raise _unreadable() from None


class SQLiteCatalog(Catalog):
    """A SQLite recordings file (what ``save_recording`` and ``SQLiteRecordingStore`` write), opened read-only.

    Listings run in SQL over an in-memory mirror of the listing columns (agent, time, question, answer, the pause
    and error flags), filled once from the file and then with the rows added since (``PRAGMA data_version``): a
    page never reads a body, and rows stored without summaries are summarized from their body once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._conn = connect_sqlite(path, readonly=True)
            present = table_columns(self._conn, "recordings")
            if "run_id" in present and "body" in present:
                self._conn.execute("ATTACH DATABASE ':memory:' AS listing")
                self._conn.execute(
                    "CREATE TABLE listing.runs (ref INTEGER PRIMARY KEY, run_id TEXT NOT NULL, agent TEXT NOT NULL,"
                    " created_at REAL NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL, paused INTEGER NOT NULL,"
                    " failed INTEGER NOT NULL, bytes INTEGER NOT NULL)"
                )
                self._conn.execute("CREATE INDEX listing.runs_newest ON runs (created_at, run_id)")
        except sqlite3.Error:
            raise ExplorerError("the SQLite file cannot be opened", code="ERR_EXPLORER_STORE") from None
        if "run_id" not in present or "body" not in present:
            self._conn.close()
            raise ExplorerError("the SQLite file holds no recordings table", code="ERR_EXPLORER_STORE")
        old_time = "(created - 2440587.5) * 86400.0" if "created" in present else "0"
        when = f"COALESCE(created_at, {old_time})" if "created_at" in present else old_time
        q = "COALESCE(question, '')" if "question" in present else "''"
        a = "COALESCE(answer, '')" if "answer" in present else "''"
        agent = "COALESCE(agent, '')" if "agent" in present else "''"
        size = "bytes" if "bytes" in present else "length(CAST(body AS BLOB))"
        self._fill = (
            f"SELECT rowid, run_id, {agent}, COALESCE({when}, 0), {q}, {a}, COALESCE({size}, 0), body FROM recordings"
            " WHERE rowid NOT IN (SELECT ref FROM listing.runs)"
        )
        self._version: int | None = None
        threading.Thread(target=self._warm, name="explorer-listing", daemon=True).start()

    def _warm(self) -> None:
        """Mirror the file at once, so the first listing does not wait for it."""
        try:
            with self._lock:
                self._refresh()
        except sqlite3.Error:
            pass  # the listing that follows reports it

    def _refresh(self) -> None:
        """Mirror the rows added, replaced or deleted since the last listing (nothing when the file is unchanged)."""
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        if version == self._version:
            return
        self._conn.execute("DELETE FROM listing.runs WHERE ref NOT IN (SELECT rowid FROM recordings)")
        self._conn.execute("DELETE FROM listing.runs WHERE run_id != (SELECT run_id FROM recordings WHERE rowid = ref)")
        cursor = self._conn.execute(self._fill)
        while batch := cursor.fetchmany(500):
            self._conn.executemany(
                "INSERT OR REPLACE INTO listing.runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [_listed(r) for r in batch]
            )
        self._version = version

    def page(self, query: RunQuery) -> RunsPage:
        where, args = search_where(query, mark="?", like="LIKE", question="question", answer="answer")
        shown = (
            "SELECT run_id, agent, created_at, question, answer, paused, failed, bytes FROM listing.runs"
            f"{where} ORDER BY created_at DESC, run_id DESC LIMIT ? OFFSET ?"
        )
        try:
            with self._lock:
                self._refresh()
                rows = self._conn.execute(shown, [*args, query.limit, query.offset]).fetchall()
                total = int(self._conn.execute(f"SELECT count(*) FROM listing.runs{where}", args).fetchone()[0])
                agents = [
                    r[0]
                    for r in self._conn.execute(
                        "SELECT DISTINCT agent FROM listing.runs WHERE agent != '' ORDER BY agent LIMIT 200"
                    ).fetchall()
                ]
        except sqlite3.Error:
            raise ExplorerError("the SQLite file cannot be read", code="ERR_EXPLORER_STORE") from None
        runs = [
            RunRow(
                run_id=str(r[0]),
                agent=str(r[1]),
                created_at=float(r[2]),
                question=str(r[3]),
                answer=str(r[4]),
                paused=bool(r[5]),
                failed=bool(r[6]),
                bytes=int(r[7]),
            )
            for r in rows
        ]
        return _page_of(runs, total, query, agents)

    def body(self, run_id: str) -> Recording:
        try:
            with self._lock:
                row = self._conn.execute("SELECT body FROM recordings WHERE run_id = ?", (run_id,)).fetchone()
        except sqlite3.Error:
            raise ExplorerError("the SQLite file cannot be read", code="ERR_EXPLORER_STORE") from None
        if row is None:
            raise _no_run()
        return _stored(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresCatalog(Catalog):
    """A PostgreSQL recordings store (``open_store(url).recordings``): every listing is one SQL search over listing
    columns the store generates from each body (question, answer, pause and error flags), so a page never reads a
    body and nothing is mirrored in this process."""

    def __init__(self, url: str) -> None:
        from agentfootprint.stores import open_store
        from agentfootprint.stores.postgres import psycopg_module
        from agentfootprint.stores.recordings import PostgresRecordingStore

        try:
            self._errors: tuple[type[Exception], ...] = (psycopg_module().Error, StoreError)
        except StoreError:
            raise ExplorerError(
                "PostgreSQL recordings need psycopg: pip install 'agentfootprint[postgres]'", code="ERR_EXPLORER_STORE"
            ) from None
        self._family = open_store(url)
        store = self._family.recordings
        assert isinstance(store, PostgresRecordingStore)
        self._store = store
        self.page(RunQuery(limit=1))  # connect and add the listing columns now: a bad URL is refused at start

    def page(self, query: RunQuery) -> RunsPage:
        try:
            hits = self._store.search(query)
        except self._errors:
            raise _store_down() from None
        return _page_of([RunRow(**hit.model_dump()) for hit in hits.items], hits.total, query, list(hits.agents))

    def body(self, run_id: str) -> Recording:
        try:
            found = self._store.get(run_id)
        except self._errors:
            raise _store_down() from None
        if found is None:
            raise _no_run()
        return _stored(found)

    def close(self) -> None:
        self._family.close()


def _store_down() -> ExplorerError:
    """The refusal for a PostgreSQL store that cannot be read (the DSN and the driver's message never shown)."""
    return ExplorerError("the PostgreSQL store cannot be read", code="ERR_EXPLORER_STORE")


class MemoryCatalog(Catalog):
    """Recordings held in this process (a host's own runs, tests), newest first by the time they were added."""

    def __init__(self, recordings: Sequence[tuple[Recording, float]] = ()) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, tuple[Recording, RunRow]] = {}
        for rec, when in recordings:
            self.add(rec, created_at=when)

    def add(self, rec: Recording, *, created_at: float) -> None:
        """Add (or replace) one run."""
        row = row_of(rec, created_at=created_at, size=0)
        with self._lock:
            self._items[row.run_id] = (rec, row)

    def page(self, query: RunQuery) -> RunsPage:
        with self._lock:
            rows = [row for _, row in self._items.values()]
        rows.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
        return _paged(rows, query)

    def body(self, run_id: str) -> Recording:
        with self._lock:
            found = self._items.get(run_id)
        if found is None:
            raise _no_run()
        return found[0]


def open_catalog(path: str | Path) -> Catalog:
    """The catalog of ``path``: a ``.sqlite``/``.db`` store, a ``.json`` recording, a directory of them, or a store
    URL (``postgresql://...``, ``sqlite:///path``)."""
    if isinstance(path, str) and "://" in path:
        try:
            kind, where = parse_store_url(path)
        except StoreURLError:
            raise ExplorerError("a store URL is postgresql://... or sqlite:///path", code="ERR_EXPLORER_PATH") from None
        if kind == "postgresql":
            return PostgresCatalog(path)
        if kind == "memory":
            raise ExplorerError("a memory:// store holds no recordings to explore", code="ERR_EXPLORER_PATH")
        if not Path(where).is_file():
            raise ExplorerError("no SQLite file at this store URL", code="ERR_EXPLORER_PATH")
        return SQLiteCatalog(Path(where))
    target = Path(path)
    if not target.exists():
        raise ExplorerError("no recordings at this path", code="ERR_EXPLORER_PATH")
    if target.is_dir():
        return FileCatalog(target)
    if target.suffix in SQLITE_SUFFIXES:
        return SQLiteCatalog(target)
    if target.suffix == ".json":
        return FileCatalog(target)
    raise ExplorerError(
        "recordings are a .json file, a directory of them, or a .sqlite/.db store", code="ERR_EXPLORER_PATH"
    )


__all__ = [
    "Catalog",
    "ExplorerError",
    "FileCatalog",
    "MemoryCatalog",
    "PostgresCatalog",
    "RunQuery",
    "RunRow",
    "RunsPage",
    "SQLiteCatalog",
    "open_catalog",
]
