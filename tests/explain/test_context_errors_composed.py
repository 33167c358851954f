"""Invariants at the composition seam: a member's declared invariants are checked where each composition mounts it
(a disposition row per invariant per mount, ``invariant-violation`` findings), and ``find_context_errors`` lists a
composed run's findings (its members' too) from a result, a recording and its JSON; dead checks from the record."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import AgentBuildError
from agentfootprint.agent._invariants import MemberView, check_mount, declared_invariants
from agentfootprint.compose import Conditional, Graph, Loop, Parallel, Sequence, Workflow
from agentfootprint.explain import find_context_errors, mount_dispositions, recording_of
from agentfootprint.providers import mock


def cites(view: MemberView) -> bool | None:
    """Planted contract: an answer must cite a bracketed source; an empty answer is out of scope."""
    return ("[" in view.answer) if view.answer else None


def _agent(answer: str, name: str, **invariants: Any) -> Agent:
    builder = Agent.create(provider=mock(reply=answer), model="m", name=name)
    return (builder.invariants(invariants) if invariants else builder).build()


def _kinds(run: Any) -> list[tuple[str, str | None, str | None]]:
    return [(e.kind, e.stage_id, e.source_id) for e in find_context_errors(run)]


async def test_a_sequence_checks_each_members_invariants_where_it_is_mounted() -> None:
    planted = _agent("Shipped.", "writer", cites=cites)
    clean = _agent("Shipped [orders].", "checker", cites=cites)
    result = await Sequence.create("s").step("draft", planted).step("check", clean).build().run("go")
    assert _kinds(result) == [("invariant-violation", "draft#10", "cites")]
    assert find_context_errors(result)[0].message == (
        "member 'writer' crossed its mount breaking a declared invariant: it does not hold"
    )
    rows = [(r["mount"], r["member"], r["check"], r["disposition"], r["findings"]) for r in mount_dispositions(result)]
    assert rows == [
        ("draft#10", "writer", "invariant:cites", "ran", 1),
        ("check-2#20", "checker", "invariant:cites", "ran", 0),
    ]
    body = json.loads(recording_of(result).model_dump_json())
    assert _kinds(body) == _kinds(result)
    assert mount_dispositions(body) == mount_dispositions(result)


async def test_clean_control_files_rows_and_no_finding() -> None:
    a, b = _agent("One [x].", "a", cites=cites), _agent("Two [y].", "b", cites=cites)
    result = await Sequence.create("s").step("one", a).step("two", b).build().run("go")
    assert find_context_errors(result) == []
    assert [r["disposition"] for r in mount_dispositions(result)] == ["ran", "ran"]


async def test_an_invariant_out_of_scope_files_a_not_applicable_row() -> None:
    quiet = _agent("", "quiet", cites=cites)
    result = await Sequence.create("s").step("quiet", quiet).build().run("go")
    assert find_context_errors(result) == []
    (row,) = mount_dispositions(result)
    assert (row["checked"], row["not_applicable"], row["disposition"]) == (0, 1, "not-applicable")


async def test_a_raising_or_non_boolean_invariant_is_a_finding_never_a_crash() -> None:
    def boom(view: MemberView) -> bool:
        raise RuntimeError("checker bug")

    def vague(view: MemberView) -> Any:
        return "yes"

    member = _agent("ok [a].", "m", boom=boom, vague=vague)
    result = await Sequence.create("s").step("m", member).build().run("go")
    assert result.answer == "ok [a]."
    assert [(e.source_id, e.message.rsplit(": ", 1)[1]) for e in find_context_errors(result)] == [
        ("boom", "its check failed to run"),
        ("vague", "its check answered neither True, False nor None"),
    ]


async def test_members_with_no_invariants_file_nothing_at_their_mounts() -> None:
    result = await Sequence.create("s").step("a", _agent("x", "a")).build().run("go")
    assert mount_dispositions(result) == []
    assert not any(k.startswith("integrity_mount:") for k in result.record.snapshot.state)


async def test_the_view_holds_answer_message_and_settled_tools() -> None:
    seen: list[MemberView] = []
    lookup = define_tool(
        name="lookup",
        description="Look up.",
        input_schema={"type": "object", "properties": {}},
        execute=lambda a: "found",
    )
    replies = [{"tool_calls": [{"id": "c1", "name": "lookup", "args": {}}]}, "Found it [lookup]."]
    member = (
        Agent.create(provider=mock(replies=replies), model="m", name="finder")
        .tool(lookup)
        .invariants({"looked": lambda v: seen.append(v) or "lookup" in v.tools})
        .build()
    )
    result = await Sequence.create("s").step("find", member).build().run("where?")
    assert find_context_errors(result) == []
    assert seen == [
        MemberView(
            member="finder", mount="find", answer="Found it [lookup].", output=None, tools=("lookup",), message="where?"
        )
    ]


def _runners(planted: Agent, clean: Agent) -> dict[str, Any]:
    return {
        "parallel": Parallel.create("p").branch("bad", planted).branch("good", clean).build(),
        "conditional": Conditional.create("c").when("bad", lambda _: True, planted).otherwise("good", clean).build(),
        "loop": Loop.create("l").repeat(planted).times(2).build(),
        "workflow": Workflow.create("w").step("bad", planted).step("good", clean).build(),
        "graph": Graph.create("g").node("bad", planted).node("good", clean).edge("bad", "good").build(),
    }


@pytest.mark.parametrize("kind", ["parallel", "conditional", "loop", "workflow", "graph"])
async def test_every_composition_checks_invariants_at_its_mounts(kind: str) -> None:
    planted = _agent("No source.", "bad", cites=cites)
    clean = _agent("Sourced [x].", "good", cites=cites)
    result = await _runners(planted, clean)[kind].run("go")
    found = find_context_errors(result)
    visits = 2 if kind == "loop" else 1
    assert found.kinds() == ["invariant-violation"] * visits
    assert {e.source_id for e in found} == {"cites"}
    rows = mount_dispositions(result)
    assert Counter(r["member"] for r in rows if r["findings"]) == {"bad": visits}
    assert all(r["findings"] == 0 for r in rows if r["member"] == "good")


async def test_a_nested_members_violation_is_found_at_its_own_mount() -> None:
    inner = Sequence.create("inner").step("x", _agent("bare", "x", cites=cites)).build()
    outer = Sequence.create("outer").step("in", inner).step("y", _agent("ok [y]", "y", cites=cites)).build()
    result = await outer.run("go")
    assert _kinds(result) == [("invariant-violation", "in/x#12", "cites")]


async def test_a_members_own_findings_are_listed_for_the_composed_run() -> None:
    ghost = [{"tool_calls": [{"id": "c", "name": "nope", "args": {}}]}, "done"]
    member = Agent.create(provider=mock(replies=ghost), model="m", name="a").build()
    result = await Sequence.create("s").step("a", member).build().run("go")
    assert _kinds(result) == [("offered-tool", "a/call-llm#7", "nope")]


async def test_the_agents_own_ledger_says_invariants_are_checked_at_a_mount() -> None:
    armed = await _agent("x", "a", cites=cites).run("go")
    rows = {r["check"]: r["disposition"] for r in armed.extensions["integrity"]["disposition"]}
    assert rows["invariants"] == "not-applicable"
    plain = await _agent("x", "b").run("go")
    assert {r["check"]: r["disposition"] for r in plain.extensions["integrity"]["disposition"]}["invariants"] == (
        "not-armed"
    )
    assert find_context_errors(armed) == []


async def test_integrity_after_invariants_keeps_them() -> None:
    agent = (
        Agent.create(provider=mock(reply="bare"), model="m", name="a")
        .invariants({"cites": cites})
        .integrity(notice_empty_lookups=True)
        .build()
    )
    result = await Sequence.create("s").step("a", agent).build().run("go")
    assert find_context_errors(result).kinds() == ["invariant-violation"]


@pytest.mark.parametrize(
    "spec",
    [{}, {"bad name": cites}, {"x": "not callable"}, {f"i{n}": cites for n in range(65)}, ["cites"], None, {1: cites}],
)
def test_bad_invariants_are_refused_by_code(spec: Any) -> None:
    with pytest.raises(AgentBuildError) as err:
        Agent.create(provider=mock(reply="x")).invariants(spec)
    assert err.value.code == "ERR_INVARIANTS"


# -- dead checks read from the record -------------------------------------------------------------------------------


def _armed(name: str) -> Agent:
    """An agent arming more than the always-on wire check: its ledger is recorded with each answer."""
    return Agent.create(provider=mock(reply="x"), model="m", name=name).integrity(notice_empty_lookups=True).build()


async def test_only_a_ledger_arming_more_than_the_wire_check_is_recorded() -> None:
    plain = await _agent("x", "a").run("go")
    assert "integrity_ledger" not in plain.record.snapshot.state
    armed = (await _armed("a").run("go")).record.snapshot.state["integrity_ledger"]
    assert armed["declared"].split()[:2] == ["offered-tool", "dangling-reference"]
    assert "empty-lookup/write/1/0/0/0" in armed["rows"].split()


async def test_a_declared_check_that_filed_no_row_is_a_dead_check() -> None:
    result = await _armed("a").run("go")
    body = json.loads(recording_of(result).model_dump_json())
    assert find_context_errors(body) == []
    for commit in body["snapshot"]["commit_log"]:
        for write in commit["writes"]:
            if write["path"] == "integrity_ledger":  # planted: the empty-lookup check filed nothing
                rows = write["value"]["rows"].split()
                assert "empty-lookup/write/1/0/0/0" in rows
                write["value"]["rows"] = " ".join(r for r in rows if not r.startswith("empty-lookup/"))
    assert [(e.kind, e.source_id) for e in find_context_errors(body)] == [("dead-check", "empty-lookup")]


async def test_an_idle_wire_check_in_a_recording_is_a_dead_check() -> None:
    body = json.loads(recording_of(await _armed("a").run("go")).model_dump_json())
    for commit in body["snapshot"]["commit_log"]:
        for write in commit["writes"]:
            if write["path"] == "integrity_ledger":  # planted: the wire check saw none of the model's calls
                rows = write["value"]["rows"]
                assert "offered-tool/wire/1/0/0/1" in rows
                write["value"]["rows"] = rows.replace("offered-tool/wire/1/0/0/1", "offered-tool/wire/1/0/0/0")
    assert [(e.kind, e.source_id) for e in find_context_errors(body)] == [("dead-check", "offered-tool")]


async def test_a_mount_that_never_checked_declared_invariants_is_a_dead_check() -> None:
    member = _agent("ok [a]", "a", cites=cites)
    result = await Sequence.create("s").step("a", member).build().run("go")
    body = json.loads(recording_of(result).model_dump_json())
    assert find_context_errors(body) == []
    for commit in body["snapshot"]["commit_log"]:  # planted: a mount that drops the member's invariants
        commit["writes"] = [w for w in commit["writes"] if not w["path"].startswith("integrity_mount:")]
    assert [(e.kind, e.stage_id, e.source_id) for e in find_context_errors(body)] == [
        ("dead-check", "a#10", "invariants")
    ]


async def test_a_member_dead_check_in_its_own_namespace_is_found() -> None:
    result = await Sequence.create("s").step("a", _armed("a")).build().run("go")
    body = json.loads(recording_of(result).model_dump_json())
    for commit in body["snapshot"]["commit_log"]:
        for write in commit["writes"]:
            if write["path"] == "integrity_ledger":
                write["value"]["rows"] = " ".join(write["value"]["rows"].split()[1:])
    assert [(e.kind, e.stage_id, e.source_id) for e in find_context_errors(body)] == [
        ("dead-check", "a/final#9", "offered-tool")
    ]


# -- hostile input --------------------------------------------------------------------------------------------------


async def test_forged_mount_rows_do_not_crash_the_reader() -> None:
    result = await Sequence.create("s").step("a", _agent("ok [a]", "a", cites=cites)).build().run("go")
    body = json.loads(recording_of(result).model_dump_json())
    for commit in body["snapshot"]["commit_log"]:
        for write in commit["writes"]:
            if write["path"].startswith("integrity_mount:"):
                write["value"] = {"findings": [7, None, {"kind": 3}], "rows": "x"}
            if write["path"] == "integrity_ledger":
                write["value"] = {"declared": "x y", "rows": "x/wire/1/q/0/0 y/wire/1/0/0/0/9", "invariants": 5}
    found = [(e.kind, e.source_id) for e in find_context_errors(body)]
    assert found == [("3", None), ("dead-check", "x"), ("dead-check", "y")]
    assert mount_dispositions(body) == []


def test_check_mount_copes_with_a_hostile_scope() -> None:
    class Odd(dict[str, Any]):
        pass

    sub = Odd(answer=None, tool_results=[None, {"name": "t", "is_error": True}, {"name": "u"}], member_message=5)
    out = check_mount("m" * 200, "mount", declared_invariants({"x": lambda v: v.tools == ("u",)}), sub)
    assert out["member"] == "m" * 64 and out["findings"] == []


# -- a generated set of composed runs -------------------------------------------------------------------------------


def _composed_case(rng: random.Random) -> tuple[Any, int]:
    """2-4 members in a random composition; each member's answer keeps or breaks its invariant at random."""
    members, planted = [], 0
    for i in range(rng.randint(2, 4)):
        bad = rng.random() < 0.3
        planted += bad
        members.append((f"m{i}", _agent("bare claim" if bad else f"claim [s{i}]", f"agent{i}", cites=cites)))
    kind = rng.choice(["sequence", "parallel", "workflow"])
    if kind == "sequence":
        builder: Any = Sequence.create("s")
        for name, agent in members:
            builder = builder.step(name, agent)
    elif kind == "parallel":
        builder = Parallel.create("p")
        for name, agent in members:
            builder = builder.branch(name, agent)
    else:
        builder = Workflow.create("w")
        for name, agent in members:
            builder = builder.step(name, agent)
    return builder.build(), planted


async def test_generated_composed_runs_find_every_planted_violation_and_nothing_on_clean_runs() -> None:
    rng = random.Random(3737)
    clean = planted_runs = 0
    for _ in range(50):
        composition, planted = _composed_case(rng)
        result = await composition.run("go")
        body = json.loads(recording_of(result).model_dump_json())
        assert find_context_errors(result).kinds() == ["invariant-violation"] * planted
        assert find_context_errors(body).kinds() == ["invariant-violation"] * planted
        clean += not planted
        planted_runs += bool(planted)
    assert clean >= 5 and planted_runs >= 20


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=4))
async def test_property_one_finding_per_false_verdict(verdicts: list[bool | None]) -> None:
    builder = Sequence.create("s")
    for i, verdict in enumerate(verdicts):
        member = _agent("x", f"a{i}", v=lambda view, verdict=verdict: verdict)
        builder = builder.step(f"m{i}", member)
    result = await builder.build().run("go")
    assert len(find_context_errors(result)) == verdicts.count(False)
    assert [r["disposition"] for r in mount_dispositions(result)] == [
        "not-applicable" if v is None else "ran" for v in verdicts
    ]


def test_dev_posture_fails_a_run_whose_invariant_checker_missed_its_canary(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentfootprint.extensions import integrity as ledger
    from agentfootprint.extensions.integrity import CheckerDeadError

    def build() -> Agent:
        return (
            Agent.create(provider=mock(reply="x [a]"), model="m")
            .invariants({"cites": cites})
            .integrity(integrity_posture="dev")
            .build()
        )

    assert build().run_sync("go").answer == "x [a]"  # clean control: the canary is caught
    monkeypatch.setattr(ledger, "check_mount", lambda *a: {"member": "m", "at": None, "rows": [], "findings": []})
    with pytest.raises(CheckerDeadError) as err:
        build().run_sync("go")
    assert err.value.check == "invariants" and err.value.code == "ERR_CHECKER_DEAD"


async def test_one_agent_mounted_on_many_branches_has_no_false_wire_findings() -> None:
    """A tree of thoughts mounts one thinker on every branch (one member run across namespaces): its wire rows
    rebuild without a false finding, and each branch's mount checks the invariant."""
    from agentfootprint.compose import tree_of_thoughts

    look = define_tool(
        name="look", description="L.", input_schema={"type": "object", "properties": {}}, execute=lambda a: "seen"
    )
    count = {"n": 0}

    def respond(request: Any) -> Any:
        count["n"] += 1
        if not any(m.role == "tool" for m in request.messages):
            return {"tool_calls": [{"id": f"c{count['n']}", "name": "look", "args": {}}]}
        return f"thought {count['n']}" + (" [src]" if count["n"] % 3 else "")

    thinker = (
        Agent.create(provider=mock(respond=respond), model="m", name="thinker").tool(look).invariants({"cites": cites})
    )
    result = await tree_of_thoughts(thinker.build(), depth=2, branching=3, score=len).run("solve")
    body = json.loads(recording_of(result).model_dump_json())
    assert find_context_errors(body).kinds() == ["invariant-violation"] * 2
    assert [row["findings"] for row in mount_dispositions(result)] == [0, 0, 1, 0, 0, 1]
