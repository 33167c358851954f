"""Features are objects handed to ``.use()``: sugar is ``.use()`` of the same object, the default list is in the
config, duplicates and things that are not extensions are refused by type, and the honesty doors find their
extension by capability (no names looked up)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, AgentBuildError
from agentfootprint.agent import (
    AgentBuilder,
    AnswersFromRecord,
    ChecksAnswerValues,
    DuplicateExtensionError,
    Extension,
    HoldsArtifactStore,
    InvalidExtensionError,
)
from agentfootprint.extensions import (
    AnswerContract,
    Integrity,
    MessageMiddlewareChain,
    Receipts,
    Reliability,
    ToolSessions,
    rule,
)
from agentfootprint.extensions.artifacts import InMemoryArtifactStore
from agentfootprint.honesty import EvidenceGate, Honesty, SelfExplain
from agentfootprint.providers import LLMRequest, LLMResponse, ProviderServerError, mock

RETRY = rule(when=lambda s: s.error_kind == "5xx-transient" and s.attempt < 3, then="retry", kind="transient-retry")


class Flaky:
    """Fails the first call with a 503, then answers."""

    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls == 1:
            raise ProviderServerError("upstream 503", provider="flaky", status=503)
        return LLMResponse(content="recovered")


def shape(agent: Agent) -> list[tuple[str, type[Extension]]]:
    return [(e.name, type(e)) for e in agent.config.extensions]


# -- scenario: an object used directly is what the sugar uses --------------------------------------------------------


async def test_use_of_a_reliability_object_equals_the_reliability_option() -> None:
    sugar = Agent.create(provider=Flaky()).reliability(post_decide=[RETRY]).build()
    direct = Agent.create(provider=Flaky()).use(Reliability(post_decide=[RETRY])).build()
    assert shape(sugar) == shape(direct)
    answers = [(await a.run("hi")).answer for a in (sugar, direct)]
    rows = [a.last_snapshot().state["reliability_attempts"] for a in (sugar, direct)]  # type: ignore[union-attr]
    assert answers == ["recovered", "recovered"] and rows[0] == rows[1] and len(rows[0]) == 2


async def test_use_of_several_objects_at_once_keeps_their_order_and_equals_the_options() -> None:
    def respond(request: LLMRequest) -> str:
        return "Paris has 2 million people"

    direct = (
        Agent.create(provider=mock(respond=respond))
        .use(SelfExplain(), EvidenceGate(posture="assist"), Honesty(evidence="minimal"))
        .build()
    )
    sugar = (
        Agent.create(provider=mock(respond=respond))
        .self_explain()
        .names_and_numbers_from_evidence("assist")
        .check_in(evidence="minimal")
        .build()
    )
    assert shape(direct) == shape(sugar)
    assert [n for n, _ in shape(direct)] == [
        "tool_sessions",
        "receipts",
        "integrity",
        "self_explain",
        "evidence_gate",
        "honesty",
    ]
    for agent in (direct, sugar):
        assert agent.can_explain() is False
        await agent.run("How many people live in Paris?")
        assert agent.can_explain() is True
    flagged = [a.unsupported_values() for a in (direct, sugar)]
    assert flagged[0] is not None and flagged[0] == flagged[1]


def test_options_that_fill_one_object_reach_the_object_used_directly() -> None:
    contract = AnswerContract()
    agent = Agent.create(provider=mock(reply="x")).use(contract).findings().negative_claims(append=True).build()
    assert agent.extension(AnswerContract) is contract
    assert contract.findings_on and contract.negatives_on and contract.negatives_append
    chain = MessageMiddlewareChain()
    built = (
        Agent.create(provider=mock(reply="x"))
        .use(chain)
        .message_middleware(lambda m, ctx: m, name="first")
        .message_middleware(lambda m, ctx: m, name="second", phase="output")
        .build()
    )
    assert built.extension(MessageMiddlewareChain) is chain
    assert [(name, phase) for name, phase, _ in chain.links] == [("first", "input"), ("second", "output")]


# -- the default list lives in the config ----------------------------------------------------------------------------


def test_the_default_extensions_are_a_list_in_the_config() -> None:
    builder = Agent.create(provider=mock(reply="x"))
    assert builder._config.default_extensions == (Honesty, ToolSessions, Receipts, Integrity)
    agent = builder.build()
    assert [type(e) for e in agent.config.extensions] == [Honesty, ToolSessions, Receipts, Integrity]


def test_a_config_without_defaults_builds_an_agent_with_only_what_it_uses() -> None:
    config = replace(Agent.create(provider=mock(reply="x"))._config, default_extensions=())
    assert AgentBuilder(config).build().config.extensions == ()
    mine = replace(config, default_extensions=(Receipts,))
    assert shape(AgentBuilder(mine).use(SelfExplain()).build()) == [
        ("receipts", Receipts),
        ("self_explain", SelfExplain),
    ]


def test_each_build_gets_fresh_default_instances_and_declining_receipts_removes_only_them() -> None:
    builder = Agent.create(provider=mock(reply="x"))
    first, second = builder.build(), builder.build()
    assert all(a is not b for a, b in zip(first.config.extensions, second.config.extensions, strict=True))
    declined = Agent.create(provider=mock(reply="x")).use(Receipts()).record_receipt(False).build()
    assert shape(declined) == [("honesty", Honesty), ("tool_sessions", ToolSessions), ("integrity", Integrity)]


# -- refusals --------------------------------------------------------------------------------------------------------


def test_a_second_extension_under_a_used_name_is_refused_and_nothing_of_the_call_is_kept() -> None:
    builder = Agent.create(provider=mock(reply="x")).use(SelfExplain())
    with pytest.raises(DuplicateExtensionError) as info:
        builder.use(Reliability(post_decide=[RETRY]), SelfExplain())
    assert info.value.code == "ERR_DUPLICATE_EXTENSION" and info.value.name == "self_explain"
    assert isinstance(info.value, AgentBuildError)
    names = [n for n, _ in shape(builder.build())]
    assert names == ["honesty", "tool_sessions", "receipts", "integrity", "self_explain"]
    with pytest.raises(DuplicateExtensionError):
        Agent.create(provider=mock(reply="x")).use(Reliability(post_decide=[RETRY]), Reliability(post_decide=[RETRY]))
    with pytest.raises(DuplicateExtensionError):
        Agent.create(provider=mock(reply="x")).reliability(post_decide=[RETRY]).use(Reliability(post_decide=[RETRY]))


@pytest.mark.parametrize("value", ["reliability", 42, None, Reliability, {"name": "reliability"}, [SelfExplain()]])
def test_use_of_something_that_is_not_an_extension_object_is_refused_without_quoting_it(value: Any) -> None:
    builder = Agent.create(provider=mock(reply="x"))
    with pytest.raises(InvalidExtensionError) as info:
        builder.use(value)
    assert info.value.code == "ERR_INVALID_EXTENSION" and info.value.field == "type"
    assert "reliability" not in str(info.value) and "42" not in str(info.value)
    assert [n for n, _ in shape(builder.build())] == ["honesty", "tool_sessions", "receipts", "integrity"]


def test_an_extension_with_a_bad_name_is_refused_by_field() -> None:
    bad = SelfExplain()
    bad.name = "Self Explain!"
    with pytest.raises(InvalidExtensionError) as info:
        Agent.create(provider=mock(reply="x")).use(bad)
    assert info.value.field == "name" and "Self Explain" not in str(info.value)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.integers(), st.floats(allow_nan=False), st.text(alphabet="0123456789#@%", min_size=1)))
def test_property_use_never_echoes_what_it_refuses(value: Any) -> None:
    with pytest.raises(InvalidExtensionError) as info:
        Agent.create(provider=mock(reply="x")).use(value)
    assert not any(ch in str(info.value) for ch in "0123456789#@%")


# -- the doors find their extension by capability --------------------------------------------------------------------


def test_the_built_in_extensions_have_the_capabilities_the_doors_look_for() -> None:
    assert isinstance(Honesty(), AnswersFromRecord)
    assert isinstance(EvidenceGate(), ChecksAnswerValues)
    assert not isinstance(SelfExplain(), AnswersFromRecord)


def test_a_door_opens_onto_any_extension_with_its_capability() -> None:
    class Store(Extension):
        def __init__(self) -> None:
            self.store = InMemoryArtifactStore()

        def get_store(self) -> Any:
            return self.store

    holder = Store()
    assert isinstance(holder, HoldsArtifactStore)
    agent = Agent.create(provider=mock(reply="x")).use(holder).build()
    assert agent.get_artifact_store() is holder.store
    assert Agent.create(provider=mock(reply="x")).build().get_artifact_store() is None


def test_doors_without_their_capability_answer_none_or_refuse_by_type() -> None:
    class Quiet(Extension):
        name = "honesty"

    agent = Agent.create(provider=mock(reply="x")).use(Quiet()).build()
    assert agent.pending_check_in() is None and agent.can_explain() is False and agent.unsupported_values() is None
    with pytest.raises(AgentBuildError, match=r"^why\(\) needs the honesty extension"):
        agent.why("why?")


def test_the_string_registry_is_gone() -> None:
    assert importlib.util.find_spec("agentfootprint._wiring") is None
    assert importlib.util.find_spec("agentfootprint.agent._registry") is None
