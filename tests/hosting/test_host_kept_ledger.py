"""A host that keeps threads across restarts keeps its consent decisions with them (issue 39, item 5): an older
sealed pause put back in the store and resumed after a restart never runs a consented tool twice."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _ledger_race import refund_agent
from agui_http import body, client, of, turn, user

from agentfootprint.agent import InMemoryDecisionLedger, SQLiteDecisionLedger
from agentfootprint.hosting import ag_ui_app, memory_sessions, sqlite_sessions

KEY = "host key"


class PutBack:
    """A store whose writer puts an older record of the thread back, once armed (a replay behind the host)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.old: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def acquire(self, thread_id: str, owner: str | None) -> Any:
        lease = await self.inner.acquire(thread_id, owner)
        return lease if self.old is None else replace(lease, record=self.old)


def _factory(effects: Path, ledger: Any = None) -> Any:
    return lambda: refund_agent(effects, ledger)


def _approve(interrupt: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]


def _restart(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process: its in-memory ledger remembers nothing."""
    monkeypatch.setattr("agentfootprint.agent.config.process_decision_ledger", InMemoryDecisionLedger)


async def _pause_and_approve(app: Any, store: PutBack) -> tuple[Any, dict[str, Any]]:
    async with client(app) as http:
        _, events = await turn(http, body(user("u1", "refund A-1")))
        (interrupt,) = events[-1]["outcome"]["interrupts"]
        lease = await store.inner.acquire("t1", None)
        await store.inner.release(lease)
        status, events = await turn(http, body(user("u1", "refund A-1"), run="r2", resume=_approve(interrupt)))
        assert status == 200 and not of(events, "RUN_ERROR")
    return lease.record, interrupt


async def test_an_older_sealed_pause_replayed_after_a_restart_never_runs_the_consented_tool_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    effects, db = tmp_path / "refunds.jsonl", tmp_path / "threads.db"
    store = PutBack(sqlite_sessions(db))
    old, interrupt = await _pause_and_approve(ag_ui_app(_factory(effects), sessions=store, checkpoint_key=KEY), store)
    assert len(effects.read_text().splitlines()) == 1
    _restart(monkeypatch)
    again = PutBack(sqlite_sessions(db))
    again.old = old  # the pause as it was stored before the approval, seal intact
    async with client(ag_ui_app(_factory(effects), sessions=again, checkpoint_key=KEY)) as http:
        status, events = await turn(http, body(user("u1", "refund A-1"), run="r3", resume=_approve(interrupt)))
    (error,) = of(events, "RUN_ERROR")
    assert (status, error["code"]) == (200, "ERR_RESUME_DECISION")
    assert len(effects.read_text().splitlines()) == 1  # the refund ran once
    assert SQLiteDecisionLedger(db).is_spent(next(iter(_spent(db))))


def _spent(db: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "spent_requests" not in tables:
            return []
        return [row[0] for row in conn.execute("SELECT request_id FROM spent_requests")]


async def test_the_control_an_in_memory_store_dies_with_its_process_so_its_ledger_may_too(tmp_path: Path) -> None:
    effects = tmp_path / "refunds.jsonl"
    store = PutBack(memory_sessions())
    assert not callable(getattr(store.inner, "decision_ledger", None))
    await _pause_and_approve(ag_ui_app(_factory(effects), sessions=store), store)
    assert len(effects.read_text().splitlines()) == 1


async def test_an_agent_that_names_its_own_ledger_keeps_it(tmp_path: Path) -> None:
    effects, db = tmp_path / "refunds.jsonl", tmp_path / "threads.db"
    own = InMemoryDecisionLedger()
    store = PutBack(sqlite_sessions(db))
    await _pause_and_approve(ag_ui_app(_factory(effects, own), sessions=store), store)
    assert len(own) == 1 and _spent(db) == []
