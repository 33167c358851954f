"""``serve("module:factory")``: import an agent factory and run its AG-UI app under uvicorn (the CLI's backend)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentfootprint.hosting.refusal import HostingConfigError

if TYPE_CHECKING:
    from agentfootprint.hosting.app import AgentFactory
    from agentfootprint.hosting.sessions import SessionStore

__all__ = ["load_factory", "open_sessions", "serve"]

_TARGET = re.compile(r"(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)", re.ASCII)


def load_factory(target: str) -> AgentFactory:
    """Import ``module:factory`` (the current directory is importable) and return the factory callable."""
    match = _TARGET.fullmatch(target) if isinstance(target, str) else None
    if match is None:
        raise HostingConfigError("the target must look like 'module:factory' (e.g. 'myapp.agents:make_agent')")
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        value: Any = importlib.import_module(match["module"])
    except ImportError as err:
        raise HostingConfigError(f"cannot import module {match['module']!r}: {err}") from None
    for part in match["attr"].split("."):
        if not hasattr(value, part):
            raise HostingConfigError(f"module {match['module']!r} has no attribute {match['attr']!r}")
        value = getattr(value, part)
    from agentfootprint.agent.agent import Agent

    if isinstance(value, Agent):
        raise HostingConfigError(f"{target!r} is an Agent: serve a factory (one agent per turn) that builds one")
    if not callable(value):
        raise HostingConfigError(f"{target!r} is not callable: it must be a factory returning an Agent")
    factory: AgentFactory = value
    return factory


def open_sessions(url: str | None) -> SessionStore:
    """A store from a URL: None → in memory; ``postgresql://``/``postgres://`` → PostgreSQL; else a SQLite path."""
    from agentfootprint.hosting.memory_store import memory_sessions

    if url is None or url in ("", ":memory:", "memory:", "memory://"):
        return memory_sessions()
    if url.startswith(("postgresql://", "postgres://")):
        from agentfootprint.hosting.postgres_store import postgres_sessions

        return postgres_sessions(url)
    from agentfootprint.hosting.sqlite_store import sqlite_sessions

    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url.removeprefix("sqlite://")
    if not path:
        raise HostingConfigError("a sqlite URL needs a file path: sqlite:///path/to/threads.db")
    return sqlite_sessions(path)


def serve(
    target: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    db: str | None = None,
    path: str = "/agui",
    log_level: str = "info",
) -> None:
    """Serve ``module:factory`` over AG-UI at ``http://host:port{path}`` until interrupted (``/healthz`` too)."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise HostingConfigError("port must be an int in 0..65535")
    factory = load_factory(target)
    try:
        import uvicorn
    except ImportError:
        raise HostingConfigError("serving needs the server extra: pip install 'agentfootprint[server]'") from None
    from agentfootprint.hosting.app import ag_ui_app

    app = ag_ui_app(factory, sessions=open_sessions(db), path=path)
    uvicorn.run(app, host=host, port=port, log_level=log_level)
