"""Command line: ``agentfootprint demo | bench``."""

from __future__ import annotations

import sys
from typing import Any


def _app() -> Any:
    import typer

    app = typer.Typer(
        pretty_exceptions_enable=False,
        help="agentfootprint: the explainable agent framework.",
        no_args_is_help=True,
        add_completion=False,
    )

    @app.command()
    def demo(
        engine: bool = typer.Option(False, "--engine", help="Also show the flowchart engine demo."),
        report: str = typer.Option("report.html", "--report", "-o", help="Where to write the HTML report."),
        real: bool = typer.Option(False, "--real", help="Run on a local model (needs the local-llm extra)."),
    ) -> None:
        """Run the offline flagship demo: wrong answer → backtrack → ablation proof → report.html."""
        from agentfootprint._demos import run_agent_demo, run_engine_demo

        if real:
            from agentfootprint._demo_real import run_real_demo

            run_real_demo()
            return

        run_agent_demo(report_path=report)
        if engine:
            run_engine_demo()

    @app.command()
    def explain(recording: str, at: str = typer.Option(None, "--at", help="Backtrack from this step instead.")) -> None:
        """Backtrack a stored recording (no provider needed)."""
        from agentfootprint.explain import backtrack, load_recording

        print(str(backtrack(load_recording(recording), at=at)))

    @app.command("report")
    def report_cmd(recording: str, output: str = typer.Option("report.html", "--output", "-o")) -> None:
        """Write the HTML report of a stored recording."""
        from pathlib import Path

        from agentfootprint.explain import backtrack, load_recording, report_html

        rec = load_recording(recording)
        Path(output).write_text(report_html(backtrack(rec), snapshot=rec.snapshot))
        print(f"wrote {output}")

    @app.command()
    def verify(
        path: str, public_key: str = typer.Option(None, "--public-key", help="Ed25519 public key file.")
    ) -> None:
        """Verify an audit bundle (JSON lines); exit 1 names the broken record."""
        from agentfootprint.audit import verify_file

        raise typer.Exit(verify_file(path, public_key=public_key))

    @app.command()
    def serve(
        target: str,
        host: str = typer.Option("127.0.0.1", help="Interface to bind (loopback by default)."),
        port: int = typer.Option(8000),
        db: str = typer.Option(None, help="Session store: a SQLite path or a postgresql:// DSN (default: memory)."),
        path: str = typer.Option("/agui", help="The AG-UI endpoint path."),
        lease_seconds: float = typer.Option(
            10.0, help="How long a thread stays busy after its host dies mid-turn (renewed while a turn runs)."
        ),
        max_body_bytes: int = typer.Option(1024 * 1024, help="The largest request body read (413 over it)."),
        max_message_bytes: int = typer.Option(None, help="The largest message a turn may carry (413 over it)."),
        turns_per_minute: int = typer.Option(None, help="Per caller: turns admitted in any 60 s (429 over it)."),
        turns_per_hour: int = typer.Option(None, help="Per caller: turns admitted in any hour (429 over it)."),
        concurrent_turns: int = typer.Option(None, help="Per caller: turns running at once (429 over it)."),
        retention_days: float = typer.Option(None, help="Delete threads not written for this many days."),
    ) -> None:
        """Serve ``module:factory`` (a no-argument function returning an Agent) over AG-UI."""
        from agentfootprint.errors import AgentFootprintError
        from agentfootprint.hosting.serve import serve as run_server

        limits = {
            "turns_per_minute": turns_per_minute,
            "turns_per_hour": turns_per_hour,
            "concurrent_turns": concurrent_turns,
        }
        try:
            run_server(
                target,
                host=host,
                port=port,
                db=db,
                path=path,
                lease_seconds=lease_seconds,
                max_body_bytes=max_body_bytes,
                max_message_bytes=max_message_bytes,
                limits=limits,
                retention_seconds=retention_days * 86_400 if retention_days is not None else None,
            )
        except AgentFootprintError as exc:
            print(f"error: {exc}")
            raise typer.Exit(2) from None

    @app.command("mcp")
    def mcp_cmd(
        target: str,
        http: bool = typer.Option(False, "--http", help="Serve streamable HTTP instead of stdio."),
        host: str = typer.Option("127.0.0.1", help="Interface to bind with --http (loopback by default)."),
        port: int = typer.Option(8000, help="Port with --http."),
        path: str = typer.Option("/mcp", help="Endpoint path with --http."),
    ) -> None:
        """Serve ``module:factory`` over MCP: one tool named after the agent, argument ``message``."""
        import asyncio

        from agentfootprint.hosting.serve import load_factory
        from agentfootprint.mcp import mcp_app, serve_stdio

        factory = load_factory(target)
        if not http:
            asyncio.run(serve_stdio(factory))
            return
        import uvicorn

        uvicorn.run(mcp_app(factory, path=path, host=host), host=host, port=port, log_level="warning")

    @app.command("lint-tools")
    def lint_tools_cmd(path: str) -> None:
        """Lint a tool catalog (JSON: ours, OpenAI, Anthropic or MCP shapes); exit 1 when findings exist."""
        from agentfootprint.tools.lint import format_findings, lint_tools, read_tools_file

        findings = lint_tools(read_tools_file(path))
        print(format_findings(findings))
        raise typer.Exit(1 if findings else 0)

    @app.command()
    def version() -> None:
        """Print the installed version."""
        from agentfootprint import __version__

        print(__version__)

    return app


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agentfootprint`` command; a typed refusal prints its message and code, no traceback."""
    from agentfootprint.errors import AgentFootprintError

    try:
        _app()(args=argv if argv is not None else sys.argv[1:], prog_name="agentfootprint")
    except AgentFootprintError as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
