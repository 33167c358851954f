"""Issue 35 (fork inside compositions): a composition's run forks at a model call inside one member; the members'
calls before it are served from the recording (requests checked), that member forks there and the rest runs live;
a composition that does not fit the recording is refused naming what differs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, RunResult
from agentfootprint.agent import UnknownSourceError
from agentfootprint.agent._fork_seam import MemberRunner, agent_mounts, always_run
from agentfootprint.compose import Loop, Parallel, Sequence, llm_router
from agentfootprint.explain import ForkMismatchError, WhatIfError, diff, fork, load_recording, save_recording
from agentfootprint.flow import FlowSnapshot
from agentfootprint.providers import LLMRequest, mock
from tests.explain.test_fork import ASK, World


def snapshot(result: RunResult) -> FlowSnapshot:
    snap = result.recorded().snapshot
    assert snap is not None
    return snap


def model_calls(result: RunResult) -> list[tuple[str, int, str]]:
    """Every recorded model call: runtime stage id, commit idx, namespace."""
    return [
        (c.runtime_stage_id, c.idx, c.namespace)
        for c in snapshot(result).commit_log
        if c.stage_id == "call-llm" and c.applied
    ]


def live_tool_runs(result: RunResult, at_idx: int) -> int:
    """Tool executions a fork at ``at_idx`` makes: the tool calls answering a model call at or after the step."""
    last_call: dict[str, int] = {}
    runs = 0
    for c in snapshot(result).commit_log:
        if c.stage_id == "call-llm" and c.applied:
            last_call[c.namespace] = c.idx
        elif c.stage_id == "tool-calls" and c.applied and last_call.get(c.namespace, -1) >= at_idx:
            runs += sum(
                len(w.value)
                for w in c.writes
                if w.path == "tool_results" and w.verb == "append" and isinstance(w.value, list | tuple)
            )
    return runs


async def record(runner: Any, message: str = "go") -> list[RunResult]:
    legs = [await runner.run(message, seed=7)]
    while legs[-1].paused:
        legs.append(await runner.resume(legs[-1].checkpoint or {}, f"yes {len(legs)}"))
    return legs


def pipeline(world: World) -> tuple[Sequence, Agent, Agent]:
    first = world.agent()
    second = world.agent(system="You check.")
    return Sequence.create("pipe").step("draft", first).step("check", second).build(), first, second


# -- the seam ------------------------------------------------------------------------------------------------------
def test_the_seam_finds_every_mounted_agent_and_swaps_them_keeping_the_members() -> None:
    world = World(["t0"], ["t0"], [])
    a, b = world.agent(), world.agent(system="Two.")
    inner = Parallel.create().branch("x", a).branch("y", b).build()
    seq = Sequence.create().step("one", a).step("both", inner).build()
    assert isinstance(seq, MemberRunner) and not isinstance(a, MemberRunner)
    mounts = [(m.path, m.agent is a, m.agent is b, m.concurrent) for m in agent_mounts(seq.chart, seq.agents())]
    assert mounts == [
        ("one", True, False, False),
        ("both", False, False, False),
        ("both/x", True, False, True),
        ("both/y", False, True, True),
    ]
    assert always_run(seq.chart) == {"seed", "one", "both"}
    c = world.agent(system="Three.")
    swapped = seq.with_agents(lambda agent: c if agent is a else agent)
    assert [n for n, _ in swapped.members] == ["one", "both"]
    assert [agent.config.system_prompt for agent in swapped.agents()] == ["Three.", "Three.", "Two."]
    assert [agent.config.system_prompt for agent in seq.agents()] == ["You help.", "You help.", "Two."]


# -- a fork with no change -----------------------------------------------------------------------------------------
def compositions(world: World) -> dict[str, Any]:
    a, b = world.agent(), world.agent(system="Two.")
    merge = Parallel.create().branch("x", a).branch("y", b).merge_with(lambda d: " | ".join(d.values())).build()
    return {
        "sequence": Sequence.create().step("one", a).step("two", b).build(),
        "nested": Sequence.create().step("one", a).step("both", merge).build(),
        "loop": Loop.create().repeat(a).times(2).build(),
    }


@pytest.mark.parametrize("kind", ["sequence", "nested", "loop"])
async def test_a_fork_with_no_change_at_every_member_call_serves_the_calls_before_it(kind: str) -> None:
    world = World(["t0", "t1"], ["t0", "t1"], ["policy"])
    runner = compositions(world)[kind]
    (original,) = await record(runner)
    calls = model_calls(original)
    assert len(calls) == {"sequence": 6, "nested": 9, "loop": 6}[kind]
    for at, at_idx, _ in calls:
        world.reset()
        forked = await fork(original, runner, at=at)
        assert world.model_calls == sum(1 for _, idx, _ in calls if idx >= at_idx)
        assert world.tool_runs == live_tool_runs(original, at_idx)
        assert forked.answer == original.answer
        assert diff(original, forked).agree
        assert forked.run_id != original.run_id


async def test_a_change_applies_from_the_fork_step_on_across_the_members_after_it() -> None:
    world = World(["t0", "t0"], ["t0"], ["policy"])
    seq, _, _ = pipeline(world)
    (original,) = await record(seq)
    calls = model_calls(original)
    at = calls[1][0]
    world.reset()
    changed = await fork(original, seq, at=at, replace={"policy": "Changed."})
    assert world.model_calls == 5  # the draft's first call was served
    assert diff(original, changed).first_model_call == (at, at)
    assert "Changed." in changed.answer and "policy holds." in str(original.answer)
    later = calls[3][0]  # inside the second member: the first member is served whole
    world.reset()
    moved = await fork(original, seq, at=later, replace={"policy": "Changed."})
    assert world.model_calls == 3 and world.tool_runs == 2
    assert diff(original, moved).first_model_call == (later, later)


async def test_without_a_tool_in_the_member_that_forks_stops_offering_it_there() -> None:
    world = World(["t0", "t1"], ["t0", "t1"], [])
    seq, _, _ = pipeline(world)
    (original,) = await record(seq)
    at = model_calls(original)[1][0]
    seen: list[list[str]] = []
    world_respond = world.respond

    def respond(req: LLMRequest) -> Any:
        seen.append([t.name for t in req.tools])
        return world_respond(req)

    world.respond = respond  # type: ignore[method-assign]
    spy_seq, _, _ = pipeline(world)
    forked = await fork(original, spy_seq, at=at, without=["t1"])
    assert forked.status == "completed"
    assert seen[0] == ["t0"]  # the fork step no longer offers t1 (the first call was served)


async def test_a_tool_result_of_the_forking_member_is_replaced_from_the_step_on() -> None:
    world = World(["t0", "t0"], ["t0"], [])
    seq, _, _ = pipeline(world)
    (original,) = await record(seq)
    at = model_calls(original)[1][0]
    world.reset()
    forked = await fork(original, seq, at=at, replace={"t0#2": "REPLACED"})
    draft_answer = next(
        w.value for c in snapshot(forked).commit_log if c.namespace == "" for w in c.writes if w.path == "step:draft"
    )
    assert draft_answer == "answer from [You help.] after 2 results, last REPLACED"
    assert world.tool_runs == 2  # the second member's two tool calls; the replaced one never ran


async def test_a_pause_chain_inside_a_member_forks_past_the_pause_with_its_recorded_answer() -> None:
    world = World(["t0", ASK, "t0"], ["t0"], [])
    seq, _, _ = pipeline(world)
    legs = await record(seq)
    assert [leg.status for leg in legs] == ["paused", "paused", "completed"]
    final = legs[-1]
    calls = model_calls(final)
    for chain in (final, legs):
        at, at_idx, _ = calls[6]  # the second member's third call, after both pauses
        world.reset()
        forked = await fork(chain, seq, at=at)
        assert forked.status == "completed" and forked.answer == final.answer
        assert world.model_calls == sum(1 for _, idx, _ in calls if idx >= at_idx)
        assert diff(final, forked).agree
    world.reset()
    stopped = await fork(final, seq, at=calls[4][0])  # before the second pause: it is live again and stops there
    assert stopped.status == "paused" and world.model_calls == 2


async def test_a_saved_composition_recording_forks_like_the_result(tmp_path: Path) -> None:
    world = World(["t0"], ["t0"], [])
    seq, _, _ = pipeline(world)
    (original,) = await record(seq, "what now?")
    loaded = load_recording(save_recording(original, tmp_path / "run.json"))
    at = model_calls(original)[2][0]
    world.reset()
    forked = await fork(loaded, seq, at=at)
    assert forked.answer == original.answer and world.model_calls == 2


async def test_a_router_forks_with_its_choice_served() -> None:
    world = World(["t0"], ["t0"], [])
    chooser = mock(replies=['{"route": "billing"}'] * 4)
    router = llm_router(chooser, {"billing": ("money", world.agent()), "tech": ("bugs", world.agent())}, model="m")
    (original,) = await record(router)
    calls = model_calls(original)
    assert len(calls) == 3  # the chooser's call, then the billing agent's two
    world.reset()
    forked = await fork(original, router, at=calls[2][0])
    assert forked.answer == original.answer and world.model_calls == 1


# -- refusals ------------------------------------------------------------------------------------------------------
def misfits(world: World, a: Agent, b: Agent) -> dict[str, tuple[Any, str]]:
    return {
        "reordered": (Sequence.create("pipe").step("check", b).step("draft", a).build(), "member_order"),
        "renamed": (Sequence.create("pipe").step("first", a).step("check", b).build(), "members"),
        "dropped": (Sequence.create("pipe").step("draft", a).build(), "members"),
        "added": (Sequence.create("pipe").step("draft", a).step("check", b).step("more", b).build(), "members"),
        "parallel": (Parallel.create("pipe").branch("draft", a).branch("check", b).build(), "members"),
        "tools_order": (
            Sequence.create("pipe").step("draft", world.agent(tools=["t1", "t0"])).step("check", b).build(),
            "tool_order",
        ),
        "tool_gone": (
            Sequence.create("pipe").step("draft", a).step("check", world.agent(system="You check.", tools=["t0"])),
            "tools",
        ),
        "model": (
            Sequence.create("pipe").step("draft", a).step("check", world.agent(system="You check.", model="m2")),
            "model",
        ),
        "prompt": (Sequence.create("pipe").step("draft", world.agent(system="Other.")).step("check", b), "request"),
    }


@pytest.mark.parametrize(
    "misfit", ["reordered", "renamed", "dropped", "added", "parallel", "tools_order", "tool_gone", "model", "prompt"]
)
async def test_a_composition_that_does_not_fit_the_recording_is_refused_naming_the_field(misfit: str) -> None:
    world = World(["t0", "t1"], ["t0", "t1"], [])
    seq, a, b = pipeline(world)
    (original,) = await record(seq)
    other, field = misfits(world, a, b)[misfit]
    other = other.build() if hasattr(other, "build") else other
    for at, _, _ in model_calls(original):
        world.reset()
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, other, at=at)
        assert err.value.field == field
        assert (world.model_calls, world.tool_runs) == (0, 0)


async def test_steps_that_are_not_a_member_model_call_are_refused() -> None:
    world = World(["t0"], ["t0"], [])
    seq, a, _ = pipeline(world)
    (original,) = await record(seq)
    for at in ("check/call-llm#999", "seed#0", "draft#1", "", "call-llm#5"):
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, seq, at=at)
        assert err.value.field == "step"
    own = await a.run("go", seed=7)
    with pytest.raises(ForkMismatchError) as err:  # an agent's own run is not the composition's
        await fork(own, seq, at=model_calls(own)[0][0])
    assert err.value.field == "members"


async def test_unknown_sources_and_a_model_call_the_composition_makes_itself_are_refused_by_code() -> None:
    world = World(["t0"], ["t0"], ["policy"])
    seq, _, _ = pipeline(world)
    (original,) = await record(seq)
    at = model_calls(original)[1][0]
    with pytest.raises(UnknownSourceError):
        await fork(original, seq, at=at, without=["nobody"])
    merger = mock(replies=["merged"] * 3)
    both = Parallel.create("both").branch("x", world.agent()).branch("y", world.agent(system="Y."))
    after = world.agent(system="After.")
    chain = Sequence.create("c").step("both", both.merge_with_llm(merger, "m", "Merge.").build()).step("after", after)
    runner = chain.build()
    (merged,) = await record(runner)
    at = model_calls(merged)[-1][0]
    world.reset()
    with pytest.raises(WhatIfError) as err:
        await fork(merged, runner, at=at)
    assert err.value.code == "ERR_FORK_UNSUPPORTED" and world.model_calls == 0


@settings(max_examples=25, deadline=None)
@given(at=st.one_of(st.text(max_size=40), st.integers(), st.none(), st.just("check/call-llm#7\x00")))
def test_any_hostile_step_is_refused_as_a_step(at: Any) -> None:
    world = World(["t0"], ["t0"], [])
    seq, _, _ = pipeline(world)

    async def go() -> None:
        (original,) = await record(seq)
        if at in {c for c, _, _ in model_calls(original)}:
            return
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, seq, at=at)
        assert err.value.field == "step"
        if isinstance(at, str) and len(at) > 3:
            assert at not in str(err.value)

    asyncio.run(go())


# -- generated compositions ----------------------------------------------------------------------------------------
_PLAN = st.lists(st.sampled_from(["t0", "t1", ASK]), max_size=3)


def generated(kind: str, plans: list[list[str]]) -> tuple[Any, list[World]]:
    worlds = [World(p, ["t0", "t1"], ["f1"]) for p in plans]
    agents = [w.agent(system=f"Member {i}.") for i, w in enumerate(worlds)]
    if kind == "sequence":
        builder = Sequence.create("gen")
        for i, agent in enumerate(agents):
            builder = builder.step(f"m{i}", agent)
        return builder.build(), worlds
    if kind == "parallel":
        par = Parallel.create("gen")
        for i, agent in enumerate(agents):
            par = par.branch(f"m{i}", agent)
        return par.merge_with(lambda d: " | ".join(d.values())).build(), worlds
    if kind == "loop":
        return Loop.create("gen").repeat(agents[0]).times(len(agents)).build(), worlds[:1]
    inner = Sequence.create("inner")
    for i, agent in enumerate(agents[1:] or agents):
        inner = inner.step(f"i{i}", agent)
    return Sequence.create("gen").step("head", agents[0]).step("tail", inner.build()).build(), worlds


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["sequence", "parallel", "loop", "nested"]), plans=st.lists(_PLAN, min_size=1, max_size=3))
def test_generated_compositions_fork_at_every_call_with_no_live_prefix(kind: str, plans: list[list[str]]) -> None:
    """On generated sequences, parallels, loops and nested compositions (pauses included), a fork at every member
    model call serves everything before it and, with no change, reproduces the run."""
    if kind == "parallel" and any(ASK in p for p in plans):
        plans = [[s for s in p if s != ASK] for p in plans]  # several branches paused at once take a map answer
    runner, worlds = generated(kind, plans)

    async def go() -> None:
        legs = await record(runner)
        final = legs[-1]
        calls = model_calls(final)
        for at, at_idx, _ in calls:
            for w in worlds:
                w.reset()
            forked = await fork(final, runner, at=at)
            made = sum(w.model_calls for w in worlds)
            after = [idx for _, idx, _ in calls if idx >= at_idx]
            if forked.paused:  # a pause after the step is live again: the fork stops there
                assert 1 <= made <= len(after)
                continue
            assert made == len(after)
            assert sum(w.tool_runs for w in worlds) == live_tool_runs(final, at_idx)
            assert forked.answer == final.answer
            assert diff(final, forked).agree
            changed = await fork(final, runner, at=at, replace={"f1": "changed."})
            assert diff(final, changed).first_model_call == (at, at)

    asyncio.run(go())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), plans=st.lists(st.lists(st.sampled_from(["t0", "t1"]), max_size=2), min_size=2, max_size=3))
def test_adversarial_composition_forks_are_all_refused(data: st.DataObject, plans: list[list[str]]) -> None:
    """Members reordered or renamed, a member's tools reordered, a step out of range: every one refused."""
    runner, worlds = generated("sequence", plans)
    attack = data.draw(st.sampled_from(["reorder", "rename", "tools", "step"]))
    members = list(runner.members)
    expected = {"reorder": "member_order", "rename": "members", "tools": "tool_order", "step": "step"}[attack]

    async def go() -> None:
        (original,) = await record(runner)
        at = data.draw(st.sampled_from([c for c, _, _ in model_calls(original)]))
        other = runner
        if attack == "reorder":
            other = Sequence("gen", members[::-1], {})
        elif attack == "rename":
            other = Sequence("gen", [("x" + n, r) for n, r in members], {})
        elif attack == "tools":
            pick = data.draw(st.integers(min_value=0, max_value=len(members) - 1))
            swapped = worlds[pick].agent(system=f"Member {pick}.", tools=["t1", "t0"])
            other = Sequence("gen", [(n, swapped if i == pick else r) for i, (n, r) in enumerate(members)], {})
        else:
            at = data.draw(st.sampled_from(["m0/call-llm#9999", "seed#0", "gen#1", "m1/route#3"]))
        for w in worlds:
            w.reset()
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, other, at=at)
        assert err.value.field == expected
        assert sum(w.model_calls + w.tool_runs for w in worlds) == 0

    asyncio.run(go())


async def test_a_leg_of_another_composition_run_is_refused() -> None:
    world = World(["t0", ASK], ["t0"], [])
    seq, _, _ = pipeline(world)
    one, two = await record(seq, "one"), await record(seq, "two")
    at = model_calls(one[-1])[0][0]
    for chain in ([one[0], two[1]], [two[0], one[1]], [one[1], one[0]]):
        world.reset()
        with pytest.raises(ForkMismatchError) as err:
            await fork(chain, seq, at=at)
        assert err.value.field == "leg"
        assert (world.model_calls, world.tool_runs) == (0, 0)
    world.reset()
    whole = await fork(one, seq, at=model_calls(one[-1])[-1][0])  # the chain as recorded forks
    assert whole.answer == one[-1].answer and world.model_calls == 1
