"""The extension seam (``AgentBuilder.use``): every hook, its order, its failure rules, and where state goes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, AgentBuildError, Sequence, ask_human, define_tool
from agentfootprint.agent import (
    CallModel,
    CallTool,
    Extension,
    ExtensionError,
    InputRefusedError,
    RunContext,
    RunOutcome,
    ToolCallRequest,
)
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, LLMResponse, Message, mock
from agentfootprint.tools import DuplicateToolError, Tool, ToolOutcome


def lookup_tool(runs: list[dict[str, Any]]) -> Tool:
    def run(args: dict[str, Any]) -> str:
        runs.append(dict(args))
        return f"order {args['order_id']} shipped"

    return define_tool(
        name="lookup_order",
        description="Look up an order by id",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        execute=run,
    )


def one_lookup(request: LLMRequest) -> Any:
    """Ask for one lookup, then answer with what the tool said."""
    last = request.messages[-1]
    if last.role == "user":
        return {"tool_calls": [{"id": "c1", "name": "lookup_order", "args": {"order_id": "A-1"}}]}
    return f"done: {last.content}"


def agent_with(*extensions: Extension, respond: Any = one_lookup, runs: list[dict[str, Any]] | None = None) -> Agent:
    builder = Agent.create(provider=mock(respond=respond), model="m").tool(lookup_tool([] if runs is None else runs))
    for ext in extensions:
        builder = builder.use(ext)
    return builder.build()


class Tagger(Extension):
    """Marks the request on the way in and the response on the way out (to see the nesting order)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.name = f"tag_{tag}"

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        request = request.model_copy(update={"system_prompt": request.system_prompt + f"<{self.tag}"})
        response = await call_next(request)
        return response.model_copy(update={"content": response.content + f">{self.tag}"})


# -- unit -----------------------------------------------------------------------------------------------------------


def test_a_hook_nobody_overrides_is_not_wired() -> None:
    agent = agent_with(Tagger("a"))
    hooks = agent.config.hooks
    assert [e.name for e in hooks.wrap_model_call] == ["receipts", "integrity", "tag_a"]  # receipts: built in
    # built in: closes call-scoped sessions; the integrity ledger (R004-15) is on every agent
    assert [e.name for e in hooks.wrap_tool_call] == ["tool_sessions", "integrity"]
    assert [e.name for e in hooks.after_run] == ["honesty", "tool_sessions", "integrity"]
    assert [e.name for e in hooks.on_answer] == ["integrity"] and hooks.filter_tools == ()


def test_the_default_name_is_the_class_name_in_snake_case() -> None:
    class AuditLog(Extension):
        pass

    assert AuditLog().name == "audit_log" and agent_with(AuditLog()).extension("audit_log") is not None


def test_use_refuses_what_is_not_an_extension_and_duplicate_or_bad_names() -> None:
    builder = Agent.create(provider=mock(reply="x"))
    with pytest.raises(AgentBuildError, match="takes an Extension"):
        builder.use(object())  # type: ignore[arg-type]
    with pytest.raises(AgentBuildError, match="already used"):
        builder.use(Tagger("a")).use(Tagger("a"))
    bad = Tagger("b")
    bad.name = "Not A Name"
    with pytest.raises(AgentBuildError, match="lower_snake_case"):
        Agent.create(provider=mock(reply="x")).use(bad)


def test_an_extension_named_like_a_built_in_one_replaces_it() -> None:
    class Quiet(Extension):
        name = "honesty"

    agent = Agent.create(provider=mock(reply="x")).use(Quiet()).build()
    names = [e.name for e in agent.config.extensions]
    assert names == ["tool_sessions", "receipts", "integrity", "honesty"]
    assert isinstance(agent.extension("honesty"), Quiet)
    assert agent.can_explain() is False and agent.extension(Quiet) is agent.extension("honesty")


def test_static_tools_are_checked_at_build_and_ablatable() -> None:
    class Offers(Extension):
        def __init__(self, tool: Tool) -> None:
            self.tool = tool

        def tools(self) -> list[Tool]:
            return [self.tool]

    clash = lookup_tool([])
    with pytest.raises(DuplicateToolError):
        Agent.create(provider=mock(reply="x")).tool(lookup_tool([])).use(Offers(clash)).build()
    agent = Agent.create(provider=mock(reply="x")).use(Offers(clash)).build()
    assert agent.source_ids()["lookup_order"] == "tool"
    assert "lookup_order" not in {t.name for t in agent.without("lookup_order").config.all_tools()}


# -- scenarios: each hook ---------------------------------------------------------------------------------------------


async def test_model_call_hooks_nest_in_use_order_and_the_provider_sees_the_rewrite() -> None:
    seen: list[str] = []

    def respond(request: LLMRequest) -> str:
        seen.append(request.system_prompt)
        return "ok"

    agent = Agent.create(provider=mock(respond=respond)).system("S").use(Tagger("a")).use(Tagger("b")).build()
    result = await agent.run("hi")
    assert seen == ["S<a<b"] and result.answer == "ok>b>a"


async def test_a_model_call_hook_can_answer_without_calling_the_model() -> None:
    calls: list[LLMRequest] = []

    class Cached(Extension):
        async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
            return LLMResponse(content="from cache")

    agent = Agent.create(provider=mock(respond=lambda r: calls.append(r) or "live")).use(Cached()).build()
    assert (await agent.run("hi")).answer == "from cache" and calls == []


async def test_input_hooks_rewrite_what_is_recorded() -> None:
    class Upper(Extension):
        async def on_input(self, ctx: RunContext, message: str) -> str:
            return message.upper()

    agent = Agent.create(provider=mock(respond=lambda r: r.messages[-1].content)).use(Upper()).build()
    result = await agent.run("where is my order?")
    snapshot = agent.last_snapshot()
    assert result.answer == "WHERE IS MY ORDER?" and snapshot is not None
    assert snapshot.state["user_message"] == "WHERE IS MY ORDER?"
    assert (agent.checkpoint() or {})["history"][0] == {"role": "user", "content": "WHERE IS MY ORDER?"}


async def test_a_refused_input_calls_no_model_and_leaves_no_conversation() -> None:
    calls: list[LLMRequest] = []

    class Gate(Extension):
        async def on_input(self, ctx: RunContext, message: str) -> str:
            raise InputRefusedError("not allowed", extension=self.name)

    agent = Agent.create(provider=mock(respond=lambda r: calls.append(r) or "x")).use(Gate()).build()
    with pytest.raises(InputRefusedError) as refused:
        await agent.run("hello")
    assert refused.value.code == "ERR_INPUT_REFUSED" and refused.value.extension == "gate"
    assert calls == [] and agent.checkpoint() is None


async def test_tool_hooks_can_deny_and_rewrite_arguments() -> None:
    runs: list[dict[str, Any]] = []

    class Rewrite(Extension):
        async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
            return await call_next(call.with_args({"order_id": "B-9"}))

    agent = agent_with(Rewrite(), runs=runs)
    assert (await agent.run("where?")).answer == "done: order B-9 shipped" and runs == [{"order_id": "B-9"}]

    class Deny(Extension):
        async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
            return ToolOutcome(content="Error: not today", is_error=True, error_code="ERR_DENIED_BY_TEST")

    denied: list[dict[str, Any]] = []
    agent = agent_with(Deny(), runs=denied)
    assert (await agent.run("where?")).answer == "done: Error: not today" and denied == []


async def test_rewritten_arguments_are_validated_again() -> None:
    runs: list[dict[str, Any]] = []

    class Breaks(Extension):
        async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
            return await call_next(call.with_args({"order_id": 7}))

    agent = agent_with(Breaks(), runs=runs)
    await agent.run("where?")
    record = (agent.last_snapshot() or pytest.fail("no record")).state["tool_results"][0]
    assert runs == [] and record["error_code"] == "ERR_INVALID_TOOL_ARGS"


async def test_a_raising_tool_hook_fails_closed_and_is_recorded() -> None:
    runs: list[dict[str, Any]] = []
    errors: list[AgentEvent] = []

    class Broken(Extension):
        async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
            raise RuntimeError("audit store down")

    agent = agent_with(Broken(), runs=runs)
    agent.on("agentfootprint.error.tool", errors.append)
    result = await agent.run("where?")
    record = (agent.last_snapshot() or pytest.fail("no record")).state["tool_results"][0]
    assert runs == [] and record["is_error"] is True and record["error_code"] == "ERR_TOOL_HOOK"
    assert record["content"] == "Error: tool call refused: extension 'broken' failed (RuntimeError)"
    assert result.status == "completed" and [e.payload["code"] for e in errors] == ["ERR_TOOL_HOOK"]


async def test_answer_hooks_rewrite_and_can_ask_the_model_again_with_usage_counted() -> None:
    class Recheck(Extension):
        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            again = await ctx.call_model(
                LLMRequest(system_prompt="check", messages=[Message(role="user", content="right?")], model=ctx.model)
            )
            return f"{answer} / {again.content}"

    replies = iter(["first", "checked"])
    agent = Agent.create(provider=mock(respond=lambda r: next(replies)), model="m").use(Recheck()).build()
    result = await agent.run("hi")
    plain = await Agent.create(provider=mock(reply="first"), model="m").build().run("hi")
    assert result.answer == "first / checked"
    assert (agent.last_snapshot() or pytest.fail("no record")).state["answer"] == "first / checked"
    assert (
        result.usage.input_tokens > plain.usage.input_tokens and result.usage.output_tokens > plain.usage.output_tokens
    )


async def test_provided_tools_are_offered_per_iteration_and_dispatched() -> None:
    runs: list[dict[str, Any]] = []
    extra = lookup_tool(runs)
    offered: list[list[str]] = []

    class Provider(Extension):
        async def provide_tools(self, ctx: RunContext) -> list[Tool]:
            return [extra] if ctx.iteration == 1 else []

    def respond(request: LLMRequest) -> Any:
        offered.append([t.name for t in request.tools])
        return one_lookup(request)

    agent = Agent.create(provider=mock(respond=respond)).use(Provider()).build()
    assert (await agent.run("where?")).answer == "done: order A-1 shipped"
    assert offered == [["lookup_order"], []] and runs == [{"order_id": "A-1"}]


async def test_recorded_state_survives_a_pause_and_resume_on_a_fresh_agent() -> None:
    class Notes(Extension):
        async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
            ctx.record("notes.model_calls", ctx.recorded("notes.model_calls", 0) + 1)
            return await call_next(request)

        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            return f"{answer} after {ctx.recorded('notes.model_calls')} model calls"

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user":
            return {"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "which order?"}}]}
        return f"ok {last.content}"

    paused_on = Agent.create(provider=mock(respond=respond)).tool(ask_human).use(Notes()).build()
    paused = await paused_on.run("refund please")
    assert paused.status == "paused" and paused.checkpoint is not None
    assert (paused_on.last_snapshot() or pytest.fail("no record")).state["notes.model_calls"] == 1
    fresh = Agent.create(provider=mock(respond=respond)).tool(ask_human).use(Notes()).build()
    done = await fresh.resume(json.loads(json.dumps(paused.checkpoint)), "A-1")
    assert done.answer == "ok A-1 after 2 model calls"


async def test_record_refuses_keys_the_agent_owns_and_writes_outside_a_stage() -> None:
    class Clobber(Extension):
        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            ctx.record("history", [])
            return answer

    with pytest.raises(ExtensionError, match="owns that key"):
        await Agent.create(provider=mock(reply="x")).use(Clobber()).build().run("hi")

    class Late(Extension):
        async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
            ctx.record("late", 1)

    with pytest.raises(ExtensionError, match="only inside a stage"):
        await Agent.create(provider=mock(reply="x")).use(Late()).build().run("hi")


async def test_results_and_checkpoints_carry_what_extensions_add_across_turns() -> None:
    class Counter(Extension):
        async def restore(self, ctx: RunContext, data: Any) -> None:
            ctx.state["turns"] = data["turns"]

        def result(self, ctx: RunContext, outcome: RunOutcome) -> Any:
            return {"turn": ctx.state.get("turns", 0) + 1, "status": outcome.status}

        def checkpoint(self, ctx: RunContext) -> Any:
            return {"turns": ctx.state.get("turns", 0) + 1}

    agent = Agent.create(provider=mock(reply="x")).use(Counter()).build()
    first = await agent.run("one")
    assert {k: v for k, v in first.extensions.items() if k != "integrity"} == {
        "counter": {"turn": 1, "status": "completed"}
    }
    assert (await agent.follow_up("two")).extensions["counter"]["turn"] == 2
    stored = json.loads(json.dumps(agent.checkpoint()))
    assert stored["extensions"] == {"counter": {"turns": 2}}
    other = Agent.create(provider=mock(reply="x")).use(Counter()).build()
    assert (await other.run("three", continue_from=stored)).extensions["counter"]["turn"] == 3


async def test_a_plain_agents_checkpoint_has_no_extensions_entry() -> None:
    agent = Agent.create(provider=mock(reply="x")).build()
    await agent.run("hi")
    assert "extensions" not in (agent.checkpoint() or {})


async def test_after_run_can_refuse_and_on_error_hears_of_crashes_without_masking_them() -> None:
    class Veto(Extension):
        async def after_run(self, ctx: RunContext, outcome: RunOutcome) -> None:
            raise PermissionError("vetoed")

    agent = Agent.create(provider=mock(reply="x")).use(Veto()).build()
    with pytest.raises(PermissionError):
        await agent.run("hi")
    assert agent.last_snapshot() is not None  # the record stays

    heard: list[str] = []

    class Listens(Extension):
        async def on_error(self, ctx: RunContext, error: BaseException) -> None:
            heard.append(type(error).__name__)
            raise RuntimeError("cleanup failed too")

    def boom(request: LLMRequest) -> Any:
        raise ValueError("provider down")

    crashing = Agent.create(provider=mock(respond=boom)).use(Listens()).build()
    with pytest.raises(ValueError, match="provider down") as raised:
        await crashing.run("hi")
    assert heard == ["ValueError"] and getattr(raised.value, "checkpoint", None) is not None


async def test_member_agents_in_a_composition_run_their_stage_hooks() -> None:
    first = Agent.create(provider=mock(respond=lambda r: "draft")).use(Tagger("m")).build()
    second = Agent.create(provider=mock(respond=lambda r: f"final({r.messages[-1].content})")).build()
    result = await Sequence.create().step("draft", first).step("polish", second).build().run("go")
    assert result.answer == "final(draft>m)"


# -- properties -------------------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(tags=st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=6, unique=True))
def test_wrapping_hooks_nest_like_onions(tags: list[str]) -> None:
    import asyncio

    builder = Agent.create(provider=mock(respond=lambda r: r.system_prompt)).system("S")
    for tag in tags:
        builder = builder.use(Tagger(tag))
    answer = asyncio.run(builder.build().run("hi")).answer
    inward = "".join(f"<{t}" for t in tags)
    outward = "".join(f">{t}" for t in reversed(tags))
    assert answer == f"S{inward}{outward}"


# -- hostile ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("let_through", [None, "", "   ", 42])
async def test_an_input_hook_that_lets_nothing_through_refuses_the_run(let_through: Any) -> None:
    class Empty(Extension):
        async def on_input(self, ctx: RunContext, message: str) -> str:
            return let_through  # type: ignore[no-any-return]

    with pytest.raises(InputRefusedError, match="let no message through"):
        await Agent.create(provider=mock(reply="x")).use(Empty()).build().run("hi")


async def test_hooks_returning_the_wrong_type_fail_the_stage_by_name() -> None:
    class BadAnswer(Extension):
        async def on_answer(self, ctx: RunContext, answer: str) -> str:
            return None  # type: ignore[return-value]

    with pytest.raises(TypeError, match="bad_answer"):
        await Agent.create(provider=mock(reply="x")).use(BadAnswer()).build().run("hi")

    class BadTools(Extension):
        async def provide_tools(self, ctx: RunContext) -> list[Tool]:
            return ["not a tool"]  # type: ignore[list-item]

    with pytest.raises(TypeError, match="bad_tools"):
        await Agent.create(provider=mock(reply="x")).use(BadTools()).build().run("hi")
