"""Decision ledgers a host shares between processes: they live in ``agentfootprint.stores.ledger`` (re-exported)."""

from __future__ import annotations

from agentfootprint.stores.ledger import (
    DEFAULT_LEDGER_TABLE,
    DecisionLedgerError,
    PostgresDecisionLedger,
    SQLiteDecisionLedger,
)

__all__ = ["DEFAULT_LEDGER_TABLE", "DecisionLedgerError", "PostgresDecisionLedger", "SQLiteDecisionLedger"]
