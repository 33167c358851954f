"""Decision evidence is built directly: every record equals what validating its given fields builds (values, field
order and fields-set), for any rules, including hostile ones."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentfootprint.flow import DecisionResult, RedactionPolicy, decide, flow_chart, select


def _same_as_validated(model: BaseModel) -> None:
    """Rebuilt through validation from exactly the fields it was given, it is the same record."""
    given_fields = {name: getattr(model, name) for name in model.model_fields_set}
    again = type(model)(**given_fields)  # fields not given keep their defaults (a list a rule filled in place aside)
    assert {k: again.__dict__[k] for k in given_fields} == given_fields
    assert list(again.__dict__) == list(model.__dict__)
    assert again.model_fields_set == model.model_fields_set
    assert type(model).model_validate(model.model_dump()).model_dump_json() == model.model_dump_json()
    assert type(model).__pydantic_fields__.keys() == model.__dict__.keys()
    for value in model.__dict__.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                _same_as_validated(item)


OPS = st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte", "in", "not_in", "bogus"])
THRESHOLDS = st.one_of(st.integers(-2, 2), st.text(max_size=2), st.lists(st.integers(0, 2), max_size=3), st.none())
WHEN = st.dictionaries(
    st.sampled_from(["n", "s", "gone", "secret", 3]),
    st.one_of(st.dictionaries(OPS, THRESHOLDS, max_size=2), st.just("x")),
    max_size=3,
)
RULES = st.lists(
    st.fixed_dictionaries(
        {"when": st.one_of(WHEN, st.just(lambda s: s["n"] > 0)), "then": st.sampled_from(["a", "b", "", None, 5])},
        optional={"label": st.text(max_size=3)},
    ),
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(RULES, st.sampled_from(["d", None, 7]), st.booleans())
async def test_decide_and_select_evidence_equals_the_validated_records(
    rules: list[dict[str, Any]], default: Any, choose_all: bool
) -> None:
    out: list[Any] = []

    def stage(scope: Any) -> None:
        try:
            out.append(select(scope, rules) if choose_all else decide(scope, rules, default))
        except Exception as exc:  # a default pydantic refuses is refused as before
            out.append(exc)

    state = {"n": 1, "s": "x", "secret": 2}
    await flow_chart("S", stage, id="s").build().run(state, redaction=RedactionPolicy.of(["secret"]))
    result = out[0]
    if default == 7 and not choose_all:
        assert type(result).__name__ == "ValidationError"
        return
    assert isinstance(result, DecisionResult)
    _same_as_validated(result)


async def test_exact_evidence_of_a_matched_filter_rule() -> None:
    out: list[DecisionResult] = []

    def stage(scope: Any) -> None:
        out.append(decide(scope, [{"when": {"n": {"gt": 0, "in": [1, 2]}}, "then": "go", "label": "L"}], "stop"))

    await flow_chart("S", stage, id="s").build().run({"n": 1})
    assert out[0].branch == "go"
    assert out[0].evidence.model_dump(mode="json") == {
        "kind": "decide",
        "rules": [
            {
                "index": 0,
                "type": "filter",
                "branch": "go",
                "label": "L",
                "matched": True,
                "conditions": [
                    {"key": "n", "op": "gt", "threshold": 0, "actual": "1", "result": True, "redacted": False},
                    {"key": "n", "op": "in", "threshold": [1, 2], "actual": "1", "result": True, "redacted": False},
                ],
                "inputs": [],
                "error": None,
            }
        ],
        "chosen": ["go"],
        "default": "stop",
        "default_used": False,
    }
    assert out[0].evidence.rules[0].model_fields_set == {"index", "type", "branch", "label", "matched"}
