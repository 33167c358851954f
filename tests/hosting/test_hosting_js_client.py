"""A real client: the official ``@ag-ui/client`` (npm), run by node against the live uvicorn server on 127.0.0.1.

``make test`` installs the client from ``js/package-lock.json`` into ``.venv/js`` (scripts/setup/40-node-packages.sh);
the test copies the client script into a temp dir beside a link to those packages, and skips, with the reason, when
node or the packages are missing. It installs nothing itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

JS = Path(__file__).parent / "js"
CLIENT_VERSION = json.loads((JS / "package.json").read_text())["dependencies"]["@ag-ui/client"]
PACKAGES = Path(os.environ.get("AGENTFOOTPRINT_JS_DIR") or Path(sys.prefix) / "js") / "node_modules"


def _installed_version() -> str | None:
    manifest = PACKAGES / "@ag-ui" / "client" / "package.json"
    try:
        version: str = json.loads(manifest.read_text())["version"]
        return version
    except (OSError, ValueError, KeyError):
        return None


@pytest.fixture(scope="module")
def node() -> str:
    """The node binary, with ``@ag-ui/client`` installed by the set-up (skip with the reason otherwise)."""
    node_bin = shutil.which("node")
    if node_bin is None:
        pytest.skip("node is needed to run the official @ag-ui/client (make test-setup installs it)")
    version = subprocess.run([node_bin, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if not version.startswith("v") or int(version[1:].split(".")[0]) < 18:
        pytest.skip(f"@ag-ui/client needs node >= 18 (found {version or 'an unreadable version'})")
    if _installed_version() != CLIENT_VERSION:
        pytest.skip(f"@ag-ui/client {CLIENT_VERSION} is not installed in {PACKAGES} (run: make test-setup)")
    return node_bin


@pytest.fixture
def client_dir(tmp_path: Path) -> Path:
    """A temp dir holding the client script and a link to the installed packages (node resolves imports there)."""
    shutil.copyfile(JS / "agui_client.mjs", tmp_path / "agui_client.mjs")
    (tmp_path / "node_modules").symlink_to(PACKAGES, target_is_directory=True)
    return tmp_path


def _run_client(node: str, where: Path, base: str) -> dict[str, Any]:
    done = subprocess.run(
        [node, str(where / "agui_client.mjs"), f"{base}/agui"], cwd=where, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"the node client failed:\n{done.stderr[-3000:]}"
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_the_official_client_runs_calls_a_tool_and_resumes_an_interrupt(
    node: str, client_dir: Path, live_agui: str
) -> None:
    report = _run_client(node, client_dir, live_agui)

    text = report["text"]
    assert text["error"] is None and text["outcome"]["outcome"] == "success"
    assert text["events"][0] == "RUN_STARTED" and text["events"][-1] == "RUN_FINISHED"
    assert text["text"] == "Hello from uvicorn, streamed word by word."
    second = report["second"]
    assert second["error"] is None and second["text"] == "Hello from uvicorn, streamed word by word."
    assert second["messageCount"] == 4, "two user messages and two answers, the history resent and not replayed"

    tool = report["tool"]
    assert tool["error"] is None and tool["outcome"]["outcome"] == "success"
    assert tool["toolCalls"] == [{"id": "w-1", "name": "weather", "arguments": '{"city": "Paris"}'}]
    assert tool["toolResults"] == [{"toolCallId": "w-1", "content": "sunny in Paris"}]
    assert tool["text"] == "It is sunny in Paris."

    interrupt = report["interrupt"]
    assert interrupt["paused"]["outcome"]["outcome"] == "interrupt"
    assert [(i["reason"], i["message"]) for i in interrupt["pending"]] == [("ask_human", "Tea or coffee?")]
    resumed = interrupt["resumed"]
    assert resumed["error"] is None and resumed["outcome"]["outcome"] == "success"
    assert resumed["text"] == "You chose tea." and interrupt["pendingAfter"] == 0

    frontend = report["frontend"]
    assert frontend["asked"]["outcome"]["pendingToolCallIds"] == ["fc-1"] and frontend["callId"] == "fc-1"
    assert frontend["answered"]["error"] is None and frontend["answered"]["text"] == "You chose blue."
