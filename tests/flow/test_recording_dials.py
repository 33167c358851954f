"""Recording dials (R004-135): read tracking summary/full, commit values delta/full, write provenance off/reads-prefix.
The defaults keep the least; every setting keeps the log lossless (its fold is the state, a checkpoint resumes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentfootprint.flow import REDACTED, FlowChart, RecordingDials, RedactionPolicy, flow_chart, pause

FULL = RecordingDials(read_tracking="full", commit_values="full", write_provenance="reads-prefix")


def ledger_chart() -> FlowChart:
    def grow(s: Any) -> None:
        s.append("log", f"seen {s['count']}")
        s["count"] = s["count"] + 1
        s.merge("profile", {"tier": "gold"})
        s.get("missing")

    return flow_chart("Seed", _seed, id="seed").then("Grow", grow, id="grow").build()


def _seed(s: Any) -> None:
    s["count"] = 1
    s["log"] = ["start"]
    s["profile"] = {"name": "Ada"}


def rows(commit: Any) -> list[tuple[str, str, Any, Any]]:
    return [(w.path, w.verb, w.value, w.read_keys) for w in commit.writes]


async def test_R004_135_defaults_keep_read_markers_and_delta_values_without_provenance() -> None:
    """R004-135: readTracking 'summary', commitValues 'delta', writeProvenance 'off' are the defaults."""
    assert RecordingDials() == RecordingDials(read_tracking="summary", commit_values="delta", write_provenance="off")
    r = await ledger_chart().run()
    grow = r.snapshot.commit_log[1]
    assert grow.reads == {"count": 0, "missing": None} and grow.read_values is None
    assert rows(grow) == [
        ("log", "append", ["seen 1"], None),
        ("count", "set", 2, None),
        ("profile", "merge", {"tier": "gold"}, None),
    ]


async def test_R004_135_full_read_tracking_keeps_the_value_each_read_saw() -> None:
    """R004-135: readTracking 'full' records the value beside the commit each read saw (absent keys left out)."""
    r = await ledger_chart().run(recording=RecordingDials(read_tracking="full"))
    seed, grow = r.snapshot.commit_log
    assert seed.read_values == {}
    assert grow.reads == {"count": 0, "missing": None}
    assert grow.read_values == {"count": 1}
    assert rows(grow)[0] == ("log", "append", ["seen 1"], None)


async def test_R004_135_full_commit_values_record_whole_values_and_fold_to_the_same_state() -> None:
    """R004-135: commitValues 'full' writes whole values where 'delta' writes tails; both fold to one state."""
    delta = await ledger_chart().run()
    full = await ledger_chart().run(recording=RecordingDials(commit_values="full"))
    assert rows(full.snapshot.commit_log[1]) == [
        ("log", "set", ["start", "seen 1"], None),
        ("count", "set", 2, None),
        ("profile", "set", {"name": "Ada", "tier": "gold"}, None),
    ]
    assert (
        full.state
        == delta.state
        == {
            "count": 2,
            "log": ["start", "seen 1"],
            "profile": {"name": "Ada", "tier": "gold"},
        }
    )
    assert full.snapshot.replay() == delta.snapshot.replay() == delta.state
    assert full.snapshot.value_at("log", 1) == ["start", "seen 1"]


async def test_R004_135_write_provenance_names_the_keys_read_before_each_write() -> None:
    """R004-135: writeProvenance 'reads-prefix' puts, on each write, the keys the stage had read before it."""

    def stage(s: Any) -> None:
        s["early"] = 1
        s.get("a")
        s["middle"] = 2
        s.get("b")
        s.append("late", 3)
        s["early"] = s["a"] + 10  # the last write to a key decides its prefix

    chart = flow_chart("Seed", lambda s: s.update("a", lambda _: 5), id="seed").then("S", stage, id="s").build()
    r = await chart.run({"b": 1}, recording=RecordingDials(write_provenance="reads-prefix"))
    seed, s = r.snapshot.commit_log
    assert rows(seed) == [("a", "set", 5, ["a"])]
    assert rows(s) == [
        ("early", "set", 15, ["a", "b"]),
        ("middle", "set", 2, ["a"]),
        ("late", "append", [3], ["a", "b"]),
    ]


async def test_R004_135_every_dial_reaches_branches_and_subflows() -> None:
    sub = flow_chart("In", lambda s: s.set("y", s["x"] * 2), id="in").build()
    chart = (
        flow_chart("Seed", lambda s: s.set("x", 3), id="seed")
        .subflow("sub", sub, input_map=["x"], output_map=["y"])
        .parallel([("p", "P", lambda s: s.set("p", s["y"])), ("q", "Q", lambda s: s.append("q", 2))], id="fork")
        .build()
    )
    r = await chart.run(recording=FULL)
    by_rid = {c.runtime_stage_id: c for c in r.snapshot.commit_log}
    assert by_rid["sub/in#2"].read_values == {"x": 3} and rows(by_rid["sub/in#2"]) == [("y", "set", 6, ["x"])]
    assert by_rid["p#5"].read_values == {"y": 6} and rows(by_rid["p#5"]) == [("p", "set", 6, ["y"])]
    assert rows(by_rid["q#6"]) == [("q", "set", [2], [])]
    assert r.state == {"x": 3, "y": 6, "p": 6, "q": [2]}


async def test_R004_135_redacted_reads_are_served_as_placeholders_and_kept_real_in_the_checkpoint() -> None:
    def ask(s: Any) -> None:
        s["seen"] = len(s["ssn"])
        s["answer"] = pause({"question": "ok?"})

    chart = flow_chart("Seed", lambda s: s.set("ssn", "123-45-6789"), id="seed").then("Ask", ask, id="ask").build()
    r = await chart.run(recording=FULL, redaction=RedactionPolicy.of(keys=["ssn"]))
    served = r.snapshot.commit_log[1]
    assert served.read_values == {"ssn": REDACTED} and rows(served) == [("seen", "set", 11, ["ssn"])]
    cp = json.loads(json.dumps(r.checkpoint))
    assert cp["commit_log"][1]["read_values"] == {"ssn": "123-45-6789"}
    assert cp["commit_log"][1]["writes"][0]["read_keys"] == ["ssn"]
    done = await chart.resume(cp, "yes", recording=FULL)
    assert done.state == {"ssn": "123-45-6789", "seen": 11, "answer": "yes"}


async def test_a_checkpoint_whose_write_provenance_is_not_a_list_of_keys_is_refused_by_field() -> None:
    from agentfootprint.flow import InvalidCheckpointError

    def ask(s: Any) -> None:
        s["answer"] = pause({"q": 1})

    chart = flow_chart("Seed", lambda s: s.set("a", 1), id="seed").then("Ask", ask, id="ask").build()
    r = await chart.run(recording=FULL)
    cp = json.loads(json.dumps(r.checkpoint))
    cp["commit_log"][0]["writes"][0]["read_keys"] = {"hostile-marker": 1}
    with pytest.raises(InvalidCheckpointError) as err:
        await chart.resume(cp, "x")
    assert err.value.field == "commit_log.0.writes.0.read_keys" and "hostile-marker" not in str(err.value)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda c: c["read_values"].update({"never-read": 1}), "commit_log.1.read_values"),
        (lambda c: c["writes"][0].update({"read_keys": ["answer"]}), "commit_log.1.writes.0.read_keys"),
        (lambda c: c["writes"][0].update({"read_keys": ["n", "n"]}), "commit_log.1.writes.0.read_keys"),
    ],
)
async def test_read_evidence_that_is_not_the_commits_own_reads_is_refused(edit: Any, field: str) -> None:
    from agentfootprint.flow import InvalidCheckpointError

    def ask(s: Any) -> None:
        s["m"] = s["n"] + 1
        s["answer"] = pause({"q": 1})

    chart = flow_chart("Seed", lambda s: s.set("n", 1), id="seed").then("Ask", ask, id="ask").build()
    r = await chart.run(recording=FULL)
    cp = json.loads(json.dumps(r.checkpoint))
    assert cp["commit_log"][1]["read_values"] == {"n": 1}
    assert cp["commit_log"][1]["writes"][0]["read_keys"] == ["n"]
    edit(cp["commit_log"][1])
    with pytest.raises(InvalidCheckpointError) as err:
        chart.load_checkpoint(cp)
    assert err.value.field == field and "never-read" not in str(err.value)


def test_hostile_dial_values_are_refused_by_the_model() -> None:
    for bad in ({"read_tracking": "off"}, {"commit_values": "FULL"}, {"write_provenance": True}, {"extra": "x"}):
        with pytest.raises(ValidationError):
            RecordingDials(**bad)
    with pytest.raises(ValidationError):
        FULL.read_tracking = "summary"  # type: ignore[misc]


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from("abc"), st.integers(-3, 3)),
        st.tuples(st.just("append"), st.sampled_from("lm"), st.integers(0, 9)),
        st.tuples(st.just("merge"), st.sampled_from("xy"), st.sampled_from("fg")),
        st.tuples(st.just("read"), st.sampled_from("abclmxy"), st.just(0)),
        st.tuples(st.just("delete"), st.sampled_from("ab"), st.just(0)),
    ),
    max_size=12,
)


def chart_of(stages: list[list[tuple[str, str, Any]]]) -> FlowChart:
    def make(ops: list[tuple[str, str, Any]]) -> Any:
        def fn(s: Any) -> None:
            for verb, key, value in ops:
                if verb == "set":
                    s[key] = value
                elif verb == "append":
                    s.append(key, value)
                elif verb == "merge":
                    s.merge(key, {value: len(ops)})
                elif verb == "read":
                    s.get(key)
                elif key in s:
                    del s[key]

        return fn

    builder = flow_chart("S0", make(stages[0]), id="s0")
    for i, ops in enumerate(stages[1:], start=1):
        builder = builder.then(f"S{i}", make(ops), id=f"s{i}")
    return builder.build()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(OPS, min_size=1, max_size=4),
    st.sampled_from(["summary", "full"]),
    st.sampled_from(["off", "reads-prefix"]),
)
async def test_property_both_commit_encodings_fold_to_the_state_at_every_step(
    stages: list[list[tuple[str, str, Any]]], reads: Any, provenance: Any
) -> None:
    chart = chart_of(stages)
    delta = await chart.run()
    full = await chart.run(
        recording=RecordingDials(read_tracking=reads, commit_values="full", write_provenance=provenance)
    )
    assert full.state == delta.state
    for idx in range(len(delta.snapshot.commit_log)):
        assert full.snapshot.state_at(idx) == delta.snapshot.state_at(idx)
    for d, f in zip(delta.snapshot.commit_log, full.snapshot.commit_log, strict=True):
        assert f.reads == d.reads and [w.path for w in f.writes] == [w.path for w in d.writes]
        assert all(w.verb in ("set", "delete") for w in f.writes)
        assert (f.read_values is None) == (reads == "summary")
        if f.read_values is not None:
            assert set(f.read_values) <= set(f.reads)
        assert all((w.read_keys is None) == (provenance == "off") for w in f.writes)
