"""Issue 35 (fork): rerun a recorded run from one model call with one change; the prefix is served from the
recording (no model call, no tool call, requests checked) and a recording that does not fit the agent is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, RunResult, ask_human, define_fact, define_instruction, define_skill, define_tool
from agentfootprint._sync import SyncInRunningLoopError
from agentfootprint.agent import NoRunRecordError, UnknownSourceError
from agentfootprint.compose import Sequence
from agentfootprint.explain import (
    ForkMismatchError,
    WhatIfError,
    diff,
    fork,
    fork_sync,
    load_recording,
    recording_of,
    save_recording,
)
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock

ASK = "ask"


class World:
    """A scripted run: the model calls the planned tools in order (``ask`` pauses for a person), then answers with
    what it read; counts every model call and every tool execution."""

    def __init__(self, plan: list[str], tools: list[str], facts: list[str]) -> None:
        self.plan = plan
        self.tools = tools
        self.facts = facts
        self.model_calls = 0
        self.tool_runs = 0

    def respond(self, req: LLMRequest) -> LLMResponse | str:
        self.model_calls += 1
        done = [m for m in req.messages if m.role == "tool"]
        k = len(done)
        if k < len(self.plan):
            step = self.plan[k]
            if step == ASK:
                return LLMResponse(
                    content="", tool_calls=[ToolCall(id=f"a{k}", name="ask_human", args={"question": "ok?"})]
                )
            return LLMResponse(content="", tool_calls=[ToolCall(id=f"c{k}", name=step, args={"q": f"q{k}"})])
        last = done[-1].content if done else "-"
        return f"answer from [{req.system_prompt}] after {k} results, last {last}"

    def tool(self, name: str) -> Any:
        def execute(args: dict[str, Any], ctx: Any) -> str:
            self.tool_runs += 1
            return f"{name} says {args.get('q')}"

        return define_tool(
            name=name,
            description=f"{name} tool",
            input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
            execute=execute,
        )

    def agent(
        self,
        *,
        tools: list[str] | None = None,
        facts: list[str] | None = None,
        system: str = "You help.",
        model: str = "m",
    ) -> Agent:
        builder = Agent.create(provider=mock(respond=self.respond), model=model).system(system)
        for name in tools if tools is not None else self.tools:
            builder = builder.tool(self.tool(name))
        if ASK in self.plan:
            builder = builder.tool(ask_human)
        for fid in facts if facts is not None else self.facts:
            builder = builder.fact(define_fact(id=fid, data=f"{fid} holds."))
        return builder.build()

    def reset(self) -> None:
        self.model_calls = 0
        self.tool_runs = 0


async def record(world: World, agent: Agent, message: str = "go") -> list[RunResult]:
    """The run's legs: answered from the recorded plan, each pause resumed with a fixed answer."""
    legs = [await agent.run(message, seed=7)]
    while legs[-1].paused:
        legs.append(await agent.resume(legs[-1].checkpoint or {}, f"yes {len(legs)}"))
    return legs


def call_ids(result: RunResult) -> list[str]:
    snap = result.recorded().snapshot
    assert snap is not None
    return [c.runtime_stage_id for c in snap.commit_log if c.stage_id == "call-llm" and c.applied]


# -- a fork with no change ----------------------------------------------------------------------------------------
async def test_a_fork_with_no_change_at_every_step_reproduces_the_run_serving_its_prefix() -> None:
    world = World(["look", "find", "look"], ["look", "find"], ["policy"])
    agent = world.agent()
    (original,) = await record(world, agent)
    calls = call_ids(original)
    assert calls == ["call-llm#5", "call-llm#12", "call-llm#19", "call-llm#26"]
    for n, at in enumerate(calls):
        world.reset()
        forked = await fork(original, agent, at=at)
        assert isinstance(forked, RunResult)
        assert world.model_calls == len(calls) - n  # the prefix made no model call
        assert world.tool_runs == 3 - n  # nor any tool call
        assert forked.answer == original.answer
        assert diff(original, forked).agree
        assert forked.run_id != original.run_id


async def test_a_loaded_recording_forks_like_the_result(tmp_path: Path) -> None:
    world = World(["look", "look"], ["look"], ["policy"])
    agent = world.agent()
    (original,) = await record(world, agent, "what now?")
    path = save_recording(original, tmp_path / "run.json")
    loaded = load_recording(path)
    world.reset()
    forked = await fork(loaded, agent, at="call-llm#12")
    assert (world.model_calls, world.tool_runs) == (2, 1)
    assert forked.answer == original.answer
    assert diff(original, forked).agree
    world.reset()
    again = await fork(recording_of(original), agent, at="call-llm#19")
    assert (world.model_calls, world.tool_runs) == (1, 0)
    assert again.answer == original.answer


async def test_the_sync_twin_forks_and_refuses_inside_a_running_loop() -> None:
    world = World(["look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    with pytest.raises(SyncInRunningLoopError):
        fork_sync(original, agent, at="call-llm#12")


def test_the_sync_twin_forks_outside_a_loop() -> None:
    world = World(["look"], ["look"], [])
    agent = world.agent()
    (original,) = asyncio.run(record(world, agent))
    world.reset()
    forked = fork_sync(original, agent, at="call-llm#12")
    assert (world.model_calls, world.tool_runs) == (1, 0)
    assert forked.answer == original.answer


# -- the change ----------------------------------------------------------------------------------------------------
async def test_replace_gives_a_fact_a_new_value_from_the_fork_step_on() -> None:
    world = World(["look", "look"], ["look"], ["policy"])
    agent = world.agent()
    (original,) = await record(world, agent)
    world.reset()
    forked = await fork(original, agent, at="call-llm#19", replace={"policy": "Refunds need a receipt."})
    assert (world.model_calls, world.tool_runs) == (1, 0)  # the two earlier calls still read the old value
    assert forked.answer == "answer from [You help.\n\nRefunds need a receipt.] after 2 results, last look says q1"
    assert original.answer == "answer from [You help.\n\npolicy holds.] after 2 results, last look says q1"
    d = diff(original, forked)
    assert d.first_model_call == ("call-llm#19", "call-llm#19")
    assert d.sources_changed == ["policy"]


async def test_without_removes_a_fact_from_the_fork_step_on() -> None:
    world = World(["look"], ["look"], ["policy", "tone"])
    agent = world.agent()
    (original,) = await record(world, agent)
    world.reset()
    forked = await fork(original, agent, at="call-llm#12", without=["tone"])
    assert (world.model_calls, world.tool_runs) == (1, 0)
    assert forked.answer == "answer from [You help.\n\npolicy holds.] after 1 results, last look says q0"
    d = diff(original, forked)
    assert d.sources_removed == ["tone"]
    # the steps before the fork read and wrote what the recorded ones did: the runs part at the fork step's iteration
    assert d.first_divergence == ("injection-engine#8", "injection-engine#8")
    assert d.first_model_call == ("call-llm#12", "call-llm#12")


async def test_without_a_tool_stops_offering_it_from_the_fork_step_on() -> None:
    world = World(["look", "find"], ["look", "find"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    world.reset()
    forked = await fork(original, agent, at="call-llm#12", without=["find"])
    assert world.tool_runs == 0  # the model still asked for find: it was not offered, so it did not run
    snap = forked.recorded().snapshot
    assert snap is not None
    offered = [snap.value_at("llm_call", c.idx)["tools"] for c in snap.commit_log if c.stage_id == "call-llm"]
    assert offered == [["look", "find"], ["look"], ["look"]]
    assert diff(original, forked).first_divergence == ("tools#11", "tools#11")


async def test_replace_a_later_tool_result_substitutes_it_without_running_the_tool() -> None:
    world = World(["look", "look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    world.reset()
    forked = await fork(original, agent, at="call-llm#12", replace={"look#2": "nothing found"})
    assert (world.model_calls, world.tool_runs) == (2, 0)
    assert forked.answer == "answer from [You help.] after 2 results, last nothing found"


async def test_a_change_that_already_reached_the_prefix_is_refused_by_code() -> None:
    world = World(["look", "look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    with pytest.raises(WhatIfError) as err:
        await fork(original, agent, at="call-llm#19", replace={"look#1": "x"})
    assert err.value.code == "ERR_FORK_CHANGE_BEFORE_STEP"
    with pytest.raises(WhatIfError) as err:
        await fork(original, agent, at="call-llm#19", without=["look#2"])
    assert err.value.code == "ERR_FORK_CHANGE_BEFORE_STEP"


async def test_unknown_and_malformed_changes_are_refused_by_code() -> None:
    world = World(["look"], ["look"], ["policy"])
    agent = world.agent()
    (original,) = await record(world, agent)
    with pytest.raises(UnknownSourceError):
        await fork(original, agent, at="call-llm#12", without=["nope"])
    with pytest.raises(WhatIfError) as err:
        await fork(original, agent, at="call-llm#12", replace={"policy": 42})
    assert err.value.code == "ERR_FORK_REPLACE_VALUE"
    with pytest.raises(WhatIfError) as err:
        await fork(original, agent, at="call-llm#12", replace={"look": "x"})
    assert err.value.code == "ERR_FORK_REPLACE_UNSUPPORTED"
    with pytest.raises(WhatIfError) as err:
        await fork(original, agent, at="call-llm#12", without="policy")  # type: ignore[arg-type]
    assert err.value.code == "ERR_WHATIF_SOURCE_ID"


# -- refusals ------------------------------------------------------------------------------------------------------
async def test_a_recording_that_does_not_fit_the_agent_is_refused_naming_what_differs() -> None:
    world = World(["look", "find"], ["look", "find"], ["policy"])
    agent = world.agent()
    (original,) = await record(world, agent)
    cases: list[tuple[Agent, str]] = [
        (world.agent(tools=["find", "look"]), "tool_order"),
        (world.agent(tools=["look"]), "tools"),
        (world.agent(tools=["look", "find", "more"]), "tools"),
        (world.agent(facts=["policy2"]), "sources"),
        (world.agent(facts=[]), "sources"),
        (world.agent(model="other"), "model"),
        (world.agent(system="You help a lot."), "request"),
    ]
    for other, field in cases:
        world.reset()
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, other, at="call-llm#19")
        assert err.value.field == field
        assert err.value.code == "ERR_FORK_MISMATCH"
        assert world.model_calls == 0 and world.tool_runs == 0  # refused before anything ran live


async def test_a_step_that_is_not_a_model_call_of_the_run_is_refused() -> None:
    world = World(["look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    for at in ("call-llm#99", "seed#0", "tool-calls#7", "", "CALL-LLM#5", 5):
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, agent, at=at)  # type: ignore[arg-type]
        assert err.value.field == "step"


async def test_what_is_not_a_run_or_not_an_agent_is_refused_by_code() -> None:
    world = World(["look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    with pytest.raises(WhatIfError) as err:
        await fork({"nothing": 1}, agent, at="call-llm#5")
    assert err.value.code == "ERR_WHATIF_NOT_A_RUN"
    with pytest.raises(WhatIfError) as err:
        await fork([], agent, at="call-llm#5")
    assert err.value.code == "ERR_WHATIF_NOT_A_RUN"
    with pytest.raises(WhatIfError) as err:
        await fork(original, object(), at="call-llm#5")
    assert err.value.code == "ERR_FORK_NOT_AN_AGENT"
    with pytest.raises(ForkMismatchError) as mismatch:  # an agent's own run is not a composition's
        await fork(original, Sequence.create().step("one", agent).build(), at="call-llm#5")
    assert mismatch.value.field == "members"
    with pytest.raises(NoRunRecordError):
        await fork(RunResult(answer="x", run_id="r", status="completed"), agent, at="call-llm#5")


async def test_a_step_inside_a_composition_member_forked_with_the_member_alone_is_refused() -> None:
    world = World(["look"], ["look"], [])
    member = world.agent()
    seq = Sequence.create().step("one", member).build()
    result = await seq.run("go")
    snap = result.recorded().snapshot
    assert snap is not None
    inner = next(c.runtime_stage_id for c in snap.commit_log if c.stage_id == "call-llm" and c.namespace)
    with pytest.raises(ForkMismatchError) as err:
        await fork(result, member, at=inner)
    assert err.value.field == "members"


# -- pause chains --------------------------------------------------------------------------------------------------
async def test_a_fork_after_a_pause_replays_the_pause_with_its_recorded_answer() -> None:
    world = World(["look", ASK, "look"], ["look"], [])
    agent = world.agent()
    legs = await record(world, agent)
    assert [leg.status for leg in legs] == ["paused", "completed"]
    final = legs[-1]
    calls = call_ids(final)
    assert len(calls) == 4
    for chain in (final, legs):
        world.reset()
        forked = await fork(chain, agent, at=calls[3])
        assert (world.model_calls, world.tool_runs) == (1, 0)
        assert forked.status == "completed" and forked.answer == final.answer
        assert diff(final, forked).agree
    world.reset()
    before = await fork(final, agent, at=calls[1])  # the pause is live again: the fork stops there
    assert before.status == "paused" and (world.model_calls, world.tool_runs) == (1, 0)
    assert diff(legs[0], before).agree
    world.reset()
    resumed = await before.recorded().runner.resume(before.checkpoint or {}, "yes 1")  # the fork's agent resumes it
    assert resumed.answer == final.answer and (world.model_calls, world.tool_runs) == (2, 1)


async def test_a_leg_from_another_run_is_refused() -> None:
    world = World(["look", ASK], ["look"], [])
    agent = world.agent()
    first = await record(world, agent, "one")
    second = await record(world, agent, "two")
    with pytest.raises(ForkMismatchError) as err:
        await fork([first[0], second[1]], agent, at="call-llm#5")
    assert err.value.field == "leg"
    with pytest.raises(ForkMismatchError) as err:
        await fork([second[1], first[0]], agent, at="call-llm#5")
    assert err.value.field == "leg"


# -- generated runs ------------------------------------------------------------------------------------------------
_STEP = st.sampled_from(["t0", "t1", "t2", ASK])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plan=st.lists(_STEP, max_size=5),
    tool_count=st.integers(min_value=1, max_value=3),
    facts=st.lists(st.sampled_from(["f1", "f2", "f3"]), unique=True, max_size=3),
)
def test_generated_runs_fork_at_every_step_with_no_live_prefix(
    plan: list[str], tool_count: int, facts: list[str]
) -> None:
    """On generated tool loops and pause chains, a fork at every model call replays its prefix with no model or
    tool call (every replayed request checked) and, with no change, reproduces the run."""
    tools = [f"t{i}" for i in range(tool_count)]
    plan = [s for s in plan if s == ASK or s in tools]
    world = World(plan, tools, facts)
    agent = world.agent()

    async def go() -> None:
        legs = await record(world, agent)
        final = legs[-1]
        calls = call_ids(final)
        assert len(calls) == len(plan) + 1
        for n, at in enumerate(calls):
            world.reset()
            forked = await fork(final, agent, at=at)
            pending = [k for k, s in enumerate(plan) if s == ASK and k >= n]
            if pending:  # a pause after the fork step is live: the fork stops there, as the recorded leg did
                assert forked.paused
                assert world.model_calls == pending[0] - n + 1
                assert world.tool_runs == sum(1 for s in plan[n : pending[0]] if s != ASK)
            else:
                assert world.model_calls == len(calls) - n
                assert world.tool_runs == sum(1 for s in plan[n:] if s != ASK)
                assert forked.answer == final.answer
                assert diff(final, forked).agree
                if facts:  # one change from the fork step on: the runs part exactly there
                    changed = await fork(final, agent, at=at, replace={facts[0]: "changed."})
                    assert diff(final, changed).first_model_call == (at, at)

    asyncio.run(go())


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), plan=st.lists(st.sampled_from(["t0", "t1", "t2"]), min_size=1, max_size=4))
def test_adversarial_forks_are_all_refused_with_the_typed_error(data: st.DataObject, plan: list[str]) -> None:
    """Tools reordered, a source renamed, a leg from another run, a step out of range: every one refused."""
    tools = ["t0", "t1", "t2"]
    world = World(plan, tools, ["f1", "f2"])
    agent = world.agent()
    attack = data.draw(st.sampled_from(["reorder", "rename", "leg", "step"]))

    async def go() -> None:
        (original,) = await record(world, agent)
        calls = call_ids(original)
        at = data.draw(st.sampled_from(calls))
        target: Any = original
        other = agent
        expected = {"reorder": "tool_order", "rename": "sources", "leg": "leg", "step": "step"}[attack]
        if attack == "reorder":
            order = data.draw(st.permutations(tools).filter(lambda p: list(p) != tools))
            other = world.agent(tools=list(order))
        elif attack == "rename":
            other = world.agent(facts=["f1", data.draw(st.sampled_from(["f3", "F2", "f2b"]))])
        elif attack == "leg":
            asking = World(["t0", ASK], tools, ["f1", "f2"])
            ask_agent = asking.agent()
            one, two = await record(asking, ask_agent, "one"), await record(asking, ask_agent, "two")
            target, other = [one[0], two[1]], ask_agent
        else:
            at = data.draw(
                st.sampled_from([f"call-llm#{7 * len(calls) + 5}", "final#0", "route#6", "seed#0", "call-llm#-1"])
            )
        world.reset()
        with pytest.raises(ForkMismatchError) as err:
            await fork(target, other, at=at)
        assert err.value.field == expected
        assert world.model_calls == 0 and world.tool_runs == 0

    asyncio.run(go())


# -- hostile and less common runs ----------------------------------------------------------------------------------
async def test_a_tampered_recorded_reply_is_caught_by_the_next_replayed_request(tmp_path: Path) -> None:
    world = World(["look", "look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    raw = json.loads(save_recording(original, tmp_path / "run.json").read_text())
    first = next(c for c in raw["snapshot"]["commit_log"] if c["runtime_stage_id"] == "call-llm#5")
    reply = next(w for w in first["writes"] if w["path"] == "last_response")
    reply["value"]["tool_calls"][0]["args"] = {"q": "forged"}
    (tmp_path / "forged.json").write_text(json.dumps(raw))
    world.reset()
    with pytest.raises(ForkMismatchError) as err:
        await fork(load_recording(tmp_path / "forged.json"), agent, at="call-llm#19")
    assert err.value.field == "request"
    assert world.model_calls == 0


async def test_without_receipts_the_replayed_requests_are_checked_by_prompt_and_size() -> None:
    world = World(["look"], ["look"], ["policy"])

    def build(system: str) -> Agent:
        builder = Agent.create(provider=mock(respond=world.respond), model="m").system(system).tool(world.tool("look"))
        return builder.fact(define_fact(id="policy", data="policy holds.")).record_receipt(False).build()

    agent = build("You help.")
    (original,) = await record(world, agent)
    world.reset()
    forked = await fork(original, agent, at="call-llm#12")
    assert (world.model_calls, world.tool_runs) == (1, 0)
    assert forked.answer == original.answer
    with pytest.raises(ForkMismatchError) as err:
        await fork(original, build("You help a lot."), at="call-llm#12")
    assert err.value.field == "request"


async def test_a_streaming_agent_forks_with_its_prefix_served() -> None:
    world = World(["look"], ["look"], [])
    agent = world.agent()
    tokens: list[str] = []
    agent.on("agentfootprint.stream.token", lambda e: tokens.append(e.payload["text"]))
    (original,) = await record(world, agent)
    tokens.clear()
    world.reset()
    forked = await fork(original, agent, at="call-llm#12")
    assert (world.model_calls, world.tool_runs) == (1, 0)
    assert forked.answer == original.answer


async def test_an_unreadable_recorded_reply_is_refused_by_code(tmp_path: Path) -> None:
    world = World(["look"], ["look"], [])
    agent = world.agent()
    (original,) = await record(world, agent)
    raw = json.loads(save_recording(original, tmp_path / "run.json").read_text())
    first = next(c for c in raw["snapshot"]["commit_log"] if c["runtime_stage_id"] == "call-llm#5")
    next(w for w in first["writes"] if w["path"] == "last_response")["value"]["tool_calls"] = [{"id": 3}]
    (tmp_path / "broken.json").write_text(json.dumps(raw))
    world.reset()
    with pytest.raises(WhatIfError) as err:
        await fork(load_recording(tmp_path / "broken.json"), agent, at="call-llm#12")
    assert err.value.code == "ERR_WHATIF_NOT_A_RUN"
    assert "look" not in str(err.value) and (world.model_calls, world.tool_runs) == (0, 0)


async def test_skills_rules_and_tool_triggered_context_replay_with_the_prefix_served() -> None:
    """A skill read, a rule-triggered fact and an instruction that lands on a tool's return, forked at every call."""
    runs = {"model": 0, "tool": 0}

    def respond(req: LLMRequest) -> LLMResponse | str:
        runs["model"] += 1
        k = sum(1 for m in req.messages if m.role == "tool")
        if k == 0:
            return LLMResponse(content="", tool_calls=[ToolCall(id="r1", name="read_skill", args={"id": "returns"})])
        if k == 1:
            return LLMResponse(content="", tool_calls=[ToolCall(id="s1", name="search_docs", args={"q": "returns"})])
        return f"done with [{req.system_prompt}]"

    def search(args: dict[str, Any], ctx: Any) -> str:
        runs["tool"] += 1
        return "doc: returns need a form"

    agent = (
        Agent.create(provider=mock(respond=respond), model="m", max_iterations=6)
        .tool(define_tool(name="search_docs", description="search", input_schema={"type": "object"}, execute=search))
        .fact(define_fact(id="vip-rule", data="VIP customer.", active_when=lambda ctx: "vip" in ctx.user_message))
        .instruction(define_instruction(id="cite", prompt="Cite the document.", on_tool_return="search_docs"))
        .skill(define_skill(id="returns", description="How to process returns", body="Use the returns form."))
        .build()
    )
    original = await agent.run("vip asks about returns", seed=3)
    calls = call_ids(original)
    assert len(calls) == 3 and "Use the returns form." in str(original.answer)
    for n, at in enumerate(calls):
        runs.update(model=0, tool=0)
        forked = await fork(original, agent, at=at)
        assert (runs["model"], runs["tool"]) == (3 - n, 1 if n < 2 else 0)
        assert forked.answer == original.answer and diff(original, forked).agree
    runs.update(model=0, tool=0)
    changed = await fork(original, agent, at=calls[2], without=["cite"], replace={"vip-rule": "Not a VIP."})
    assert runs == {"model": 1, "tool": 0}
    assert "Cite the document." not in str(changed.answer) and "Not a VIP." in str(changed.answer)
    assert diff(original, changed).first_model_call == (calls[2], calls[2])


async def test_an_agent_that_tells_the_time_forks_on_the_recorded_clock() -> None:
    world = World(["look"], ["look"], [])

    def now(args: dict[str, Any], ctx: Any) -> str:
        world.tool_runs += 1
        return str(ctx.services["clock"]["now"])

    clock_tool = define_tool(name="look", description="the time", input_schema={"type": "object"}, execute=now)
    builder = Agent.create(provider=mock(respond=world.respond), model="m").system("You help.").tool(clock_tool)
    agent = builder.time(zone="Europe/Paris").build()
    (original,) = await record(world, agent)
    world.reset()
    forked = await fork(original, agent, at="call-llm#5")  # the tool runs live, on the turn's recorded clock
    assert (world.model_calls, world.tool_runs) == (2, 1)
    assert forked.answer == original.answer and diff(original, forked).first_model_call is None


async def test_concurrent_forks_of_one_run_keep_their_own_prefix() -> None:
    world = World(["look", "find", "look"], ["look", "find"], ["policy"])
    agent = world.agent()
    (original,) = await record(world, agent)
    calls = call_ids(original)
    world.reset()
    forks = await asyncio.gather(*(fork(original, agent, at=at) for at in calls))
    assert world.model_calls == sum(len(calls) - n for n in range(len(calls)))
    assert world.tool_runs == sum(3 - n for n in range(len(calls)))
    assert all(f.answer == original.answer and diff(original, f).agree for f in forks)
    assert len({f.run_id for f in forks}) == len(calls)


_HOSTILE_WORLD = World(["look"], ["look"], ["policy"])
_HOSTILE_AGENT = _HOSTILE_WORLD.agent()
_HOSTILE_RUN = asyncio.run(record(_HOSTILE_WORLD, _HOSTILE_AGENT))[0]


@settings(max_examples=100, deadline=None)
@given(
    at=st.one_of(
        st.text(max_size=40).map(lambda t: "Zq9" + t),
        st.text(alphabet="call-m#0123456789", max_size=14),
        st.integers(),
        st.none(),
        st.lists(st.text(max_size=5), max_size=2),
    )
)
def test_any_hostile_step_is_refused_as_a_step_and_never_quoted(at: Any) -> None:
    if at in ("call-llm#5", "call-llm#12"):
        return
    with pytest.raises(ForkMismatchError) as err:
        fork_sync(_HOSTILE_RUN, _HOSTILE_AGENT, at=at)
    assert err.value.field == "step" and err.value.code == "ERR_FORK_MISMATCH"
    assert "Zq9" not in str(err.value)


async def test_a_resumed_leg_that_does_not_continue_a_recorded_pause_is_refused(tmp_path: Path) -> None:
    world = World(["look", ASK], ["look"], [])
    agent = world.agent()
    legs = await record(world, agent)
    raw = json.loads(save_recording(legs[-1], tmp_path / "chain.json").read_text())
    raw["snapshot"]["resumed_from"]["commits"] = 3  # points at a step that did not pause
    (tmp_path / "spliced.json").write_text(json.dumps(raw))
    with pytest.raises(ForkMismatchError) as err:
        await fork(load_recording(tmp_path / "spliced.json"), agent, at="call-llm#5")
    assert err.value.field == "leg"
    world.reset()
    whole = await fork(load_recording(tmp_path / "chain.json"), agent, at=call_ids(legs[-1])[-1])
    assert whole.answer == legs[-1].answer and (world.model_calls, world.tool_runs) == (1, 0)


async def test_a_fork_after_repeated_identical_tool_calls_reproduces_the_repeat_sentence() -> None:
    """A served result carries the repeated-call sentence the loop appended; the fork tallies it as the run did."""
    world = World(["look", "look", "look"], ["look"], [])

    def same(req: LLMRequest) -> LLMResponse | str:  # the same arguments every time: the same result
        world.model_calls += 1
        k = len([m for m in req.messages if m.role == "tool"])
        if k < 3:
            return LLMResponse(content="", tool_calls=[ToolCall(id=f"c{k}", name="look", args={"q": "same"})])
        return "last: " + str([m.content for m in req.messages if m.role == "tool"])

    world.respond = same  # type: ignore[method-assign]
    agent = world.agent()
    (original,) = await record(world, agent)
    assert str(original.answer).count("[identical call: 'look'") == 1
    for at in call_ids(original):
        forked = await fork(original, agent, at=at)
        assert forked.answer == original.answer
        assert diff(original, forked).agree
