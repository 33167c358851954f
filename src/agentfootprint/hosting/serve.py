"""``serve("module:factory")``: import an agent factory and run its AG-UI app under uvicorn (the CLI's backend)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentfootprint._loader import FactoryPathError, import_path
from agentfootprint.hosting._body import DEFAULT_MAX_BODY_BYTES
from agentfootprint.hosting.refusal import HostingConfigError
from agentfootprint.hosting.sessions import DEFAULT_LEASE_SECONDS

if TYPE_CHECKING:
    from agentfootprint.hosting.app import AgentFactory
    from agentfootprint.hosting.limits import AdmissionLimits
    from agentfootprint.hosting.sessions import SessionStore

__all__ = ["check_factory", "load_factory", "open_sessions", "serve"]


def load_factory(target: str) -> AgentFactory:
    """Import ``module:factory`` (the current directory is importable) and return the factory callable."""
    try:
        value = import_path(target, from_cwd=True)
    except FactoryPathError as err:
        if err.reason == "shape":
            raise HostingConfigError(
                "the target must look like 'module:factory' (e.g. 'myapp.agents:make_agent')"
            ) from None
        raise HostingConfigError(str(err)) from None
    from agentfootprint.agent import Agent

    if isinstance(value, Agent):
        raise HostingConfigError(f"{target!r} is an Agent: serve a factory (one agent per turn) that builds one")
    if not callable(value):
        raise HostingConfigError(f"{target!r} is not callable: it must be a factory returning an Agent")
    factory: AgentFactory = value
    return factory


def check_factory(factory: AgentFactory, target: str) -> None:
    """Call the factory once at start-up, so a broken one fails now and not on the first request."""
    from agentfootprint.agent.agent import Agent

    try:
        built: Any = factory()
    except Exception as err:
        raise HostingConfigError(f"{target} failed when called at start-up: {type(err).__name__}: {err}") from None
    if not isinstance(built, Agent):
        raise HostingConfigError(f"{target} returned {type(built).__name__}, not an Agent: it must build one per call")


def open_sessions(url: str | None, *, lease_seconds: float = DEFAULT_LEASE_SECONDS) -> SessionStore:
    """A store from a URL: None → in memory; ``postgresql://``/``postgres://`` → PostgreSQL; else a SQLite path."""
    from agentfootprint.hosting.memory_store import memory_sessions

    if url is None or url in ("", ":memory:", "memory:", "memory://"):
        return memory_sessions(lease_seconds=lease_seconds)
    if url.startswith(("postgresql://", "postgres://")):
        from agentfootprint.hosting.postgres_store import postgres_sessions

        return postgres_sessions(url, lease_seconds=lease_seconds)
    from agentfootprint.hosting.sqlite_store import sqlite_sessions

    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url.removeprefix("sqlite://")
    if not path:
        raise HostingConfigError("a sqlite URL needs a file path: sqlite:///path/to/threads.db")
    return sqlite_sessions(path, lease_seconds=lease_seconds)


def serve(
    target: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    db: str | None = None,
    path: str = "/agui",
    log_level: str = "info",
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_message_bytes: int | None = None,
    limits: AdmissionLimits | Mapping[str, Any] | None = None,
    retention_seconds: float | None = None,
    checkpoint_key: str | bytes | Sequence[str | bytes] | None = None,
    otlp: bool = False,
) -> None:
    """Serve ``module:factory`` over AG-UI at ``http://host:port{path}`` until interrupted (``/healthz`` too).

    ``lease_seconds``: how long a thread stays busy after its host dies mid-turn (renewed while a turn runs);
    ``checkpoint_key``: the host's seal key (or keys, newest first); when None they are read from
    ``AGENTFOOTPRINT_CHECKPOINT_KEY`` (comma-separated); ``otlp``: also receive OTLP/HTTP traces at ``/v1/traces``
    (kept in memory, listed per caller by the explorer)."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise HostingConfigError("port must be an int in 0..65535")
    factory = load_factory(target)
    check_factory(factory, target)
    try:
        import uvicorn
    except ImportError:
        raise HostingConfigError("serving needs the server extra: pip install 'agentfootprint[server]'") from None
    from agentfootprint.hosting._host_seal import key_from_env
    from agentfootprint.hosting.app import ag_ui_app

    key = checkpoint_key if checkpoint_key is not None else key_from_env()

    app = ag_ui_app(
        factory,
        sessions=open_sessions(db, lease_seconds=lease_seconds),
        path=path,
        max_body_bytes=max_body_bytes,
        max_message_bytes=max_message_bytes,
        limits=limits,
        retention_seconds=retention_seconds,
        checkpoint_key=key,
        otlp=otlp,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)
