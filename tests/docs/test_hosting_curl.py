"""docs/hosting.md's curl walk-through runs as written: its agent file, its ``serve`` command and every curl block
(in one bash session, on a free port), each reply checked against the one the page shows."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests._doc_blocks import section
from tests._live import free_port, stop, wait_healthy

DOC = Path(__file__).parents[2] / "docs" / "hosting.md"
TITLE = "Walk-through with curl: run, pause, answer, resume"
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.S)
DOC_PORT = "8000"


def blocks() -> list[tuple[str, str]]:
    """The section's fenced blocks, in order, as (language, text)."""
    return FENCE.findall(section(DOC.read_text(encoding="utf-8"), TITLE))


def matches(shown: Any, got: Any) -> bool:
    """``got`` has everything ``shown`` shows: the keys of a dict, a list item by item, a value ending in ``…`` by
    its prefix, anything else equal."""
    if isinstance(shown, dict):
        return isinstance(got, dict) and all(k in got and matches(v, got[k]) for k, v in shown.items())
    if isinstance(shown, list):
        return isinstance(got, list) and len(got) == len(shown) and all(map(matches, shown, got))
    if isinstance(shown, str) and shown.endswith("…"):
        return isinstance(got, str) and got.startswith(shown[:-1]) and len(got) > len(shown) - 1
    return type(shown) is type(got) and shown == got


def check_http(shown: str, got: str) -> None:
    head, _, body = shown.partition("\n\n")
    got_head, _, got_body = got.replace("\r\n", "\n").partition("\n\n")
    status, *headers = head.splitlines()
    got_status, *got_headers = got_head.splitlines()
    assert got_status == status
    have = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in got_headers)}
    for line in headers:
        name, _, value = line.partition(":")
        assert have.get(name.lower()) == value.strip(), name
    assert matches(json.loads(body), json.loads(got_body)), got_body


def check_sse(shown: str, got: str) -> None:
    events = [json.loads(line[5:]) for line in got.splitlines() if line.startswith("data:")]
    wanted = [json.loads(line[5:]) for line in shown.splitlines() if line.startswith("data:")]
    assert wanted
    position = 0
    for want in wanted:  # in order, with other events between them
        while position < len(events) and not matches(want, events[position]):
            position += 1
        assert position < len(events), f"no event like {want} in order"
        position += 1


def check(kind: str, shown: str, got: str) -> None:
    if kind == "http":
        check_http(shown, got)
    elif kind == "json":
        assert matches(json.loads(shown), json.loads(got)), got
    elif kind == "sse":
        check_sse(shown, got)
    else:
        raise AssertionError(f"no reply check for a {kind} block")


class Shell:
    """One bash session, as the reader's second terminal: variables set by one block are seen by the next."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        err = (cwd / "shell.err").open("wb")
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )

    def run(self, script: str) -> str:
        marker = f"__done_{uuid.uuid4().hex}__"
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{script}\necho; echo {marker} $?\n")
        self.proc.stdin.flush()
        lines: list[str] = []
        for line in self.proc.stdout:
            if line.startswith(marker):
                assert line.split()[1] == "0", f"the block failed: {script}"
                return "".join(lines)
            lines.append(line)
        raise AssertionError("the shell ended before the block did")

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def test_the_page_has_the_whole_walk_through() -> None:
    kinds = [kind for kind, _ in blocks()]
    assert kinds[:2] == ["python", "sh"]
    runs = [text for kind, text in blocks()[2:] if kind == "sh"]
    assert len(runs) == 6 and all("curl" in text for text in runs)
    assert kinds[2:] == ["sh", "http", "sh", "json", "sh", "http", "sh", "http", "sh", "json", "sh", "sse"]
    assert '"resume": [{"interruptId"' in "".join(runs)


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="the walk-through runs curl and jq")
def test_the_curl_walk_through_runs_as_written(tmp_path: Path) -> None:
    found = blocks()
    (kind, agent), (_, serve) = found[0], found[1]
    assert kind == "python" and "`trip.py`" in section(DOC.read_text(encoding="utf-8"), TITLE)
    (tmp_path / "trip.py").write_text(agent, encoding="utf-8")
    (tmp_path / ".curlrc").write_text("max-time = 60\n", encoding="utf-8")  # a hung reply fails, never hangs
    port = str(free_port())
    env = {
        **os.environ,
        "CURL_HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("AGENTFOOTPRINT_CHECKPOINT_KEY", None)
    command = serve.strip().replace(f"--port {DOC_PORT}", f"--port {port}")
    assert command != serve.strip() and command.startswith("agentfootprint serve trip:make_agent")
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command}"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    shell = Shell(tmp_path, env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        steps = found[2:]
        for (_, script), (reply_kind, shown) in zip(steps[::2], steps[1::2], strict=True):
            got = shell.run(script.replace(f"127.0.0.1:{DOC_PORT}", f"127.0.0.1:{port}"))
            check(reply_kind, shown, got.strip())
    finally:
        shell.close()
        stop(server)


@given(st.text(max_size=6), st.text(max_size=6))
def test_an_ellipsis_matches_only_a_longer_value_with_its_prefix(prefix: str, rest: str) -> None:
    assert matches(prefix + "…", prefix + rest) is (len(rest) > 0)
    assert matches(prefix + "…", 7) is False


def test_a_reply_missing_a_shown_field_or_value_does_not_match() -> None:
    shown = {"status": "paused", "outcome": {"interrupts": [{"id": "int-…"}]}}
    assert matches(shown, {"status": "paused", "outcome": {"interrupts": [{"id": "int-9f", "x": 1}]}, "y": 2})
    assert not matches(shown, {"status": "completed", "outcome": {"interrupts": [{"id": "int-9f"}]}})
    assert not matches(shown, {"status": "paused", "outcome": {"interrupts": [{"id": "run-9f"}]}})
    assert not matches(shown, {"status": "paused", "outcome": {"interrupts": []}})
    assert not matches({"paused": True}, {"paused": 1})
    with pytest.raises(AssertionError):
        check_http("HTTP/1.1 200 OK\n\n{}", "HTTP/1.1 202 Accepted\r\n\r\n{}")
    with pytest.raises(AssertionError):
        check_sse(
            'data: {"type": "RUN_FINISHED"}\ndata: {"type": "RUN_STARTED"}',
            'data: {"type": "RUN_STARTED"}\ndata: {"type": "RUN_FINISHED"}',
        )
