"""Issue 35 (proofs become tests): a localization frozen with the reruns that proved it, replayed offline through
the agent on the recorded responses, exported as a pytest file; recordings exported as a JSONL dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, ask_human, define_fact, define_tool
from agentfootprint.explain import (
    CassetteMissError,
    ExportTestError,
    LocalizationReport,
    Proof,
    export_dataset,
    export_test,
    freeze_proof,
    load_proof,
    load_recording,
    localize_context_bug,
    recording_of,
    replay_proof,
    replay_proof_sync,
    save_recording,
)
from agentfootprint.explain._export_test import request_digest
from agentfootprint.providers import LLMRequest, mock

WRONG, RIGHT = "APPROVED", "DECLINED"
_ASK = {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "which?"}}]}


def _crm(text: str = "Case 17: open.") -> Any:
    return define_tool(
        name="crm", description="Look up a case.", input_schema={"type": "object"}, execute=lambda a, c: text
    )


def _respond(req: LLMRequest) -> Any:
    """Call the CRM once, then approve only when the planted memo is in the context."""
    if not any(m.role == "tool" for m in req.messages):
        return {"tool_calls": [{"id": "c1", "name": "crm", "args": {"case": 17}}]}
    seen = req.system_prompt + "\n".join(m.content for m in req.messages)
    return WRONG if "memo kx42" in seen else RIGHT


def build_agent(facts: tuple[str, ...] = ("policy", "memo")) -> Agent:
    builder = Agent.create(provider=mock(respond=_respond), model="scripted", name="cases").tool(_crm())
    texts = {"policy": "Decline outside the window.", "memo": "Per memo kx42 the case is flagged.", "x": "Extra."}
    for f in facts:
        builder = builder.fact(define_fact(id=f, data=texts[f]))
    return builder.build()


def _flipped(a: str, b: str) -> bool:
    return (WRONG in a) != (WRONG in b)


async def _proof() -> tuple[Proof, Any, LocalizationReport]:
    run = await build_agent().run("Should case 17 be approved?", seed=7)
    report = await localize_context_bug(build_agent(), run=run, outcome_changed=_flipped, progress=False)
    return await freeze_proof(report, run, factory="m:f", outcome_changed=_flipped), run, report


async def test_request_digest_is_the_receipts_digest_of_every_recorded_call() -> None:
    seen: list[str] = []

    def respond(req: LLMRequest) -> Any:
        seen.append(request_digest(req))
        return _respond(req)

    run = await Agent.create(provider=mock(respond=respond), model="m").tool(_crm()).build().run("go", seed=3)
    snap = run.last_snapshot()
    assert snap is not None
    assert [r["request_digest"] for r in snap.state["model_receipts"]] == seen and len(seen) == 2


async def test_a_frozen_proof_holds_with_the_culprit_in_and_flips_without_it() -> None:
    proof, run, report = await _proof()
    assert [c.ids for c in report.confirmed_sets] == [("memo",)]
    assert [c.ids for c in proof.culprit_sets] == [["memo"]]
    frozen = proof.culprit_sets[0]
    assert (frozen.seed, frozen.answer_with, frozen.answer_without, frozen.held) == (7, WRONG, RIGHT, None)
    assert proof.answer == run.answer == WRONG and proof.input.message == "Should case 17 be approved?"
    held = await replay_proof(proof, build_agent())
    assert held.answer == WRONG
    flipped = await replay_proof(proof, build_agent(), without=["memo"], seed=frozen.seed)
    assert flipped.answer == RIGHT


async def test_replay_serves_every_call_from_the_recording_and_never_the_agents_provider() -> None:
    proof, _, _ = await _proof()

    def refuse(req: LLMRequest) -> Any:
        raise AssertionError("the live provider was called")

    agent = Agent.create(provider=mock(respond=refuse), model="scripted", name="cases").tool(_crm())
    agent = agent.fact(define_fact(id="policy", data="Decline outside the window."))
    agent = agent.fact(define_fact(id="memo", data="Per memo kx42 the case is flagged.")).build()
    result = await replay_proof(proof, agent)
    assert result.answer == WRONG


async def test_a_changed_agent_or_seed_is_a_cassette_miss_not_a_guess() -> None:
    proof, _, _ = await _proof()
    with pytest.raises(CassetteMissError) as err:
        await replay_proof(proof, build_agent(("policy", "memo", "x")))  # one more source: another request
    assert err.value.code == "ERR_EXPORT_CASSETTE_MISS" and "model call 1" in str(err.value)
    with pytest.raises(CassetteMissError):
        await replay_proof(proof, build_agent(), seed=8)
    with pytest.raises(CassetteMissError):
        await replay_proof(proof, build_agent(), without=["policy"])  # a removal nobody recorded


def test_a_recording_replays_its_own_answer(tmp_path: Path) -> None:
    run = build_agent().run_sync("Should case 17 be approved?", seed=7)
    rec = load_recording(save_recording(run, tmp_path / "run.json"))
    assert replay_proof_sync(rec, build_agent()).answer == WRONG
    assert replay_proof_sync(recording_of(run), build_agent()).answer == WRONG


async def test_proofs_save_and_load_and_recordings_load_as_recordings(tmp_path: Path) -> None:
    proof, run, _ = await _proof()
    loaded = load_proof(proof.save(tmp_path / "proof.json"))
    assert loaded == proof
    rec = load_proof(save_recording(run, tmp_path / "run.json"))
    assert rec == recording_of(run)


async def test_the_exported_file_names_the_culprits_and_embeds_the_proof(tmp_path: Path) -> None:
    proof, _, _ = await _proof()
    path = export_test(proof, tmp_path / "test_case.py", factory="cases_agent:build")
    text = path.read_text()
    assert "FACTORY = 'cases_agent:build'" in text and "CULPRITS: list[list[str]] = [['memo']]" in text
    assert "Removing {memo} flipped the answer" in text
    compile(text, str(path), "exec")
    namespace: dict[str, Any] = {}
    exec(compile(text.split("\n\ndef _agent")[0], str(path), "exec"), namespace)
    assert namespace["PROOF"] == proof.model_copy(update={"factory": "cases_agent:build"})


async def test_freeze_refuses_what_is_not_a_proof() -> None:
    _, run, report = await _proof()
    with pytest.raises(ExportTestError) as err:
        await freeze_proof("report", run)
    assert err.value.code == "ERR_EXPORT_INPUT"
    with pytest.raises(ExportTestError) as err:
        await freeze_proof(report, recording_of(run))
    assert err.value.code == "ERR_EXPORT_INPUT"
    other = await build_agent(("policy",)).run("Should case 17 be approved?", seed=7)
    with pytest.raises(ExportTestError) as err:
        await freeze_proof(report, other)
    assert err.value.code == "ERR_EXPORT_MISMATCH"
    never = report.model_copy(update={"culprit_sets": [report.culprit_sets[0].model_copy(update={"ids": ("policy",)})]})
    with pytest.raises(ExportTestError) as err:
        await freeze_proof(never, run, outcome_changed=_flipped, seeds=3)
    assert err.value.code == "ERR_EXPORT_NO_FLIP"
    asking = Agent.create(provider=mock(replies=[_ASK, "done"]), model="m").tool(ask_human).build()
    paused = await asking.run("go")
    with pytest.raises(ExportTestError) as err:  # a localization's reruns do not resume pauses
        await freeze_proof(report.model_copy(update={"answer": None}), paused)
    assert err.value.code == "ERR_EXPORT_PAUSED"


async def test_export_needs_a_factory() -> None:
    proof, _, _ = await _proof()
    for bad in (None, "", "nocolon", "a:b:c", ":f", "m:"):
        with pytest.raises(ExportTestError) as err:
            export_test(proof.model_copy(update={"factory": None}), "/nonexistent/x.py", factory=bad)
        assert err.value.code == "ERR_EXPORT_FACTORY"


async def test_the_dataset_holds_one_row_per_run_with_input_answer_and_sources(tmp_path: Path) -> None:
    a = await build_agent().run("Should case 17 be approved?", seed=7)
    b = await build_agent(("policy",)).run("And case 18?", seed=1)
    path = export_dataset([recording_of(a), recording_of(b)], tmp_path / "runs.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["run_id"], r["input"], r["answer"]) for r in rows] == [
        (a.run_id, "Should case 17 be approved?", WRONG),
        (b.run_id, "And case 18?", RIGHT),
    ]
    ids = [{s["id"] for s in r["sources"]} for r in rows]
    assert {"policy", "memo", "crm#1"} <= ids[0] and "memo" not in ids[1] and "policy" in ids[1]
    memo = next(s for s in rows[0]["sources"] if s["id"] == "memo")
    assert memo == {"id": "memo", "kind": "fact", "text": "Per memo kx42 the case is flagged."}
    assert rows[0]["agent"] == "cases"


# -------------------------------------------------------------------------------------------------- property


@settings(max_examples=15, deadline=None)
@given(
    facts=st.lists(st.sampled_from(["policy", "memo", "x"]), unique=True, min_size=1, max_size=3),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_any_recorded_run_replays_exactly_and_any_removal_misses(facts: list[str], seed: int) -> None:
    """Replaying a run's recording through the same agent gives its answer with every call from the cassette; the
    same agent without any one of its sources sends a request the recording never saw."""
    run = build_agent(tuple(facts)).run_sync("Should case 17 be approved?", seed=seed)
    rec = recording_of(run)
    assert replay_proof_sync(rec, build_agent(tuple(facts))).answer == run.answer
    with pytest.raises(CassetteMissError):
        replay_proof_sync(rec, build_agent(tuple(facts)), without=[facts[0]])


# ---------------------------------------------------------------------------------------------------- hostile


async def test_hostile_proof_files_and_arguments_are_refused_by_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for body in ("{", "[]", '{"format": "agentfootprint.proof"}', '{"format": "agentfootprint.proof", "input": 3}'):
        bad.write_text(body)
        with pytest.raises(ExportTestError) as err:
            load_proof(bad)
        assert err.value.code == "ERR_EXPORT_INPUT" and "agentfootprint.proof" not in str(err.value)
    with pytest.raises(ExportTestError):
        load_proof(tmp_path / "missing.json")
    proof, _, _ = await _proof()
    for without in ("memo", [""], [3]):
        with pytest.raises(ExportTestError) as err:
            await replay_proof(proof, build_agent(), without=without)  # type: ignore[arg-type]
        assert err.value.code == "ERR_EXPORT_WITHOUT"
    with pytest.raises(ExportTestError) as err:
        await replay_proof(proof, object())
    assert err.value.code == "ERR_EXPORT_AGENT"
    with pytest.raises(ExportTestError) as err:
        await replay_proof("proof.json", build_agent())  # type: ignore[arg-type]
    assert err.value.code == "ERR_EXPORT_INPUT"
    with pytest.raises(ExportTestError) as err:
        export_test(proof, tmp_path / "no-such-dir" / "t.py")
    assert err.value.code == "ERR_EXPORT_OUTPUT"
    tampered = proof.recording.model_copy(deep=True)
    call = next(c for c in tampered.snapshot.commit_log if c.stage_id == "call-llm")
    call.redacted_paths.append("last_response")
    with pytest.raises(ExportTestError) as err:
        await replay_proof(tampered, build_agent())
    assert err.value.code == "ERR_EXPORT_NOT_REPLAYABLE"
    asking = Agent.create(provider=mock(replies=[_ASK, "done"]), model="m").tool(ask_human).build()
    paused = await asking.run("go")
    assert paused.checkpoint is not None
    resumed = recording_of(await asking.resume(paused.checkpoint, "left"))
    alone = resumed.model_copy(deep=True)  # a resumed leg cut off from the legs before it
    alone.snapshot.commit_log[:] = [c for c in alone.snapshot.commit_log if c.stage_id != "seed"]
    with pytest.raises(ExportTestError) as err:
        await replay_proof(alone, asking)
    assert err.value.code == "ERR_EXPORT_PAUSED"
    altered = proof.recording.model_copy(deep=True)
    call = next(c for c in altered.snapshot.commit_log if c.stage_id == "call-llm")
    write = next(w for w in call.writes if w.path == "last_response")
    write.value["content"] = "forged"
    with pytest.raises(ExportTestError) as err:
        await replay_proof(altered, build_agent())
    assert err.value.code == "ERR_EXPORT_TAMPERED"
