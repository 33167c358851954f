"""evaluate(): answers, recordings and checks per item, a summary table and a JSON report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from agentfootprint.scale import (
    EvaluationError,
    InProcessExecutor,
    RunOutcome,
    evaluate,
    evaluate_sync,
    expected_in_answer,
)

CALC = "tests.scale.factories:calculator"


def dataset(n: int) -> list[dict[str, Any]]:
    """``n`` sums; every seventh item is asked without the add tool (the model then guesses wrong)."""
    items: list[dict[str, Any]] = []
    for i in range(n):
        item: dict[str, Any] = {"message": f"What is {i} plus {2 * i}?", "expected": f"The sum is {3 * i}."}
        if i % 7 == 0:
            item["ablate"] = ["add"]
        if i % 5 == 0:
            item["identity"] = {"tenant": f"t{i}"}
        items.append(item)
    return items


def polite(item: Mapping[str, Any], outcome: RunOutcome) -> bool:
    return (outcome.answer or "").startswith("Kindly")


def short(item: Mapping[str, Any], outcome: RunOutcome) -> tuple[bool, str | None]:
    n = len(outcome.answer or "")
    return n < 25, None if n < 25 else f"{n} chars"


async def test_an_evaluation_reports_each_item_and_a_summary() -> None:
    report = await evaluate(CALC, dataset(14), checks=[expected_in_answer, polite, short], progress=False)
    assert [i.index for i in report.items] == list(range(14))
    failed = [i.index for i in report.items if not i.passed]
    assert failed == [0, 7]
    assert report.items[1].answer == "Kindly: The sum is 3." and report.items[1].outcome.recording is not None
    assert report.items[7].checks[0].note == "expected 'The sum is 21.'"
    assert [c.model_dump() for c in report.summary.checks] == [
        {"name": "expected_in_answer", "passed": 12, "failed": 2},
        {"name": "polite", "passed": 14, "failed": 0},
        {"name": "short", "passed": 14, "failed": 0},
    ]
    assert (report.summary.total, report.summary.passed, report.summary.failed, report.summary.errors) == (14, 12, 2, 0)
    assert report.summary.pass_rate == pytest.approx(12 / 14)
    assert report.items[5].outcome.recording is not None
    assert report.items[5].outcome.recording["snapshot"]["state"]["run"]["identity"] == {"tenant": "t5"}


async def test_the_report_prints_as_a_table_and_serializes_to_json() -> None:
    report = await evaluate(CALC, dataset(3), progress=False)
    text = str(report)
    assert "expected_in_answer (2/3)" in text and "2/3 passed" in text and "What is 1 plus 2?" in text
    data = json.loads(report.to_json())
    assert data["summary"]["passed"] == 2 and data["items"][1]["outcome"]["recording"]["format"]
    slim = json.loads(report.to_json(recordings=False))
    assert "recording" not in slim["items"][1]["outcome"]
    assert report.failures[0].index == 0


async def test_errors_and_bad_checks_fail_items_without_stopping_the_batch() -> None:
    def boom(item: Mapping[str, Any], outcome: RunOutcome) -> bool:
        raise ValueError("token=abc123456 broke")

    def wrong_type(item: Mapping[str, Any], outcome: RunOutcome) -> Any:
        return "yes"

    report = await evaluate("tests.scale.factories:broken", [{"message": "x"}], checks=[boom, wrong_type, boom])
    (item,) = report.items
    assert not item.passed and item.outcome.error is not None and report.summary.errors == 1
    assert [c.name for c in item.checks] == ["boom", "wrong_type", "boom#2"]
    assert item.checks[0].note == "check raised ValueError: token=[redacted] broke"
    assert item.checks[1].note is not None and "not bool" in item.checks[1].note


def test_a_bad_dataset_is_refused_by_index() -> None:
    with pytest.raises(EvaluationError, match=r"dataset\[1\]"):
        evaluate_sync(CALC, [{"message": "ok"}, {"text": "no message"}])
    with pytest.raises(EvaluationError, match=r"dataset\[0\]"):
        evaluate_sync(CALC, [{"message": "ok", "identity": "alice"}])
    with pytest.raises(EvaluationError):
        evaluate_sync(CALC, {"message": "not a list"})  # type: ignore[arg-type]
    with pytest.raises(EvaluationError):
        evaluate_sync(CALC, [{"message": "ok"}], checks=["not callable"])


def test_without_expected_there_are_no_default_checks() -> None:
    report = evaluate_sync(CALC, [{"message": "What is 1 plus 1?", "seed": 7}], executor=InProcessExecutor(2))
    assert report.items[0].checks == [] and report.items[0].passed
    assert report.items[0].outcome.recording is not None
    assert report.items[0].outcome.recording["snapshot"]["state"]["llm_call"]["seed"] == 7
    assert report.executor == "InProcessExecutor(concurrency=2)"
