"""Command line: ``agentfootprint demo | bench``."""

from __future__ import annotations

import sys
from typing import Any


def _app() -> Any:
    import typer

    app = typer.Typer(
        help="agentfootprint: the explainable agent framework.", no_args_is_help=True, add_completion=False
    )

    @app.command()
    def demo(engine: bool = typer.Option(False, "--engine", help="Only the flowchart engine demo.")) -> None:
        """Run the offline flagship demo."""
        from agentfootprint._demos import run_engine_demo

        run_engine_demo()

    @app.command()
    def version() -> None:
        """Print the installed version."""
        from agentfootprint import __version__

        print(__version__)

    return app


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``agentfootprint`` command."""
    _app()(args=argv if argv is not None else sys.argv[1:], prog_name="agentfootprint")
