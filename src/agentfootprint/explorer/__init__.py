"""The why explorer: a local web page (and its JSON API) to browse runs, follow each source's chain, prove
culprits by reruns watched live, and compare two runs. Starlette loads only when an app is built."""

from agentfootprint.explorer.app import explorer_app
from agentfootprint.explorer.catalog import (
    Catalog,
    ExplorerError,
    MemoryCatalog,
    RunQuery,
    RunRow,
    RunsPage,
    open_catalog,
)
from agentfootprint.explorer.prove import LocalizeRequest

__all__ = [
    "Catalog",
    "ExplorerError",
    "LocalizeRequest",
    "MemoryCatalog",
    "RunQuery",
    "RunRow",
    "RunsPage",
    "explorer_app",
    "open_catalog",
]
