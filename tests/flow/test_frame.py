"""The running stage as recorders see it (ids, name, namespace, visit, run) and the error text stages leave."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agentfootprint.flow import flow_chart
from agentfootprint.flow._frame import MAX_ERROR_TEXT, current_frame, error_text


class Frames:
    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_emit(self, frame: Any, name: str, payload: Any) -> None:
        self.seen.append(
            (name, frame.stage_id, frame.stage_name, frame.runtime_stage_id, frame.namespace, frame.visit, frame.run_id)
        )


async def test_recorders_see_the_running_stage_in_the_root_and_in_a_subflow() -> None:
    inner = flow_chart("Leaf Work", lambda s: s.emit("inner"), id="leaf").build()
    chart = (
        flow_chart("Top Stage", lambda s: s.emit("top"), id="top")
        .subflow("sub", inner)
        .then("Again", lambda s: s.emit("again"), id="again")
        .build()
    )
    rec = Frames()
    r = await chart.run(recorders=[rec], run_id="run-1")
    assert r.run_id == "run-1"
    assert rec.seen == [
        ("top", "top", "Top Stage", "top#0", "", 1, "run-1"),
        ("inner", "leaf", "Leaf Work", "sub/leaf#2", "sub", 1, "run-1"),
        ("again", "again", "Again", "again#4", "", 1, "run-1"),
    ]


async def test_a_looping_stage_counts_its_visits_from_one() -> None:
    def tick(s: Any) -> None:
        s["n"] = s.get("n", 0) + 1
        s.emit("tick")
        if s["n"] == 3:
            s.break_("done")

    rec = Frames()
    await flow_chart("Tick", tick, id="tick").loop_to("tick").build().run(recorders=[rec], run_id="r")
    assert [(rid, visit) for _, _, _, rid, _, visit, _ in rec.seen] == [("tick#0", 1), ("tick#1", 2), ("tick#2", 3)]


def test_no_frame_outside_a_stage() -> None:
    assert current_frame() is None


def test_error_text_names_the_type_and_the_message() -> None:
    assert error_text(ValueError("bad input")) == "ValueError: bad input"
    assert error_text(KeyError()) == "KeyError"
    assert error_text(RuntimeError("")) == "RuntimeError"


@given(st.text(max_size=700))
def test_error_text_is_cut_at_its_limit(message: str) -> None:
    text = error_text(ValueError(message))
    whole = f"ValueError: {message}" if message else "ValueError"
    assert text == whole[:MAX_ERROR_TEXT] and MAX_ERROR_TEXT == 500
