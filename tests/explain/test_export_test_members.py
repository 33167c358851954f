"""Issue 35 (proofs become tests) for compositions and pause chains: a composition's run, and a run that paused and
was resumed, replay offline from their recordings (pauses answered as the person did) and export to tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import RunResult
from agentfootprint.compose import Loop, Parallel, Sequence
from agentfootprint.explain import (
    CassetteMissError,
    ExportTestError,
    Proof,
    export_test,
    freeze_proof,
    localize_context_bug,
    recording_of,
    replay_proof,
)
from agentfootprint.explain._export_test import proof_of_recording
from agentfootprint.providers import mock
from tests.explain.test_export_test import RIGHT, WRONG, _flipped, build_agent
from tests.explain.test_export_test_ctxbug import _pytest
from tests.explain.test_fork import ASK, World

QUESTION = "Should case 17 be approved?"


def pipeline() -> Sequence:
    """The first step knows the policy only; the second also reads the planted memo and decides."""
    return Sequence.create("cases").step("first", build_agent(("policy",))).step("decide", build_agent()).build()


async def chain(runner: Any, message: str = "go") -> list[RunResult]:
    legs = [await runner.run(message, seed=7)]
    while legs[-1].paused:
        legs.append(await runner.resume(legs[-1].checkpoint or {}, f"yes {len(legs)}"))
    return legs


async def test_a_composition_recording_replays_its_answer_offline_and_a_removal_misses() -> None:
    run = await pipeline().run(QUESTION, seed=7)
    assert run.answer == WRONG
    proof = proof_of_recording(recording_of(run))
    assert (proof.input.message, proof.input.seed, proof.status) == (QUESTION, 7, "completed")
    replayed = await replay_proof(proof, pipeline())
    assert replayed.answer == WRONG
    with pytest.raises(CassetteMissError):
        await replay_proof(proof, pipeline(), without=["memo"])


async def test_a_composition_localization_freezes_and_its_proof_holds_and_flips() -> None:
    seq = pipeline()
    run = await seq.run(QUESTION, seed=7)
    report = await localize_context_bug(seq, run=run, outcome_changed=_flipped, progress=False)
    proof = await freeze_proof(report, run, factory="m:f", outcome_changed=_flipped)
    assert [c.ids for c in proof.culprit_sets] == [["memo"]]
    frozen = proof.culprit_sets[0]
    assert (frozen.answer_with, frozen.answer_without) == (WRONG, RIGHT)
    held = await replay_proof(proof, pipeline(), seed=frozen.seed)
    flipped = await replay_proof(proof, pipeline(), without=frozen.ids, seed=frozen.seed)
    assert (held.answer, flipped.answer) == (WRONG, RIGHT)


FACTORY = """import sys
sys.path.insert(0, {root!r})
from tests.explain.test_export_test_members import pipeline


def runner():
    return pipeline()
"""


async def test_a_composition_proof_exports_to_a_test_that_passes_offline_and_fails_with_the_culprit_back(
    tmp_path: Path,
) -> None:
    seq = pipeline()
    run = await seq.run(QUESTION, seed=7)
    report = await localize_context_bug(seq, run=run, outcome_changed=_flipped, progress=False)
    proof = await freeze_proof(report, run, outcome_changed=_flipped)
    (tmp_path / "factory_mod.py").write_text(FACTORY.format(root=str(Path(__file__).parents[2])))
    export_test(proof, tmp_path / "test_proof.py", factory="factory_mod:runner")
    passed, failed, log = _pytest(tmp_path)
    assert (passed, failed) == (2, 0), log
    mutated = proof.model_copy(deep=True)  # the culprit changed back in: its removal no longer flips
    mutated.culprit_sets[0].answer_without = WRONG
    (tmp_path / "test_proof.py").unlink()
    export_test(mutated, tmp_path / "test_mutated.py", factory="factory_mod:runner")
    passed, failed, log = _pytest(tmp_path)
    assert (passed, failed) == (1, 1), log


async def test_every_leg_of_a_pause_chain_replays_to_where_it_ended() -> None:
    world = World(["t0", ASK, "t0", ASK], ["t0"], ["policy"])
    agent = world.agent()
    legs = await chain(agent)
    assert [leg.status for leg in legs] == ["paused", "paused", "completed"]
    for leg, tools_run in zip(legs, (1, 2, 2), strict=True):
        proof = proof_of_recording(recording_of(leg))
        assert proof.status == leg.status and proof.answer == leg.answer
        world.reset()
        replayed = await replay_proof(proof, agent)
        assert (replayed.status, replayed.answer, replayed.question) == (leg.status, leg.answer, leg.question)
        assert (world.model_calls, world.tool_runs) == (0, tools_run)  # every model call from the cassette


async def test_a_composition_pause_chain_replays_and_a_foreign_answer_order_is_a_miss() -> None:
    world = World(["t0", ASK], ["t0"], [])
    seq = Sequence.create("s").step("one", world.agent()).step("two", world.agent(system="Two.")).build()
    legs = await chain(seq)
    assert [leg.status for leg in legs] == ["paused", "paused", "completed"]
    final = proof_of_recording(recording_of(legs[-1]))
    world.reset()
    assert (await replay_proof(final, seq)).answer == legs[-1].answer
    assert world.model_calls == 0
    other = Sequence.create("s").step("one", world.agent(system="Other.")).step("two", world.agent()).build()
    with pytest.raises(CassetteMissError):
        await replay_proof(final, other)


async def test_a_composition_that_merges_with_its_own_model_call_is_refused_by_code() -> None:
    world = World(["t0"], ["t0"], [])
    par = (
        Parallel.create("p")
        .branch("x", world.agent())
        .branch("y", world.agent(system="Y."))
        .merge_with_llm(mock(replies=["merged"]), "m", "Merge.")
        .build()
    )
    run = await par.run("go", seed=1)
    with pytest.raises(ExportTestError) as err:
        proof_of_recording(recording_of(run))
    assert err.value.code == "ERR_EXPORT_NOT_REPLAYABLE"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["sequence", "loop", "parallel"]),
    plans=st.lists(st.lists(st.sampled_from(["t0", "t1", ASK]), max_size=3), min_size=1, max_size=3),
)
def test_generated_compositions_and_chains_replay_exactly(kind: str, plans: list[list[str]]) -> None:
    """Any generated composition's recording (pauses included) replays to the same end with no model call."""
    import asyncio

    if kind == "parallel":
        plans = [[s for s in p if s != ASK] for p in plans]
    worlds = [World(p, ["t0", "t1"], ["f1"]) for p in plans]
    agents = [w.agent(system=f"Member {i}.") for i, w in enumerate(worlds)]
    runner: Any
    if kind == "sequence":
        builder = Sequence.create("g")
        for i, a in enumerate(agents):
            builder = builder.step(f"m{i}", a)
        runner = builder.build()
    elif kind == "loop":
        runner = Loop.create("g").repeat(agents[0]).times(len(agents)).build()
    else:
        par = Parallel.create("g")
        for i, a in enumerate(agents):
            par = par.branch(f"m{i}", a)
        runner = par.merge_with(lambda d: " | ".join(d.values())).build()

    async def go() -> None:
        legs = await chain(runner)
        proof = proof_of_recording(recording_of(legs[-1]))
        assert isinstance(Proof.model_validate_json(proof.model_dump_json()), Proof)
        for w in worlds:
            w.reset()
        replayed = await replay_proof(proof, runner)
        assert (replayed.status, replayed.answer) == (legs[-1].status, legs[-1].answer)
        assert sum(w.model_calls for w in worlds) == 0

    asyncio.run(go())
