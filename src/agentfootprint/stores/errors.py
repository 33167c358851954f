"""The storage layer's refusals: a bad store URL, a missing driver, a store that cannot be used."""

from __future__ import annotations

from typing import Literal

from agentfootprint.errors import AgentFootprintError

UrlProblem = Literal["not_a_string", "no_scheme", "unknown_scheme", "missing_path", "unexpected_path"]


class StoreError(AgentFootprintError):
    """A store that cannot do what was asked (its database refused, its input is malformed)."""

    code = "ERR_STORE"


class StoreURLError(StoreError, ValueError):
    """A store URL that names no store; ``problem`` (and ``code``) say what is wrong, the URL is never quoted (it
    may hold a password)."""

    code = "ERR_STORE_URL"

    def __init__(self, problem: UrlProblem, message: str) -> None:
        super().__init__(message, code=f"ERR_STORE_URL_{problem.upper()}")
        self.problem: UrlProblem = problem


class StoreUnavailableError(StoreError, ImportError):
    """A store's driver or extension is not installed (names the extra to install)."""

    code = "ERR_STORE_UNAVAILABLE"


class VectorStoreUnavailableError(StoreUnavailableError):
    """A vector store's extension or driver is not installed (names the extra to install)."""

    code = "ERR_VECTOR_STORE_UNAVAILABLE"


class StoreCursorError(StoreError, ValueError):
    """A page cursor this store did not hand out (it is never quoted)."""

    code = "ERR_STORE_CURSOR"


__all__ = [
    "StoreCursorError",
    "StoreError",
    "StoreURLError",
    "StoreUnavailableError",
    "UrlProblem",
    "VectorStoreUnavailableError",
]
