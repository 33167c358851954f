"""System-prompt cache policy and the caching kill switch on the wire; thinking budget and handler; recorded
system prompt on llm_start; messages-slot roles a provider cannot carry refused at run start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentfootprint import Agent, define_fact
from agentfootprint.agent import MessageRoleError
from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.events import AgentEvent
from agentfootprint.providers import (
    LLMResponse,
    MockProvider,
    ReasoningBlock,
    anthropic,
    mock,
    openai_compatible,
    with_fallback,
    with_retry,
)

FIXTURES = Path(__file__).parents[1] / "providers" / "fixtures"


def wire(fixture: str, bodies: list[dict[str, Any]]) -> httpx2.MockTransport:
    answer = json.loads((FIXTURES / fixture).read_text())

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=answer)

    return httpx2.MockTransport(handler)


def anthropic_agent(bodies: list[dict[str, Any]], **create: Any) -> Any:
    provider = anthropic(api_key="k", model="claude-x", transport=wire("anthropic_answer.json", bodies))
    return Agent.create(provider=provider, model="claude-x", **create)


async def test_R004_115_system_prompt_is_cached_always_by_default_and_reaches_anthropic() -> None:
    """R004-115: .system(text) defaults to cache 'always'; get_system_prompt_cache_policy() says so."""
    bodies: list[dict[str, Any]] = []
    agent = anthropic_agent(bodies).system("Base policy that rarely changes.").build()
    assert agent.get_system_prompt_cache_policy() == "always"
    await agent.run("hi")
    system = bodies[0]["system"]
    assert system == [
        {"type": "text", "text": "Base policy that rarely changes.", "cache_control": {"type": "ephemeral"}}
    ]


async def test_R004_115_a_never_cached_system_prompt_sends_no_breakpoint() -> None:
    """R004-115: .system(text, cache='never') keeps the base prompt out of the cached prefix."""
    bodies: list[dict[str, Any]] = []
    agent = anthropic_agent(bodies).system("Changes every turn.", cache="never").build()
    assert agent.get_system_prompt_cache_policy() == "never"
    await agent.run("hi")
    assert bodies[0]["system"] == "Changes every turn."
    assert "cache_markers" not in agent.last_snapshot().state  # type: ignore[union-attr]


async def test_R004_115_caching_off_is_a_global_kill_switch_over_every_policy() -> None:
    """R004-115: Agent.create(caching='off') sends no cache markers whatever the policies say."""
    bodies: list[dict[str, Any]] = []
    agent = (
        anthropic_agent(bodies, caching="off")
        .system("Base.")
        .fact(define_fact(id="catalog", data="Stable catalog.", cache="always"))
        .build()
    )
    await agent.run("hi")
    assert bodies[0]["system"] == "Base.\n\nStable catalog."
    assert "cache_control" not in json.dumps(bodies[0])
    with pytest.raises(AgentBuildError, match="caching"):
        Agent.create(provider=mock(reply="x"), caching="sometimes")  # type: ignore[arg-type]
    with pytest.raises(AgentBuildError, match="cache must be"):
        Agent.create(provider=mock(reply="x")).system("s", cache="forever")  # type: ignore[arg-type]


async def test_R004_115_openai_wire_gets_a_prompt_cache_key_for_the_cached_prefix() -> None:
    """R004-115: on the OpenAI wire the cached prefix becomes a stable prompt_cache_key (automatic caching)."""
    bodies: list[dict[str, Any]] = []
    transport = wire("openai_answer.json", bodies)
    provider = openai_compatible("https://api.openai.com/v1", "k", "gpt-x", transport=transport)
    agent = Agent.create(provider=provider, model="gpt-x").system("Stable base prompt.").build()
    await agent.run("first")
    await agent.run("second")
    keys = [b.get("prompt_cache_key") for b in bodies]
    assert keys[0] is not None and keys[0] == keys[1] and keys[0].startswith("af-")
    off = Agent.create(provider=provider, model="gpt-x", caching="off").system("Stable base prompt.").build()
    await off.run("third")
    assert "prompt_cache_key" not in bodies[-1]
    local = openai_compatible("http://127.0.0.1:8080/v1", "", "m", transport=transport)
    await Agent.create(provider=local, model="m").system("Stable base prompt.").build().run("x")
    assert "prompt_cache_key" not in bodies[-1] and "cache_prompt" not in bodies[-1]
    llama = openai_compatible("http://127.0.0.1:8080/v1", "", "m", transport=transport, cache_hint="cache_prompt")
    await Agent.create(provider=llama, model="m").system("Stable base prompt.").build().run("x")
    assert bodies[-1]["cache_prompt"] is True


async def test_R004_125_a_thinking_budget_is_on_every_request_and_reaches_anthropic() -> None:
    """R004-125: .thinking(budget=n) puts thinking {budget: n} on every request; Anthropic sends it."""
    provider = mock(replies=[{"tool_calls": [{"id": "c1", "name": "nope", "args": {}}]}, "done"])
    agent = Agent.create(provider=provider, model="m").thinking(budget=2048).build()
    await agent.run("hi")
    assert [r.thinking.budget for r in provider.requests if r.thinking] == [2048, 2048]
    bodies: list[dict[str, Any]] = []
    await anthropic_agent(bodies).thinking(budget=4096).build().run("hi")
    assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    with pytest.raises(AgentBuildError, match="thinking budget"):
        Agent.create(provider=mock(reply="x")).thinking(budget=0)


async def test_R004_125_the_thinking_handler_moves_inline_thinking_out_of_the_answer_and_records_it() -> None:
    """R004-125: a ThinkingHandler normalizes thinking: recorded with the call, redactable, never the answer."""
    provider = mock(reply="<think>The user wants the refund window; it is 30 days.</think>Refunds: 30 days.")
    agent = Agent.create(provider=provider, model="m").thinking().build()
    result = await agent.run("refund window?")
    assert result.answer == "Refunds: 30 days."
    reply = agent.last_snapshot().state["last_response"]  # type: ignore[union-attr]
    assert reply["reasoning"] == [
        {"kind": "thinking", "text": "The user wants the refund window; it is 30 days.", "source": "think_tag"}
    ]
    redacted = Agent.create(provider=provider, model="m").thinking().redact(keys=["reasoning"]).build()
    await redacted.run("refund window?")
    assert "The user wants" not in json.dumps(redacted.last_snapshot().model_dump(mode="json"))  # type: ignore[union-attr]
    plain = Agent.create(provider=provider, model="m").build()
    assert (await plain.run("refund window?")).answer.startswith("<think>")  # type: ignore[union-attr]
    opted_out = Agent.create(provider=provider, model="m").thinking(handler=None).build()
    assert (await opted_out.run("refund window?")).answer.startswith("<think>")  # type: ignore[union-attr]


async def test_R004_125_a_provider_declared_handler_is_used_unless_the_builder_names_one() -> None:
    """R004-125: the provider's declared thinking handler wins over the default; an explicit one wins over both."""

    class Upper:
        name = "upper"

        def normalize(self, response: LLMResponse) -> LLMResponse:
            block = ReasoningBlock(kind="summary", text="declared", source="other")
            return response.model_copy(update={"content": response.content.upper(), "reasoning": [block]})

    provider = mock(reply="ok")
    provider.thinking_handler = Upper()  # type: ignore[attr-defined]
    declared = Agent.create(provider=provider, model="m").thinking().build()
    assert (await declared.run("x")).answer == "OK"
    with pytest.raises(AgentBuildError, match="normalize"):
        Agent.create(provider=provider).thinking(handler="tags")  # type: ignore[arg-type]


async def test_R004_11_llm_start_carries_the_system_prompt_only_when_asked() -> None:
    """R004-11: record_system_prompt is off by default; on, llm_start carries the assembled prompt verbatim."""
    for record, expected in ((False, None), (True, "Base.\n\nFact A.")):
        agent = (
            Agent.create(provider=mock(reply="ok"), model="m", record_system_prompt=record)
            .system("Base.")
            .fact(define_fact(id="a", data="Fact A."))
            .build()
        )
        starts: list[AgentEvent] = []
        agent.on("stream.llm_start", starts.append)
        await agent.run("hi")
        assert starts[0].payload.get("system_prompt_text") == expected
    with pytest.raises(AgentBuildError, match="record_system_prompt"):
        Agent.create(provider=mock(reply="x"), record_system_prompt="yes")  # type: ignore[arg-type]


def user_only(**kw: Any) -> MockProvider:
    provider = mock(reply="ok", **kw)
    provider.message_roles = frozenset({"user"})  # type: ignore[attr-defined]
    return provider


async def test_R004_136_a_messages_slot_role_the_provider_cannot_carry_is_refused_at_run_start() -> None:
    """R004-136: refused before any model call, on run() and on every wrapper of the provider."""
    fact = define_fact(id="prefill", data="Sure, here is the answer:", slot="messages", role="assistant")
    provider = user_only()
    agent = Agent.create(provider=provider, model="m").fact(fact).build()
    with pytest.raises(MessageRoleError) as info:
        await agent.run("hi")
    assert (info.value.role, info.value.source_id, info.value.code) == ("assistant", "prefill", "ERR_MESSAGE_ROLE")
    assert provider.requests == []
    for wrapped in (with_retry(user_only()), with_fallback(mock(reply="ok"), user_only())):
        with pytest.raises(MessageRoleError):
            await Agent.create(provider=wrapped, model="m").fact(fact).build().run("hi")
    user_fact = define_fact(id="note", data="A note.", slot="messages", role="user")
    assert (await Agent.create(provider=user_only(), model="m").fact(user_fact).build().run("hi")).answer == "ok"
    assert (await Agent.create(provider=mock(reply="ok"), model="m").fact(fact).build().run("hi")).answer == "ok"
