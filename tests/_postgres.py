"""A throwaway PostgreSQL server on loopback for tests (skipped, with the reason, when it cannot start)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests._live import free_port


@contextmanager
def throwaway_postgres(bin_dir: Path, what: str) -> Iterator[str]:
    """A DSN for a fresh server from ``bin_dir`` (initdb, pg_ctl) in a temp dir on a free loopback port."""
    user: str | None = None
    if os.geteuid() == 0:  # the server refuses to run as root: run it as the 'postgres' system user
        try:
            pwd.getpwnam("postgres")
            user = "postgres"
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' system user to run the server as")
    root = Path(tempfile.mkdtemp(prefix="af-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if user is not None:
        entry = pwd.getpwnam(user)
        root.chmod(0o755)
        for path in (root, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = free_port()
    run_as: dict[str, Any] = {"user": user} if user is not None else {}
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "test", "--auth=trust", "-E", "UTF8", "--no-sync"]
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "-t", "60"]
    try:
        subprocess.run(initdb, check=True, capture_output=True, timeout=120, **run_as)
        subprocess.run([*start, "start"], check=True, capture_output=True, timeout=90, **run_as)
    except (OSError, subprocess.SubprocessError) as err:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"could not start a throwaway {what}: {type(err).__name__}")
    try:
        yield f"postgresql://test@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
            **run_as,
        )
        shutil.rmtree(root, ignore_errors=True)
