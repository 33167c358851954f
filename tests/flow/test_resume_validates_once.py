"""A resume validates its checkpoint once: ``chart.resume`` takes what ``chart.load_checkpoint`` returned as it is,
and validates anything else (a JSON mapping, a checkpoint loaded for another chart, a copy built elsewhere)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.flow import FlowChart, InvalidCheckpointError, flow_chart, pause
from agentfootprint.flow import _checkpoint as checkpoint_module
from agentfootprint.flow.pause import FlowCheckpoint


def approval_chart(last: str = "done") -> FlowChart:
    def ask(s: Any) -> None:
        s["answer"] = pause({"question": "approve?"})

    return (
        flow_chart("Seed", lambda s: s.set("amount", 10), id="seed")
        .then("Ask", ask, id="ask")
        .then("Done", lambda s: f"{s['answer']}:{s['amount']}", id=last)
        .build()
    )


@functools.cache
def _paused_text() -> str:
    r = approval_chart().run_sync()
    assert r.checkpoint is not None
    return json.dumps(r.checkpoint)


@pytest.fixture(scope="module", autouse=True)
def _pause_once() -> None:
    _paused_text()  # taken outside any event loop, once


def paused_json() -> dict[str, Any]:
    cp: dict[str, Any] = json.loads(_paused_text())
    return cp


class Count:
    """How many times the engine validated a checkpoint: pydantic's model validation and the chart's log check."""

    def __init__(self) -> None:
        self.models = 0
        self.logs = 0


@pytest.fixture
def count(monkeypatch: pytest.MonkeyPatch) -> Iterator[Count]:
    seen = Count()
    validate, check_log = FlowCheckpoint.model_validate, checkpoint_module.check_log

    def counting_validate(*args: Any, **kwargs: Any) -> FlowCheckpoint:
        seen.models += 1
        return validate(*args, **kwargs)

    def counting_check_log(*args: Any, **kwargs: Any) -> None:
        seen.logs += 1
        check_log(*args, **kwargs)

    monkeypatch.setattr(FlowCheckpoint, "model_validate", staticmethod(counting_validate))
    monkeypatch.setattr(checkpoint_module, "check_log", counting_check_log)
    yield seen


async def test_a_loaded_checkpoint_is_resumed_without_a_second_validation(count: Count) -> None:
    chart = approval_chart()
    loaded = chart.load_checkpoint(paused_json())
    assert (count.models, count.logs) == (1, 1)
    r = await chart.resume(loaded, "yes")
    assert r.output == "yes:10"
    assert (count.models, count.logs) == (1, 1)


async def test_a_json_mapping_is_validated_once(count: Count) -> None:
    r = await approval_chart().resume(paused_json(), "yes")
    assert r.output == "yes:10"
    assert (count.models, count.logs) == (1, 1)


async def test_a_loaded_checkpoint_resumes_like_its_json() -> None:
    data = paused_json()
    chart = approval_chart()
    from_json = await chart.resume(data, "ok")
    from_object = await chart.resume(chart.load_checkpoint(data), "ok")
    assert from_object.output == from_json.output == "ok:10"
    assert [c.runtime_stage_id for c in from_object.commit_log] == [c.runtime_stage_id for c in from_json.commit_log]
    assert from_object.state == from_json.state


async def test_a_checkpoint_loaded_for_another_chart_is_validated_and_refused(count: Count) -> None:
    data = paused_json()
    loaded = approval_chart().load_checkpoint(data)
    other = approval_chart(last="finish")  # another chart: another fingerprint
    with pytest.raises(InvalidCheckpointError) as err:
        await other.resume(loaded, "yes")
    assert err.value.field == "chart_fingerprint"
    assert count.models == 2


async def test_a_changed_copy_of_a_loaded_checkpoint_is_validated_again(count: Count) -> None:
    chart = approval_chart()
    loaded = chart.load_checkpoint(paused_json())
    forged = loaded.model_copy(update={"counter": 0, "visits": {}})  # a new object: not what the loader returned
    forged.commit_log.append(forged.commit_log[0])
    with pytest.raises(InvalidCheckpointError) as err:
        await chart.resume(forged, "yes")
    assert err.value.field == "commit_log.2.idx"
    assert count.models == 2


def test_a_hand_built_checkpoint_is_validated() -> None:
    chart = approval_chart()
    built = FlowCheckpoint.model_validate(paused_json())  # shape-checked, but never checked against a chart
    assert not checkpoint_module.loaded_for(built, chart)
    assert checkpoint_module.loaded_for(chart.load_checkpoint(built), chart)


def test_hostile_values_in_place_of_a_checkpoint_are_refused_by_name() -> None:
    chart = approval_chart()
    for hostile in (None, 42, "checkpoint", [paused_json()], object()):
        with pytest.raises(InvalidCheckpointError) as err:
            chart.resume_sync(hostile, "yes")  # type: ignore[arg-type]
        assert err.value.field == "checkpoint"


@settings(max_examples=25, deadline=None)
@given(answer=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20), st.lists, max_leaves=8))
def test_any_json_answer_resumes_the_same_from_the_object_and_from_json(answer: Any) -> None:
    data = paused_json()
    chart = approval_chart()
    from_json = chart.resume_sync(data, answer)
    from_object = chart.resume_sync(chart.load_checkpoint(data), answer)
    assert from_object.output == from_json.output == f"{answer}:10"
