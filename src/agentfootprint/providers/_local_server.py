"""llama.cpp's server in a child process on 127.0.0.1: free port, bounded readiness polling, clean stop."""

from __future__ import annotations

import atexit
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from agentfootprint.providers._local_errors import INSTALL_HINT, LocalServerStartError, crash_hint

_TAIL_LINES = 20
_TAIL_CHARS = 2000
_SECRET_LIKE = re.compile(r"(?i)((?:api[_-]?key|token|secret|password|authorization)\s*[=:]\s*)\S+")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port the OS reports free right now on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def tail_text(text: str, lines: int = _TAIL_LINES, limit: int = _TAIL_CHARS) -> str:
    """The last ``lines`` lines of a log (at most ``limit`` characters), with key/token-like values masked."""
    kept = "\n".join(text.strip().splitlines()[-lines:])
    return _SECRET_LIKE.sub(r"\1***", kept)[-limit:]


class LocalLLMServer:
    """Runs llama.cpp's OpenAI-compatible server for one GGUF in a child process; a context manager, or ``stop``.

    Prompt caching is off, so at temperature 0 an answer depends only on its own request.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        model_alias: str = "local",
        startup_timeout: float = 120.0,
        python: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        if startup_timeout <= 0:
            raise ValueError("startup_timeout must be a positive number of seconds")
        self.model_path = Path(model_path)
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.model_alias = model_alias
        self.startup_timeout = float(startup_timeout)
        self.python = python or sys.executable
        self.extra_args = list(extra_args)
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalLLMServer(model={self.model_path.name!r}, host={self.host!r}, port={self.port}, {state})"

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def exit_code(self) -> int | None:
        """The exit code if the started server has died (negative: killed by that signal), else None."""
        return None if self._process is None else self._process.poll()

    def wait_exit(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the server to exit; its exit code, or None if still alive."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    @property
    def base_url(self) -> str:
        """The Chat Completions base URL (``http://host:port/v1``)."""
        if self.port is None:
            raise LocalServerStartError("the local server has not been started; call start() first")
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        """The argv that starts the server."""
        argv = [
            self.python,
            "-m",
            "agentfootprint.providers._llama_serve",
            "--model",
            str(self.model_path),
            "--model-alias",
            self.model_alias,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n-ctx",
            str(self.n_ctx),
            "--seed",
            str(self.seed),
        ]
        if self.n_threads is not None:
            argv += ["--n-threads", str(self.n_threads)]
        return argv + self.extra_args

    def start(self) -> str:
        """Start the server and wait (bounded) until it answers ``GET /v1/models``; returns ``base_url``."""
        if self.running:
            return self.base_url
        if self.port is None:
            self.port = free_port(self.host)
        fd, log_name = tempfile.mkstemp(prefix="agentfootprint-llama-server-", suffix=".log")
        self._log_path = Path(log_name)
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(
                self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        atexit.register(self.stop)
        self._wait_ready()
        return self.base_url

    def _wait_ready(self) -> None:
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + self.startup_timeout
        url = self.base_url + "/models"
        delay = 0.1
        while True:
            process = self._process
            if process is None or process.poll() is not None:
                code = None if process is None else process.returncode
                self._fail(f"the llama.cpp server exited during start-up (exit code {code}){crash_hint(code)}")
            try:
                with urllib.request.urlopen(url, timeout=2.0) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() >= deadline:
                self._fail(f"the llama.cpp server did not become ready within {self.startup_timeout:g}s")
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)

    def log_tail(self) -> str:
        """The last lines of the server's combined stdout/stderr (secret-like values masked)."""
        if self._log_path is None or not self._log_path.exists():
            return ""
        return tail_text(self._log_path.read_text(errors="replace"))

    def _fail(self, reason: str) -> None:
        tail = self.log_tail()
        self.stop()
        hint = f"check that the llama.cpp runtime is installed ({INSTALL_HINT}) and that the model file is a valid GGUF"
        shown = f"\n--- last server log lines ---\n{tail}" if tail else " (the server wrote no log output)"
        raise LocalServerStartError(f"{reason}; {hint}.{shown}", stderr_tail=tail)

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the server (kill after ``timeout`` seconds) and remove its log file; safe to call twice."""
        process, self._process = self._process, None
        atexit.unregister(self.stop)
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None

    def __enter__(self) -> LocalLLMServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
