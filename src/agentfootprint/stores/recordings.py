"""Recordings by run id: ``put``/``get``/``list`` of a run's recording (its JSON text), in memory, SQLite or
PostgreSQL. ``list`` pages newest first by an opaque cursor and filters by agent and by time, so a viewer can walk
thousands of runs without reading a body."""

from __future__ import annotations

import base64
import json
import math
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.stores._sql import check_table
from agentfootprint.stores.errors import StoreCursorError, StoreError
from agentfootprint.stores.postgres import PostgresPool, ensure_schema, postgres_pool
from agentfootprint.stores.sqlite import add_missing_columns, connect_sqlite, table_columns

DEFAULT_PAGE = 100
MAX_PAGE = 1000
SUMMARY_CHARS = 500
_JULIAN_EPOCH = 2440587.5
"""The Julian day of 1970-01-01: the SQLite file's ``created`` column is ``julianday('now')`` (what older releases
wrote); ``created_at`` is seconds since the epoch."""


class RecordingMeta(BaseModel):
    """What a listing shows of one recording (never its body): run id, agent, when, a short question and answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    agent: str = ""
    created_at: float = 0.0
    question: str = ""
    answer: str = ""
    bytes: int = 0


class RecordingPage(BaseModel):
    """One page of a listing, newest first; ``next_cursor`` fetches the following page (None at the end)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: tuple[RecordingMeta, ...] = ()
    next_cursor: str | None = None


class RecordingFilter(BaseModel):
    """Which recordings a listing holds: one agent's, and/or those made in ``[since, until)`` (epoch seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int = Field(default=DEFAULT_PAGE, ge=1, le=MAX_PAGE)


@runtime_checkable
class RecordingStore(Protocol):
    """Recordings by run id; a second ``put`` of a run id replaces it."""

    def put(
        self,
        run_id: str,
        body: str,
        *,
        agent: str = "",
        created_at: float | None = None,
        question: str = "",
        answer: str = "",
    ) -> RecordingMeta: ...

    def get(self, run_id: str) -> str | None: ...

    def list(
        self,
        *,
        agent: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = DEFAULT_PAGE,
        cursor: str | None = None,
    ) -> RecordingPage: ...

    def delete(self, run_id: str) -> bool: ...

    def close(self) -> None: ...


def recording_meta(
    run_id: str, body: str, *, agent: str, created_at: float | None, question: str, answer: str
) -> RecordingMeta:
    """The meta of a recording about to be stored (checked: a non-empty run id, JSON object text, finite time)."""
    if not isinstance(run_id, str) or not 1 <= len(run_id) <= 200:
        raise StoreError("a recording's run id must be a string of 1-200 characters")
    if not isinstance(body, str) or not body.lstrip().startswith("{"):
        raise StoreError("a recording's body must be JSON object text")
    when = time.time() if created_at is None else created_at
    if isinstance(when, bool) or not isinstance(when, int | float) or not math.isfinite(when):
        raise StoreError("a recording's created_at must be a finite number of seconds")
    return RecordingMeta(
        run_id=run_id,
        agent=str(agent)[:200],
        created_at=float(when),
        question=str(question)[:SUMMARY_CHARS],
        answer=str(answer)[:SUMMARY_CHARS],
        bytes=len(body.encode("utf-8", "surrogatepass")),
    )


def page_filter(
    agent: str | None, since: float | None, until: float | None, limit: int, cursor: str | None
) -> tuple[RecordingFilter, tuple[float, str] | None]:
    """The checked filter and the decoded cursor (the ``(created_at, run_id)`` of the last row already shown)."""
    try:
        checked = RecordingFilter(agent=agent, since=since, until=until, limit=limit)
    except ValueError:
        raise StoreError("a listing takes agent (str), since/until (seconds) and limit 1-1000") from None
    return checked, _decode_cursor(cursor) if cursor is not None else None


def encode_cursor(meta: RecordingMeta) -> str:
    """An opaque cursor after ``meta``."""
    return base64.urlsafe_b64encode(json.dumps([meta.created_at, meta.run_id]).encode()).decode()


def _decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        created, run_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        if isinstance(created, int | float) and not isinstance(created, bool) and isinstance(run_id, str):
            return float(created), run_id
    except (ValueError, TypeError, AttributeError, UnicodeError):
        pass
    raise StoreCursorError("this cursor was not handed out by a recording listing")


def make_page(rows: Sequence[RecordingMeta], limit: int) -> RecordingPage:
    """A page of at most ``limit`` rows from ``limit + 1`` fetched (the extra one says whether more follow)."""
    items = tuple(rows[:limit])
    return RecordingPage(items=items, next_cursor=encode_cursor(items[-1]) if len(rows) > limit else None)


_Metas = list[RecordingMeta]
"""What a listing returns (named outside the classes, whose ``list`` method shadows the builtin)."""


class _Recordings(ABC):
    """What every backend shares: ``put`` checks and measures, ``list`` checks the filter and cursor and pages;
    a backend writes a row (``_write``) and fetches ``limit + 1`` metas newest first (``_page``)."""

    def put(
        self,
        run_id: str,
        body: str,
        *,
        agent: str = "",
        created_at: float | None = None,
        question: str = "",
        answer: str = "",
    ) -> RecordingMeta:
        """Store (or replace) run ``run_id``'s recording, JSON object text; returns what a listing shows of it."""
        meta = recording_meta(run_id, body, agent=agent, created_at=created_at, question=question, answer=answer)
        self._write(meta, body)
        return meta

    def list(
        self,
        *,
        agent: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = DEFAULT_PAGE,
        cursor: str | None = None,
    ) -> RecordingPage:
        """A page of metas, newest first: one agent's, made in ``[since, until)``, after ``cursor``."""
        checked, after = page_filter(agent, since, until, limit, cursor)
        return make_page(self._page(checked, after), checked.limit)

    @abstractmethod
    def _write(self, meta: RecordingMeta, body: str) -> None:
        """Supplied by each backend."""

    @abstractmethod
    def _page(self, checked: RecordingFilter, after: tuple[float, str] | None) -> _Metas:
        """Supplied by each backend."""


class InMemoryRecordingStore(_Recordings):
    """Recordings in this process (tests, one process)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[RecordingMeta, str]] = {}
        self._lock = threading.Lock()

    def _write(self, meta: RecordingMeta, body: str) -> None:
        with self._lock:
            self._rows[meta.run_id] = (meta, body)

    def get(self, run_id: str) -> str | None:
        found = self._rows.get(run_id)
        return found[1] if found is not None else None

    def _page(self, checked: RecordingFilter, after: tuple[float, str] | None) -> _Metas:
        with self._lock:
            metas = [meta for meta, _ in self._rows.values()]
        picked = [
            m
            for m in metas
            if (checked.agent is None or m.agent == checked.agent)
            and (checked.since is None or m.created_at >= checked.since)
            and (checked.until is None or m.created_at < checked.until)
            and (after is None or (m.created_at, m.run_id) < after)
        ]
        picked.sort(key=lambda m: (m.created_at, m.run_id), reverse=True)
        return picked[: checked.limit + 1]

    def delete(self, run_id: str) -> bool:
        with self._lock:
            return self._rows.pop(run_id, None) is not None

    def close(self) -> None:
        """Nothing to release."""


_LISTED = "agent, created_at, question, answer, bytes"
_META = f"run_id, {_LISTED}"
_ADDED = (
    ("agent", "TEXT NOT NULL DEFAULT ''"),
    ("created_at", "REAL"),
    ("question", "TEXT NOT NULL DEFAULT ''"),
    ("answer", "TEXT NOT NULL DEFAULT ''"),
    ("bytes", "INTEGER NOT NULL DEFAULT 0"),
)


def _page_sql(
    select: str, checked: RecordingFilter, after: tuple[float, str] | None, mark: str
) -> tuple[str, list[Any]]:
    """A listing's SQL over ``select`` (``mark`` is the driver's placeholder) and its arguments."""
    clauses: list[str] = []
    args: list[Any] = []
    if checked.agent is not None:
        clauses.append(f"agent = {mark}")
        args.append(checked.agent)
    if checked.since is not None:
        clauses.append(f"created_at >= {mark}")
        args.append(checked.since)
    if checked.until is not None:
        clauses.append(f"created_at < {mark}")
        args.append(checked.until)
    if after is not None:
        clauses.append(f"(created_at < {mark} OR (created_at = {mark} AND run_id < {mark}))")
        args.extend((after[0], after[0], after[1]))
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    args.append(checked.limit + 1)
    return f"{select}{where} ORDER BY created_at DESC, run_id DESC LIMIT {mark}", args


def _meta_of(row: Sequence[Any]) -> RecordingMeta:
    return RecordingMeta(
        run_id=row[0],
        agent=row[1] or "",
        created_at=float(row[2] or 0.0),
        question=row[3] or "",
        answer=row[4] or "",
        bytes=int(row[5] or 0),
    )


class SQLiteRecordingStore(_Recordings):
    """Recordings in a SQLite file's ``recordings`` table (the table ``save_recording`` has always written: a file
    from an earlier release gains its listing columns in place; ``readonly`` reads such a file as it is)."""

    def __init__(self, path: str | PathLike[str], *, readonly: bool = False) -> None:
        self.path = str(path)
        self.readonly = readonly
        self._lock = threading.Lock()
        self._conn = connect_sqlite(self.path, readonly=readonly)
        if not readonly:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS recordings (run_id TEXT PRIMARY KEY, created REAL, body TEXT)"
            )
            add_missing_columns(self._conn, "recordings", _ADDED)
            self._conn.execute(
                f"UPDATE recordings SET created_at = (created - {_JULIAN_EPOCH}) * 86400.0 WHERE created_at IS NULL"
            )
            self._conn.execute("CREATE INDEX IF NOT EXISTS recordings_newest ON recordings (created_at, run_id)")
            self._conn.execute("CREATE INDEX IF NOT EXISTS recordings_agent ON recordings (agent, created_at)")
        present = table_columns(self._conn, "recordings")
        old = {"agent": "''", "created_at": f"(created - {_JULIAN_EPOCH}) * 86400.0", "question": "''", "answer": "''"}
        old["bytes"] = "length(CAST(body AS BLOB))"
        listed = ", ".join(f"{name if name in present else expr} AS {name}" for name, expr in old.items())
        self._select = f"SELECT * FROM (SELECT run_id, {listed} FROM recordings)"

    def _write(self, meta: RecordingMeta, body: str) -> None:
        created = meta.created_at / 86400.0 + _JULIAN_EPOCH
        with self._lock:
            self._conn.execute(
                f"INSERT OR REPLACE INTO recordings (run_id, created, body, {_LISTED}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (meta.run_id, created, body, meta.agent, meta.created_at, meta.question, meta.answer, meta.bytes),
            )

    def get(self, run_id: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT body FROM recordings WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    def _page(self, checked: RecordingFilter, after: tuple[float, str] | None) -> _Metas:
        sql, args = _page_sql(self._select, checked, after, "?")
        with self._lock:
            return [_meta_of(r) for r in self._conn.execute(sql, args).fetchall()]

    def delete(self, run_id: str) -> bool:
        with self._lock:
            return self._conn.execute("DELETE FROM recordings WHERE run_id = ?", (run_id,)).rowcount == 1

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresRecordingStore(_Recordings):
    """Recordings in a PostgreSQL table (connections from the shared pool), indexed for newest-first listing."""

    def __init__(self, dsn: str | PostgresPool, *, table: str = "agentfootprint_recordings") -> None:
        self.table = check_table(table)
        self._pool = dsn if isinstance(dsn, PostgresPool) else postgres_pool(dsn)

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        t = self.table
        with self._pool.connection() as conn:
            ensure_schema(
                self._pool,
                conn,
                f"recordings:{t}",
                (
                    f"CREATE TABLE IF NOT EXISTS {t} (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL DEFAULT '',"
                    " created_at DOUBLE PRECISION NOT NULL, question TEXT NOT NULL DEFAULT '',"
                    " answer TEXT NOT NULL DEFAULT '', bytes BIGINT NOT NULL DEFAULT 0, body TEXT NOT NULL)",
                    f"CREATE INDEX IF NOT EXISTS {t}_newest ON {t} (created_at DESC, run_id DESC)",
                    f"CREATE INDEX IF NOT EXISTS {t}_agent ON {t} (agent, created_at DESC)",
                ),
            )
            yield conn

    def _write(self, meta: RecordingMeta, body: str) -> None:
        with self._conn() as conn:
            conn.execute(
                f"INSERT INTO {self.table} ({_META}, body) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (run_id) DO UPDATE SET agent = EXCLUDED.agent, created_at = EXCLUDED.created_at,"
                " question = EXCLUDED.question, answer = EXCLUDED.answer, bytes = EXCLUDED.bytes, body = EXCLUDED.body",
                (meta.run_id, meta.agent, meta.created_at, meta.question, meta.answer, meta.bytes, body),
            )

    def get(self, run_id: str) -> str | None:
        with self._conn() as conn:
            row = conn.execute(f"SELECT body FROM {self.table} WHERE run_id = %s", (run_id,)).fetchone()
        return None if row is None else str(row[0])

    def _page(self, checked: RecordingFilter, after: tuple[float, str] | None) -> _Metas:
        sql, args = _page_sql(f"SELECT {_META} FROM {self.table}", checked, after, "%s")
        with self._conn() as conn:
            return [_meta_of(r) for r in conn.execute(sql, args).fetchall()]

    def delete(self, run_id: str) -> bool:
        with self._conn() as conn:
            return int(conn.execute(f"DELETE FROM {self.table} WHERE run_id = %s", (run_id,)).rowcount) == 1

    def search(self, query: RecordingSearch) -> RecordingHits:
        """One page of the recordings ``query`` matches, newest first, with the total and the agents; all in SQL
        over listing columns generated from each body (added to the table on the first search)."""
        t = self.table
        where, args = search_where(query)
        shown = f"SELECT {_HIT} FROM {t}{where} ORDER BY created_at DESC, run_id DESC LIMIT %s OFFSET %s"
        with self._conn() as conn:
            ensure_schema(self._pool, conn, f"recordings-listing:{t}", _listing_ddl(t))
            rows = conn.execute(shown, [*args, query.limit, query.offset]).fetchall()
            total = int(conn.execute(f"SELECT count(*) FROM {t}{where}", args).fetchone()[0])
            agents = conn.execute(
                f"SELECT DISTINCT agent FROM {t} WHERE agent <> '' ORDER BY agent LIMIT {MAX_AGENTS}"
            ).fetchall()
        return RecordingHits(
            items=tuple(_hit_of(r) for r in rows), total=total, agents=tuple(str(a[0]) for a in agents)
        )

    def close(self) -> None:
        """Close the pool's idle connections."""
        self._pool.close()


class RecordingSearch(BaseModel):
    """Which recordings a search shows: ``q`` in the run id, question or answer (case-insensitive), one agent,
    made in ``[since, until)``, with or without a paused or failed step, and a page (``offset``/``limit``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    q: str | None = Field(default=None, max_length=500)
    agent: str | None = Field(default=None, max_length=200)
    since: float | None = None
    until: float | None = None
    paused: bool | None = None
    failed: bool | None = None
    offset: int = Field(default=0, ge=0, le=10_000_000)
    limit: int = Field(default=DEFAULT_PAGE, ge=1, le=MAX_PAGE)


class RecordingHit(RecordingMeta):
    """A searched recording: its meta (question and answer read from the body when stored without them) and
    whether any step paused or failed."""

    paused: bool = False
    failed: bool = False


class RecordingHits(BaseModel):
    """One page of a search, the number of recordings it matched, and the agents of the whole store."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    items: tuple[RecordingHit, ...] = ()
    total: int = 0
    agents: tuple[str, ...] = ()


MAX_AGENTS = 200
_PAUSED = r'"failed": ?(true|false),\s*"paused": ?true'
_FAILED = r'"failed": ?true,\s*"paused": ?(true|false)'
"""A paused or failed step, as every recording writes a step's two flags (``failed`` then ``paused``)."""
_SUMMARY_FN = "agentfootprint_recording_summary"
_LISTED_QUESTION = "(CASE WHEN question <> '' THEN question ELSE listed[1] END)"
_LISTED_ANSWER = "(CASE WHEN answer <> '' THEN answer ELSE listed[2] END)"
_HIT = f"run_id, agent, created_at, {_LISTED_QUESTION}, {_LISTED_ANSWER}, bytes, paused, failed"


def _listing_ddl(t: str) -> tuple[str, ...]:
    """The listing columns a search reads, generated from each body: question and answer (for rows stored without
    them; a body that is not JSON gives none) and the pause and error flags."""
    return (
        f"CREATE OR REPLACE FUNCTION {_SUMMARY_FN}(body TEXT) RETURNS TEXT[] IMMUTABLE PARALLEL SAFE"
        " LANGUAGE plpgsql AS $$ DECLARE doc JSONB; state JSONB; said TEXT := ''; answer TEXT := ''; BEGIN"
        " BEGIN doc := body::jsonb; EXCEPTION WHEN others THEN RETURN ARRAY['', '']; END;"
        " IF jsonb_typeof(doc -> 'snapshot') = 'object' THEN doc := doc -> 'snapshot'; END IF;"
        " IF jsonb_typeof(doc) IS DISTINCT FROM 'object' THEN RETURN ARRAY['', '']; END IF;"
        " state := doc -> 'state';"
        " IF jsonb_typeof(state) IS DISTINCT FROM 'object' THEN RETURN ARRAY['', '']; END IF;"
        " IF jsonb_typeof(state -> 'user_message') = 'string' THEN said := state ->> 'user_message'; END IF;"
        " IF jsonb_typeof(state -> 'answer') = 'string' THEN answer := state ->> 'answer';"
        " ELSIF jsonb_typeof(state #> '{last_response,content}') = 'string' THEN"
        " answer := state #>> '{last_response,content}'; END IF;"
        f" RETURN ARRAY[left(said, {SUMMARY_CHARS}), left(answer, {SUMMARY_CHARS})]; END $$",
        f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS listed TEXT[] GENERATED ALWAYS AS ({_SUMMARY_FN}(body)) STORED",
        f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS paused BOOLEAN GENERATED ALWAYS AS (body ~ '{_PAUSED}') STORED",
        f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS failed BOOLEAN GENERATED ALWAYS AS (body ~ '{_FAILED}') STORED",
    )


def search_where(
    query: RecordingSearch,
    *,
    mark: str = "%s",
    like: str = "ILIKE",
    question: str = _LISTED_QUESTION,
    answer: str = _LISTED_ANSWER,
) -> tuple[str, list[Any]]:
    """A search's WHERE clause (``mark`` the driver's placeholder, ``like`` its case-insensitive LIKE, ``question``
    and ``answer`` the columns searched) and its arguments."""
    clauses: list[str] = []
    args: list[Any] = []
    if query.q:
        pattern = "%" + query.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append(
            f"(run_id {like} {mark} ESCAPE '\\' OR {question} {like} {mark} ESCAPE '\\'"
            f" OR {answer} {like} {mark} ESCAPE '\\')"
        )
        args.extend([pattern] * 3)
    bounds: tuple[tuple[str, object], ...] = (
        ("agent =", query.agent),
        ("paused =", query.paused),
        ("failed =", query.failed),
        ("created_at >=", query.since),
        ("created_at <", query.until),
    )
    for bound, value in bounds:
        if value is not None:
            clauses.append(f"{bound} {mark}")
            args.append(value)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


def _hit_of(row: Sequence[Any]) -> RecordingHit:
    return RecordingHit(**_meta_of(row).model_dump(), paused=bool(row[6]), failed=bool(row[7]))


__all__ = [
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "InMemoryRecordingStore",
    "PostgresRecordingStore",
    "RecordingFilter",
    "RecordingHit",
    "RecordingHits",
    "RecordingMeta",
    "RecordingPage",
    "RecordingSearch",
    "RecordingStore",
    "SQLiteRecordingStore",
    "search_where",
]
