"""A planned ``decide`` (``DecisionPlan``) records exactly what ``decide`` records: the decider's commit, the reads
and their order, the chosen branch and the evidence models, for any plannable rules and any state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import RedactionPolicy, decide, flow_chart
from agentfootprint.flow.decide import DecisionPlan, PlannedDecision

OPS = st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in"])
THRESHOLDS = st.one_of(st.integers(-2, 2), st.text(max_size=3), st.booleans(), st.none())
WHEN = st.dictionaries(
    st.sampled_from(["n", "s", "b", "gone", "secret"]),
    st.dictionaries(OPS, THRESHOLDS, min_size=1, max_size=3),
    min_size=1,
    max_size=3,
)
RULES = st.lists(
    st.fixed_dictionaries(
        {"when": WHEN, "then": st.sampled_from(["a", "b"])}, optional={"label": st.sampled_from(["", "L", 0])}
    ),
    max_size=3,
)
STATES = st.fixed_dictionaries(
    {},
    optional={
        "n": st.one_of(st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=2)),
        "s": st.one_of(st.text(max_size=300), st.lists(st.integers(), max_size=2)),
        "b": st.booleans(),
        "secret": st.integers(0, 3),
    },
)


class Reads:
    def __init__(self) -> None:
        self.keys: list[str] = []

    def on_read(self, frame: Any, key: str, value: Any) -> None:
        self.keys.append(key)


async def _decider_run(decider: Any, state: dict[str, Any], redact: bool) -> tuple[Any, list[str], list[Any]]:
    seen: list[Any] = []

    def route(scope: Any) -> Any:
        out = decider(scope)
        seen.append(out)
        return out

    chart = (
        flow_chart("D", lambda s: None, id="d")
        .decider("Route", route, id="route")
        .branch("a", "A", lambda s: None)
        .branch("b", "B", lambda s: None)
        .default("a")
        .end()
        .build()
    )
    reads = Reads()
    policy = RedactionPolicy.of(keys=["secret"]) if redact else None
    result = await chart.run(state, redaction=policy, recorders=[reads])
    return result.commit_log[1], reads.keys, seen


def _same_evidence(planned: PlannedDecision, general: Any) -> None:
    assert planned.branches == general.branches
    assert planned.branch == general.branch
    ev = planned.evidence
    assert ev == general.evidence
    assert ev.model_dump(mode="json") == general.evidence.model_dump(mode="json") == planned.evidence_json()
    assert ev.model_fields_set == general.evidence.model_fields_set
    for mine, theirs in zip(ev.rules, general.evidence.rules, strict=True):
        assert mine.model_fields_set == theirs.model_fields_set
        assert list(mine.__dict__) == list(theirs.__dict__)
        for a, b in zip(mine.conditions, theirs.conditions, strict=True):
            assert a.model_fields_set == b.model_fields_set
            assert list(a.__dict__) == list(b.__dict__)


@settings(max_examples=200, deadline=None)
@given(RULES, st.sampled_from(["final", None, ""]), STATES, st.booleans())
async def test_a_plan_records_what_decide_records(
    rules: list[dict[str, Any]], default: str | None, state: dict[str, Any], redact: bool
) -> None:
    plan = DecisionPlan.plan(rules, default)
    assert plan is not None  # filters over int/str/bool/None thresholds are always plannable
    mine, my_reads, my_out = await _decider_run(plan, state, redact)
    theirs, their_reads, their_out = await _decider_run(lambda s: decide(s, rules, default), state, redact)
    assert mine.model_dump() == theirs.model_dump()
    assert mine.decision == theirs.decision
    assert my_reads == their_reads
    _same_evidence(my_out[0], their_out[0])


AGENT_RULES = [
    {
        "when": {"pending_tool_calls": {"gt": 0}, "iteration": {"lt": 5}},
        "then": "tool-calls",
        "label": "Model asked for tools",
    },
    {"when": {"pending_tool_calls": {"gt": 0}, "iteration": {"eq": 5}}, "then": "wrap-up", "label": "Budget"},
]


@pytest.mark.parametrize(
    ("state", "branch"),
    [
        ({"pending_tool_calls": 1, "iteration": 1}, "tool-calls"),
        ({"pending_tool_calls": 1, "iteration": 5}, "wrap-up"),
        ({"pending_tool_calls": 0, "iteration": 1}, "final"),
        ({"iteration": 1}, "final"),
    ],
)
async def test_exact_evidence_of_the_agent_route(state: dict[str, Any], branch: str) -> None:
    plan = DecisionPlan.plan(AGENT_RULES, "final")
    assert plan is not None
    out: list[Any] = []

    def stage(scope: Any) -> None:
        out.append((plan(scope), decide(scope, AGENT_RULES, "final")))

    await flow_chart("S", stage, id="s").build().run(state)
    planned, general = out[0]
    assert planned.branch == branch
    _same_evidence(planned, general)
    first = planned.evidence_json()["rules"][0]
    assert first["conditions"][0] == {
        "key": "pending_tool_calls",
        "op": "gt",
        "threshold": 0,
        "actual": "undefined" if "pending_tool_calls" not in state else str(state["pending_tool_calls"]),
        "result": state.get("pending_tool_calls", 0) > 0,
        "redacted": False,
    }


@pytest.mark.parametrize(
    "rules",
    [
        [{"when": lambda s: True, "then": "a"}],
        [{"when": {"n": {"gt": 0.5}}, "then": "a"}],
        [{"when": {"n": {"in": [1, 2]}}, "then": "a"}],
        [{"when": {"n": {"bogus": 1}}, "then": "a"}],
        [{"when": {"n": {}}, "then": "a"}],
        [{"when": {}, "then": "a"}],
        [{"when": {3: {"eq": 1}}, "then": "a"}],
        [{"when": {"n": {"eq": 1}}, "then": ""}],
        [{"when": {"n": {"eq": 1}}}],
        [{"when": {"n": "x"}, "then": "a"}],
    ],
)
def test_rules_a_plan_does_not_take_are_left_to_decide(rules: list[dict[str, Any]]) -> None:
    assert DecisionPlan.plan(rules, "d") is None


def test_a_default_that_is_not_a_str_is_left_to_decide() -> None:
    assert DecisionPlan.plan([{"when": {"n": {"eq": 1}}, "then": "a"}], 7) is None  # type: ignore[arg-type]


def test_rules_that_are_not_a_list_of_dicts_are_refused_as_decide_refuses_them() -> None:
    with pytest.raises(TypeError):
        DecisionPlan.plan("rules")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        DecisionPlan.plan(["rule"])  # type: ignore[list-item]


async def test_rules_edited_after_planning_are_not_seen_and_the_commit_is_unchanged() -> None:
    rules: list[dict[str, Any]] = [{"when": {"n": {"gt": 0}}, "then": "b", "label": "L"}]
    plan = DecisionPlan.plan(rules, "a")
    assert plan is not None
    frozen_copy = [{"when": {"n": {"gt": 0}}, "then": "b", "label": "L"}]
    rules[0]["when"]["n"]["gt"] = 99
    rules[0]["then"] = "a"
    mine, _, _ = await _decider_run(plan, {"n": 1}, False)
    theirs, _, _ = await _decider_run(lambda s: decide(s, frozen_copy, "a"), {"n": 1}, False)
    assert mine.decision == theirs.decision
    assert mine.decision["chosen"] == ["b"]


async def test_a_comparison_that_raises_is_recorded_as_decide_records_it() -> None:
    rules = [{"when": {"n": {"gt": 1, "eq": "x"}}, "then": "b"}]
    plan = DecisionPlan.plan(rules, "a")
    mine, _, _ = await _decider_run(plan, {"n": "text"}, False)
    theirs, _, _ = await _decider_run(lambda s: decide(s, rules, "a"), {"n": "text"}, False)
    assert mine.decision == theirs.decision
    assert mine.decision["rules"][0]["error"] == "TypeError: '>' not supported between instances of 'str' and 'int'"
    assert mine.decision["rules"][0]["matched"] is False


async def test_a_redacted_key_shows_neither_its_value_nor_its_threshold() -> None:
    rules = [{"when": {"secret": {"eq": 2}}, "then": "b"}]
    plan = DecisionPlan.plan(rules, "a")
    mine, _, _ = await _decider_run(plan, {"secret": 2}, True)
    theirs, _, _ = await _decider_run(lambda s: decide(s, rules, "a"), {"secret": 2}, True)
    assert mine.decision == theirs.decision
    cond = mine.decision["rules"][0]["conditions"][0]
    assert (cond["actual"], cond["threshold"], cond["redacted"], cond["result"]) == (
        "[REDACTED]",
        "[REDACTED]",
        True,
        True,
    )


async def test_the_recorded_evidence_is_the_decisions_own_copy() -> None:
    """The engine edits the recorded evidence's top level (``chosen``); the planned decision's models are unaffected."""
    plan = DecisionPlan.plan([{"when": {"n": {"gt": 0}}, "then": "zzz"}], "a")
    mine, _, seen = await _decider_run(plan, {"n": 1}, False)
    assert mine.decision["chosen"] == ["a"] and mine.decision["fallback_from"] == "zzz"  # not a branch it has
    assert seen[0].evidence.chosen == ["zzz"] and seen[0].evidence.default_used is False
