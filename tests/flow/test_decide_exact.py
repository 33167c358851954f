"""decide() evidence, exactly: function rules list their inputs, filters their conditions at the comparison
boundaries, malformed rules their error; a missing key never matches; thresholds are cut for the record."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import RedactionPolicy, Scope, decide, flow_chart
from agentfootprint.flow._namespace import Namespace


def scope(**state: Any) -> Scope:
    return Scope(Namespace("", state))


def rule(result: Any, i: int = 0) -> dict[str, Any]:
    return result.evidence.rules[i].model_dump()  # type: ignore[no-any-return]


def test_a_function_rule_lists_each_key_it_read_once() -> None:
    r = decide(scope(n=5), [{"when": lambda s: s.get("absent") is None and s["n"] > 1 and s["n"] < 9, "then": "a"}])
    assert r.branches == ("a",) and r.branch == "a"
    assert rule(r)["inputs"] == [
        {"key": "absent", "value": "undefined", "redacted": False},
        {"key": "n", "value": "5", "redacted": False},
    ]


async def test_a_function_rule_input_under_a_redacted_key_is_hidden() -> None:
    def route(s: Any) -> Any:
        return decide(s, [{"when": lambda sc: sc["ssn"] > 0, "then": "a"}], "b")

    chart = (
        flow_chart("D", lambda s: None, id="d")
        .decider("Route", route, id="route")
        .branch("a", "A", lambda s: None)
        .branch("b", "B", lambda s: None)
        .end()
        .build()
    )
    r = await chart.run({"ssn": 123456789}, redaction=RedactionPolicy.of(keys=["ssn"]))
    decision: Any = r.commit_log[1].decision
    assert decision["rules"][0]["inputs"] == [{"key": "ssn", "value": "[REDACTED]", "redacted": True}]


@pytest.mark.parametrize(
    ("op", "threshold", "matched"),
    [("lte", 5, True), ("lte", 4, False), ("lt", 5, False), ("gte", 5, True), ("gt", 5, False), ("ne", 5, False)],
)
def test_comparisons_at_their_boundary(op: str, threshold: int, matched: bool) -> None:
    r = decide(scope(n=5), [{"when": {"n": {op: threshold}}, "then": "a"}], "z")
    assert r.branches == (("a",) if matched else ("z",))
    assert rule(r)["conditions"] == [
        {"key": "n", "op": op, "threshold": threshold, "actual": "5", "result": matched, "redacted": False}
    ]


def test_a_missing_key_never_matches_even_not_equal() -> None:
    r = decide(scope(), [{"when": {"missing": {"ne": 1}}, "then": "a"}])
    assert r.branches == () and r.branch is None
    assert rule(r)["conditions"] == [
        {"key": "missing", "op": "ne", "threshold": 1, "actual": "undefined", "result": False, "redacted": False}
    ]
    assert r.evidence.model_dump(exclude={"rules"}) == {
        "kind": "decide",
        "chosen": [],
        "default": None,
        "default_used": False,
    }


def test_malformed_rules_record_their_error_and_later_keys_are_still_checked() -> None:
    rules: list[Any] = [{"when": {1: {"eq": 1}, "n": {"lte": 5}}, "then": "a"}, {"when": {}, "then": "b"}]
    rules.append({"when": 3, "then": "c"})
    r = decide(scope(n=5), rules, "z")
    assert r.branches == ("z",)
    first = rule(r)
    assert (first["error"], first["matched"]) == ("filter key must be a string, got int", False)
    assert first["conditions"] == [
        {"key": "n", "op": "lte", "threshold": 5, "actual": "5", "result": True, "redacted": False}
    ]
    assert (rule(r, 1)["error"], rule(r, 2)["error"]) == (
        "empty filter never matches",
        "rule 'when' must be a filter dict or a callable",
    )


def test_thresholds_are_cut_to_200_characters_and_50_items() -> None:
    r = decide(scope(name="x", n=5), [{"when": {"name": {"eq": "y" * 300}, "n": {"in": list(range(60))}}, "then": "a"}])
    name, n = rule(r)["conditions"]
    assert name["threshold"] == "y" * 200 and n["threshold"] == list(range(50)) and n["result"] is True
