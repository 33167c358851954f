"""R004-134: viewer surfaces. ``structure_recorders`` see every node of the agent's chart when ``build()`` compiles
it; ``group_translator`` draws an agent (or a composition) from its group metadata, once; with the voice options
(``app_name``, ``commentary_templates``, ``thinking_templates``) they shape what a viewer shows."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import (
    AgentBuildError,
    GroupMetadata,
    StructureBuildError,
    group_metadata,
    structure_build_errors,
    ui_group,
)
from agentfootprint.compose import Parallel, Sequence
from agentfootprint.providers import mock


class Collect:
    """A structure recorder keeping every build-time event it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def on_stage_added(self, spec: dict[str, Any]) -> None:
        self.events.append(("stage", spec))

    def on_edge_added(self, edge: dict[str, Any]) -> None:
        self.events.append(("edge", edge))

    def on_loop_edge_added(self, edge: dict[str, Any]) -> None:
        self.events.append(("loop", edge))

    def on_decider_complete(self, info: dict[str, Any]) -> None:
        self.events.append(("decider", info))


def _echo() -> Any:
    return define_tool(
        name="echo", description="Echo.", input_schema={"type": "object", "properties": {}}, execute=lambda a: "e"
    )


def test_R004_134_structure_recorders_see_every_stage_before_any_edge() -> None:
    """R004-134: structure recorders observe every node the agent builder creates, at build time, endpoints before
    edges; the decider's branches and the loop back-edge are told too."""
    seen = Collect()
    agent = Agent.create(provider=mock(reply="x"), name="bot").tool(_echo()).structure_recorders(seen).build()
    stages = [spec["id"] for kind, spec in seen.events if kind == "stage"]
    assert stages == list(agent.chart.nodes)
    first_edge = next(i for i, (kind, _) in enumerate(seen.events) if kind != "stage")
    assert all(kind == "stage" for kind, _ in seen.events[:first_edge])
    assert len(stages) == first_edge
    known = set(stages)
    for kind, payload in seen.events[first_edge:]:
        if kind in ("edge", "loop"):
            assert payload["from"] in known and payload["to"] in known
    deciders = [p for k, p in seen.events if k == "decider"]
    assert [d["decider"] for d in deciders] == ["route"]
    assert set(deciders[0]["branch_ids"]) == {
        e["label"] for k, e in seen.events if k == "edge" and e["from"] == "route"
    }
    assert ("loop", {"from": "tool-calls", "to": "injection-engine"}) in seen.events
    assert structure_build_errors(agent) == []


def test_R004_134_a_raising_recorder_is_collected_and_never_stops_the_build() -> None:
    """R004-134: a structure recorder hook that throws is isolated: the build goes on, the others still hear
    everything, and the error (its class, never its message) is collected."""

    class Broken:
        def on_edge_added(self, edge: dict[str, Any]) -> None:
            raise KeyError("secret-value")

    good = Collect()
    agent = Agent.create(provider=mock(reply="x")).structure_recorders(Broken(), good).build()
    errors = structure_build_errors(agent)
    assert errors and set(errors) == {StructureBuildError(recorder=0, hook="on_edge_added", error="KeyError")}
    assert len(errors) == sum(1 for kind, _ in good.events if kind == "edge")
    assert agent.run_sync("hi").answer == "x"


def test_R004_134_group_translator_draws_the_agent_once() -> None:
    """R004-134: the group translator is called with the agent's group metadata (kind Agent, tools and slots in
    extra), once: the drawn value is kept and returned by every later call."""
    calls: list[GroupMetadata] = []

    def draw(group: GroupMetadata) -> dict[str, Any]:
        calls.append(group)
        return {"card": group.name, "tools": list(group.extra["tool_names"])}

    agent = Agent.create(provider=mock(reply="x"), name="support").tool(_echo()).group_translator(draw).build()
    first = ui_group(agent)
    assert first == {"card": "support", "tools": ["echo"]}
    assert ui_group(agent) is first
    assert len(calls) == 1
    assert calls[0].kind == "Agent" and calls[0].members == ()
    assert calls[0].extra["slots"] == ("system-prompt", "messages", "tools")


def test_R004_134_a_raising_translator_runs_once_and_then_reads_none() -> None:
    """R004-134: a translator that throws is not asked again: the first call raises, later calls read None."""
    calls = []

    def bad(group: GroupMetadata) -> Any:
        calls.append(group)
        raise RuntimeError("draw failed")

    agent = Agent.create(provider=mock(reply="x")).group_translator(bad).build()
    with pytest.raises(RuntimeError):
        ui_group(agent)
    assert ui_group(agent) is None
    assert len(calls) == 1


def test_R004_134_without_a_translator_nothing_is_drawn() -> None:
    """R004-134: an agent built without a group translator has no UI group (None), and no recorder errors."""
    agent = Agent.create(provider=mock(reply="x")).build()
    assert ui_group(agent) is None
    assert structure_build_errors(agent) == []


def test_R004_134_a_composition_cascades_its_members_groups() -> None:
    """R004-134: a composition's group lists its members (mount ids), each with its own translated group when
    that member was built with a translator; ``translator=`` draws a composition with a given translator."""
    drawn = Agent.create(provider=mock(reply="a"), name="a").group_translator(lambda g: f"card:{g.name}").build()
    plain = Agent.create(provider=mock(reply="b"), name="b").build()
    pipeline = Sequence.create("flow").step("first", drawn).step("second", plain).build()
    group = group_metadata(pipeline)
    assert (group.kind, group.name) == ("Sequence", "flow")
    assert [(m.member_id, m.ui_group) for m in group.members] == [("first", "card:a"), ("second", None)]
    fan = Parallel.create("fan").branch("x", pipeline).build()
    assert ui_group(fan, translator=lambda g: [m.member_id for m in g.members]) == ["x"]
    assert ui_group(fan) is None


def test_R004_134_voice_and_viewer_options_build_together() -> None:
    """R004-134: app_name / commentary_templates / thinking_templates shape the narration beside the viewer
    options on one builder."""
    agent = (
        Agent.create(provider=mock(reply="x"), name="bot")
        .app_name("Support Bot")
        .commentary_templates({"stream.llm_start": "{{app_name}} is thinking"})
        .thinking_templates({"stream.llm_start": "Pensando"})
        .structure_recorders(Collect())
        .group_translator(lambda g: g.name)
        .build()
    )
    assert agent.config.voice.app_name == "Support Bot"
    assert agent.config.voice.commentary_templates["stream.llm_start"] == "{{app_name}} is thinking"
    assert agent.config.voice.thinking_templates["stream.llm_start"] == "Pensando"
    assert ui_group(agent) == "bot"


@pytest.mark.parametrize("recorder", [object(), 5, "on_stage_added", None])
def test_R004_134_a_recorder_without_a_hook_is_refused(recorder: Any) -> None:
    """R004-134 hostile input: a recorder with no structure hook is refused by code."""
    with pytest.raises(AgentBuildError) as err:
        Agent.create(provider=mock(reply="x")).structure_recorders(recorder)
    assert err.value.code == "ERR_VIEWER"


@pytest.mark.parametrize("translator", [5, "draw", None, {"kind": "Agent"}])
def test_R004_134_a_translator_that_is_not_a_function_is_refused(translator: Any) -> None:
    """R004-134 hostile input: a group translator must be callable."""
    with pytest.raises(AgentBuildError) as err:
        Agent.create(provider=mock(reply="x")).group_translator(translator)
    assert err.value.code == "ERR_VIEWER"


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=0, max_value=4), st.booleans())
def test_R004_134_property_every_recorder_hears_the_same_structure(tools: int, wrap_up: bool) -> None:
    """R004-134 property: every recorder hears the same events, whatever the tools and options."""
    a, b = Collect(), Collect()
    builder = Agent.create(provider=mock(reply="x"), wrap_up_at_max_iterations=wrap_up)
    for i in range(tools):
        builder = builder.tool(
            define_tool(
                name=f"t{i}", description="T.", input_schema={"type": "object", "properties": {}}, execute=lambda a: ""
            )
        )
    agent = builder.structure_recorders(a, b).build()
    assert a.events == b.events
    assert {spec["id"] for kind, spec in a.events if kind == "stage"} == set(agent.chart.nodes)


def test_R004_134_a_composition_takes_the_viewer_options_too() -> None:
    """R004-134: a composition's viewer(structure_recorders=, group_translator=) replays its chart to the recorders
    (its mounts as subflows, never their inside) and draws it once with the translator."""
    from agentfootprint.compose import CompositionBuildError

    class Mounts(Collect):
        def on_subflow_mounted(self, info: dict[str, Any]) -> None:
            self.events.append(("mount", info))

    seen = Mounts()
    member = Agent.create(provider=mock(reply="a"), name="a").build()
    pipeline = Sequence.create("flow").step("first", member).step("second", member).build()
    drawn = pipeline.viewer(structure_recorders=[seen], group_translator=lambda g: [m.member_id for m in g.members])
    assert drawn is pipeline and ui_group(pipeline) == ["first", "second"]
    assert [p["subflow_id"] for k, p in seen.events if k == "mount"] == ["first", "second"]
    assert {spec["id"] for k, spec in seen.events if k == "stage"} == set(pipeline.chart.nodes)
    assert structure_build_errors(pipeline) == []
    with pytest.raises(CompositionBuildError):
        pipeline.viewer(group_translator=5)
    with pytest.raises(CompositionBuildError):
        pipeline.viewer(structure_recorders=[object()])
