"""Seed 003 (who a composition member runs for): one behaviour probe per rule, each quoting its rule id."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.agent import MemberIdentityError, ParentRunRefusedError
from agentfootprint.compose import Sequence
from agentfootprint.compose.member_run import ResumeRequestConflictError, close_parent_run, open_parent_run
from agentfootprint.context import InMemoryMemoryStore, define_memory
from agentfootprint.flow import flow_chart
from agentfootprint.identity import Identity
from agentfootprint.providers import LLMRequest, mock

ANN = {"tenant": "acme", "principal": "ann"}


class Seen:
    """What a member's tool saw: (run id, identity, parent run link) per call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str | None, Any, str | None]] = []

    def tool(self) -> Any:
        def run(args: dict[str, Any], ctx: Any) -> str:
            self.calls.append((ctx.run_id, ctx.identity, ctx.parent_run))
            return "ok"

        return define_tool(name="who", description="Who.", input_schema={"type": "object"}, execute=run)


def _member(seen: Seen, name: str = "a") -> Agent:
    call = {"tool_calls": [{"id": "w", "name": "who", "args": {}}]}
    replies: list[Any] = [call, f"{name} done"] * 20
    return Agent.create(provider=mock(replies=replies), model="m", name=name).tool(seen.tool()).build()


def test_R003_02_a_members_tool_sees_the_outermost_callers_identity() -> None:
    """R003-02: a member agent's tool sees the identity the outermost caller named as ctx.identity."""
    seen = Seen()
    Sequence.create("s").step("a", _member(seen)).build().run_sync("go", identity=ANN)
    assert [(i.tenant, i.principal) for _, i, _ in seen.calls] == [("acme", "ann")]


def test_R003_03_member_memory_is_namespaced_by_the_named_identity_else_the_outer_run() -> None:
    """R003-03: member memory lands under the named identity; else under the outermost run's conversation."""
    store = InMemoryMemoryStore()
    member = Agent.create(provider=mock(reply="noted"), model="m").memory(define_memory(id="mem", store=store)).build()
    pipeline = Sequence.create("s").step("a", member).build()
    named = pipeline.run_sync("I am Ann", identity={**ANN, "conversation_id": "c-1"})
    anonymous = pipeline.run_sync("I am nobody")
    keys = [json.loads(k) for k in store._entries]  # [memory id, tenant, principal, conversation, anonymous]
    assert ["mem", "acme", "ann", "c-1", False] in keys
    assert [k[3] for k in keys if k[1] is None] == [anonymous.run_id]
    assert named.run_id != anonymous.run_id


def test_R003_04_overlapping_runs_of_one_composition_never_share_run_or_identity() -> None:
    """R003-04: two overlapping runs of ONE composition never share ctx.run_id or ctx.identity."""
    seen = Seen()
    pipeline = Sequence.create("s").step("a", _member(seen)).build()

    async def both() -> list[Any]:
        return await asyncio.gather(
            pipeline.run("one", identity={"tenant": "t1"}), pipeline.run("two", identity={"tenant": "t2"})
        )

    first, second = asyncio.run(both())
    by_run = {rid: ident.tenant for rid, ident, _ in seen.calls}
    assert by_run == {first.run_id: "t1", second.run_id: "t2"}


def test_R003_05_a_member_never_runs_under_its_instances_last_direct_run() -> None:
    """R003-05: after agent.run(identity=A), a composition run with no identity shows the member no identity and
    the composition's run id."""
    seen = Seen()
    member = _member(seen)
    member.run_sync("direct", identity=ANN)
    seen.calls.clear()
    result = Sequence.create("s").step("a", member).build().run_sync("go")
    assert [(rid, ident) for rid, ident, _ in seen.calls] == [(result.run_id, None)]


def test_R003_06_a_nested_member_runs_for_the_outermost_run() -> None:
    """R003-06: a member of a nested composition runs for the OUTERMOST run (id and identity)."""
    seen = Seen()
    inner = Sequence.create("inner").step("a", _member(seen)).build()
    result = Sequence.create("outer").step("in", inner).build().run_sync("go", identity=ANN)
    assert [(rid, ident.principal) for rid, ident, _ in seen.calls] == [(result.run_id, "ann")]


@pytest.mark.parametrize("link", ["forged-link", "x" * 32, 42, ""])
def test_R003_07_a_forged_parent_run_is_refused_before_anything_runs(link: Any) -> None:
    """R003-07: a forged parent_run (not a live link) is refused by name before anything runs."""
    seen = Seen()
    with pytest.raises(ParentRunRefusedError) as err:
        Sequence.create("s").step("a", _member(seen)).build().run_sync("go", parent_run=link)
    assert err.value.code == "ERR_PARENT_RUN_REFUSED" and seen.calls == []


def test_R003_08_a_dead_link_is_refused_and_a_live_one_honoured() -> None:
    """R003-08: a link to a run that is over is refused; a live link is honoured (members run for that run)."""
    seen = Seen()
    pipeline = Sequence.create("s").step("a", _member(seen)).build()
    record = open_parent_run("outer-run", Identity(**ANN))
    try:
        pipeline.run_sync("go", parent_run=record.link)
    finally:
        close_parent_run(record)
    assert [(rid, ident.principal) for rid, ident, _ in seen.calls] == [("outer-run", "ann")]
    with pytest.raises(ParentRunRefusedError):
        pipeline.run_sync("go", parent_run=record.link)


def test_R003_09_a_member_mounted_where_no_run_reaches_it_is_refused() -> None:
    """R003-09: a member agent mounted in a caller's own chart is refused: MemberIdentityError."""
    member = _member(Seen())
    rogue = (
        flow_chart("Start", lambda s: s.set("member_message", "hi"), id="start")
        .subflow("m", member.chart, input_map=["member_message"])
        .build()
    )
    with pytest.raises(MemberIdentityError) as err:
        rogue.run_sync()
    assert err.value.code == "ERR_MEMBER_NO_IDENTITY"


def test_R003_10_links_are_unguessable_and_distinct_per_run() -> None:
    """R003-10: only an unguessable link travels: random tokens (>= 128 bits), distinct per run."""
    seen = Seen()
    pipeline = Sequence.create("s").step("a", _member(seen)).build()
    for _ in range(20):
        pipeline.run_sync("go")
    links = [link for _, _, link in seen.calls]
    assert len(set(links)) == 20 and all(isinstance(x, str) and len(x) >= 22 for x in links)
    run_ids = {rid for rid, _, _ in seen.calls}
    assert not run_ids & set(links)


def _asker(seen: Seen) -> Agent:
    def respond(request: LLMRequest) -> Any:
        if request.messages[-1].role == "user":
            return {"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "Which?"}}]}
        if not any(m.tool_call_id == "w" for m in request.messages if m.role == "tool"):
            return {"tool_calls": [{"id": "w", "name": "who", "args": {}}]}
        return "done"

    return Agent.create(provider=mock(respond=respond), model="m").tool(ask_human).tool(seen.tool()).build()


def test_R003_11_a_resumed_leg_reopens_the_same_run_for_its_members() -> None:
    """R003-11: a paused composition's resumed leg re-opens the SAME run (id, identity) read off the checkpoint."""
    seen = Seen()
    paused = Sequence.create("s").step("ask", _asker(Seen())).build().run_sync("go", identity=ANN)
    fresh = Sequence.create("s").step("ask", _asker(seen)).build()
    done = fresh.resume_sync(json.loads(json.dumps(paused.checkpoint)), "blue")
    assert done.run_id == paused.run_id
    assert [(rid, ident.principal) for rid, ident, _ in seen.calls] == [(paused.run_id, "ann")]


def test_R003_12_a_resume_naming_another_caller_while_the_run_is_open_is_refused() -> None:
    """R003-12: a resume naming a caller while the run is still open under another is refused before anything runs."""
    seen = Seen()
    pipeline = Sequence.create("s").step("ask", _asker(seen)).build()
    paused = pipeline.run_sync("go", identity=ANN)
    still_open = open_parent_run(paused.run_id, Identity(**ANN))
    try:
        with pytest.raises(ResumeRequestConflictError) as err:
            pipeline.resume_sync(paused.checkpoint or {}, "blue", identity={"tenant": "intruder"})
    finally:
        close_parent_run(still_open)
    assert err.value.code == "ERR_RESUME_REQUEST_CONFLICT" and seen.calls == []


def test_R003_13_the_run_a_composition_opens_is_closed_when_it_returns() -> None:
    """R003-13: the run a top-level composition opens is closed when it returns (finished or paused)."""
    seen = Seen()
    Sequence.create("s").step("a", _member(seen)).build().run_sync("go")
    paused_seen = Seen()
    Sequence.create("p").step("ask", _asker(paused_seen)).build().run_sync("go")
    link = seen.calls[0][2]
    with pytest.raises(ParentRunRefusedError):
        Sequence.create("t").step("a", _member(Seen())).build().run_sync("go", parent_run=link)


@pytest.mark.parametrize("identity", [42, "ann", ["acme"], {"tenant": 5}])
def test_R003_15_an_identity_that_is_not_identity_shaped_is_refused(identity: Any) -> None:
    """R003-15: a non-identity is refused with a TypeError at the composition door, before anything runs."""
    seen = Seen()
    with pytest.raises(TypeError):
        Sequence.create("s").step("a", _member(seen)).build().run_sync("go", identity=identity)
    assert seen.calls == []
