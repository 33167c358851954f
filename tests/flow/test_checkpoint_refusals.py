"""An untrusted checkpoint is refused by the exact field that is wrong, with a text that never echoes its values;
what a paused run writes is JSON with its pause data, or a refusal naming the key that is not."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from agentfootprint.flow import FlowChart, InvalidCheckpointError, NotSerializableError, flow_chart, pause


def mounted_chart() -> FlowChart:
    def ask(s: Any) -> None:
        s["asked"] = s.get("asked", 0) + 1
        s["answer"] = pause({"q": s["amount"]})

    inner = flow_chart("Prep", lambda s: s.set("p", s["amount"] + 1), id="prep").then("Ask", ask, id="ask").build()
    return (
        flow_chart("Seed", lambda s: s.set("amount", s["seed"]), id="seed")
        .subflow("sub", inner, input_map=["amount"], output_map=["answer"])
        .subflow("later", flow_chart("Never", lambda s: None, id="nv").build())
        .then("Done", lambda s: s.set("done", s["answer"]), id="done")
        .build()
    )


@pytest.fixture
async def paused() -> dict[str, Any]:
    r = await mounted_chart().run({"seed": 3})
    assert r.checkpoint is not None and r.pause_data == {"q": 3}
    return json.loads(json.dumps(r.checkpoint))


async def test_a_checkpoint_keeps_initial_state_pause_data_and_resumes(paused: dict[str, Any]) -> None:
    assert paused["pause_data"] == {"q": 3} and paused["initial_state"] == {"seed": 3}
    assert paused["namespaces"][""] == {"last_writer": {"amount": 0}, "state": {"amount": 3, "seed": 3}}
    r = await mounted_chart().resume(paused, "yes")
    assert r.state == {"seed": 3, "amount": 3, "answer": "yes", "done": "yes"}


def _append_write(write: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda cp: cp["commit_log"][0]["writes"].append(write)


STATE = "a namespace's state is not what its commit log wrote"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def tamper(cp: dict[str, Any]) -> None:
        *head, last = path.split("/")
        target: Any = cp
        for part in head:
            target = target[int(part) if part.isdigit() else part]
        target[int(last) if last.isdigit() else last] = value

    return tamper


REFUSALS: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    (
        "commit-extra-field",
        _set("commit_log/1/secret", 1),
        "commit_log.1 holds a field a commit does not have",
        "commit_log.1",
    ),
    (
        "write-extra-field",
        _set("commit_log/2/writes/0/secret", 1),
        "commit_log.2.writes.0 holds a field a write does not have",
        "commit_log.2.writes.0",
    ),
    ("commit-not-a-dict", _set("commit_log/1", [1]), "checkpoint field 'commit_log.1' is invalid", "commit_log.1"),
    (
        "fingerprint",
        _set("chart_fingerprint", "0" * 32),
        "checkpoint was taken on a different chart, not this one ('seed')",
        "chart_fingerprint",
    ),
    ("counter-behind", _set("counter", 1), "counter is behind the commit log", "counter"),
    (
        "no-root",
        lambda cp: cp["namespaces"].pop(""),
        "namespaces has no root namespace",
        "namespaces",
    ),
    (
        "last-writer-past-the-log",
        _set("namespaces/sub/last_writer/p", 4),
        "a last_writer entry points outside the log",
        "namespaces.sub.last_writer",
    ),
    (
        "last-writer-not-the-logs",
        _set("namespaces//last_writer/amount", 1),
        "a namespace's last writers are not its commit log's",
        "namespaces..last_writer",
    ),
    (
        "unknown-stage",
        _set("commit_log/2/stage_id", "ghost"),
        "commit_log.2 names a stage or namespace this chart does not have",
        "commit_log.2",
    ),
    (
        "runtime-id-twice",
        lambda cp: _set("commit_log/2/stage_id", "sub")(cp) or _set("commit_log/2/runtime_stage_id", "sub#1")(cp),
        "commit_log.2 has a runtime id the run never issued",
        "commit_log.2.runtime_stage_id",
    ),
    (
        "read-of-a-key-not-written",
        _set("commit_log/2/reads", {"p": 1}),
        "commit_log.2 reads from a commit that did not write it",
        "commit_log.2.reads",
    ),
    (
        "state-of-a-mount-never-entered",
        _set("namespaces/later", {"state": {"x": 1}, "last_writer": {}}),
        "a namespace is not in the commit log",
        "namespaces",
    ),
    (
        "pending-on-a-mount",
        _set(
            "frames/1/pending",
            {"x": {"frames": [{"node_id": "x", "namespace": "sub"}], "paused_runtime_stage_id": "sub/x#3"}},
        ),
        "frames.1 holds pending branches but is not the paused fork",
        "frames.1",
    ),
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


@pytest.mark.parametrize(("tamper", "message", "field"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
async def test_a_tampered_checkpoint_is_refused_by_field(
    paused: dict[str, Any], tamper: Callable[[dict[str, Any]], None], message: str, field: str
) -> None:
    cp = copy.deepcopy(paused)
    tamper(cp)
    with pytest.raises(InvalidCheckpointError) as ei:
        await mounted_chart().resume(cp, "yes")
    assert (str(ei.value), ei.value.field) == (message, field)


@pytest.mark.parametrize("given", [[1], "cp", None])
async def test_a_checkpoint_that_is_no_dict_is_refused(given: Any) -> None:
    with pytest.raises(InvalidCheckpointError) as ei:
        await mounted_chart().resume(given, "yes")
    assert (str(ei.value), ei.value.field) == (f"checkpoint must be a dict, got {type(given).__name__}", "checkpoint")


async def test_state_that_is_not_json_is_refused_naming_its_key_and_mount() -> None:
    root = flow_chart("Put", lambda s: s.set("blob", object()), id="put").then("Ask", lambda s: pause("q"), id="ask")
    with pytest.raises(NotSerializableError) as ei:
        await root.build().run()
    assert str(ei.value) == "cannot checkpoint: state key 'blob' holds object, not JSON"
    mounted = flow_chart("S", lambda s: None, id="s").subflow("m", root.build()).build()
    with pytest.raises(NotSerializableError) as ei:
        await mounted.run()
    assert str(ei.value) == "cannot checkpoint: subflow 'm' state key 'blob' holds object, not JSON"


async def test_a_paused_stage_that_wrote_no_json_is_refused_naming_the_key() -> None:
    def ask(s: Any) -> None:
        s["blob"] = object()
        pause("q")

    with pytest.raises(NotSerializableError) as ei:
        await flow_chart("Ask", ask, id="ask").build().run()
    assert str(ei.value) == "cannot checkpoint: stage 'ask#0' wrote state key 'blob' holding object, not JSON"


async def test_a_paused_stage_that_emitted_no_json_is_refused_naming_the_event() -> None:
    def ask(s: Any) -> None:
        s.emit("tick", {"handle": object()})
        pause("q")

    with pytest.raises(NotSerializableError) as ei:
        await flow_chart("Ask", ask, id="ask").build().run()
    assert str(ei.value) == "cannot checkpoint: stage 'ask#0' emitted 'tick' with a payload that is not JSON"


async def test_pause_data_that_is_not_json_is_refused_by_type() -> None:
    with pytest.raises(NotSerializableError) as ei:
        await flow_chart("Ask", lambda s: pause(object()), id="ask").build().run()
    assert str(ei.value) == "pause data of type object is not JSON"


async def test_an_overwritten_initial_value_that_is_not_json_is_refused() -> None:
    chart = flow_chart("Swap", lambda s: s.set("h", 1), id="swap").then("Ask", lambda s: pause("q"), id="ask").build()
    with pytest.raises(NotSerializableError) as ei:
        await chart.run({"h": object()})
    assert str(ei.value) == "cannot checkpoint: the run's initial state, args or log hold a value that is not JSON"


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
