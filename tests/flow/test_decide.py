"""decide/select grammar: ops, no short-circuit, empty filter, unknown op, raising rules, callable reads."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.flow import DecisionResult, decide, flow_chart, select


async def evaluate(fn: Any, state: dict[str, Any]) -> tuple[Any, Any]:
    box: dict[str, Any] = {}

    def stage(s: Any) -> None:
        box["r"] = fn(s)

    r = await flow_chart("S", stage, id="s").build().run(state)
    return box["r"], r.commit_log[0]


@pytest.mark.parametrize(
    ("op", "threshold", "actual", "expected"),
    [
        ("eq", 1, 1, True),
        ("eq", 1, True, False),
        ("ne", 1, 2, True),
        ("gt", 5, 6, True),
        ("gt", 5, 5, False),
        ("gte", 5, 5, True),
        ("lt", 5, 4, True),
        ("lte", 5, 6, False),
        ("in", ["a", "b"], "a", True),
        ("in", "ab", "a", False),
        ("not_in", ["a"], "b", True),
        ("not_in", ["a"], "a", False),
    ],
)
async def test_ops(op: str, threshold: Any, actual: Any, expected: bool) -> None:
    res, _ = await evaluate(lambda s: decide(s, [{"when": {"v": {op: threshold}}, "then": "yes"}], "no"), {"v": actual})
    assert res.branch == ("yes" if expected else "no")


async def test_all_conditions_recorded_no_short_circuit() -> None:
    rule = {"when": {"a": {"eq": 0}, "b": {"gt": 1}}, "then": "x", "label": "both"}
    res, commit = await evaluate(lambda s: decide(s, [rule], "d"), {"a": 1, "b": 2})
    conds = res.evidence.rules[0].conditions
    assert [(c.key, c.result) for c in conds] == [("a", False), ("b", True)]
    assert set(commit.reads) == {"a", "b"}


async def test_first_match_vs_all_match() -> None:
    rules = [{"when": {"v": {"gt": 0}}, "then": "a"}, {"when": {"v": {"gt": 1}}, "then": "b"}]
    d, _ = await evaluate(lambda s: decide(s, rules, "z"), {"v": 5})
    sel, _ = await evaluate(lambda s: select(s, rules), {"v": 5})
    assert d.branches == ("a",) and sel.branches == ("a", "b")
    assert all(r.matched for r in d.evidence.rules)  # every rule evaluated even after the first match


async def test_empty_filter_never_matches() -> None:
    res, _ = await evaluate(lambda s: decide(s, [{"when": {}, "then": "a"}], "d"), {})
    assert res.branch == "d" and res.evidence.default_used


async def test_unknown_op_fails_rule() -> None:
    res, _ = await evaluate(lambda s: decide(s, [{"when": {"v": {"like": 1}}, "then": "a"}], "d"), {"v": 1})
    assert res.branch == "d" and "unknown operator 'like'" in (res.evidence.rules[0].error or "")


async def test_raising_callable_rule_recorded_and_evaluation_continues() -> None:
    def explode(s: Any) -> bool:
        raise RuntimeError("bad rule")

    rules = [{"when": explode, "then": "a", "label": "explodes"}, {"when": lambda s: True, "then": "b"}]
    res, _ = await evaluate(lambda s: decide(s, rules, "d"), {})
    assert res.branch == "b"
    assert res.evidence.rules[0].matched is False
    assert res.evidence.rules[0].error == "RuntimeError: bad rule"


async def test_type_mismatch_compare_is_a_failed_condition_not_a_crash() -> None:
    res, _ = await evaluate(lambda s: decide(s, [{"when": {"v": {"gt": 1}}, "then": "a"}], "d"), {"v": "text"})
    assert res.branch == "d" and "TypeError" in (res.evidence.rules[0].error or "")


async def test_callable_rule_records_keys_it_read() -> None:
    rule = {"when": lambda s: s["score"] > 700 and s.get("vip", False), "then": "fast", "label": "VIP"}
    res, commit = await evaluate(lambda s: decide(s, [rule], "slow"), {"score": 800, "vip": True})
    assert res.branch == "fast"
    assert [i["key"] for i in res.evidence.rules[0].inputs] == ["score", "vip"]
    assert set(commit.reads) == {"score", "vip"}


async def test_missing_key_condition_is_false_and_shown_undefined() -> None:
    res, _ = await evaluate(lambda s: decide(s, [{"when": {"nope": {"eq": 1}}, "then": "a"}], "d"), {})
    assert res.evidence.rules[0].conditions[0].actual == "undefined"


async def test_in_list_over_1000_items_is_a_rule_error() -> None:
    rule = {"when": {"v": {"in": list(range(1001))}}, "then": "a"}
    res, _ = await evaluate(lambda s: decide(s, [rule], "d"), {"v": 1})
    assert res.branch == "d" and "1000" in (res.evidence.rules[0].error or "")


@pytest.mark.parametrize("rules", ["nope", [1], None])
async def test_bad_rules_argument_typed(rules: Any) -> None:
    with pytest.raises(TypeError):
        await evaluate(lambda s: decide(s, rules, "d"), {})


def test_decision_result_is_frozen() -> None:
    assert DecisionResult.model_config.get("frozen") is True
