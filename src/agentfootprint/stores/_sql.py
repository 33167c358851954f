"""SQL identifiers a store builds statements from: checked once, never taken from data."""

from __future__ import annotations

import re

from agentfootprint.stores.errors import StoreError

_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class StoreTableNameError(StoreError, ValueError):
    """A table name that is not a plain SQL identifier (it is never quoted back)."""

    code = "ERR_STORE_TABLE_NAME"


def check_table(table: str, *, max_length: int = 41) -> str:
    """A safe SQL table name (letters, digits or _, not starting with a digit, at most ``max_length``), or
    ``StoreTableNameError``."""
    if not isinstance(table, str) or not _TABLE.fullmatch(table) or len(table) > max_length:
        raise StoreTableNameError(f"table must be 1-{max_length} letters, digits or _ (starting with a letter or _)")
    return table


__all__ = ["StoreTableNameError", "check_table"]
