"""Scope: tracked reads, read-your-writes, net-change commits, verbs, frozen committed values, args."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import InvalidStateKeyError, flow_chart


async def run_one(fn: Any, state: dict[str, Any] | None = None, args: dict[str, Any] | None = None) -> Any:
    return await flow_chart("S", fn, id="s").build().run(state, args=args)


async def test_read_your_writes_and_reads_record_source() -> None:
    seen: dict[str, Any] = {}

    def stage(s: Any) -> None:
        s["a"] = 1
        seen["a"] = s["a"]
        seen["b"] = s["b"]

    r = await run_one(stage, {"b": 2})
    assert seen == {"a": 1, "b": 2}
    c = r.commit_log[0]
    assert c.reads == {"b": None}  # own write is not an external read
    assert [(w.path, w.verb, w.value) for w in c.writes] == [("a", "set", 1)]


async def test_net_change_drops_noop_and_revert() -> None:
    def stage(s: Any) -> None:
        s["same"] = s["same"]
        s["tmp"] = 5
        del s["tmp"]
        s["flip"] = 2
        s["flip"] = 1

    r = await run_one(stage, {"same": [1, {"x": 2}], "flip": 1})
    assert r.commit_log[0].writes == []


async def test_empty_stage_still_commits() -> None:
    r = await run_one(lambda s: None)
    assert len(r.commit_log) == 1 and r.commit_log[0].writes == []


async def test_true_and_one_are_different_values() -> None:
    r = await run_one(lambda s: s.set("v", True), {"v": 1})
    assert r.commit_log[0].writes[0].value is True


async def test_set_extending_a_list_is_recorded_as_append_delta() -> None:
    r = await run_one(lambda s: s.set("xs", [*s["xs"], 3]), {"xs": [1, 2]})
    w = r.commit_log[0].writes[0]
    assert (w.verb, w.value) == ("append", [3])
    assert r.state["xs"] == [1, 2, 3]


async def test_append_merge_delete_verbs() -> None:
    def stage(s: Any) -> None:
        s.append("xs", 1, 2)
        s.merge("d", {"b": 2, "a": 1})
        del s["gone"]

    r = await run_one(stage, {"d": {"a": 1}, "gone": 0})
    verbs = {w.path: (w.verb, w.value) for w in r.commit_log[0].writes}
    assert verbs == {"xs": ("append", [1, 2]), "d": ("merge", {"b": 2}), "gone": ("delete", None)}
    assert r.state == {"xs": [1, 2], "d": {"a": 1, "b": 2}}


async def test_update_reads_and_writes() -> None:
    r = await run_one(lambda s: s.update("n", lambda v: v + 1), {"n": 41})
    assert r.state["n"] == 42 and r.commit_log[0].reads == {"n": None}


async def test_committed_values_are_read_only() -> None:
    def stage(s: Any) -> None:
        with pytest.raises(TypeError, match="read-only"):
            s["xs"].append(4)
        with pytest.raises(TypeError, match="read-only"):
            s["d"]["k"] = 1

    await run_one(stage, {"xs": [1], "d": {}})


async def test_written_value_is_copied_at_write_time() -> None:
    mine = [1, 2]

    def stage(s: Any) -> None:
        s["xs"] = mine
        mine.append(99)

    r = await run_one(stage)
    assert r.state["xs"] == [1, 2]


async def test_args_are_frozen_and_flagged() -> None:
    def stage(s: Any) -> None:
        assert s.args["who"] == "ann"
        with pytest.raises(TypeError):
            s.args["who"] = "bob"

    r = await run_one(stage, args={"who": "ann"})
    assert r.commit_log[0].used_args is True


async def test_result_state_is_a_plain_copy() -> None:
    r = await run_one(lambda s: s.set("xs", [1]))
    r.state["xs"].append(2)
    assert r.snapshot.state["xs"] == [1]


async def test_append_to_non_list_refused() -> None:
    with pytest.raises(TypeError, match="cannot append to state key 'n'"):
        await run_one(lambda s: s.append("n", 1), {"n": 3})


@pytest.mark.parametrize("key", [1, None, "", "k" * 513, ("t",)])
async def test_hostile_keys_refused_by_type_or_length(key: Any) -> None:
    def stage(s: Any) -> None:
        s[key] = 1

    with pytest.raises(InvalidStateKeyError) as ei:
        await run_one(stage)
    assert "k" * 100 not in str(ei.value)


async def test_proto_like_keys_are_plain_keys() -> None:
    r = await run_one(lambda s: s.set("__proto__", {"polluted": True}) or s.set("__class__", 1))
    assert r.state == {"__proto__": {"polluted": True}, "__class__": 1}
    assert not hasattr({}, "polluted")


async def test_missing_key_read_raises_keyerror_but_get_defaults() -> None:
    def stage(s: Any) -> None:
        assert s.get("nope", 7) == 7
        assert "nope" not in s
        with pytest.raises(KeyError):
            s["nope"]

    r = await run_one(stage)
    assert r.commit_log[0].reads == {"nope": None}
