"""The runs an explorer serves: a ``.json`` recording, a directory of them, or a SQLite store, listed with search,
filters and paging (SQL over a SQLite store, so 10,000 runs page without reading a body)."""

from __future__ import annotations

import json
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentfootprint.errors import AgentFootprintError
from agentfootprint.explain.recording import InvalidRecordingError, Recording, load_recording
from agentfootprint.stores.sqlite import connect_sqlite, table_columns

SQLITE_SUFFIXES = (".sqlite", ".db", ".sqlite3")
SUMMARY_CHARS = 500
MAX_PAGE = 200


class ExplorerError(AgentFootprintError, ValueError):
    """A request the explorer cannot serve (unknown run, bad filter, unreadable store); never quotes the value."""

    code = "ERR_EXPLORER"


class RunQuery(BaseModel):
    """Which runs a listing shows: text search over run id, question and answer, agent, time window, pause and
    error flags, and a page (``offset``/``limit``), newest first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    q: str | None = Field(default=None, max_length=500)
    agent: str | None = Field(default=None, max_length=200)
    since: float | None = None
    until: float | None = None
    paused: bool | None = None
    failed: bool | None = None
    offset: int = Field(default=0, ge=0, le=10_000_000)
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
        picked = [r for r in rows if _matches(r, query)]
        shown = picked[query.offset : query.offset + query.limit]
        end = query.offset + len(shown)
        return RunsPage(
            runs=shown,
            total=len(picked),
            offset=query.offset,
            limit=query.limit,
            next_offset=end if end < len(picked) else None,
            agents=sorted({r.agent for r in rows}),
        )

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


_VALID = "json_valid(body)"
_Q_EXPR = f"CASE WHEN {_VALID} THEN COALESCE(json_extract(body, '$.snapshot.state.user_message'), '') ELSE '' END"
_A_EXPR = f"CASE WHEN {_VALID} THEN COALESCE(json_extract(body, '$.snapshot.state.answer'), '') ELSE '' END"


def _flag_expr(flag: str) -> str:
    """SQL: whether any commit of the body's run carries ``flag`` (``paused`` or ``failed``)."""
    return (
        f"(CASE WHEN (instr(body, '\"{flag}\":true') > 0 OR instr(body, '\"{flag}\": true') > 0) AND {_VALID}"
        " THEN EXISTS (SELECT 1 FROM"
        f" json_each(body, '$.snapshot.commit_log') WHERE json_extract(value, '$.{flag}') = 1) ELSE 0 END)"
    )


class SQLiteCatalog(Catalog):
    """A SQLite recordings file (what ``save_recording`` and ``SQLiteRecordingStore`` write), read-only; every
    listing is one SQL query over the indexed columns (a body is read only for the pause/error flags)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._conn = connect_sqlite(path, readonly=True)
            present = table_columns(self._conn, "recordings")
        except sqlite3.Error:
            raise ExplorerError("the SQLite file cannot be opened", code="ERR_EXPLORER_STORE") from None
        if "run_id" not in present or "body" not in present:
            self._conn.close()
            raise ExplorerError("the SQLite file holds no recordings table", code="ERR_EXPLORER_STORE")
        when = "created_at" if "created_at" in present else "(created - 2440587.5) * 86400.0"
        if "created_at" in present and "created" in present:
            when = "COALESCE(created_at, (created - 2440587.5) * 86400.0)"
        agent = "agent" if "agent" in present else "''"
        size = "bytes" if "bytes" in present else "length(CAST(body AS BLOB))"
        q_col = "question" if "question" in present else "''"
        a_col = "answer" if "answer" in present else "''"
        self._view = (
            f"SELECT run_id, COALESCE({agent}, '') AS agent, COALESCE({when}, 0) AS created_at, body,"
            f" COALESCE({q_col}, '') AS q_col, COALESCE({a_col}, '') AS a_col, {size} AS bytes FROM recordings"
        )
        self._has_agent_col = "agent" in present

    def _where(self, query: RunQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if query.q:
            like = "%" + query.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append(
                "(run_id LIKE ? ESCAPE '\\' OR q_col LIKE ? ESCAPE '\\' OR a_col LIKE ? ESCAPE '\\'"
                f" OR ((q_col = '' OR a_col = '') AND ({_Q_EXPR} LIKE ? ESCAPE '\\' OR {_A_EXPR} LIKE ? ESCAPE '\\')))"
            )
            args.extend([like] * 5)
        if query.agent is not None:
            clauses.append("agent = ?")
            args.append(query.agent)
        if query.since is not None:
            clauses.append("created_at >= ?")
            args.append(query.since)
        if query.until is not None:
            clauses.append("created_at < ?")
            args.append(query.until)
        for flag, wanted in (("paused", query.paused), ("failed", query.failed)):
            if wanted is not None:
                clauses.append(f"{_flag_expr(flag)} = ?")
                args.append(1 if wanted else 0)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args

    def page(self, query: RunQuery) -> RunsPage:
        where, args = self._where(query)
        base = f"SELECT * FROM ({self._view}){where}"
        listed = (
            f"SELECT run_id, agent, created_at, CASE WHEN q_col != '' THEN q_col ELSE {_Q_EXPR} END,"
            f" CASE WHEN a_col != '' THEN a_col ELSE {_A_EXPR} END, {_flag_expr('paused')}, {_flag_expr('failed')},"
            " bytes"
            f" FROM ({base}) ORDER BY created_at DESC, run_id DESC LIMIT ? OFFSET ?"
        )
        try:
            with self._lock:
                rows = self._conn.execute(listed, [*args, query.limit, query.offset]).fetchall()
                total = int(self._conn.execute(f"SELECT count(*) FROM ({base})", args).fetchone()[0])
                agents = [r[0] for r in self._conn.execute(self._agents_sql()).fetchall()]
        except sqlite3.Error:
            raise ExplorerError("the SQLite file cannot be read", code="ERR_EXPLORER_STORE") from None
        runs = [
            RunRow(
                run_id=str(r[0]),
                agent=str(r[1] or ""),
                created_at=float(r[2] or 0.0),
                question=_clip(r[3]),
                answer=_clip(r[4]),
                paused=bool(r[5]),
                failed=bool(r[6]),
                bytes=int(r[7] or 0),
            )
            for r in rows
        ]
        end = query.offset + len(runs)
        return RunsPage(
            runs=runs,
            total=total,
            offset=query.offset,
            limit=query.limit,
            next_offset=end if end < total else None,
            agents=agents,
        )

    def _agents_sql(self) -> str:
        if not self._has_agent_col:
            return "SELECT '' LIMIT 0"
        return "SELECT DISTINCT agent FROM recordings WHERE agent != '' ORDER BY agent LIMIT 200"

    def body(self, run_id: str) -> Recording:
        try:
            with self._lock:
                row = self._conn.execute("SELECT body FROM recordings WHERE run_id = ?", (run_id,)).fetchone()
        except sqlite3.Error:
            raise ExplorerError("the SQLite file cannot be read", code="ERR_EXPLORER_STORE") from None
        if row is None:
            raise _no_run()
        try:
            raw = json.loads(row[0])
            if isinstance(raw, dict) and "format" not in raw and "commit_log" in raw:
                raw = {"snapshot": raw}
            return Recording.model_validate(raw)
        except (ValueError, TypeError, ValidationError):
            raise _unreadable() from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()


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
        picked = [r for r in rows if _matches(r, query)]
        shown = picked[query.offset : query.offset + query.limit]
        end = query.offset + len(shown)
        return RunsPage(
            runs=shown,
            total=len(picked),
            offset=query.offset,
            limit=query.limit,
            next_offset=end if end < len(picked) else None,
            agents=sorted({r.agent for r in rows}),
        )

    def body(self, run_id: str) -> Recording:
        with self._lock:
            found = self._items.get(run_id)
        if found is None:
            raise _no_run()
        return found[0]


def open_catalog(path: str | Path) -> Catalog:
    """The catalog of ``path``: a ``.sqlite``/``.db`` store, a ``.json`` recording, or a directory of them."""
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
    "RunQuery",
    "RunRow",
    "RunsPage",
    "SQLiteCatalog",
    "open_catalog",
]
