"""``agentfootprint ui PATH|URL``: serve the why explorer over recordings (with ``--agent``, culprits provable)."""

from __future__ import annotations

from typing import Any


def register(app: Any) -> None:
    """Add the ``ui`` command to the Typer app."""
    import typer

    @app.command("ui")  # type: ignore[untyped-decorator]
    def ui(
        path: str = typer.Argument(
            ...,
            help="Recordings: a .json file, a directory of them, a .sqlite/.db store, or a store URL"
            " (postgresql://..., sqlite:///path).",
        ),
        host: str = typer.Option("127.0.0.1", "--host", help="Interface to bind (loopback by default)."),
        port: int = typer.Option(8765, "--port", help="Port to listen on."),
        agent: str = typer.Option(
            None, "--agent", help="module:factory building the agent that made the runs (to prove culprits by reruns)."
        ),
    ) -> None:
        """Serve the why explorer: browse runs, follow each source's chain, prove culprits, compare runs."""
        from agentfootprint.explorer import explorer_app

        factory = None
        if agent:
            from agentfootprint.hosting.serve import check_factory, load_factory

            factory = load_factory(agent)
            check_factory(factory, agent)
        application = explorer_app(path, agent_factory=factory)
        import uvicorn

        where = f"http://{host}:{port}/"
        proving = "culprits provable (reruns on the factory's agent)" if factory else "read-only: pass --agent to prove"
        typer.echo(f"why explorer on {where} ({proving}); Ctrl+C stops it")
        uvicorn.run(application, host=host, port=port, log_level="warning")


__all__ = ["register"]
