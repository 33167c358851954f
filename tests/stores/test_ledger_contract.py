"""One contract for decision ledgers on every backend: a request is spent once, and stays spent for every reader."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentfootprint.agent import InMemoryDecisionLedger, PostgresDecisionLedger, SQLiteDecisionLedger
from agentfootprint.stores import DecisionLedger, StoreFamily


def test_a_request_is_spent_exactly_once(family: StoreFamily, reopen: Any) -> None:
    ledger = family.ledger
    assert isinstance(ledger, DecisionLedger)
    assert ledger.is_spent("req_a") is False
    assert ledger.spend("req_a") is True
    assert ledger.spend("req_a") is False and ledger.is_spent("req_a") is True
    other = reopen().ledger
    assert other.is_spent("req_a") is True and other.spend("req_a") is False
    assert other.spend("req_b") is True and ledger.is_spent("req_b") is True


def test_of_many_threads_spending_one_request_exactly_one_is_told_true(family: StoreFamily) -> None:
    ledger = family.ledger
    with ThreadPoolExecutor(max_workers=8) as pool:
        told = list(pool.map(lambda _: ledger.spend("req_race"), range(32)))
    assert told.count(True) == 1


def test_hostile_request_ids_are_data(family: StoreFamily) -> None:
    ledger = family.ledger
    hostile = ["'; DROP TABLE spent_requests; --", "", "é" * 500, "req_\u2028"]
    assert [ledger.spend(r) for r in hostile] == [True] * len(hostile)
    assert all(ledger.is_spent(r) for r in hostile) and ledger.is_spent("req_other") is False


def test_the_old_import_paths_name_the_stores_classes() -> None:
    from agentfootprint.stores import ledger

    assert (InMemoryDecisionLedger, SQLiteDecisionLedger, PostgresDecisionLedger) == (
        ledger.InMemoryDecisionLedger,
        ledger.SQLiteDecisionLedger,
        ledger.PostgresDecisionLedger,
    )
