"""Builder: structure, validation errors naming the culprit, description and Mermaid."""

from __future__ import annotations

import pytest

from agentfootprint.flow import ChartBuildError, FlowChart, flow_chart


def noop(s: object) -> None:
    return None


def test_linear_chart_has_nodes_in_order(loan: FlowChart) -> None:
    assert list(loan.nodes) == ["intake", "assess", "route", "approve", "reject", "notify"]
    assert loan.nodes["intake"].next == "assess"
    assert loan.nodes["approve"].next == "notify" and loan.nodes["reject"].next == "notify"


def test_duplicate_id_named() -> None:
    with pytest.raises(ChartBuildError, match="duplicate stage id 'a'"):
        flow_chart("A", noop, id="a").then("A again", noop, id="a")


def test_duplicate_branch_id_named() -> None:
    b = flow_chart("A", noop, id="a").decider("D", noop, id="d").branch("x", "X", noop)
    with pytest.raises(ChartBuildError, match="branch 'x' twice"):
        b.branch("x", "X", noop)


def test_unknown_loop_target_named() -> None:
    with pytest.raises(ChartBuildError, match="unknown stage id 'nowhere'"):
        flow_chart("A", noop, id="a").loop_to("nowhere").build()


def test_decider_without_branches_named() -> None:
    with pytest.raises(ChartBuildError, match="decider 'd' has no branches"):
        flow_chart("A", noop, id="a").decider("D", noop, id="d").end()


def test_bad_default_named() -> None:
    with pytest.raises(ChartBuildError, match="default 'zzz'"):
        flow_chart("A", noop, id="a").decider("D", noop, id="d").branch("x", "X", noop).default("zzz").end().build()


@pytest.mark.parametrize("bad", ["", "a/b", "a#1", " lead", "x" * 129, 42, None])
def test_invalid_ids_refused(bad: object) -> None:
    with pytest.raises(ChartBuildError, match="invalid stage id"):
        flow_chart("A", noop, id=bad)  # type: ignore[arg-type]


def test_non_callable_stage_refused() -> None:
    with pytest.raises(ChartBuildError, match="stage 'b' needs a callable"):
        flow_chart("A", noop, id="a").then("B", "not a function", id="b")  # type: ignore[arg-type]


def test_unreachable_stage_after_loop() -> None:
    with pytest.raises(ChartBuildError, match="unreachable"):
        flow_chart("A", noop, id="a").loop_to("a").then("B", noop, id="b")


def test_description_lists_steps(loan: FlowChart) -> None:
    text = loan.description
    assert text.startswith("FlowChart: Intake\nSteps:\n1. Intake")
    assert "2. Assess — Assess risk" in text
    assert "Route (branches: approve, reject)" in text


def test_mermaid_has_every_node_and_loop() -> None:
    chart = flow_chart("A", noop, id="a").then("B", noop, id="b").loop_to("a").build()
    m = chart.to_mermaid()
    assert m.startswith("flowchart TD")
    assert '["A"]' in m and '["B"]' in m and "-.->|loop|" in m


def test_fingerprint_stable_and_structure_sensitive() -> None:
    a1 = flow_chart("A", noop, id="a").then("B", noop, id="b").build()
    a2 = flow_chart("A", noop, id="a").then("B", noop, id="b").build()
    a3 = flow_chart("A", noop, id="a").then("C", noop, id="c").build()
    assert a1.fingerprint == a2.fingerprint != a3.fingerprint


def test_parallel_needs_children() -> None:
    with pytest.raises(ChartBuildError, match="at least one child"):
        flow_chart("A", noop, id="a").parallel([])
