""".configure(fn) (R004-130), the run-configuration manifest (R004-12), and the doors of run_typed and follow_up
(seed 000: refused by the run-input door, naming the door, before anything else is checked)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import (
    Agent,
    AgentBuildError,
    InvalidRunConfigError,
    InvalidRunInputError,
    NoConversationError,
    ask_human,
)
from agentfootprint.agent import RunConfig, RunConfigContext
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock


def echo_model(req: LLMRequest) -> str:
    return f"{req.model}|{req.system_prompt}"


# ------------------------------------------------------------------------------------------ R004-130 configure


async def test_R004_130_the_resolver_picks_this_runs_model_and_instructions() -> None:
    seen: list[RunConfigContext] = []

    def pick(ctx: RunConfigContext) -> dict[str, str]:
        seen.append(ctx)
        return {"model": "big-model"} if len(ctx.message) > 10 else {}

    provider = mock(respond=echo_model)
    agent = Agent.create(provider=provider, model="small-model").system("Answer briefly.").configure(pick).build()
    assert (await agent.run("short")).answer == "small-model|Answer briefly."
    assert (await agent.run("a much longer question")).answer == "big-model|Answer briefly."
    ctx = seen[1]
    assert ctx.message == "a much longer question" and ctx.defaults == RunConfig(
        model="small-model", instructions="Answer briefly."
    )
    snap = agent.last_snapshot()
    assert snap is not None
    assert snap.state["run_config"] == {"model": "big-model", "instructions": "Answer briefly."}
    assert snap.state["llm_call"]["model"] == "big-model" and ctx.run_id == snap.run_id


async def test_R004_130_instructions_replace_the_base_prompt_per_caller() -> None:
    def per_tenant(ctx: RunConfigContext) -> RunConfig:
        tenant = ctx.identity.tenant if ctx.identity else None
        return RunConfig(instructions=f"{ctx.defaults.instructions} House rules of {tenant}.")

    agent = Agent.create(provider=mock(respond=echo_model), model="m").system("Base.").configure(per_tenant).build()
    result = await agent.run({"message": "hi", "identity": {"tenant": "acme"}})
    assert result.answer == "m|Base. House rules of acme."


async def test_R004_130_an_async_resolver_and_none_keep_the_defaults() -> None:
    async def nothing(ctx: RunConfigContext) -> None:
        return None

    agent = Agent.create(provider=mock(respond=echo_model), model="m").system("S").configure(nothing).build()
    assert (await agent.run("go")).answer == "m|S"


async def test_R004_130_without_configure_the_record_has_no_run_config_key() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    await agent.run("go")
    snap = agent.last_snapshot()
    assert snap is not None and "run_config" not in snap.state


async def test_R004_130_the_paused_turn_keeps_its_resolved_config_on_resume() -> None:
    calls = {"n": 0}

    def pick(ctx: RunConfigContext) -> dict[str, str]:
        calls["n"] += 1
        return {"model": f"model-{calls['n']}"}

    def respond(req: LLMRequest) -> Any:
        if not any(m.role == "tool" for m in req.messages):
            return {"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "Which?"}}]}
        return req.model

    agent = Agent.create(provider=mock(respond=respond), model="m").tool(ask_human).configure(pick).build()
    paused = await agent.run("go")
    assert paused.status == "paused"
    done = await agent.resume(paused.checkpoint, "the blue one")
    assert done.answer == "model-1" and calls["n"] == 1


@pytest.mark.parametrize(
    ("returned", "field"),
    [
        ({"modle": "x"}, "key 'modle'"),
        ({"Secret-Key-987": "x"}, "key '*'"),
        ({"model": 987654}, "model"),
        ({"model": ""}, "model"),
        ("big-model-987", "return value"),
        (["x"], "return value"),
    ],
)
async def test_R004_130_a_resolver_returning_no_configuration_is_refused_by_field(returned: Any, field: str) -> None:
    provider = mock(reply="never")
    agent = Agent.create(provider=provider, model="m").configure(lambda ctx: returned).build()
    with pytest.raises(InvalidRunConfigError) as info:
        await agent.run("go")
    err = info.value
    assert err.code == "ERR_INVALID_RUN_CONFIG" and err.field == field
    assert "987" not in str(err) and provider.calls == 0


def test_R004_130_one_resolver_per_agent_and_it_must_be_callable() -> None:
    builder = Agent.create(provider=mock(reply="x"), model="m").configure(lambda ctx: None)
    with pytest.raises(AgentBuildError):
        builder.configure(lambda ctx: None)
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").configure("big-model")  # type: ignore[arg-type]


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=60, alphabet=st.characters(codec="ascii", categories=["L", "N"])))
def test_R004_130_whatever_model_the_resolver_names_is_the_one_called(model: str) -> None:
    provider = mock(respond=lambda req: req.model)
    agent = Agent.create(provider=provider, model="default").configure(lambda ctx: {"model": model}).build()
    assert agent.run_sync("go").answer == model


# ------------------------------------------------------------------------------------------ R004-12 manifest


async def test_R004_12_one_run_configured_event_per_run_stamped_with_the_run_id() -> None:
    agent = (
        Agent.create(provider=mock(reply="x"), model="m", max_iterations=3)
        .system("secret system text")
        .tool(ask_human)
        .cost_budget(0.25)
        .configure(lambda ctx: None)
        .build()
    )
    events: list[AgentEvent] = []
    agent.on("agentfootprint.agent.run_configured", events.append)
    result = await agent.run("go")
    assert len(events) == 1 and events[0].meta.run_id == result.run_id
    manifest = events[0].payload
    assert manifest["runner"] == "Agent" and manifest["llm"] == {
        "provider": "mock",
        "model": "m",
        "model_overrides": ["configure"],
    }
    assert manifest["max_iterations"] == 3 and manifest["tools"] == ["ask_human"]
    assert manifest["cost_budget"] == {"usd": 0.25, "on_exceed": "warn"}
    assert manifest["wrap_up_at_max_iterations"] is True and manifest["max_tool_result_chars"] is None
    assert "secret system text" not in str(manifest)


async def test_R004_12_resume_files_its_own_manifest_under_its_fresh_run_id() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "?"}}]}, "ok"])
    agent = Agent.create(provider=provider, model="m").tool(ask_human).build()
    events: list[AgentEvent] = []
    agent.on("agentfootprint.agent.run_configured", events.append)
    paused = await agent.run("go")
    done = await agent.resume(paused.checkpoint, "yes")
    assert [e.meta.run_id for e in events] == [paused.run_id, done.run_id] and paused.run_id != done.run_id
    assert "model_overrides" not in events[0].payload["llm"]


async def test_R004_12_no_manifest_for_a_refused_input() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    with pytest.raises(InvalidRunInputError):
        await agent.run({})
    assert events == []


# ------------------------------------------------------------------------------------------ seed 000 doors


class Verdict(BaseModel):
    ok: bool


@pytest.mark.parametrize("bad", [{}, None, "", 42, {"message": None}])
async def test_R000_17_run_typed_refuses_naming_agent_run_typed(bad: Any) -> None:
    provider = mock(reply='{"ok": true}')
    agent = Agent.create(provider=provider, model="m").output_schema(Verdict).build()
    with pytest.raises(InvalidRunInputError) as info:
        await agent.run_typed(bad)
    assert info.value.runner == "Agent.run_typed" and provider.calls == 0


async def test_R004_99_run_typed_without_a_schema_names_agent_run_typed() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    with pytest.raises(AgentBuildError) as info:
        await agent.run_typed("go")
    assert str(info.value).startswith("Agent.run_typed:")


async def test_R000_follow_up_empty_is_refused_by_the_door_before_the_conversation_check() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    for blank in ("", "   "):
        with pytest.raises(InvalidRunInputError) as info:
            await agent.follow_up(blank)  # no conversation yet: the door speaks first
        assert info.value.runner == "Agent.follow_up" and info.value.received == "empty string"
    with pytest.raises(NoConversationError):
        await agent.follow_up("a real message")
