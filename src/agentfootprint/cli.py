"""Command line: ``agentfootprint demo | explain | report | diff | verify | serve | mcp | lint-tools | ...``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agentfootprint.errors import AgentFootprintError

HOW_TO_RECORD = (
    "make one with: agentfootprint demo --save run.json, "
    "or in Python: from agentfootprint.explain import save_recording; save_recording(agent, 'run.json')"
)


class CliInputError(AgentFootprintError):
    """A command-line argument that cannot be used (a path whose folder is missing, a file of the wrong kind)."""

    code = "ERR_CLI_INPUT"


def writable_path(path: str, what: str) -> Path:
    """``path`` if a file can be written there (its folder exists), else a ``CliInputError`` naming ``what``."""
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise CliInputError(f"cannot write the {what}: folder {folder} does not exist")
    if target.is_dir():
        raise CliInputError(f"cannot write the {what}: {target} is a folder")
    return target


def write_text(path: Path, text: str, what: str) -> None:
    """Write ``text``, turning an OS refusal (permissions, full disk) into a ``CliInputError``."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliInputError(f"cannot write the {what} to {path}: {exc.strerror or type(exc).__name__}") from None


def open_recording(path: str, run_id: str | None) -> Any:
    """The recording at ``path``; an unreadable one says how to make a recording."""
    from agentfootprint._cli_interop import foreign_recording
    from agentfootprint.explain import InvalidRecordingError, load_recording

    foreign = foreign_recording(path, run_id)  # another framework's OTLP trace, imported
    if foreign is not None:
        return foreign
    try:
        return load_recording(path, run_id=run_id)
    except InvalidRecordingError as exc:
        raise InvalidRecordingError(f"{exc}; {HOW_TO_RECORD}") from None


def _localize_recording(rec: Any, agent: str, changed_if: str | None) -> Any:
    """Localize a stored run by rerunning it on the agent ``agent`` ("module:factory") builds."""
    from agentfootprint._sync import run_sync
    from agentfootprint.explain import localize_context_bug
    from agentfootprint.explorer.prove import bind_recording, outcome_changed
    from agentfootprint.hosting.serve import check_factory, load_factory

    factory = load_factory(agent)
    check_factory(factory, agent)
    record = bind_recording(rec, factory)
    return run_sync(localize_context_bug(record, outcome_changed=outcome_changed(changed_if), progress=False))


def _version_callback(value: bool) -> None:
    if value:
        import typer

        from agentfootprint._version import __version__

        print(f"agentfootprint {__version__}")
        raise typer.Exit()


def _group_class() -> Any:
    """A command group that prints a typed refusal as one line (``error [CODE]: message``) and exits 2."""
    import typer
    from typer.core import TyperGroup

    class RefusalsAsMessages(TyperGroup):
        def invoke(self, ctx: Any) -> Any:
            try:
                return super().invoke(ctx)
            except AgentFootprintError as exc:
                typer.echo(f"error [{exc.code}]: {exc}", err=True)
                raise typer.Exit(2) from None

    return RefusalsAsMessages


def _app() -> Any:
    import typer

    app = typer.Typer(
        cls=_group_class(),
        pretty_exceptions_enable=False,
        help="agentfootprint: the explainable agent framework.",
        no_args_is_help=True,
        add_completion=False,
    )

    @app.callback()
    def main_options(
        version: bool = typer.Option(
            False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """agentfootprint: the explainable agent framework."""

    @app.command()
    def demo(
        engine: bool = typer.Option(False, "--engine", help="Also show the flowchart engine demo."),
        report: str = typer.Option("report.html", "--report", "-o", help="Where to write the HTML report."),
        save: str = typer.Option(None, "--save", help="Also save the run's recording here (.json or .sqlite)."),
        real: bool = typer.Option(False, "--real", help="Run on a small local model (needs the local-llm extra)."),
        model: str = typer.Option(
            "gemma3-270m", "--model", help="With --real: gemma3-270m (door code) or smollm2-135m (refunds)."
        ),
    ) -> None:
        """Run the flagship demo: wrong answer → backtrack → ablation proof → report.html."""
        report_path = writable_path(report, "report")
        save_path = writable_path(save, "recording") if save else None
        if real:
            from agentfootprint._demo_real import run_real_demo

            run_real_demo(model=model, report_path=str(report_path), save_path=save_path)
            return
        from agentfootprint._demos import run_agent_demo, run_engine_demo

        run_agent_demo(report_path=str(report_path), save_path=save_path)
        if engine:
            run_engine_demo()

    @app.command()
    def explain(
        recording: str = typer.Argument(..., help="A recording: .json, or .sqlite/.db (one row per run)."),
        at: str = typer.Option(None, "--at", help="Backtrack from this step (e.g. call-llm#5) instead of the answer."),
        run_id: str = typer.Option(None, "--run-id", help="In a SQLite recording: this run (default: the newest)."),
    ) -> None:
        """Backtrack a stored recording (no model needed)."""
        from agentfootprint.explain import backtrack

        print(str(backtrack(open_recording(recording, run_id), at=at)))

    @app.command("report")
    def report_cmd(
        recording: str = typer.Argument(..., help="A recording: .json, or .sqlite/.db (one row per run)."),
        output: str = typer.Option("report.html", "--output", "-o", help="Where to write the HTML report."),
        run_id: str = typer.Option(None, "--run-id", help="In a SQLite recording: this run (default: the newest)."),
        agent: str = typer.Option(
            None, "--agent", help="module:factory building the agent that made the run: localize, and show suspects."
        ),
        changed_if: str = typer.Option(
            None, "--changed-if", help="With --agent: the outcome changed when this text is in one answer only."
        ),
    ) -> None:
        """Write the HTML report of a stored recording (with --agent, its suspects proved by reruns)."""
        from agentfootprint.explain import backtrack, report_html

        target = writable_path(output, "report")
        rec = open_recording(recording, run_id)
        localization = _localize_recording(rec, agent, changed_if) if agent else None
        if changed_if and not agent:
            print("--changed-if is used only with --agent (a recording alone cannot rerun)", file=sys.stderr)
        write_text(target, report_html(backtrack(rec), localization, snapshot=rec.snapshot), "report")
        print(f"wrote {target}" + (f" ({localization.reruns} reruns)" if localization is not None else ""))

    @app.command("diff")
    def diff_cmd(
        a: str = typer.Argument(..., help="Run A: a recording (.json, or .sqlite/.db: its newest run)."),
        b: str = typer.Argument(..., help="Run B: a recording (.json, or .sqlite/.db: its newest run)."),
    ) -> None:
        """Compare two stored runs: where they first diverge, and the sources added, removed or changed."""
        from agentfootprint.explain import diff

        print(str(diff(open_recording(a, None), open_recording(b, None))))

    @app.command()
    def verify(
        path: str, public_key: str = typer.Option(None, "--public-key", help="Ed25519 public key file.")
    ) -> None:
        """Verify an audit bundle (JSON lines); exit 1 names the broken record."""
        from agentfootprint.audit import verify_file

        raise typer.Exit(verify_file(path, public_key=public_key))

    @app.command()
    def serve(
        target: str = typer.Argument(..., help="module:factory, imported from the current directory."),
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
        otlp: bool = typer.Option(False, "--otlp", help="Also receive OTLP/HTTP traces at POST /v1/traces."),
    ) -> None:
        """Serve module:factory (a no-argument function returning an Agent) over AG-UI.

        Set AGENTFOOTPRINT_CHECKPOINT_KEY to have the host seal the pauses and conversations it stores."""
        from agentfootprint.hosting.serve import serve as run_server

        limits = {
            "turns_per_minute": turns_per_minute,
            "turns_per_hour": turns_per_hour,
            "concurrent_turns": concurrent_turns,
        }
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
            otlp=otlp,
        )

    @app.command("mcp")
    def mcp_cmd(
        target: str,
        http: bool = typer.Option(False, "--http", help="Serve streamable HTTP instead of stdio."),
        host: str = typer.Option("127.0.0.1", help="Interface to bind with --http (loopback by default)."),
        port: int = typer.Option(8000, help="Port with --http."),
        path: str = typer.Option("/mcp", help="Endpoint path with --http."),
        max_message_bytes: int = typer.Option(4 * 1024 * 1024, help="Largest message accepted, in bytes."),
        max_turns: int = typer.Option(8, help="Turns allowed to run at once (more are refused)."),
    ) -> None:
        """Serve module:factory over MCP: one tool named after the agent, argument "message"."""
        from agentfootprint._sync import run_sync
        from agentfootprint.hosting.serve import load_factory
        from agentfootprint.mcp import mcp_app, serve_stdio

        factory = load_factory(target)
        limits = {"max_message_bytes": max_message_bytes, "max_concurrent_turns": max_turns}
        if not http:
            run_sync(serve_stdio(factory, **limits), "serve_stdio")
            return
        import uvicorn

        uvicorn.run(mcp_app(factory, path=path, host=host, **limits), host=host, port=port, log_level="warning")

    @app.command("lint-tools")
    def lint_tools_cmd(
        path: str = typer.Argument(..., help="A JSON tool catalog: ours, OpenAI, Anthropic or MCP shapes."),
    ) -> None:
        """Lint a tool catalog; exit 1 when findings exist."""
        from agentfootprint.tools.lint import ToolLintInputError, format_findings, lint_tools, read_tools_file

        try:
            entries = read_tools_file(path)
        except ToolLintInputError as exc:
            raise ToolLintInputError(
                f"{exc}; lint-tools expects a JSON file holding a list of tools (or an object with a 'tools' list) "
                "in our, OpenAI, Anthropic or MCP shape"
            ) from None
        findings = lint_tools(entries)
        print(format_findings(findings))
        raise typer.Exit(1 if findings else 0)

    @app.command()
    def version() -> None:
        """Print the installed version."""
        from agentfootprint._version import __version__

        print(f"agentfootprint {__version__}")

    from agentfootprint._cli_whatif import register as register_whatif

    register_whatif(app)
    from agentfootprint._cli_interop import register as register_interop

    register_interop(app)
    from agentfootprint._cli_ui import register as register_ui

    register_ui(app)
    from agentfootprint._cli_integrity import register as register_integrity

    register_integrity(app)
    return app


def app() -> Any:
    """The Typer application (for ``typer.testing.CliRunner``)."""
    return _app()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agentfootprint`` command; a typed refusal prints its message and code, no traceback."""
    try:
        _app()(args=argv if argv is not None else sys.argv[1:], prog_name="agentfootprint")
    except AgentFootprintError as exc:
        print(f"error [{exc.code}]: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
