"""find_dropped_context and confirm_by_restoration pinned exactly: every reason, detail, refusal and claim."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint import Agent, define_fact, define_skill, define_tool
from agentfootprint.explain import find_dropped_context
from agentfootprint.explain.dropped import RestorationError, confirm_by_restoration
from agentfootprint.providers import LLMRequest, mock


def tool(name: str) -> Any:
    return define_tool(
        name=name, description=f"{name} tool", input_schema={"type": "object"}, execute=lambda a, c: f"{name} result"
    )


def broken_rule(ctx: Any) -> bool:
    raise ValueError("rule broke")


async def every_reason() -> Agent:
    provider = mock(replies=["Answer one.", {"tool_calls": [{"id": "s1", "name": "search", "args": {}}]}, "Two."])
    agent = (
        Agent.create(provider=provider, model="m", max_iterations=4)
        .system("base")
        .tool(tool("search"))
        .fact(define_fact(id="never", data="never shown", active_when=lambda ctx: False))
        .fact(define_fact(id="first-only", data="first iteration only", active_when=lambda ctx: ctx.iteration == 1))
        .fact(define_fact(id="broken", data="x", active_when=broken_rule))
        .fact(define_fact(id="big", data="Fact: " + "x" * 300))
        .skill(define_skill(id="billing", description="Billing help", body="Use billing.", tools=[tool("refund")]))
        .window(max_turns=1)
        .context_budget(system_prompt=100)
        .build()
    )
    await agent.run("one")
    await agent.follow_up("two")
    return agent


async def test_every_reason_a_declared_source_missed_the_final_call() -> None:
    agent = await every_reason()
    assert [d.model_dump() for d in find_dropped_context(agent)] == [
        {"kind": "fact", "id": "never", "reason": "never-triggered", "detail": "rule: never fired in this run"},
        {
            "kind": "fact",
            "id": "first-only",
            "reason": "not-active-at-call",
            "detail": "rule: active earlier in the run, not for the final call",
        },
        {"kind": "fact", "id": "broken", "reason": "rule-error", "detail": "ValueError: rule broke"},
        {
            "kind": "skill",
            "id": "billing",
            "reason": "never-triggered",
            "detail": "llm-activated: never fired in this run",
        },
        {
            "kind": "message",
            "id": "user-0",
            "reason": "windowed-out",
            "detail": "history[0] dropped by the window (max-turns)",
        },
        {
            "kind": "message",
            "id": "assistant-1",
            "reason": "windowed-out",
            "detail": "history[1] dropped by the window (max-turns)",
        },
        {
            "kind": "slot",
            "id": "system_prompt",
            "reason": "budget-pressure",
            "detail": "312 chars over a budget of 100",
        },
        {
            "kind": "tool",
            "id": "refund",
            "reason": "never-triggered",
            "detail": "skill-scoped tool whose skill was never activated",
        },
    ]


async def test_a_tool_result_windowed_out_is_named_by_its_tool() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "s1", "name": "search", "args": {}}]}, "One.", "Two."])
    agent = Agent.create(provider=provider, model="m").tool(tool("search")).window(max_turns=1).build()
    await agent.run("one")
    await agent.follow_up("two")
    assert [(d.kind, d.id, d.detail) for d in find_dropped_context(agent)] == [
        ("message", "user-0", "history[0] dropped by the window (max-turns)"),
        ("message", "assistant-1", "history[1] dropped by the window (max-turns)"),
        ("tool", "search", "history[2] dropped by the window (max-turns)"),
        ("message", "assistant-3", "history[3] dropped by the window (max-turns)"),
    ]


VIP = "Customer holds VIP tier."


def vip_model(req: LLMRequest) -> Any:
    return "APPROVED" if VIP in req.system_prompt else "DECLINED"


async def vip_agent(respond: Any = vip_model) -> Agent:
    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .tool(tool("search"))
        .fact(define_fact(id="vip", data=VIP, active_when=lambda ctx: "vip" in ctx.user_message))
        .fact(define_fact(id="note", data="Be polite."))
        .build()
    )
    await agent.run("refund?")
    return agent


def flipped(a: str, b: str) -> bool:
    return a != b


async def test_a_confirmed_restoration_prints_its_claim() -> None:
    report = await confirm_by_restoration(await vip_agent(), "vip", samples=2, outcome_changed=flipped)
    assert str(report) == (
        "Restoration of fact 'vip' (never-triggered, trigger rule): CONFIRMED\n"
        "  baseline: 0/2 flipped with nothing restored\n"
        "  CAUSAL: restoring fact 'vip' (never-triggered) flipped the outcome in 2/2 seeded reruns"
    )
    assert (report.answers, report.errors, report.honesty_flags, report.original_answer) == (
        ["APPROVED", "APPROVED"],
        0,
        [],
        "DECLINED",
    )


async def test_an_unstable_baseline_makes_a_restoration_inconclusive() -> None:
    calls = {"n": 0}

    def flaky(req: LLMRequest) -> str:
        calls["n"] += 1
        return "DECLINED" if calls["n"] in (1, 2) or VIP in req.system_prompt else "MAYBE"

    agent = await vip_agent(flaky)
    report = await confirm_by_restoration(agent, "vip", samples=1, outcome_changed=flipped)
    assert (report.verdict, report.flips, report.baseline_flips) == ("inconclusive", 0, 1)
    assert report.honesty_flags == ["baseline-unstable"]
    assert report.claim == (
        "INCONCLUSIVE: the baseline flipped with nothing restored, so restoring fact 'vip' (never-triggered) "
        "flipped the outcome in 0/1 seeded reruns proves nothing"
    )


async def test_failed_restoration_reruns_are_counted_and_left_out() -> None:
    def fails_when_restored(req: LLMRequest) -> str:
        if VIP in req.system_prompt:
            raise RuntimeError("down")
        return "DECLINED"

    agent = await vip_agent(fails_when_restored)
    report = await confirm_by_restoration(agent, "vip", samples=2, outcome_changed=flipped)
    assert (report.verdict, report.flips, report.errors, report.answers) == ("not-confirmed", 0, 2, [])
    assert report.honesty_flags == ["rerun-errors"]
    assert (
        report.claim == "NOT CONFIRMED: restoring fact 'vip' (never-triggered) flipped the outcome in 0/2 seeded reruns"
    )


async def test_restoration_refusals_name_what_is_wrong() -> None:
    agent = await vip_agent()
    cases: list[tuple[Any, dict[str, Any], str]] = [
        ("vip", {"samples": 0}, "samples must be an int >= 1"),
        ("vip", {"samples": "2"}, "samples must be an int >= 1"),
        ("", {}, "name a dropped source: a DroppedContext or its id"),
        (
            "search",
            {},
            "'search' is not a declared injection of this agent (a tool or message, which cannot be forced "
            "into the call)",
        ),
        ("x" * 100, {}, f"{'x' * 80!r} is not a declared injection of this agent (unknown)"),
        ("note", {}, "injection 'note' reached the final model call: there is nothing to restore"),
    ]
    for dropped, kwargs, message in cases:
        with pytest.raises(RestorationError) as err:
            await confirm_by_restoration(agent, dropped, **kwargs)
        assert str(err.value) == message and err.value.code == "ERR_RESTORATION"
    fresh = Agent.create(provider=mock(reply="x"), model="m").fact(define_fact(id="f", data="d")).build()
    with pytest.raises(RestorationError) as err:
        await confirm_by_restoration(fresh, "f")
    assert str(err.value) == "restoration reruns the agent: pass an Agent that has run (a recording cannot rerun)"


async def test_restoration_reruns_keep_the_conversation_the_identity_and_the_seed() -> None:
    seen: list[tuple[int | None, int, bool]] = []

    def respond(req: LLMRequest) -> str:
        tenant = "acme rules apply" in req.system_prompt
        if VIP in req.system_prompt:
            seen.append((req.seed, len(req.messages), tenant))
        return ("APPROVED" if VIP in req.system_prompt else "DECLINED") + (" (acme)" if tenant else "")

    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .fact(define_fact(id="vip", data=VIP, active_when=lambda ctx: "vip" in ctx.user_message))
        .fact(
            define_fact(
                id="tenant",
                data="acme rules apply",
                active_when=lambda ctx: ctx.identity is not None and ctx.identity.tenant == "acme",
            )
        )
        .build()
    )
    await agent.run("hello", identity={"tenant": "acme"})
    await agent.follow_up("refund?", identity={"tenant": "acme"})
    report = await confirm_by_restoration(agent, "vip", samples=2, outcome_changed=flipped)
    assert report.answers == ["APPROVED (acme)", "APPROVED (acme)"]
    assert sorted(seen) == [(0, 3, True), (1, 3, True)]  # the earlier turn (2 messages) and the new one, seeded
    assert (report.verdict, report.errors, report.original_answer) == ("confirmed", 0, "DECLINED (acme)")


async def test_a_long_reached_injection_id_is_quoted_cut_to_80_characters() -> None:
    long_id = "n" * 100
    agent = Agent.create(provider=mock(reply="ok"), model="m").fact(define_fact(id=long_id, data="shown")).build()
    await agent.run("q")
    with pytest.raises(RestorationError) as err:
        await confirm_by_restoration(agent, long_id)
    assert str(err.value) == f"injection {'n' * 80!r} reached the final model call: there is nothing to restore"


async def test_restoration_reruns_read_memory_as_recorded_and_write_none() -> None:
    from agentfootprint.context import InMemoryMemoryStore, define_memory
    from agentfootprint.context.memory import MemoryNamespace

    def respond(req: LLMRequest) -> str:
        seen = "seen before" if "lucky number" in req.system_prompt else "new to me"
        return seen + (" APPROVED" if VIP in req.system_prompt else "")

    store = InMemoryMemoryStore()
    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .memory(define_memory(id="mem", store=store))
        .fact(define_fact(id="vip", data=VIP, active_when=lambda ctx: False))
        .build()
    )
    await agent.run("My lucky number is 7.", identity={"tenant": "t", "principal": "p", "conversation_id": "c"})
    namespace = MemoryNamespace("mem", "t", "p", "c")
    stored = [e.id for e in store.load(namespace)]
    report = await confirm_by_restoration(agent, "vip", samples=2, outcome_changed=flipped)
    assert (report.answers, report.verdict, report.baseline_flips) == (["new to me APPROVED"] * 2, "confirmed", 0)
    assert [e.id for e in store.load(namespace)] == stored and len(stored) == 2


async def test_tools_offered_earlier_but_withheld_from_the_final_call_are_named_so() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "s1", "name": "search", "args": {}}]}, "Final."])
    agent = Agent.create(provider=provider, model="m", max_iterations=1).tool(tool("search")).tool(tool("other"))
    await (built := agent.build()).run("q")  # the asked-for search never ran: the last call went out without tools
    detail = "offered earlier, not at the final call"
    assert [d.model_dump() for d in find_dropped_context(built)] == [
        {"kind": "tool", "id": name, "reason": "not-offered-at-call", "detail": detail} for name in ("search", "other")
    ]
