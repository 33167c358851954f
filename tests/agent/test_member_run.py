"""Who an agent's run serves: a live parent_run link, a caller-built chart's member_identity, its own run, and the
request it serves (R003-14, R003-18, R003-19, R003-20)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint import Agent, Sequence, define_tool
from agentfootprint.agent import MemberIdentityError, ParentRunRefusedError
from agentfootprint.agent.member_run import close_parent_run, open_parent_run
from agentfootprint.flow import flow_chart
from agentfootprint.identity import Identity, InvalidIdentityError
from agentfootprint.providers import LLMRequest, mock

Seen = list[tuple[str, Identity | None, Any, str | None]]


def witness(name: str, seen: Seen, calls: list[LLMRequest] | None = None) -> Agent:
    """Calls a tool that records the run id, identity, request and run link it sees, then answers."""

    def who(args: dict[str, Any], ctx: Any) -> str:
        seen.append((ctx.run_id, ctx.identity, ctx.request, ctx.parent_run))
        return "ok"

    tool = define_tool(name="who", description="who am I serving", input_schema={"type": "object"}, execute=who)

    def respond(req: LLMRequest) -> Any:
        if calls is not None:
            calls.append(req)
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": f"{name}-w", "name": "who", "args": {}}]}
        return f"{name} done"

    return Agent.create(provider=mock(respond=respond), model="m", name=name).tool(tool).build()


def consulting(consult: Any) -> Agent:
    """A lead agent whose one tool, ``consult``, runs ``consult(args, ctx)``; then it answers."""
    tool = define_tool(name="consult", description="ask the helper", input_schema={"type": "object"}, execute=consult)

    def respond(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "c1", "name": "consult", "args": {}}]}
        return "lead done"

    return Agent.create(provider=mock(respond=respond), model="m", name="lead").tool(tool).build()


def caller_chart(member: Agent, **handed: Any) -> Any:
    """A chart a caller built and runs itself, mounting the agent's chart with what ``handed`` gives it."""
    return (
        flow_chart("Start", lambda s: None, id="start")
        .subflow("m", member.chart, input_map=lambda p: {"member_message": "hi", **handed})
        .build()
    )


@pytest.mark.parametrize("link", ["forged-link", 42, "", {"run_id": "r"}])
async def test_R003_14_agent_refuses_a_parent_run_that_is_not_a_live_link_before_any_model_call(link: Any) -> None:
    """R003-14: Agent.run({message, parent_run: <forged>}) is refused (ParentRunRefusedError) before any model
    call — from the input and from the keyword alike."""
    calls: list[LLMRequest] = []
    agent = witness("a", [], calls)
    with pytest.raises(ParentRunRefusedError) as info:
        await agent.run({"message": "hi", "parent_run": link})
    assert info.value.code == "ERR_PARENT_RUN_REFUSED" and "forged" not in str(info.value)
    with pytest.raises(ParentRunRefusedError):
        await agent.run("hi", parent_run=link)
    assert calls == [] and agent.last_snapshot() is None


async def test_R003_14_a_dead_link_is_refused_and_a_live_one_is_served() -> None:
    """R003-14: a live link makes the turn serve that run (its id, caller and request); once closed it is refused."""
    seen: Seen = []
    agent = witness("a", seen)
    request = object()
    record = open_parent_run("run-outer", Identity(tenant="acme"), "s1", request)
    try:
        result = await agent.run({"message": "hi", "parent_run": record.link})
        with pytest.raises(ParentRunRefusedError, match="identity is not the linked run's caller"):
            await agent.run("hi", parent_run=record.link, identity={"tenant": "evil"})
        with pytest.raises(ParentRunRefusedError, match="request is not the one"):
            await agent.run("hi", parent_run=record.link, request=object())
    finally:
        close_parent_run(record)
    assert result.run_id == "run-outer" and result.session_id == "s1"
    assert seen == [("run-outer", Identity(tenant="acme"), request, record.link)]
    with pytest.raises(ParentRunRefusedError):
        await agent.run("hi", parent_run=record.link)


async def test_R003_14_a_member_tool_runs_a_helper_for_the_same_run_through_its_link() -> None:
    """R003-14: the link a member's tool sees (ctx.parent_run) lets a helper agent serve the composition's run."""
    seen: Seen = []
    helper = witness("helper", seen)

    async def consult(args: dict[str, Any], ctx: Any) -> str:
        result = await helper.run("inner", parent_run=ctx.parent_run)
        return str(result.answer)

    lead = consulting(consult)
    outer = await Sequence.create().step("lead", lead).build().run("go", identity={"tenant": "acme"})
    ((run_id, identity, request, link),) = seen
    assert (run_id, identity, request) == (outer.run_id, Identity(tenant="acme"), None) and link is not None


async def test_R003_18_a_caller_built_chart_hands_a_member_its_identity() -> None:
    """R003-18: a chart a caller built may hand a mounted member an identity in its input (member_identity); the
    member then runs for that identity (and the chart's run id) instead of raising MemberIdentityError."""
    seen: Seen = []
    heard: list[str] = []
    member = witness("m", seen)
    member.on("agentfootprint.agent.*", lambda e: heard.append(e.type))
    chart = caller_chart(member, member_identity={"tenant": "acme", "principal": "dana"})
    result = await chart.run()
    assert seen == [(result.run_id, Identity(tenant="acme", principal="dana"), None, None)]
    assert heard  # the agent's own listeners hear the adopted run
    with pytest.raises(MemberIdentityError) as info:
        await caller_chart(member).run()
    assert info.value.code == "ERR_MEMBER_NO_IDENTITY"
    with pytest.raises(InvalidIdentityError):
        await caller_chart(member, member_identity={"tenant": 7}).run()


async def test_R003_18_a_caller_built_chart_may_hand_a_live_link_instead() -> None:
    """R003-18: a caller-built mount handed a live parent_run serves that run; a forged one is refused."""
    seen: Seen = []
    member = witness("m", seen)
    record = open_parent_run("run-x", Identity(tenant="acme"), None, "the-request")
    try:
        await caller_chart(member, parent_run=record.link).run()
    finally:
        close_parent_run(record)
    assert seen == [("run-x", Identity(tenant="acme"), "the-request", record.link)]
    with pytest.raises(ParentRunRefusedError):
        await caller_chart(member, parent_run=record.link).run()


async def test_R003_19_only_a_linked_mount_serves_the_composition_run() -> None:
    """R003-19: the same agent instance run directly (agent.run) from inside the composition's run — by a member's
    tool — runs as its own run: its own run id and the identity it is given, not the composition's."""
    seen: Seen = []
    helper = witness("helper", seen)
    given: list[Any] = [{"tenant": "inner"}, None]

    async def consult(args: dict[str, Any], ctx: Any) -> str:
        result = await helper.run("inner", identity=given.pop(0))
        return f"{result.answer} {result.run_id}"

    lead = consulting(consult)
    pipeline = Sequence.create().step("lead", lead).step("helper", helper).build()
    first = await pipeline.run("go", identity={"tenant": "outer"})
    second = await pipeline.run("go", identity={"tenant": "outer"})
    direct = [s for s in seen if s[0] not in (first.run_id, second.run_id)]
    mounted = [s for s in seen if s[0] in (first.run_id, second.run_id)]
    assert [(s[1], s[3]) for s in direct] == [(Identity(tenant="inner"), None), (None, None)]
    assert len({s[0] for s in direct}) == 2
    assert [(s[0], s[1]) for s in mounted] == [
        (first.run_id, Identity(tenant="outer")),
        (second.run_id, Identity(tenant="outer")),
    ]


async def test_R003_20_tools_see_the_request_their_own_run_serves() -> None:
    """R003-20: a run's tools see the request it serves; composition members see their linked run's request."""
    seen: Seen = []
    agent = witness("a", seen)
    await agent.run("hi", request="direct-request")
    await Sequence.create().step("a", witness("b", seen)).build().run("hi", request="composition-request")
    assert [s[2] for s in seen] == ["direct-request", "composition-request"]


async def test_R003_20_an_unlinked_member_serves_no_request_even_while_its_instance_serves_one() -> None:
    """R003-20: a member with no link (a chart a caller built and runs itself) serves NO request — never the
    request of whatever run its instance is in elsewhere, even at the same time."""
    seen: Seen = []
    both = asyncio.Event()
    arrivals: list[str] = []

    async def who(args: dict[str, Any], ctx: Any) -> str:
        arrivals.append(ctx.run_id)
        if len(arrivals) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), timeout=5)
        seen.append((ctx.run_id, ctx.identity, ctx.request, ctx.parent_run))
        return "ok"

    tool = define_tool(name="who", description="who", input_schema={"type": "object"}, execute=who)

    def respond(req: LLMRequest) -> Any:
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "w", "name": "who", "args": {}}]}
        return "done"

    shared = Agent.create(provider=mock(respond=respond), model="m", name="shared").tool(tool).build()
    hosted, built = await asyncio.gather(
        shared.run("hi", request="hosted-request", identity={"tenant": "hosted"}),
        caller_chart(shared, member_identity={"tenant": "other"}).run(),
    )
    by_run = {s[0]: s for s in seen}
    assert by_run[hosted.run_id][1:3] == (Identity(tenant="hosted"), "hosted-request")
    assert by_run[built.run_id][1:3] == (Identity(tenant="other"), None)


async def test_R003_20_the_host_serves_its_turn_as_the_request() -> None:
    """R003-20 through the AG-UI host: the served turn reaches the agent's tools as ctx.request."""
    from agentfootprint.hosting import ag_ui_app
    from tests.hosting.agui_http import body, client, turn, user

    seen: Seen = []
    app = ag_ui_app(lambda: witness("hosted", seen))
    async with client(app) as http:
        status, _ = await turn(http, body(user("u1"), thread="thread-9", run="run-9"))
    assert status == 200
    ((_, _, request, link),) = seen
    assert (request.thread_id, request.run_id, link) == ("thread-9", "run-9", None)
