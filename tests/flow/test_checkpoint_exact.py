"""Checkpoint checks pinned by exact field: state folds, versions, emits that are valid, and runtime ids."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from agentfootprint.flow import InvalidCheckpointError, flow_chart, pause

from .test_checkpoint_refusals import _set, mounted_chart


@pytest.fixture
async def paused() -> dict[str, Any]:
    r = await mounted_chart().run({"seed": 3})
    return json.loads(json.dumps(r.checkpoint))


def _append_write(write: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda cp: cp["commit_log"][0]["writes"].append(write)


STATE = "a namespace's state is not what its commit log wrote"
CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("version-2", _set("version", 2), "checkpoint field 'version' is invalid", "version"),
    ("version-text", _set("version", "1"), "checkpoint field 'version' is invalid", "version"),
    ("mount-state", _set("namespaces/sub/state/p", 5), STATE, "namespaces.sub.state"),
    ("root-state", _set("namespaces//state/seed", 4), STATE, "namespaces..state"),
    (
        "append-onto-a-number",
        _append_write({"path": "amount", "verb": "append", "value": [1]}),
        STATE,
        "namespaces..state",
    ),
    (
        "merge-onto-a-number",
        _append_write({"path": "amount", "verb": "merge", "value": {"a": 1}}),
        STATE,
        "namespaces..state",
    ),
    (
        "a-hash-inside-the-runtime-id",
        _set("commit_log/0/runtime_stage_id", "seed#0#0"),
        "commit_log.0 has a runtime id the run never issued",
        "commit_log.0.runtime_stage_id",
    ),
    (
        "emit-without-payload",
        _set("commit_log/0/emits", [{"name": "a"}]),
        "commit_log.0 holds an emit that is not one",
        "commit_log.0.emits",
    ),
    (
        "a-long-state-key",
        _set("namespaces//last_writer/" + "k" * 250, "x"),
        "checkpoint field 'namespaces.*.last_writer.*' is invalid",
        "namespaces.*.last_writer.*",
    ),
]


@pytest.mark.parametrize(("tamper", "message", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_a_tampered_checkpoint_names_the_exact_field(
    paused: dict[str, Any], tamper: Callable[[dict[str, Any]], None], message: str, field: str
) -> None:
    cp = copy.deepcopy(paused)
    tamper(cp)
    with pytest.raises(InvalidCheckpointError) as ei:
        await mounted_chart().resume(cp, "yes")
    assert (str(ei.value), ei.value.field, ei.value.code) == (message, field, "ERR_INVALID_CHECKPOINT")


async def test_a_checkpoint_holding_valid_emits_resumes() -> None:
    def ask(s: Any) -> None:
        s.emit("asked", {"n": 1})
        s["answer"] = pause({"q": 1})

    chart = flow_chart("Start", lambda s: s.emit("started", [1, 2]), id="start").then("Ask", ask, id="ask").build()
    r = await chart.run()
    cp = json.loads(json.dumps(r.checkpoint))
    assert [e["name"] for c in cp["commit_log"] for e in c["emits"]] == ["started", "asked"]
    done = await chart.resume(cp, "yes")
    assert done.state == {"answer": "yes"}
