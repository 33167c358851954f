"""Decision ledgers shared by processes (R004-140): of two processes resuming the same consent pause through one
SQLite file or one PostgreSQL database, exactly one runs the tool; a ledger that cannot be reached spends nothing
and the tool never runs."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import uuid
from pathlib import Path
from typing import Any

import pytest
from _ledger_race import refund_agent, resume_side
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests._live import free_port

from agentfootprint import check_in_approved
from agentfootprint.agent import DecisionLedgerError, PostgresDecisionLedger, SQLiteDecisionLedger


def _paused(effects: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    paused = asyncio.run(refund_agent(effects).run("refund A-1001"))
    assert paused.status == "paused" and paused.checkpoint is not None
    return json.loads(json.dumps(paused.checkpoint)), check_in_approved(paused)


def _race(kind: str, where: str, tmp_path: Path) -> tuple[list[tuple[str, str, str]], list[str]]:
    effects = tmp_path / "refunds.jsonl"
    checkpoint, decision = _paused(effects)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    args = (kind, where, checkpoint, decision, str(effects), barrier, results)
    sides = [ctx.Process(target=resume_side, args=args) for _ in range(2)]
    for side in sides:
        side.start()
    got = [results.get(timeout=120) for _ in sides]
    for side in sides:
        side.join(timeout=60)
        assert side.exitcode == 0
    return sorted(got), effects.read_text(encoding="utf-8").splitlines() if effects.exists() else []


def test_r004_140_two_processes_resume_one_pause_through_postgres_exactly_one_runs_the_tool(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """R004-140: a PostgreSQL ledger shared by two processes: both pass the spent check, both spend at once (a
    barrier holds each at the insert); one runs the refund, the other is refused as spent, before the tool."""
    got, refunds = _race("postgres", postgres_dsn, tmp_path)
    assert got == [("ran", "completed", "done: refunded 480"), ("refused", "ERR_RESUME_DECISION", "spent")]
    assert refunds == ['{"order_id": "A-1001", "amount": 480}']


def test_r004_140_two_processes_resume_one_pause_through_sqlite_exactly_one_runs_the_tool(tmp_path: Path) -> None:
    """R004-140: the same race through one SQLite file."""
    got, refunds = _race("sqlite", str(tmp_path / "ledger.sqlite"), tmp_path)
    assert got == [("ran", "completed", "done: refunded 480"), ("refused", "ERR_RESUME_DECISION", "spent")]
    assert refunds == ['{"order_id": "A-1001", "amount": 480}']


def test_postgres_ledgers_on_one_table_share_what_is_spent(postgres_dsn: str) -> None:
    table = f"l_{uuid.uuid4().hex[:12]}"
    one, two = PostgresDecisionLedger(postgres_dsn, table=table), PostgresDecisionLedger(postgres_dsn, table=table)
    try:
        assert one.is_spent("req_a") is False
        assert one.spend("req_a") is True
        assert two.is_spent("req_a") is True and two.spend("req_a") is False and one.spend("req_a") is False
        assert two.spend("req_b") is True and one.is_spent("req_b") is True
        other = PostgresDecisionLedger(postgres_dsn, table=table + "_other")
        assert other.is_spent("req_a") is False and other.spend("req_a") is True
        other.close()
    finally:
        one.close()
        two.close()
    assert one.spend("req_c") is True  # a closed ledger reconnects on next use
    one.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.text(min_size=1, max_size=80).filter(lambda s: "\x00" not in s), min_size=1, max_size=6))
def test_property_a_request_id_is_spent_exactly_once(postgres_dsn: str, ids: list[str]) -> None:
    ledger = PostgresDecisionLedger(postgres_dsn, table="prop_ledger")
    try:
        fresh = [i for i in dict.fromkeys(ids) if not ledger.is_spent(i)]
        first = [ledger.spend(i) for i in fresh]
        assert first == [True] * len(fresh)
        assert [ledger.spend(i) for i in ids] == [False] * len(ids)
        assert all(ledger.is_spent(i) for i in ids)
    finally:
        ledger.close()


async def test_an_unreachable_ledger_spends_nothing_and_the_tool_never_runs(tmp_path: Path) -> None:
    effects = tmp_path / "refunds.jsonl"
    checkpoint, decision = await asyncio.to_thread(_paused, effects)
    dsn = f"postgresql://ledger:hunter2-secret@127.0.0.1:{free_port()}/nowhere"  # nothing listens there
    ledger = PostgresDecisionLedger(dsn, connect_timeout=2)
    with pytest.raises(DecisionLedgerError) as err:
        await refund_agent(effects, ledger).resume(checkpoint, decision)
    assert err.value.code == "ERR_DECISION_LEDGER"
    assert "hunter2" not in str(err.value) and "hunter2" not in repr(ledger)
    assert not effects.exists()


@pytest.mark.parametrize("table", ["", "Spent", "x; DROP TABLE y", "a" * 64, "1abc", "spent-requests"])
def test_a_table_that_is_not_a_plain_name_is_refused(table: str) -> None:
    with pytest.raises(DecisionLedgerError) as err:
        PostgresDecisionLedger("postgresql://u@127.0.0.1/db", table=table)
    assert err.value.code == "ERR_DECISION_LEDGER" and (not table or table not in str(err.value))


@pytest.mark.parametrize("dsn", ["", None, 5])
def test_a_missing_connection_string_is_refused(dsn: Any) -> None:
    with pytest.raises(DecisionLedgerError):
        PostgresDecisionLedger(dsn)


def test_sqlite_ledger_spends_once(tmp_path: Path) -> None:
    one, two = SQLiteDecisionLedger(tmp_path / "l.sqlite"), SQLiteDecisionLedger(tmp_path / "l.sqlite")
    assert one.spend("req_x") is True and two.spend("req_x") is False and two.is_spent("req_x") is True
