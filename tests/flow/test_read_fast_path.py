"""Scope reads take one call (check and lookup inlined): the same values, reads, refusals and read listeners."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import InvalidStateKeyError, RedactionPolicy, flow_chart
from agentfootprint.flow.recording import RecordingDials

KEYS = st.sampled_from(["a", "b", "c", "missing", "x" * 512])
VALUES = st.recursive(st.integers() | st.text(max_size=5) | st.none(), lambda v: st.lists(v, max_size=3), max_leaves=6)


async def _reads(state: dict[str, Any], keys: list[str], dials: RecordingDials | None = None) -> tuple[Any, ...]:
    seen: list[Any] = []

    def stage(s: Any) -> None:
        for k in keys:
            seen.append((s.get(k, "<none>"), k in s))

    r = await flow_chart("S", stage, id="s").build().run(state, recording=dials)
    return seen, r.commit_log[0].reads, r.commit_log[0].read_values


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]), VALUES, max_size=3), st.lists(KEYS, max_size=6))
async def test_reads_see_committed_values_and_record_each_key_once(state: dict[str, Any], keys: list[str]) -> None:
    seen, reads, read_values = await _reads(state, keys, RecordingDials(read_tracking="full"))
    assert seen == [(state.get(k, "<none>"), k in state) for k in keys]
    assert reads == dict.fromkeys(keys)  # initial state: no commit wrote them
    assert list(reads) == list(dict.fromkeys(keys))
    assert read_values == {k: state[k] for k in dict.fromkeys(keys) if k in state}


async def test_summary_tracking_keeps_no_read_values() -> None:
    seen, reads, read_values = await _reads({"a": 1}, ["a", "z"])
    assert seen == [(1, True), ("<none>", False)]
    assert reads == {"a": None, "z": None}
    assert read_values is None


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (1, "state keys must be str, got int"),
        ("", "state key length must be 1..512, got 0"),
        ("k" * 513, "state key length must be 1..512, got 513"),
    ],
)
async def test_bad_keys_are_refused_on_read_and_write_as_before(key: Any, message: str) -> None:
    errors: list[str] = []

    def stage(s: Any) -> None:
        for op in (lambda: s.get(key), lambda: s[key], lambda: key in s, lambda: s.__setitem__(key, 1)):
            with pytest.raises(InvalidStateKeyError) as info:
                op()
            errors.append(str(info.value))

    await flow_chart("S", stage, id="s").build().run({})
    assert errors == [message] * 4


async def test_read_listeners_and_capture_still_see_every_read() -> None:
    class Reads:
        id = "reads"

        def __init__(self) -> None:
            self.got: list[tuple[str, Any]] = []

        def on_read(self, frame: Any, key: str, value: Any) -> None:
            self.got.append((key, value))

    rec = Reads()

    def stage(s: Any) -> None:
        s.get("a")
        s.get("a")
        s.get("nope")

    await flow_chart("S", stage, id="s").build().run({"a": 5}, recorders=[rec])
    assert [k for k, _ in rec.got] == ["a", "a", "nope"]
    assert rec.got[0] == ("a", 5) and rec.got[1] == ("a", 5)


async def test_redacted_paths_list_written_redacted_keys_in_write_order() -> None:
    def stage(s: Any) -> None:
        s["token"] = "t"
        s["plain"] = 1
        s["pin"] = "p"

    chart = flow_chart("S", stage, id="s").build()
    r = await chart.run({}, redaction=RedactionPolicy.of(["pin", "token"]))
    assert r.commit_log[0].redacted_paths == ["token", "pin"]
    r = await chart.run({})
    assert r.commit_log[0].redacted_paths == []
