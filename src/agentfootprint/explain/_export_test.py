"""Proofs become tests: a localization frozen with the recorded runs that proved it (a ``Proof``), replayed offline
through the agent on the recorded model responses, written out as a pytest file; recordings as a JSONL dataset."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentfootprint._sync import run_sync
from agentfootprint.errors import AgentFootprintError, validation_field
from agentfootprint.explain._fork import answered_in_order
from agentfootprint.explain._replay import RecordedMemoryView, ReplayCache, RerunWorld, rerun_agent
from agentfootprint.explain._runs import final_answer_commit
from agentfootprint.explain._targets import as_target
from agentfootprint.explain.recording import Recording, recording_of
from agentfootprint.flow import FlowSnapshot, thaw
from agentfootprint.providers import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers.base import chunks_from_response

PROOF_FORMAT: Literal["agentfootprint.proof"] = "agentfootprint.proof"
_START = hashlib.sha256(b"messages").hexdigest()


class ExportTestError(AgentFootprintError, ValueError):
    """A proof that cannot be frozen, read or replayed; names what was wrong, never the offending value."""

    code = "ERR_EXPORT_TEST"


class CassetteMissError(ExportTestError):
    """The agent sent a model request no recorded run made: the replay cannot answer it offline."""

    code = "ERR_EXPORT_CASSETTE_MISS"


class ProofInput(BaseModel):
    """What the run was given: its message, prior history, identity and seed."""

    message: str
    history: list[dict[str, Any]] = Field(default_factory=list)
    identity: dict[str, Any] | None = None
    seed: int | None = None


class FrozenCulprits(BaseModel):
    """One confirmed culprit set, frozen: at ``seed`` the run with it answers ``answer_with`` and the run without it
    ``answer_without``; both runs' recordings hold the model responses a replay serves."""

    ids: list[str]
    claim: str = ""
    seed: int | None = None
    answer_with: str | None = None
    answer_without: str | None = None
    held: Recording | None = None
    """The run with the culprits in at ``seed`` (None: the proof's own recording is that run)."""
    removed: Recording


class Proof(BaseModel):
    """A recorded run and its confirmed culprit sets, with every recording a replay needs (no provider, no net)."""

    format: Literal["agentfootprint.proof"] = PROOF_FORMAT
    version: Literal[1] = 1
    factory: str | None = None
    """``module:function`` building the agent the test replays (a no-argument function), when known."""
    input: ProofInput
    answer: str | None = None
    status: Literal["completed", "paused"] = "completed"
    """How the recorded run (its last leg) ended: a run that ended paused replays to that same pause."""
    recording: Recording
    culprit_sets: list[FrozenCulprits] = Field(default_factory=list)

    def save(self, path: str | Path) -> Path:
        """Write this proof as JSON (what ``agentfootprint export-test`` reads)."""
        return _write(Path(path), self.model_dump_json(indent=1))

    def recordings(self) -> list[Recording]:
        return [
            self.recording,
            *(r for c in self.culprit_sets for r in (c.held, c.removed) if r is not None),
        ]


def _write(target: Path, text: str) -> Path:
    """Write ``text``; an OS refusal (missing folder, permissions, full disk) is a typed error."""
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportTestError(
            f"cannot write to that path: {exc.strerror or type(exc).__name__}", code="ERR_EXPORT_OUTPUT"
        ) from None
    return target


# -- the cassette: recorded responses by the digest of the exact request ----------------------------------------


def _model_digest(value: Any) -> str:
    from agentfootprint.extensions.receipts import digest

    return digest(value)


def request_digest(request: LLMRequest) -> str:
    """The digest a run's receipt records for ``request`` (system prompt, tools, model, seed, chained messages)."""
    from agentfootprint.extensions.receipts import digest

    running = _START
    for m in request.messages:
        running = hashlib.sha256((running + _model_digest(m.model_dump(mode="json"))).encode()).hexdigest()
    head = {
        "system_prompt": request.system_prompt,
        "tools": [_model_digest(t.model_dump(mode="json")) for t in request.tools],
        "model": request.model,
        "seed": request.seed,
        "messages": running,
    }
    return digest(head)


def _calls(snap: FlowSnapshot) -> Iterable[tuple[dict[str, Any], dict[str, Any]]]:
    """Each applied model call's receipt and recorded response (``model_receipts`` and ``last_response``)."""
    for c in snap.commit_log:
        if c.stage_id != "call-llm" or not c.applied:
            continue
        receipts = next((w.value for w in c.writes if w.path == "model_receipts" and w.verb in ("set", "append")), None)
        response = next((w.value for w in c.writes if w.path == "last_response" and w.verb == "set"), None)
        receipt = thaw(receipts)[-1] if isinstance(receipts, list | tuple) and receipts else None
        if not isinstance(receipt, dict) or not isinstance(response, dict) or "last_response" in c.redacted_paths:
            raise ExportTestError(
                "a model call of the recording carries no receipt or no unredacted response: it cannot be replayed",
                code="ERR_EXPORT_NOT_REPLAYABLE",
            )
        yield receipt, thaw(response)


def cassette_of(recordings: Sequence[Recording]) -> dict[str, LLMResponse]:
    """Request digest → recorded response, each response checked against the digest its receipt holds."""
    out: dict[str, LLMResponse] = {}
    for rec in recordings:
        for receipt, body in _calls(rec.snapshot):
            try:
                response = LLMResponse.model_validate(body)
            except ValidationError:
                raise ExportTestError(
                    "a recorded model response is not a valid response", code="ERR_EXPORT_NOT_REPLAYABLE"
                ) from None
            if _model_digest(response.model_dump(mode="json", exclude={"attempts"})) != receipt.get("response_digest"):
                raise ExportTestError(
                    "a recorded model response does not match its receipt: the recording was altered",
                    code="ERR_EXPORT_TAMPERED",
                )
            out.setdefault(str(receipt.get("request_digest")), response)
    return out


class CassetteProvider:
    """Answers each request with the response recorded for that exact request; any other is ``CassetteMissError``."""

    name = "cassette"
    deterministic_for_seed = True

    def __init__(self, cassette: dict[str, LLMResponse]) -> None:
        self._cassette = cassette
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        found = self._cassette.get(request_digest(request))
        if found is None:
            raise CassetteMissError(
                f"model call {self.calls} sent a request no recorded run made: the agent's context differs from the "
                "recorded one (a changed source, prompt, tool or seed)"
            )
        return found.model_copy(deep=True)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        response = await self.complete(request)
        for chunk in chunks_from_response(response):
            yield chunk


# -- replay -----------------------------------------------------------------------------------------------------


def _on_cassette(agent: Any, hidden: frozenset[str], provider: CassetteProvider) -> Any:
    """``agent`` on the cassette, reading memory as it stood (nothing written back, ``hidden`` entries left out)."""
    from agentfootprint.agent import Agent
    from agentfootprint.context import MemoryInjection

    config = agent.config
    injections = tuple(
        replace(inj, store=RecordedMemoryView(inj.store, None, time.time(), hidden))
        if isinstance(inj, MemoryInjection)
        else inj
        for inj in config.injections
    )
    return Agent(replace(config, provider=provider, injections=injections))


def _replaying_agent(agent: Any, proof: Proof, without: Sequence[str], provider: CassetteProvider) -> Any:
    """``agent`` (or a composition: every member agent) without ``without`` (chunks and memory entries as the
    recorded run landed them), on the cassette, reading memory as it stood (nothing written back)."""
    from agentfootprint.agent import Agent
    from agentfootprint.agent._fork_seam import MemberRunner
    from agentfootprint.agent.record import landed_parts_of

    ids = tuple(without)
    hidden = frozenset(ids)
    if isinstance(agent, MemberRunner) and not isinstance(agent, Agent):
        runner = agent.without(*ids) if ids else agent  # type: ignore[attr-defined]
        return runner.with_agents(lambda member: _on_cassette(member, hidden, provider))
    if not isinstance(agent, Agent):
        raise ExportTestError("replay needs an Agent or a composition", code="ERR_EXPORT_AGENT")
    clone = agent.without_landed(ids, landed_parts_of(proof.recording.snapshot.state)) if ids else agent
    return _on_cassette(clone, hidden, provider)


async def replay_proof(
    proof: Proof | Recording,
    agent: Any,
    *,
    without: Sequence[str] = (),
    seed: int | Literal["recorded"] | None = "recorded",
) -> Any:
    """Run ``agent`` (without ``without``) on the proof's input, every model call answered from the recorded
    responses (no network); a request no recorded run made is ``CassetteMissError``. Returns the ``RunResult``."""
    proof = proof if isinstance(proof, Proof) else proof_of_recording(proof)
    if isinstance(without, str) or not all(isinstance(i, str) and i for i in without):
        raise ExportTestError("without must be a list of source ids", code="ERR_EXPORT_WITHOUT")
    provider = CassetteProvider(cassette_of(proof.recordings()))
    clone = _replaying_agent(agent, proof, without, provider)
    kwargs: dict[str, Any] = {"seed": proof.input.seed if seed == "recorded" else seed}
    if proof.input.identity is not None:
        kwargs["identity"] = proof.input.identity
    if proof.input.history:
        kwargs["continue_from"] = {"run_id": "replay", "history": proof.input.history}
    result = await clone.run(proof.input.message, **kwargs)
    answers = answered_in_order(proof.recording.snapshot)
    while result.paused and answers:  # each pause the recorded chain resumed, answered as the person did
        checkpoint = result.checkpoint or {}
        call_id, answer = answers.pop(0)
        if str(thaw(checkpoint).get("tool_call_id")) != call_id:
            raise CassetteMissError("the replay paused where the recorded chain did not: the agent's context differs")
        result = await clone.resume(checkpoint, answer)
    return result


def replay_proof_sync(proof: Proof | Recording, agent: Any, **kwargs: Any) -> Any:
    """Blocking twin of :func:`replay_proof`."""
    return run_sync(replay_proof(proof, agent, **kwargs), "replay_proof")


# -- freezing a localization -------------------------------------------------------------------------------------


def _answer(snap: FlowSnapshot) -> str | None:
    final = final_answer_commit(snap)
    value = snap.value_at("answer", final.idx) if final is not None else None
    return value if isinstance(value, str) or value is None else str(value)


def _input_of_recording(rec: Recording) -> ProofInput:
    """The run's input as its recording holds it: the user message (a composition's: its input), prior history,
    identity and model seed."""
    snap = rec.snapshot
    seed_commit = next((c for c in snap.commit_log if c.stage_id == "seed" and c.namespace == ""), None)
    state = snap.state_at(seed_commit.idx) if seed_commit is not None else {}
    message = state.get("user_message", state.get("input"))
    if not isinstance(message, str):
        raise ExportTestError("the recording holds no user message to replay", code="ERR_EXPORT_NOT_REPLAYABLE")
    history = [m for m in state.get("history") or [] if isinstance(m, dict)]
    call = next((c for c in snap.commit_log if c.stage_id == "call-llm"), None)
    seed = snap.value_at("llm_call", call.idx, call.namespace, default={}).get("seed") if call is not None else None
    run = state.get("run")
    identity = run.get("identity") if isinstance(run, dict) and isinstance(run.get("identity"), dict) else None
    return ProofInput(
        message=message,
        history=history[:-1],
        identity={k: v for k, v in (identity or {}).items() if v is not None} or None,
        seed=seed if isinstance(seed, int) else None,
    )


def _check_replayable(snap: FlowSnapshot) -> None:
    """A replay serves every model call from its receipt: a model call a composition makes itself (a merge) carries
    none; a resumed leg must hold its whole chain (its first commits are the paused legs')."""
    if any("merge_call" in c.keys_written() for c in snap.commit_log if c.applied):
        raise ExportTestError(
            "the composition merged with a model call of its own, which records no receipt: it cannot be replayed",
            code="ERR_EXPORT_NOT_REPLAYABLE",
        )
    if not any(c.stage_id == "seed" and c.namespace == "" for c in snap.commit_log):
        raise ExportTestError(
            "the recording is a resumed leg without the legs before it: export the chain's last leg as recorded",
            code="ERR_EXPORT_PAUSED",
        )


def _status(snap: FlowSnapshot) -> Literal["completed", "paused"]:
    return "paused" if snap.commit_log and snap.commit_log[-1].paused else "completed"


def proof_of_recording(recording: Recording, *, factory: str | None = None) -> Proof:
    """A proof with no culprit set: the run's answer, held by replaying its recorded responses."""
    if not isinstance(recording, Recording):
        raise ExportTestError("pass a Recording (load_recording) or a Proof", code="ERR_EXPORT_INPUT")
    list(_calls(recording.snapshot))  # every call replayable, or refused now
    _check_replayable(recording.snapshot)
    status = _status(recording.snapshot)
    return Proof(
        factory=factory,
        input=_input_of_recording(recording),
        answer=_answer(recording.snapshot) if status == "completed" else None,
        status=status,
        recording=recording,
    )


def _differs(a: str | None, b: str | None) -> bool:
    return a != b


async def _rerun(record: Any, ids: Sequence[str], seed: int | None, run_input: dict[str, Any]) -> Recording:
    from agentfootprint.agent import Agent

    world = RerunWorld(ReplayCache(), record.run_id)
    clone = rerun_agent(record, ids, world)
    if not isinstance(clone, Agent):  # a composition: every member on the world's replaying provider
        clone = clone.with_agents(lambda member: rerun_agent(member, (), world))
    kwargs: dict[str, Any] = {"identity": run_input.get("identity"), "seed": seed}
    if run_input.get("history"):
        kwargs["continue_from"] = {"run_id": "rerun", "history": run_input["history"]}
    result = await clone.run(run_input["message"], **kwargs)
    return recording_of(result)


async def freeze_proof(
    report: Any,
    run: Any,
    *,
    factory: str | None = None,
    outcome_changed: Callable[[str, str], bool] | None = None,
    seeds: int = 20,
) -> Proof:
    """Freeze a localization of ``run`` (its ``RunResult``): for each confirmed culprit set, one seed where the
    run answers as recorded with the set in and flips without it, and the recordings of both runs."""
    from agentfootprint.explain.localize import LocalizationReport

    if not isinstance(report, LocalizationReport):
        raise ExportTestError("report must be a LocalizationReport", code="ERR_EXPORT_INPUT")
    record = as_target(run)
    run_input = record.last_run_input() if hasattr(record, "last_run_input") else None
    if run_input is None or not hasattr(record, "without"):
        raise ExportTestError("run must be the RunResult the localization explained", code="ERR_EXPORT_INPUT")
    from agentfootprint.agent import Agent
    from agentfootprint.agent._fork_seam import MemberRunner

    if not isinstance(getattr(record, "runner", None), Agent | MemberRunner):
        raise ExportTestError("replay needs an Agent or a composition", code="ERR_EXPORT_AGENT")
    recording = recording_of(run)
    _check_replayable(recording.snapshot)
    if _status(recording.snapshot) == "paused" or answered_in_order(recording.snapshot):
        raise ExportTestError(
            "a localization's reruns do not resume pauses, so a paused or resumed run's culprits cannot be frozen; "
            "export its recording instead (its answer, held offline)",
            code="ERR_EXPORT_PAUSED",
        )
    answer = _answer(recording.snapshot)
    if report.answer is not None and report.answer != answer:
        raise ExportTestError("the report explains another run than this one", code="ERR_EXPORT_MISMATCH")
    changed = outcome_changed or _differs
    first = run_input.get("seed")
    tries = [first, *(s for s in range(1, seeds + 1) if s != first)]
    frozen: list[FrozenCulprits] = []
    for cset in report.confirmed_sets:
        found = None
        for seed in tries:
            held = None if seed == first else await _rerun(record, (), seed, run_input)
            answer_with = answer if held is None else _answer(held.snapshot)
            if answer_with is None or (answer is not None and changed(answer, answer_with)):
                continue
            removed = await _rerun(record, cset.ids, seed, run_input)
            answer_without = _answer(removed.snapshot)
            if answer_without is not None and answer_without != answer_with and changed(answer_with, answer_without):
                found = FrozenCulprits(
                    ids=list(cset.ids),
                    claim=cset.claim,
                    seed=seed,
                    answer_with=answer_with,
                    answer_without=answer_without,
                    held=held,
                    removed=removed,
                )
                break
        if found is None:
            raise ExportTestError(
                f"no seed of {len(tries)} flips the answer without a confirmed set", code="ERR_EXPORT_NO_FLIP"
            )
        frozen.append(found)
    proof = Proof(
        factory=factory,
        input=ProofInput(
            message=str(run_input["message"]),
            history=list(run_input.get("history") or []),
            identity=_identity_dict(run_input.get("identity")),
            seed=first,
        ),
        answer=answer,
        recording=recording,
        culprit_sets=frozen,
    )
    list(cassette_of(proof.recordings()))
    return proof


def freeze_proof_sync(report: Any, run: Any, **kwargs: Any) -> Proof:
    """Blocking twin of :func:`freeze_proof`."""
    return run_sync(freeze_proof(report, run, **kwargs), "freeze_proof")


def _identity_dict(identity: Any) -> dict[str, Any] | None:
    if identity is None:
        return None
    dumped = identity.model_dump(exclude_none=True) if hasattr(identity, "model_dump") else dict(identity)
    return dumped or None


def load_proof(path: str | Path, *, run_id: str | None = None) -> Proof | Recording:
    """A saved proof (``Proof.save``) or a recording (``save_recording``; SQLite: ``run_id`` or the newest run)."""
    from agentfootprint.explain.recording import InvalidRecordingError, load_recording

    source = Path(path)
    if source.suffix in (".sqlite", ".db", ".sqlite3"):
        try:
            return load_recording(source, run_id=run_id)
        except InvalidRecordingError:
            raise ExportTestError("no such recording in that SQLite file", code="ERR_EXPORT_INPUT") from None
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExportTestError(f"cannot read the proof: {type(exc).__name__}", code="ERR_EXPORT_INPUT") from None
    if isinstance(raw, dict) and raw.get("format") == PROOF_FORMAT:
        try:
            return Proof.model_validate(raw)
        except ValidationError as err:
            loc = validation_field(err, default="proof")
            raise ExportTestError(f"proof field '{loc[:120]}' is invalid", code="ERR_EXPORT_INPUT") from None
    try:
        return load_recording(source)
    except InvalidRecordingError:
        raise ExportTestError(
            "not a proof nor a recording (save one with Proof.save or save_recording)", code="ERR_EXPORT_INPUT"
        ) from None


# -- writing the test --------------------------------------------------------------------------------------------

_HEADER = '''"""Offline regression test exported by agentfootprint (run {run_id}).

{summary}
Every model call is answered from the recorded responses (no network, no provider): the test fails when the agent
that FACTORY builds sends a request no recorded run made, or answers otherwise."""

from __future__ import annotations

import importlib

import pytest

from agentfootprint.explain import Proof, replay_proof_sync

FACTORY = {factory!r}
CULPRITS: list[list[str]] = {culprits!r}
PROOF = Proof.model_validate_json(
{body}
)


def _agent():
    module, _, name = FACTORY.partition(":")
    return getattr(importlib.import_module(module), name)()


def test_the_recorded_answer_holds() -> None:
    result = replay_proof_sync(PROOF, _agent())
    assert result.status == PROOF.status
    assert result.answer == PROOF.answer
'''

_FLIPS = """

@pytest.mark.parametrize("n", range(len(CULPRITS)))
def test_the_answer_holds_with_the_culprits_in_and_flips_without_them(n: int) -> None:
    frozen = PROOF.culprit_sets[n]
    held = replay_proof_sync(PROOF, _agent(), seed=frozen.seed)
    assert held.answer == frozen.answer_with
    flipped = replay_proof_sync(PROOF, _agent(), without=CULPRITS[n], seed=frozen.seed)
    assert flipped.answer == frozen.answer_without
    assert flipped.answer != held.answer
"""


def _chunks(text: str, width: int = 100) -> str:
    return "\n".join(f"    {text[i : i + width]!r}" for i in range(0, len(text), width)) or "    ''"


def render_test(proof: Proof | Recording, *, factory: str | None = None) -> str:
    """The pytest file for ``proof`` (a recording exports its held answer only)."""
    proof = proof if isinstance(proof, Proof) else proof_of_recording(proof)
    target = factory or proof.factory
    if not isinstance(target, str) or target.count(":") != 1 or not all(target.split(":")):
        raise ExportTestError(
            "the test replays the agent: give factory='module:function' (a no-argument function building it)",
            code="ERR_EXPORT_FACTORY",
        )
    sets = [c.ids for c in proof.culprit_sets]
    summary = (
        "Removing " + "; ".join("{" + ", ".join(ids) + "}" for ids in sets) + " flipped the answer (each set alone)."
        if sets
        else "The recorded answer, held by replaying the run."
    )
    text = _HEADER.format(
        run_id=proof.recording.snapshot.run_id,
        summary=summary,
        factory=target,
        culprits=sets,
        body=_chunks(proof.model_copy(update={"factory": target}).model_dump_json()),
    )
    return text + (_FLIPS if sets else "")


def export_test(proof: Proof | Recording, path: str | Path, *, factory: str | None = None) -> Path:
    """Write the offline pytest file of ``proof`` (or of a recording) to ``path``."""
    return _write(Path(path), render_test(proof, factory=factory))


# -- the dataset -------------------------------------------------------------------------------------------------


def dataset_row(recording: Recording) -> dict[str, Any]:
    """One run as a dataset row: its input, its answer, and the sources that reached it (ids, kinds, texts)."""
    from agentfootprint.explain.backtrack import BacktrackError, backtrack

    try:
        trail = backtrack(recording).sources
    except BacktrackError:
        trail = []
    inp = _input_of_recording(recording)
    return {
        "run_id": recording.snapshot.run_id,
        "agent": recording.agent,
        "input": inp.message,
        "answer": _answer(recording.snapshot),
        "sources": [{"id": s.result_id or s.id, "kind": s.kind, "text": s.text} for s in trail],
    }


def export_dataset(recordings: Iterable[Recording], path: str | Path) -> Path:
    """Write one JSON line per run (``input``, ``answer``, ``sources`` with their ids)."""
    rows = [json.dumps(dataset_row(r), ensure_ascii=False, default=str) for r in recordings]
    return _write(Path(path), "".join(f"{row}\n" for row in rows))


__all__ = [
    "CassetteMissError",
    "ExportTestError",
    "FrozenCulprits",
    "Proof",
    "export_dataset",
    "export_test",
    "freeze_proof",
    "freeze_proof_sync",
    "load_proof",
    "replay_proof",
    "replay_proof_sync",
]
