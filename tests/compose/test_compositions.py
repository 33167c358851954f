"""Sequence, Parallel, Conditional, Loop and patterns: one run, one record, members serve the outermost run."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import (
    Agent,
    Conditional,
    InvalidRunInputError,
    Loop,
    MemberIdentityError,
    Parallel,
    ParentRunRefusedError,
    ResumeRequestConflictError,
    Sequence,
    ask_human,
    define_fact,
    define_tool,
)
from agentfootprint.compose import CompositionBuildError, debate, map_reduce, reflection, router, self_consistency
from agentfootprint.explain import backtrack, localize_context_bug
from agentfootprint.flow import ParallelBranchError, flow_chart
from agentfootprint.providers import LLMRequest, mock


def echo(name: str, tool: Any = None) -> Agent:
    """An agent that (optionally) calls ``tool`` once, then answers ``name(<its message>)``."""

    def respond(req: LLMRequest) -> Any:
        if tool is not None and req.messages[-1].role == "user":
            return {"tool_calls": [{"id": f"{name}-t", "name": tool.name, "args": {}}]}
        user = next(m.content for m in req.messages if m.role == "user")
        return f"{name}({user})"

    builder = Agent.create(provider=mock(respond=respond), model="m", name=name)
    if tool is not None:
        builder = builder.tool(tool)
    return builder.build()


async def test_sequence_passes_answers_and_records_one_log() -> None:
    seq = Sequence.create("pipe").step("a", echo("A")).step("b", echo("B")).step("c", echo("C")).build()
    r = await seq.run("x")
    assert r.answer == "C(B(A(x)))" and r.status == "completed"
    snap = seq.last_snapshot()
    assert snap is not None
    namespaces = {c.namespace for c in snap.commit_log}
    assert {"", "a", "b", "c"} <= namespaces
    assert any(e.text.startswith("Entering the a subflow") for e in seq.last_narrative())


async def test_sequence_mapper() -> None:
    seq = (
        Sequence.create()
        .step("a", echo("A"))
        .step("b", echo("B"), mapper=lambda prev, answers: f"{answers['a']}!")
        .build()
    )
    assert (await seq.run("x")).answer == "B(A(x)!)"


async def test_parallel_merges_and_runs_concurrently() -> None:
    gate = asyncio.Event()
    started: list[str] = []

    async def slow(req: LLMRequest) -> str:
        started.append("slow")
        await gate.wait()
        return "slow"

    async def fast(req: LLMRequest) -> str:
        started.append("fast")
        gate.set()
        return "fast"

    a = Agent.create(provider=mock(respond=slow), model="m").build()
    b = Agent.create(provider=mock(respond=fast), model="m").build()
    par = Parallel.create().branch("slow", a).branch("fast", b).merge_with(lambda ans: "+".join(ans.values())).build()
    r = await asyncio.wait_for(par.run("go"), 5)
    assert r.answer == "slow+fast" and sorted(started) == ["fast", "slow"]


async def test_parallel_merge_with_llm_is_recorded() -> None:
    judge = mock(respond=lambda req: "merged: " + req.messages[0].content.replace("\n", " "))
    par = (
        Parallel.create()
        .branch("a", echo("A"))
        .branch("b", echo("B"))
        .merge_with_llm(judge, "judge-1", "Combine the answers.")
        .build()
    )
    r = await par.run("q")
    assert r.answer.startswith("merged: [a] A(q)") and "[b] B(q)" in r.answer  # type: ignore[union-attr]
    snap = par.last_snapshot()
    assert snap is not None and snap.state["merge_call"]["model"] == "judge-1"


async def test_parallel_failing_branch_reported_by_name() -> None:
    def boom(req: LLMRequest) -> str:
        raise RuntimeError("branch down")

    bad = Agent.create(provider=mock(respond=boom), model="m").build()
    par = Parallel.create().branch("ok", echo("OK")).branch("bad", bad).build()
    with pytest.raises(ParallelBranchError) as info:
        await par.run("q")
    assert "bad" in str(info.value)


async def test_conditional_routes_and_records_evidence() -> None:
    cond = (
        Conditional.create().when("refund", lambda m: "refund" in m, echo("R")).otherwise("general", echo("G")).build()
    )
    assert (await cond.run("refund please")).answer == "R(refund please)"
    assert (await cond.run("hello")).answer == "G(hello)"
    text = "\n".join(e.text for e in cond.last_narrative())
    assert '"refund"' in text and "general" in text


async def test_loop_until_and_budget() -> None:
    loop = Loop.create().repeat(echo("L")).until(lambda a: a.count("L(") >= 3).times(10).build()
    assert (await loop.run("go")).answer == "L(L(L(go)))"
    capped = Loop.create().repeat(echo("L")).times(2).build()
    assert (await capped.run("go")).answer == "L(L(go))"
    with pytest.raises(CompositionBuildError, match="budget"):
        Loop.create().repeat(echo("L")).build()
    with pytest.raises(CompositionBuildError):
        Loop.create().repeat(echo("L")).times(501)


async def test_run_input_door_names_the_composition() -> None:
    seq = Sequence.create().step("a", echo("A")).build()
    with pytest.raises(InvalidRunInputError) as info:
        await seq.run({"text": "hi"})
    assert info.value.runner == "Sequence.run" and info.value.received == "object with keys: text"


async def test_members_see_the_outermost_run_identity_and_id() -> None:
    seen: list[tuple[str, Any]] = []
    who = define_tool(
        name="who",
        description="d",
        input_schema={"type": "object"},
        execute=lambda a, ctx: seen.append((ctx.run_id, ctx.identity)) or "ok",
    )
    member = echo("A", who)
    await member.run("direct", identity={"tenant": "someone-else"})  # the instance's last direct run
    seen.clear()
    seq = Sequence.create().step("a", member).step("b", echo("B", who)).build()
    r = await seq.run("x", identity={"tenant": "acme", "principal": "ann"})
    assert [rid for rid, _ in seen] == [r.run_id, r.run_id]
    assert all(i.tenant == "acme" and i.principal == "ann" for _, i in seen)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(["t1", "t2", "t3"]), st.text(min_size=1, max_size=6)), min_size=50, max_size=50)
)
def test_50_overlapping_runs_never_share_identity_or_run_id(people: list[tuple[str, str]]) -> None:
    seen: dict[str, list[tuple[str, Any]]] = {}

    async def who(args: dict[str, Any], ctx: Any) -> str:
        await asyncio.sleep(0)
        seen.setdefault(ctx.run_id, []).append((ctx.run_id, ctx.identity))
        return "ok"

    tool = define_tool(name="who", description="d", input_schema={"type": "object"}, execute=who)
    seq = Sequence.create().step("a", echo("A", tool)).step("b", echo("B", tool)).build()

    async def main() -> list[Any]:
        order = list(range(50))
        random.Random(7).shuffle(order)
        return await asyncio.gather(
            *(seq.run(f"m{i}", identity={"tenant": people[i][0], "principal": people[i][1]}) for i in order)
        )

    results = asyncio.run(main())
    assert len({r.run_id for r in results}) == 50
    for r in results:
        calls = seen[r.run_id]
        assert len(calls) == 2
        idents = {(i.tenant, i.principal) for _, i in calls}
        assert len(idents) == 1
    by_message = {r.answer.split("(")[-1].rstrip(")"): r for r in results}  # type: ignore[union-attr]
    for i, (tenant, principal) in enumerate(people):
        r = by_message[f"m{i}"]
        assert {(x.tenant, x.principal) for _, x in seen[r.run_id]} == {(tenant, principal)}


async def test_forged_parent_run_refused() -> None:
    seq = Sequence.create().step("a", echo("A")).build()
    with pytest.raises(ParentRunRefusedError) as info:
        await seq.run("x", parent_run="forged-link")
    assert info.value.code == "ERR_PARENT_RUN_REFUSED"


async def test_member_chart_mounted_where_no_run_reaches_it_is_refused() -> None:
    member = echo("A")
    rogue = (
        flow_chart("Start", lambda s: s.set("member_message", "hi"), id="start")
        .subflow("m", member.chart, input_map=["member_message"])
        .build()
    )
    with pytest.raises(MemberIdentityError) as info:
        await rogue.run()
    assert info.value.code == "ERR_MEMBER_NO_IDENTITY"


async def test_pause_inside_member_pauses_whole_composition_and_resumes() -> None:
    def asker(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "Which order?"}}]}
        return f"order {req.messages[-1].content}"

    a = Agent.create(provider=mock(respond=asker), model="m").tool(ask_human).build()
    seq = Sequence.create().step("ask", a).step("b", echo("B")).build()
    paused = await seq.run("refund", identity={"tenant": "acme"})
    assert paused.status == "paused" and paused.question == "Which order?"
    cp = json.loads(json.dumps(paused.checkpoint))
    fresh = (
        Sequence.create()
        .step("ask", Agent.create(provider=mock(respond=asker), model="m").tool(ask_human).build())
        .step("b", echo("B"))
        .build()
    )
    done = await fresh.resume(cp, "A-1001")
    assert done.status == "completed" and done.answer == "B(order A-1001)" and done.run_id == paused.run_id


async def test_resume_while_run_open_under_another_caller_is_refused() -> None:
    from agentfootprint.compose.member_run import close_parent_run, open_parent_run
    from agentfootprint.identity import Identity

    def asker(req: LLMRequest) -> Any:
        return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "?"}}]}

    seq = (
        Sequence.create()
        .step("ask", Agent.create(provider=mock(respond=asker), model="m").tool(ask_human).build())
        .build()
    )
    paused = await seq.run("x", identity={"tenant": "acme"})
    still_open = open_parent_run(paused.run_id, Identity(tenant="acme"))
    try:
        with pytest.raises(ResumeRequestConflictError):
            await seq.resume(paused.checkpoint or {}, "y", identity={"tenant": "intruder"})
    finally:
        close_parent_run(still_open)


async def test_backtrack_and_localize_across_a_sequence() -> None:
    def research(req: LLMRequest) -> str:
        return "Order is 47 days old." + (" VIP override applies." if "VIP" in req.system_prompt else "")

    def write(req: LLMRequest) -> str:
        return "APPROVED" if "VIP override" in req.messages[-1].content else "DECLINED"

    researcher = (
        Agent.create(provider=mock(respond=research), model="m", name="research")
        .fact(define_fact(id="vip", data="VIP override for Dana"))
        .fact(define_fact(id="tone", data="Be kind."))
        .build()
    )
    writer = Agent.create(provider=mock(respond=write), model="m", name="writer").build()
    seq = Sequence.create().step("research", researcher).step("write", writer).build()
    assert (await seq.run("refund?")).answer == "APPROVED"
    bt = backtrack(seq)
    vip = bt.source("vip")
    assert vip is not None and "via" in [h.kind for h in vip.hops] and vip.hops[-1].detail == "define_fact('vip')"
    report = await localize_context_bug(seq, samples=2, outcome_changed=lambda a, b: a != b, progress=False)
    assert report.suspect("vip").verdict == "confirmed"  # type: ignore[union-attr]
    assert report.suspect("tone").verdict == "not-confirmed"  # type: ignore[union-attr]


async def test_patterns() -> None:
    assert (await reflection(echo("W"), echo("C")).run("q")).answer.startswith("W(Revise")  # type: ignore[union-attr]
    assert (await debate(echo("A"), echo("B"), echo("J")).run("q")).answer.startswith("J(Decide")  # type: ignore
    mr = await map_reduce({"x": echo("X"), "y": echo("Y")}, echo("R")).run("q")
    assert mr.answer == "R(x: X(q)\n\ny: Y(q))"
    assert (await self_consistency(echo("S"), samples=3).run("q")).answer == "S(q)"
    rt = router({"math": (lambda m: "sum" in m, echo("M"))}, default=("other", echo("O")))
    assert (await rt.run("sum it")).answer == "M(sum it)" and (await rt.run("hi")).answer == "O(hi)"


def test_bad_members_refused() -> None:
    with pytest.raises(CompositionBuildError):
        Sequence.create().step("a", "not a runner")
    with pytest.raises(CompositionBuildError):
        Sequence.create().build()
    with pytest.raises(CompositionBuildError):
        Conditional.create().otherwise("x", echo("X")).build()


def test_run_sync_twice() -> None:
    seq = Sequence.create().step("a", echo("A")).build()
    assert seq.run_sync("1").answer == "A(1)" and seq.run_sync("2").answer == "A(2)"


async def test_pause_inside_a_parallel_branch_and_resume() -> None:
    def asker(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "Budget?"}}]}
        return f"budget {req.messages[-1].content}"

    def build() -> Parallel:
        a = Agent.create(provider=mock(respond=asker), model="m").tool(ask_human).build()
        return (
            Parallel.create()
            .branch("ask", a)
            .branch("plain", echo("P"))
            .merge_with(lambda ans: " | ".join(ans.values()))
            .build()
        )

    paused = await build().run("plan")
    assert paused.status == "paused" and paused.question == "Budget?"
    done = await build().resume(json.loads(json.dumps(paused.checkpoint)), "100")
    assert done.answer == "budget 100 | P(plan)"


async def test_composition_events() -> None:
    seen: list[str] = []
    par = Parallel.create().branch("a", echo("A")).branch("b", echo("B")).build()
    par.on("composition.*", lambda e: seen.append(e.type.split(".")[-1]))
    member_events: list[str] = []
    par.on("stream.llm_end", lambda e: member_events.append(e.type))
    await par.run("q")
    assert seen[0] == "enter" and seen[-1] == "exit" and "fork_start" in seen and seen.count("branch_complete") == 2
    assert len(member_events) == 2  # members' events reach the composition's listeners
    loop_seen: list[Any] = []
    loop = Loop.create().repeat(echo("L")).times(2).build()
    loop.on("composition.iteration_start", lambda e: loop_seen.append(e.payload["pass"]))
    await loop.run("x")
    assert loop_seen == [1, 2]
    routed: list[Any] = []
    cond = Conditional.create().when("r", lambda m: True, echo("R")).build()
    cond.on("composition.route_decided", lambda e: routed.append(e.payload["chosen"]))
    await cond.run("x")
    assert routed == ["r"]


async def test_conditional_predicates_read_the_message_either_way() -> None:
    cond = (
        Conditional.create()
        .when("a", lambda m: m["message"].startswith("a"), echo("A"))
        .when("b", lambda m: m.message.startswith("b"), echo("B"))
        .otherwise("c", echo("C"))
        .build()
    )
    assert (await cond.run("apple")).answer == "A(apple)"
    assert (await cond.run("banana")).answer == "B(banana)"
    assert (await cond.run("cherry")).answer == "C(cherry)"


async def test_R003_17_a_resume_naming_another_identity_is_refused_and_members_keep_the_checkpoint_caller() -> None:
    """R003-17: the resumed leg runs for the paused run's caller; a resume naming a different identity is refused
    (InvalidCheckpointError, field identity) and never re-namespaces members; the same caller, or none, resumes."""
    from agentfootprint.flow import InvalidCheckpointError

    seen: list[tuple[str, Any]] = []

    def who(args: dict[str, Any], ctx: Any) -> str:
        seen.append((ctx.run_id, ctx.identity))
        return "ok"

    witness = define_tool(name="who", description="who", input_schema={"type": "object"}, execute=who)

    def build() -> Sequence:
        def asker(req: LLMRequest) -> Any:
            if req.messages[-1].role == "user":
                return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "?"}}]}
            return "asked"

        ask = Agent.create(provider=mock(respond=asker), model="m").tool(ask_human).build()
        return Sequence.create().step("ask", ask).step("w", echo("W", witness)).build()

    paused = await build().run("x", identity={"tenant": "acme", "principal": "dana"})
    cp = json.loads(json.dumps(paused.checkpoint))
    for other in ({"tenant": "acme", "principal": "mallory"}, {"tenant": "evil"}):
        with pytest.raises(InvalidCheckpointError) as info:
            await build().resume(cp, "y", identity=other)
        assert info.value.field == "identity" and "mallory" not in str(info.value)
    assert seen == []  # nothing ran for the other caller
    done = await build().resume(cp, "y", identity={"tenant": "acme", "principal": "dana"})
    again = await build().resume(cp, "y")
    assert done.status == again.status == "completed"
    assert {(r, i.tenant, i.principal) for r, i in seen} == {(paused.run_id, "acme", "dana")} and len(seen) == 2
    anonymous = await build().run("x")
    with pytest.raises(InvalidCheckpointError):  # naming a caller for a run that had none would re-namespace it
        await build().resume(anonymous.checkpoint or {}, "y", identity={"tenant": "acme"})
