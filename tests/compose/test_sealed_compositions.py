"""Sealed composition checkpoints (API.md §7 applied to compositions): ``X.create(..., checkpoint_key=...)`` seals
every pause checkpoint a Sequence, Parallel, Conditional, Loop, Graph or Workflow hands out, and ``resume`` (or
``resume(checkpoint_key=...)``) refuses a missing or wrong seal with ``InvalidCheckpointError(field="seal")`` before
any member runs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, Conditional, Graph, Loop, Parallel, Sequence, Workflow, ask_human
from agentfootprint.agent import CheckpointSealError
from agentfootprint.compose import Composition, CompositionBuildError, debate
from agentfootprint.flow import InvalidCheckpointError
from agentfootprint.providers import LLMRequest, mock

KEY = "composition key"


class Calls:
    def __init__(self) -> None:
        self.n = 0


def asker(calls: Calls) -> Agent:
    def respond(req: LLMRequest) -> Any:
        calls.n += 1
        if req.messages[-1].role == "user":
            return {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "Which order?"}}]}
        return f"order {req.messages[-1].content}"

    return Agent.create(provider=mock(respond=respond), model="m").tool(ask_human).build()


Build = Callable[[Calls, Any], Composition]

BUILDS: dict[str, Build] = {
    "sequence": lambda c, key: Sequence.create(checkpoint_key=key).step("ask", asker(c)).build(),
    "parallel": lambda c, key: (
        Parallel.create(checkpoint_key=key)
        .branch("ask", asker(c))
        .merge_with(lambda answers: " | ".join(answers.values()))
        .build()
    ),
    "conditional": lambda c, key: (
        Conditional.create(checkpoint_key=key)
        .when("ask", lambda message: True, asker(c))
        .otherwise("other", asker(c))
        .build()
    ),
    "loop": lambda c, key: Loop.create(checkpoint_key=key).repeat(asker(c)).times(1).build(),
    "graph": lambda c, key: Graph.create(checkpoint_key=key).node("ask", asker(c)).build(),
    "workflow": lambda c, key: Workflow.create(checkpoint_key=key).step("ask", asker(c)).build(),
}


@pytest.mark.parametrize("kind", sorted(BUILDS))
async def test_a_keyed_composition_seals_its_pause_and_resumes_it(kind: str) -> None:
    calls = Calls()
    paused = await BUILDS[kind](calls, KEY).run("refund")
    assert paused.status == "paused" and paused.checkpoint is not None
    assert re.fullmatch(r"[0-9a-f]{64}", paused.checkpoint["seal"])
    done = await BUILDS[kind](calls, KEY).resume(json.loads(json.dumps(paused.checkpoint)), "A-1001")
    assert done.status == "completed" and "order A-1001" in done.answer


def _forged(cp: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(cp))
    out["question"] = "Which account number?"
    return out


@pytest.mark.parametrize("kind", sorted(BUILDS))
@pytest.mark.parametrize(
    "edit",
    [
        _forged,
        lambda cp: {k: v for k, v in cp.items() if k != "seal"},
        lambda cp: {**cp, "seal": "0" * 64},
        lambda cp: {**cp, "seal": 7},
        lambda cp: {**cp, "session_id": "someone-else"},
    ],
    ids=["edited", "no-seal", "wrong-seal", "not-a-seal", "session"],
)
async def test_a_missing_or_wrong_seal_is_refused_before_any_member_runs(kind: str, edit: Any) -> None:
    calls = Calls()
    paused = await BUILDS[kind](calls, KEY).run("refund")
    before = calls.n
    with pytest.raises(InvalidCheckpointError) as err:
        await BUILDS[kind](calls, KEY).resume(edit(paused.checkpoint), "A-1001")
    assert err.value.field == "seal" and err.value.code == "ERR_CHECKPOINT_SEAL"
    assert "account" not in str(err.value) and "someone" not in str(err.value)
    assert calls.n == before


async def test_a_checkpoint_sealed_under_another_key_is_refused() -> None:
    calls = Calls()
    paused = await BUILDS["sequence"](calls, "another key").run("refund")
    with pytest.raises(CheckpointSealError):
        await BUILDS["sequence"](calls, KEY).resume(paused.checkpoint or {}, "A-1001")


async def test_resume_takes_the_key_for_a_composition_built_without_one() -> None:
    calls = Calls()
    paused = await BUILDS["sequence"](calls, None).run("refund", checkpoint_key=KEY)
    assert paused.checkpoint is not None and "seal" in paused.checkpoint
    with pytest.raises(CheckpointSealError):
        await BUILDS["sequence"](calls, None).resume(_forged(paused.checkpoint), "x", checkpoint_key=KEY)
    done = await BUILDS["sequence"](calls, None).resume(paused.checkpoint, "A-1001", checkpoint_key=KEY)
    assert done.answer == "order A-1001"


async def test_an_unkeyed_composition_does_not_check_seals_and_hands_out_none() -> None:
    calls = Calls()
    paused = await BUILDS["sequence"](calls, None).run("refund")
    assert paused.checkpoint is not None and "seal" not in paused.checkpoint
    done = await BUILDS["sequence"](calls, None).resume({**paused.checkpoint, "seal": "0" * 64}, "A-1001")
    assert done.answer == "order A-1001"


async def test_the_key_survives_without_and_a_second_pause_is_sealed_too() -> None:
    calls = Calls()
    seq = Sequence.create(checkpoint_key=KEY).step("one", asker(calls)).step("two", asker(calls)).build()
    slim = seq.without()
    assert slim.checkpoint_key is seq.checkpoint_key
    first = await seq.run("refund")
    second = await seq.resume(first.checkpoint or {}, "A-1")
    assert second.status == "paused" and second.checkpoint is not None
    with pytest.raises(CheckpointSealError):
        await seq.resume(_forged(second.checkpoint), "A-2")
    done = await seq.resume(second.checkpoint, "A-2")
    assert done.answer == "order A-2"


@pytest.mark.parametrize("key", ["", b"", 3, ["k"]])
def test_a_key_that_is_not_one_is_refused_at_build(key: Any) -> None:
    with pytest.raises(CompositionBuildError):
        Sequence.create(checkpoint_key=key)


async def test_a_pattern_is_sealed_through_run_and_resume() -> None:
    calls = Calls()
    composed = debate(asker(calls), asker(calls), asker(calls))
    paused = await composed.run("topic", checkpoint_key=KEY)
    with pytest.raises(CheckpointSealError):
        await composed.resume({**(paused.checkpoint or {}), "seal": None}, "x", checkpoint_key=KEY)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
async def test_property_no_edit_of_a_sealed_composition_checkpoint_is_accepted(data: st.DataObject) -> None:
    calls = Calls()
    paused = await BUILDS["sequence"](calls, KEY).run("refund")
    cp = json.loads(json.dumps(paused.checkpoint))
    field = data.draw(st.sampled_from(sorted(k for k in cp if k != "seal")))
    value = data.draw(st.one_of(st.text(max_size=12), st.integers(), st.none(), st.just({})))
    if cp[field] == value:
        return
    before = calls.n
    with pytest.raises(CheckpointSealError):
        await BUILDS["sequence"](calls, KEY).resume({**cp, field: value}, "A-1001")
    assert calls.n == before
