"""Seed 004's declared-structure options (R004-129): tool-choice classifier, ontology, claims,
recipes and the script travelling with the answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint import Agent, AgentBuildError
from agentfootprint.agent import OptionUnavailableError, define_agent_recipe
from agentfootprint.explain import backtrack
from agentfootprint.providers import LLMRequest, mock
from agentfootprint.tools import define_tool, script, semantic


def _tool(name: str, result: Any = "ok") -> Any:
    return define_tool(
        name=name,
        description=name,
        input_schema={"type": "object", "properties": {}},
        execute=lambda args, ctx: result,
    )


def _call(name: str, cid: str = "c1") -> dict[str, Any]:
    return {"tool_calls": [{"id": cid, "name": name, "args": {}}]}


ORDERS, WEATHER, REFUNDS = _tool("lookup_order"), _tool("weather"), _tool("refund")


# -- tool choice ---------------------------------------------------------------------------------------------
async def test_r004_129_tool_choice_narrows_the_offer_and_records_pick_and_outcome() -> None:
    seen: list[list[str]] = []

    def model(req: LLMRequest) -> Any:
        seen.append([t.name for t in req.tools])
        return _call("lookup_order") if len(seen) == 1 else "Order shipped."

    asked: list[tuple[str, list[str]]] = []

    def classifier(message: str, names: list[str]) -> list[str]:
        asked.append((message, names))
        return ["lookup_order", "no_such_tool"]

    agent = (
        Agent.create(provider=mock(respond=model), model="m")
        .tools([ORDERS, WEATHER, REFUNDS])
        .tool_choice(classifier)
        .build()
    )
    await agent.run("where is order A-1?")
    assert asked == [("where is order A-1?", ["lookup_order", "weather", "refund"])]  # once per turn
    assert seen == [["lookup_order"], ["lookup_order"]]
    rows = agent.last_snapshot().state["tool_choice"]  # type: ignore[union-attr]
    assert rows[0] == {
        "kind": "pick",
        "iteration": 1,
        "offered": ["lookup_order", "weather", "refund"],
        "serve": "narrow",
        "picked": ["lookup_order"],
        "unknown": 1,
    }
    assert [(r["outcome"], r["called"]) for r in rows[1:]] == [("picked", ["lookup_order"]), ("answered", [])]


async def test_r004_129_tool_choice_hint_offers_everything_and_a_broken_classifier_narrows_nothing() -> None:
    provider = mock(reply="fine")
    hint = (
        Agent.create(provider=provider, model="m")
        .tools([ORDERS, WEATHER])
        .tool_choice(lambda m, n: "weather", serve="hint")
        .build()
    )
    await hint.run("rain?")
    assert [t.name for t in provider.requests[0].tools] == ["lookup_order", "weather"]

    def broken(message: str, names: list[str]) -> list[str]:
        raise RuntimeError("classifier down")

    provider2 = mock(reply="fine")
    agent = Agent.create(provider=provider2, model="m").tools([ORDERS, WEATHER]).tool_choice(broken).build()
    await agent.run("rain?")
    assert [t.name for t in provider2.requests[0].tools] == ["lookup_order", "weather"]
    assert agent.last_snapshot().state["tool_choice"][0]["error"] == "RuntimeError"  # type: ignore[union-attr]


@pytest.mark.parametrize(("classifier", "serve"), [("nope", "narrow"), (lambda m, n: [], "everything")])
def test_r004_129_tool_choice_bad_options_refused(classifier: Any, serve: Any) -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").tool_choice(classifier, serve=serve)
    assert info.value.code == "ERR_TOOL_CHOICE"


# -- ontology ------------------------------------------------------------------------------------------------
ONTOLOGY = {
    "entities": {"order": "a purchase", "customer": "who bought it"},
    "relations": [{"from": "order", "to": "customer", "name": "placed_by", "via": "lookup_order"}],
}


async def test_r004_129_ontology_is_a_frozen_run_constant_and_a_source_the_model_reads() -> None:
    spec = json.loads(json.dumps(ONTOLOGY))
    provider = mock(reply="Placed by Dana.")
    agent = Agent.create(provider=provider, model="m").tool(ORDERS).ontology(spec).build()
    spec["entities"]["order"] = "changed after build"  # frozen at build
    await agent.run("who placed A-1?")
    prompt = provider.requests[0].system_prompt
    assert "- order: a purchase" in prompt and "- order --placed_by--> customer (via tool lookup_order)" in prompt
    assert agent.last_snapshot().state["ontology"] == ONTOLOGY  # type: ignore[union-attr]
    assert "ontology" in [s.id for s in backtrack(agent).sources]


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ({"entities": {}}, "ERR_ONTOLOGY"),
        ({"entities": {"a": "x"}, "relations": [{"from": "a", "to": "b"}]}, "ERR_ONTOLOGY"),
        ({"entities": {"a": "x"}, "extra": 1}, "ERR_ONTOLOGY"),
        ("order", "ERR_ONTOLOGY"),
    ],
)
def test_r004_129_ontology_malformed_is_refused_by_name(spec: Any, code: str) -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").ontology(spec)
    assert info.value.code == code


def test_r004_129_ontology_via_must_name_a_tool_of_the_agent() -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").ontology(ONTOLOGY).build()
    assert info.value.code == "ERR_ONTOLOGY_VIA"


# -- maps: built (tests/agent/test_integrity_maps.py) -----------------------------------------------------------


# -- claims ----------------------------------------------------------------------------------------------------
class Screen(BaseModel):
    nav_count: int | None
    title: str = ""


SCREEN = _tool("whats_here", semantic({"screen": 2}, facts=[{"entity": "screen2", "nav": 2, "title": "Home"}]))


@pytest.mark.parametrize(
    ("answer", "verdict", "advisory"),
    [
        ('{"nav_count": 5}', "checked-fail", False),
        ('{"nav_count": 2}', "checked-pass", None),
        ('{"nav_count": "2"}', "checked-pass", None),
        ('{"nav_count": null}', "checked-fail", True),
        ('{"title": "x"}', "not-applicable", None),
    ],
)
async def test_r004_129_claims_join_the_answer_to_the_settled_fact(answer: str, verdict: str, advisory: Any) -> None:
    model = mock(replies=[_call("whats_here"), answer])
    agent = (
        Agent.create(provider=model, model="m")
        .tool(SCREEN)
        .output_schema(Screen)
        .claims({"nav_count": {"entity": "screen2", "field": "nav"}})
        .build()
    )
    result = await agent.run("how many nav items?")
    assert result.answer == answer  # the check never rewrites or re-asks
    rows = agent.claim_checks()
    assert rows is not None and rows[0]["verdict"] == verdict
    assert rows[0].get("advisory") == advisory
    if verdict.startswith("checked"):
        assert (rows[0]["settled"], rows[0]["tool_call_id"]) == (2, "c1")


async def test_r004_129_a_claim_on_a_fact_never_collected_is_unreachable_never_an_accusation() -> None:
    agent = (
        Agent.create(provider=mock(reply='{"nav_count": 5}'), model="m")
        .output_schema(Screen)
        .claims({"nav_count": {"entity": "screen2", "field": "nav"}})
        .build()
    )
    await agent.run("x")
    assert [r["verdict"] for r in agent.claim_checks() or []] == ["unreachable"]


def test_r004_129_claims_need_a_typed_answer() -> None:
    with pytest.raises(AgentBuildError) as info:
        Agent.create(provider=mock(reply="x"), model="m").claims({"a": {"entity": "e", "field": "f"}}).build()
    assert info.value.code == "ERR_CLAIMS_NEED_SCHEMA"
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").claims({"a": "e.f"})


@settings(max_examples=40, deadline=None)
@given(settled=st.integers(-1000, 1000), claimed=st.integers(-1000, 1000))
def test_r004_129_property_a_claim_passes_exactly_when_it_equals_the_fact(settled: int, claimed: int) -> None:
    tool = _tool("whats_here", semantic({}, facts=[{"entity": "s", "nav": settled}]))
    agent = (
        Agent.create(provider=mock(replies=[_call("whats_here"), json.dumps({"nav_count": claimed})]), model="m")
        .tool(tool)
        .output_schema(Screen)
        .claims({"nav_count": {"entity": "s", "field": "nav"}})
        .build()
    )
    agent.run_sync("x")
    verdict = (agent.claim_checks() or [{}])[0]["verdict"]
    assert verdict == ("checked-pass" if claimed == settled else "checked-fail")


# -- recipes ---------------------------------------------------------------------------------------------------
SUPPORT = define_agent_recipe(
    id="support-desk", version="1.2.0", configure=lambda b: b.system("You answer support questions.").tool(ORDERS)
)


async def test_r004_129_a_recipe_configures_the_builder_and_the_run_records_it() -> None:
    house = define_agent_recipe(id="house", version="2.1.0", configure=lambda b: b.recipe(SUPPORT))
    provider = mock(reply="ok")
    agent = Agent.create(provider=provider, model="m").recipe(house).tool(WEATHER).build()
    result = await agent.run("hi")
    assert provider.requests[0].system_prompt.startswith("You answer support questions.")
    assert [t.name for t in provider.requests[0].tools] == ["lookup_order", "weather"]
    rows = [{"id": "support-desk", "version": "1.2.0"}, {"id": "house", "version": "2.1.0"}]
    assert agent.last_snapshot().state["agent_recipes"] == rows  # type: ignore[union-attr]
    assert result.extensions["declared_structure"] == {"recipes": rows}


def test_r004_129_recipe_refusals_are_different_sentences_with_codes() -> None:
    with pytest.raises(AgentBuildError) as dup:
        Agent.create(provider=mock(reply="x"), model="m").recipe(SUPPORT).recipe(SUPPORT)
    assert dup.value.code == "ERR_RECIPE_DUPLICATE"
    loop: Any = None
    loop = define_agent_recipe(id="loop", version="0.1.0", configure=lambda b: b.recipe(loop))
    with pytest.raises(AgentBuildError) as cyc:
        Agent.create(provider=mock(reply="x"), model="m").recipe(loop)
    assert cyc.value.code == "ERR_RECIPE_CYCLE" and "loop <- loop" in str(cyc.value)

    async def configure(b: Any) -> None:
        return None

    with pytest.raises(AgentBuildError) as asy:
        define_agent_recipe(id="a", version="1.0.0", configure=configure)
    assert asy.value.code == "ERR_RECIPE_ASYNC"
    for bad in ({"id": "Bad Id", "version": "1.0.0"}, {"id": "ok", "version": "one"}):
        with pytest.raises(AgentBuildError) as info:
            define_agent_recipe(configure=lambda b: None, **bad)
        assert info.value.code == "ERR_RECIPE"
    with pytest.raises(AgentBuildError):
        Agent.create(provider=mock(reply="x"), model="m").recipe("support-desk")


# -- script travelling with the answer ----------------------------------------------------------------------------
CALC = _tool("calc", script(42, code="print(6 * 7)"))


async def test_r004_129_the_script_travels_with_a_prose_answer() -> None:
    agent = (
        Agent.create(provider=mock(replies=[_call("calc"), "The answer is 42."]), model="m")
        .tool(CALC)
        .script_travels_with_the_answer()
        .build()
    )
    result = await agent.run("6 times 7?")
    assert result.answer == (
        "The answer is 42.\n\n---\n\nScript that produced this answer (calc):\n\n```python\nprint(6 * 7)\n```"
    )
    assert agent.answer_script() == {
        "code": "print(6 * 7)",
        "language": "python",
        "tool_name": "calc",
        "tool_call_id": "c1",
    }


class Number(BaseModel):
    value: int


async def test_r004_129_a_typed_answer_keeps_its_json_and_the_script_is_data() -> None:
    agent = (
        Agent.create(provider=mock(replies=[_call("calc"), '{"value": 42}']), model="m")
        .tool(CALC)
        .output_schema(Number)
        .script_travels_with_the_answer()
        .build()
    )
    assert await agent.run_typed("6 times 7?") == Number(value=42)
    assert (agent.answer_script() or {})["code"] == "print(6 * 7)"


def test_r004_129_the_code_match_gate_is_refused_by_name() -> None:
    with pytest.raises(OptionUnavailableError) as info:
        Agent.create(provider=mock(reply="x"), model="m").script_travels_with_the_answer(code="match")
    assert info.value.option == "script_travels_with_the_answer(code=...)"


async def test_r004_129_nothing_declared_nothing_recorded() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").script_travels_with_the_answer().build()
    assert (await agent.run("x")).answer == "x" and agent.answer_script() is None and agent.claim_checks() is None
