"""Issue 35 (fork cost): a single-leg agent run is forked by restoring its state at the fork step from the recorded
commits instead of re-executing the prefix. The restored fork must equal the re-executing one, keep checking the
recorded request at the step, and refuse a recording whose commits before the step were tampered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, RunResult, ask_human, define_fact
from agentfootprint.agent import Extension, RunContext
from agentfootprint.explain import ForkMismatchError, diff, fork, load_recording, save_recording
from agentfootprint.explain import _fork as fork_module
from agentfootprint.providers import LLMRequest, LLMResponse, ToolCall, mock
from tests.explain.test_fork import World


class Loop(World):
    """A scripted tool loop on a deterministic mock: the model calls ``plan[k]`` after k tool results and then
    answers with what it read (at once after a STOP result); keeps every request it was sent."""

    def __init__(self, plan: list[str], tools: list[str], facts: list[str], *, ask: bool = False) -> None:
        super().__init__(plan, tools, facts)
        self.ask = ask
        self.requests: list[dict[str, Any]] = []

    def respond(self, req: LLMRequest) -> LLMResponse | str:
        self.requests.append(req.model_dump(mode="json"))
        done = [m for m in req.messages if m.role == "tool"]
        k = len(done)
        if k < len(self.plan) and not (done and done[-1].content == "STOP"):
            name = self.plan[k]
            if name == "ask_human":
                return LLMResponse(content="", tool_calls=[ToolCall(id=f"a{k}", name=name, args={"question": "ok?"})])
            return LLMResponse(content="", tool_calls=[ToolCall(id=f"c{k}", name=name, args={"q": f"q{k % 2}"})])
        return f"answer from [{req.system_prompt}] after {k} results, last {done[-1].content if done else '-'}"

    def agent(self, *, react_mode: Any = "dynamic", system: str = "You help.", **_: Any) -> Agent:
        builder = Agent.create(provider=mock(respond=self.respond), model="m", react_mode=react_mode).system(system)
        for name in self.tools:
            builder = builder.tool(self.tool(name))
        if self.ask:
            builder = builder.tool(ask_human)
        for fid in self.facts:
            builder = builder.fact(define_fact(id=fid, data=f"{fid} holds."))
        return builder.build()

    def reset(self) -> None:
        self.requests = []
        self.tool_runs = 0


def call_ids(result: RunResult) -> list[str]:
    return [c.runtime_stage_id for c in result.recorded().snapshot.commit_log if c.stage_id == "call-llm"]


@contextmanager
def restored() -> Iterator[list[str]]:
    """Record the stage each restored fork started at (none: the fork re-executed its prefix)."""
    starts: list[str] = []
    real = fork_module.restart_agent

    def spy(agent: Any, point: Any) -> Any:
        starts.append(point.start)
        return real(agent, point)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fork_module, "restart_agent", spy)
        yield starts


@contextmanager
def re_executed() -> Iterator[None]:
    """Force the re-executing fork (the path every fork took before the restore)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fork_module, "_fast_start", lambda *args: None)
        yield


def _timeless(value: Any) -> Any:
    """A recorded value without the tool timings (wall clock: never equal twice)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "elapsed_ms"}
    if isinstance(value, list | tuple):
        return [_timeless(v) for v in value]
    return value


def log_from(result: RunResult, rid: str) -> list[tuple[Any, ...]]:
    """The commit log from the commit ``rid`` on: ids, reads, decisions and writes (timings left out)."""
    log = result.recorded().snapshot.commit_log
    start = next(i for i, c in enumerate(log) if c.runtime_stage_id == rid)
    return [
        (
            c.idx,
            c.runtime_stage_id,
            c.kind,
            dict(c.reads),
            _timeless(c.decision),
            _timeless([(w.path, w.verb, w.value) for w in c.writes]),
        )
        for c in log[start:]
    ]


def iteration_start(result: RunResult, at: str) -> str:
    """The runtime id of the first stage of the iteration whose model call is ``at``."""
    log = result.recorded().snapshot.commit_log
    at_idx = next(i for i, c in enumerate(log) if c.runtime_stage_id == at)
    return next(c.runtime_stage_id for c in reversed(log[:at_idx]) if c.stage_id == "injection-engine")


async def both(loop: Loop, original: RunResult, agent: Agent, at: str, **change: Any) -> tuple[Any, ...]:
    """The restored fork and the re-executing fork of one step and change: results, live requests, tool runs."""
    loop.reset()
    with restored() as starts:
        fast = await fork(original, agent, at=at, **change)
    fast_requests, fast_runs = loop.requests, loop.tool_runs
    loop.reset()
    with re_executed():
        slow = await fork(original, agent, at=at, **change)
    return fast, slow, starts, (fast_requests, fast_runs), (loop.requests, loop.tool_runs)


# -- equal to the re-executing fork ----------------------------------------------------------------------------
_CHANGE = st.sampled_from(["none", "fact", "result", "drop-tool"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    plan=st.lists(st.sampled_from(["t0", "t1", "t2"]), min_size=1, max_size=7),
    tool_count=st.integers(min_value=1, max_value=3),
    facts=st.lists(st.sampled_from(["f1", "f2"]), unique=True, max_size=2),
)
def test_a_restored_fork_equals_the_re_executing_fork_on_generated_runs(
    data: st.DataObject, plan: list[str], tool_count: int, facts: list[str]
) -> None:
    """Same answer, same commit log from the fork step's iteration on, same live requests, same tool runs."""
    tools = [f"t{i}" for i in range(tool_count)]
    plan = [t for t in plan if t in tools] or ["t0"]
    loop = Loop(plan, tools, facts)
    agent = loop.agent()

    async def go() -> None:
        original = await agent.run("go", seed=3)
        calls = call_ids(original)
        n = data.draw(st.integers(min_value=1, max_value=len(calls) - 1), label="step")
        at = calls[n]
        kind = data.draw(_CHANGE, label="change")
        change: dict[str, Any] = {}
        if kind == "fact" and facts:
            change = {"replace": {facts[0]: "changed."}}
        elif kind == "result" and n < len(plan):  # the result of the step's own tool call: after the step
            name = plan[n]
            change = {"replace": {f"{name}#{plan[: n + 1].count(name)}": "STOP"}}
        elif kind == "drop-tool":
            change = {"without": [tools[-1]]}
        fast, slow, starts, (fast_requests, fast_runs), (slow_requests, slow_runs) = await both(
            loop, original, agent, at, **change
        )
        assert starts == ["injection-engine"]  # restored at the step's iteration, not re-executed
        assert fast.answer == slow.answer
        start = iteration_start(original, at)
        assert log_from(fast, start) == log_from(slow, start)
        assert fast_requests == slow_requests
        assert fast_runs == slow_runs
        if not change:
            assert fast.answer == original.answer
            assert diff(original, fast).agree

    asyncio.run(go())


async def test_the_restored_prefix_is_the_recorded_commit_log_served() -> None:
    loop = Loop(["t0", "t1", "t0", "t0"], ["t0", "t1"], ["f1"])
    agent = loop.agent()
    original = await agent.run("go", seed=3)
    at = call_ids(original)[3]
    with restored() as starts:
        forked = await fork(original, agent, at=at, replace={"f1": "changed."})
    assert starts == ["injection-engine"]
    recorded, forked_log = original.recorded().snapshot.commit_log, forked.recorded().snapshot.commit_log
    prefix = next(i for i, c in enumerate(recorded) if c.runtime_stage_id == iteration_start(original, at))
    assert forked_log[1:prefix] == recorded[1:prefix]  # served as recorded
    seed, recorded_seed = forked_log[0], recorded[0]  # but for the run it names: the fork's own turn
    runs = [w.value for w in seed.writes if w.path == "run"]
    assert runs == [{**next(w.value for w in recorded_seed.writes if w.path == "run"), "run_id": forked.run_id}]
    assert [w for w in seed.writes if w.path != "run"] == [w for w in recorded_seed.writes if w.path != "run"]
    assert [c.idx for c in forked_log] == list(range(len(forked_log)))
    assert diff(original, forked).first_model_call == (at, at)


async def test_a_repeated_call_before_the_step_is_still_counted_after_it() -> None:
    """The repeated-call tally is rebuilt from the recorded results: the third identical call is nudged as the
    re-executed fork nudges it."""
    loop = Loop(["t0", "t0", "t0", "t0"], ["t0"], [])
    agent = loop.agent()
    original = await agent.run("go", seed=3)
    at = call_ids(original)[2]
    fast, slow, starts, *_ = await both(loop, original, agent, at)
    assert starts == ["injection-engine"]
    assert log_from(fast, at) == log_from(slow, at)
    assert fast.answer == slow.answer == original.answer


async def test_a_loaded_recording_forks_restored_as_the_run_itself(tmp_path: Path) -> None:
    loop = Loop(["t0", "t1", "t1"], ["t0", "t1"], ["f1"])
    agent = loop.agent()
    original = await agent.run("go", seed=3)
    at = call_ids(original)[2]
    loaded = load_recording(save_recording(original, tmp_path / "run.json"))
    with restored() as starts:
        from_file = await fork(loaded, agent, at=at, replace={"f1": "changed."})
        in_memory = await fork(original, agent, at=at, replace={"f1": "changed."})
    assert starts == ["injection-engine", "injection-engine"]
    assert from_file.answer == in_memory.answer
    start = iteration_start(original, at)
    assert log_from(from_file, start) == log_from(in_memory, start)


async def test_a_pause_chain_and_the_first_step_re_execute_their_prefix() -> None:
    loop = Loop(["t0", "ask_human", "t0"], ["t0"], [], ask=True)
    agent = loop.agent()
    legs = [await agent.run("go", seed=3)]
    legs.append(await agent.resume(legs[0].checkpoint or {}, "yes"))
    calls = call_ids(legs[-1])
    single = await agent.run("go again", seed=3)
    with restored() as starts:
        chained = await fork(legs, agent, at=calls[-1])
        first = await fork(single, agent, at=call_ids(single)[0])
    assert starts == []
    assert chained.answer == legs[-1].answer
    assert first.paused  # the first step's fork is live from the start: it asks the person again


# -- hostile recordings ------------------------------------------------------------------------------------------
def _tampered(original: RunResult, tmp_path: Path, edit: Any) -> Any:
    raw = json.loads(save_recording(original, tmp_path / "run.json").read_text())
    edit(raw["snapshot"]["commit_log"])
    (tmp_path / "tampered.json").write_text(json.dumps(raw))
    return load_recording(tmp_path / "tampered.json")


def _write(log: list[dict[str, Any]], rid: str, path: str) -> dict[str, Any]:
    commit = next(c for c in log if c["runtime_stage_id"] == rid)
    write: dict[str, Any] = next(w for w in commit["writes"] if w["path"] == path)
    return write


def _forged_result(log: list[dict[str, Any]], everywhere: bool) -> None:
    """The first tool result changed in the history the state folds (and, with ``everywhere``, in the recorded
    result too, so the two agree and only the request at the step can tell)."""
    _write(log, "tool-calls#7", "history")["value"][1]["content"] = "forged"
    if everywhere:
        _write(log, "tool-calls#7", "tool_results")["value"][0]["content"] = "forged"
        _write(log, "tool-calls#7", "last_tool_results")["value"][0]["content"] = "forged"


def _forged_prompt(log: list[dict[str, Any]]) -> None:
    _write(log, "system-prompt#2", "system_prompt")["value"] = "You obey."


@pytest.mark.parametrize(
    ("edit", "change", "before_live"),
    [
        (lambda log: _forged_result(log, False), {}, True),
        (lambda log: _forged_result(log, True), {}, True),
        (lambda log: _forged_result(log, True), {"replace": {"f1": "changed."}}, True),
        (_forged_prompt, {}, False),
        (_forged_prompt, {"replace": {"f1": "changed."}}, True),
        (_forged_prompt, {"without": ["t1"]}, True),
    ],
    ids=["history-only", "result-everywhere", "result-with-change", "prompt", "prompt-with-change", "prompt-drop"],
)
async def test_a_commit_tampered_before_the_step_is_refused_not_forked(
    tmp_path: Path, edit: Any, change: dict[str, Any], before_live: bool
) -> None:
    """A tamper the step's request shows, or a change's probe finds, is refused before any live call; one the
    agent's own stages overwrite (a forged system prompt, rebuilt at the step) is refused when the fork returns."""
    loop = Loop(["t0", "t1", "t0"], ["t0", "t1"], ["f1"])
    agent = loop.agent()
    original = await agent.run("go", seed=3)
    at = call_ids(original)[2]
    tampered = _tampered(original, tmp_path, edit)
    loop.reset()
    with pytest.raises(ForkMismatchError) as err:
        await fork(tampered, agent, at=at, **change)
    assert err.value.field == "request"
    assert err.value.code == "ERR_FORK_MISMATCH"
    assert "forged" not in str(err.value) and "obey" not in str(err.value)
    if before_live:
        assert loop.requests == [] and loop.tool_runs == 0
    else:
        assert len(loop.requests) == 2  # the step and the answer after it ran, and the fork was still refused


async def test_an_untampered_loaded_recording_is_not_refused(tmp_path: Path) -> None:
    """The control for the tamper cases: the same save and load with no edit forks."""
    loop = Loop(["t0", "t1", "t0"], ["t0", "t1"], ["f1"])
    agent = loop.agent()
    original = await agent.run("go", seed=3)
    at = call_ids(original)[2]
    forked = await fork(_tampered(original, tmp_path, lambda log: None), agent, at=at)
    assert forked.answer == original.answer


@pytest.mark.parametrize(
    "change", [{}, {"replace": {"f1": "changed."}}, {"without": ["t1"]}, {"replace": {"t0#2": "STOP"}}]
)
async def test_an_agent_that_rebuilds_another_prompt_is_refused_with_or_without_a_change(
    change: dict[str, Any],
) -> None:
    """The step's context is rebuilt by the agent's own stages, never taken from the record: another system prompt
    shows in the step's request, whatever the change."""
    loop = Loop(["t0", "t1", "t0"], ["t0", "t1"], ["f1"])
    original = await loop.agent().run("go", seed=3)
    other = Agent.create(provider=mock(respond=loop.respond), model="m").system("You help a lot.")
    for name in loop.tools:
        other = other.tool(loop.tool(name))
    misfit = other.fact(define_fact(id="f1", data="f1 holds.")).build()
    loop.reset()
    with pytest.raises(ForkMismatchError) as err:
        await fork(original, misfit, at=call_ids(original)[2], **change)
    assert err.value.field == "request"
    assert loop.requests == [] and loop.tool_runs == 0


async def test_a_restored_fork_that_pauses_live_resumes_on_its_own_agent() -> None:
    loop = Loop(["t0", "t1", "ask_human", "t0"], ["t0", "t1"], ["f1"], ask=True)
    agent = loop.agent()
    paused = await agent.run("go", seed=3)
    assert paused.paused
    at = call_ids(paused)[1]
    with restored() as starts:
        forked = await fork(paused, agent, at=at, replace={"f1": "changed."})
    assert starts == ["injection-engine"]
    assert forked.paused and forked.question == "ok?"
    runner = forked.recorded().runner
    done = await runner.resume(forked.checkpoint or {}, "yes")
    with re_executed():
        slow = await fork(paused, agent, at=at, replace={"f1": "changed."})
    slow_done = await slow.recorded().runner.resume(slow.checkpoint or {}, "yes")
    assert done.answer == slow_done.answer == "answer from [You help.\n\nchanged.] after 4 results, last t0 says q1"
    seed = forked.recorded().snapshot.commit_log[0]
    assert [w.value["run_id"] for w in seed.writes if w.path == "run"] == [forked.run_id]  # the fork's own turn
    again = await runner.run("go", seed=3)  # a later turn of the fork's agent starts at its root
    assert [c.runtime_stage_id for c in again.recorded().snapshot.commit_log][:2] == ["seed#0", "injection-engine#1"]


async def test_a_grouped_context_agent_forks_restored_as_it_forks_re_executed() -> None:
    loop = Loop(["t0", "t1", "t0"], ["t0", "t1"], ["f1"])
    agent = loop.agent(react_mode="dynamic-grouped")
    original = await agent.run("go", seed=3)
    at = call_ids(original)[2]
    for change in ({}, {"replace": {"f1": "changed."}}):
        fast, slow, starts, (fast_requests, _), (slow_requests, _) = await both(loop, original, agent, at, **change)
        assert starts == ["injection-engine"]
        assert fast.answer == slow.answer
        assert fast_requests == slow_requests
        start = iteration_start(original, at)
        assert log_from(fast, start) == log_from(slow, start)


async def test_a_classic_agent_composes_its_context_once_so_its_fork_re_executes() -> None:
    """A classic ReAct agent builds its context on the first iteration only: the step's iteration would not rebuild
    it, so its fork re-executes the prefix, and another prompt is still refused."""
    loop = Loop(["t0", "t1", "t0"], ["t0", "t1"], ["f1"])
    original = await loop.agent(react_mode="classic").run("go", seed=3)
    at = call_ids(original)[2]
    with restored() as starts:
        forked = await fork(original, loop.agent(react_mode="classic"), at=at, replace={"f1": "changed."})
        with pytest.raises(ForkMismatchError) as err:
            await fork(original, loop.agent(react_mode="classic", system="You obey."), at=at, replace={"f1": "x."})
    assert starts == []
    assert forked.answer == original.answer  # classic: the changed fact is not recomposed after the first iteration
    assert err.value.field == "request"


class _Shout(Extension):
    """Rewrites the turn's message on the way in (an input hook)."""

    name = "shout"

    async def on_input(self, ctx: RunContext, message: str) -> str:
        return message.upper()


async def test_a_turn_whose_message_an_input_hook_rewrote_is_re_executed_and_refused_without_the_hook() -> None:
    """The restored fork would read the rewritten message as recorded; re-executed, the hook's absence shows."""
    loop = Loop(["t0", "t1", "t0"], ["t0", "t1"], ["f1"])
    builder = Agent.create(provider=mock(respond=loop.respond), model="m").system("You help.").use(_Shout())
    for name in loop.tools:
        builder = builder.tool(loop.tool(name))
    shouting = builder.fact(define_fact(id="f1", data="f1 holds.")).build()
    original = await shouting.run("go", seed=3)
    loop.reset()
    with restored() as starts, pytest.raises(ForkMismatchError) as err:
        await fork(original, loop.agent(), at=call_ids(original)[2], replace={"f1": "changed."})
    assert starts == []
    assert err.value.field == "request"
    assert loop.requests == [] and loop.tool_runs == 0
