"""Two Parallel branches asking a person at once: one checkpoint, answered by branch id, on a fresh composition."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentfootprint import Parallel, Sequence
from agentfootprint.flow import PendingAnswersError
from tests.compose._support import asker, echo, witness


def planning(seen: list[tuple[str, Any]] | None = None) -> Parallel:
    builder = (
        Parallel.create("plan")
        .branch("budget", asker("budget", "Budget?"))
        .branch("deadline", asker("deadline", "Deadline?"))
        .branch("notes", echo("N") if seen is None else witness("notes", seen))
    )
    return builder.merge_with(lambda ans: " | ".join(f"{k}={v}" for k, v in ans.items())).build()


def roundtrip(value: Any) -> Any:
    return json.loads(json.dumps(value))


async def test_both_questions_are_pending_in_one_checkpoint_and_answered_by_branch() -> None:
    paused = await planning().run("plan the launch", identity={"tenant": "acme"})
    assert paused.status == "paused"
    assert paused.questions == {"budget": "Budget?", "deadline": "Deadline?"}
    assert paused.question == "Budget?"
    done = await planning().resume(roundtrip(paused.checkpoint), {"budget": "100", "deadline": "May"})
    assert done.status == "completed" and done.run_id == paused.run_id
    assert done.answer == "budget=order 100 | deadline=order May | notes=N(plan the launch)"


async def test_answer_one_now_and_the_other_later() -> None:
    paused = await planning().run("plan")
    half = await planning().resume(roundtrip(paused.checkpoint), {"deadline": "May"})
    assert half.status == "paused" and half.questions == {"budget": "Budget?"} and half.question == "Budget?"
    done = await planning().resume(roundtrip(half.checkpoint), {"budget": "100"})
    assert done.answer == "budget=order 100 | deadline=order May | notes=N(plan)"


async def test_members_serve_the_paused_run_on_every_leg() -> None:
    seen: list[tuple[str, Any]] = []
    paused = await planning(seen).run("plan", identity={"tenant": "acme", "principal": "dana"})
    await planning().resume(roundtrip(paused.checkpoint), {"budget": "1", "deadline": "2"})
    assert [(r, i.tenant, i.principal) for r, i in seen] == [(paused.run_id, "acme", "dana")]


async def test_a_plain_answer_to_several_questions_is_refused_with_the_pending_ids() -> None:
    paused = await planning().run("plan")
    with pytest.raises(PendingAnswersError) as info:
        await planning().resume(roundtrip(paused.checkpoint), "100")
    assert info.value.code == "ERR_PENDING_ANSWERS" and info.value.pending == ["budget", "deadline"]
    with pytest.raises(PendingAnswersError, match="not pending"):
        await planning().resume(roundtrip(paused.checkpoint), {"notes": "x"})


async def test_pending_questions_inside_a_nested_parallel_surface_through_a_sequence() -> None:
    pipeline = Sequence.create("outer").step("plan", planning()).step("write", echo("W")).build()
    paused = await pipeline.run("launch")
    assert paused.questions == {"budget": "Budget?", "deadline": "Deadline?"}
    fresh = Sequence.create("outer").step("plan", planning()).step("write", echo("W")).build()
    done = await fresh.resume(roundtrip(paused.checkpoint), {"budget": "1", "deadline": "2"})
    assert done.answer == "W(budget=order 1 | deadline=order 2 | notes=N(launch))"
