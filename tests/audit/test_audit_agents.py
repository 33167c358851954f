"""export_audit on real Agent runs: verification, redaction in both payload modes, paused runs in two segments."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.audit import (
    COMMIT_TYPE,
    GENESIS_TYPE,
    AuditExportError,
    export_audit,
    to_jsonl,
    verify_audit,
    verify_file,
    write_jsonl,
)
from tests.audit._agents import (
    SECRET,
    Recorder,
    after_resume,
    asking_agent,
    lookup_agent,
    lookup_then_ask,
)

MODES = ["bounded", "verbatim"]


def _dump(records: list[dict[str, Any]]) -> str:
    return json.dumps(records, ensure_ascii=False) + to_jsonl(records)


def _kinds(records: list[dict[str, Any]]) -> list[str]:
    return [r["meta"]["kind"] for r in records]


@pytest.mark.parametrize("keep_events", [True, False], ids=["events", "no-events"])
async def test_an_agent_run_exports_a_chain_that_verifies(keep_events: bool) -> None:
    rec = Recorder()
    agent = lookup_agent(rec, keep_events=keep_events)
    result = await agent.run("Is this customer active?")
    records = export_audit(agent)

    assert verify_audit(records).valid
    assert verify_audit(to_jsonl(records)).valid
    snapshot = agent.last_snapshot()
    assert snapshot is not None
    assert records[0]["type"] == GENESIS_TYPE and records[0]["payload"]["run_id"] == result.run_id
    commits = [r for r in records if r["type"] == COMMIT_TYPE]
    assert [r["meta"]["idx"] for r in commits] == [c.idx for c in snapshot.commit_log]
    assert [r["meta"]["runtime_stage_id"] for r in commits] == [c.runtime_stage_id for c in snapshot.commit_log]
    events = [r for r in records if r["meta"]["kind"] == "event"]
    if keep_events:
        types = [r["type"] for r in events]
        assert types[0] == "agentfootprint.agent.turn_start" and types[-1] == "agentfootprint.agent.turn_end"
        assert types.count("agentfootprint.stream.llm_start") == 2
        assert types.count("agentfootprint.stream.tool_end") == 1
        seqs = [r["meta"]["event_seq"] for r in events]
        assert seqs == sorted(seqs)
        assert all(r["meta"]["event_run_id"] == result.run_id for r in events)
    else:
        assert events == []
    assert records[0]["payload"]["event_count"] == len(events)


async def test_the_bundle_round_trips_through_a_file_and_the_cli_hook(tmp_path: Path) -> None:
    agent = lookup_agent(Recorder())
    await agent.run("check")
    path = write_jsonl(export_audit(agent, payload_mode="verbatim"), tmp_path / "run.jsonl")
    assert verify_file(path, out=_Sink()) == 0

    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[3])
    record["payload"]["stage_id"] = "forged"
    lines[3] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sink = _Sink()
    assert verify_file(path, out=sink) == 1
    assert "record 3" in sink.text


class _Sink:
    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        return None


def test_an_agent_that_has_not_run_cannot_be_exported() -> None:
    agent = lookup_agent(Recorder())
    with pytest.raises(AuditExportError) as info:
        export_audit(agent)
    assert info.value.code == "ERR_AUDIT_NO_RUN"


# -- redaction --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("keep_events", [True, False], ids=["events", "no-events"])
@pytest.mark.parametrize("mode", MODES)
async def test_a_redacted_tool_argument_and_result_never_reach_the_bundle(mode: str, keep_events: bool) -> None:
    rec = Recorder()
    agent = lookup_agent(rec, keep_events=keep_events)
    result = await agent.run("Is the customer on file active?")

    # the tool and the model still got the real value where they must
    assert rec.tool_args == [{"ssn": SECRET}]
    tool_message = rec.requests[1].messages[-1]
    assert tool_message.role == "tool" and SECRET in tool_message.content
    assert result.answer is not None and SECRET not in result.answer

    records = export_audit(agent, payload_mode=mode)  # type: ignore[arg-type]
    text = _dump(records)
    assert SECRET not in text
    assert SECRET[:12] not in text
    assert verify_audit(records).valid
    assert records[0]["payload"]["redacted"] is True


async def test_verbatim_keeps_the_placeholder_where_the_value_was() -> None:
    agent = lookup_agent(Recorder())
    await agent.run("check")
    text = _dump(export_audit(agent, payload_mode="verbatim"))
    assert "[REDACTED]" in text
    assert '"status": "active"' in text or '\\"status\\": \\"active\\"' in text  # non-secret values kept


async def test_a_bounded_bundle_keeps_names_and_shapes_not_values() -> None:
    agent = lookup_agent(Recorder())
    await agent.run("check")
    records = export_audit(agent)
    tool_end = next(r for r in records if r["type"] == "agentfootprint.stream.tool_end")
    assert tool_end["payload"]["name"] == "lookup"
    assert tool_end["payload"]["content"]["type"] == "str"
    assert "active" not in json.dumps(tool_end)


async def test_a_secret_typed_before_it_is_learned_never_reaches_stored_events() -> None:
    agent = lookup_agent(Recorder())
    await agent.run(f"My SSN is {SECRET}, am I active?")
    snapshot = agent.last_snapshot()
    assert snapshot is not None and SECRET not in snapshot.model_dump_json()  # the served snapshot is clean
    assert SECRET not in json.dumps([e.model_dump() for e in agent.last_events()])
    assert SECRET not in _dump(export_audit(agent, payload_mode="verbatim"))


@pytest.mark.parametrize("mode", MODES)
async def test_a_secret_typed_before_it_is_learned_stays_out_of_a_bundle_without_events(mode: str) -> None:
    agent = lookup_agent(Recorder(), keep_events=False)
    await agent.run(f"My SSN is {SECRET}, am I active?")
    assert SECRET not in _dump(export_audit(agent, payload_mode=mode))  # type: ignore[arg-type]


async def test_a_per_run_redaction_policy_also_covers_the_bundle() -> None:
    from agentfootprint.flow import RedactionPolicy

    rec = Recorder()
    agent = lookup_agent(rec)
    await agent.run("check", redact=RedactionPolicy.of(keys=["status"]))
    text = _dump(export_audit(agent, payload_mode="verbatim"))
    assert SECRET not in text
    assert '"status": "active"' not in text and '\\"status\\": \\"active\\"' not in text


# -- pause / resume in two segments -----------------------------------------------------------------------------
def _check_two_segments(part1: list[dict[str, Any]], part2: list[dict[str, Any]], agent: Agent) -> None:
    assert part2[0]["type"] == GENESIS_TYPE
    assert part2[0]["payload"]["continues"] is True
    assert part2[0]["prev_hash"] == part1[-1]["hash"]
    assert part2[0]["seq"] == part1[-1]["seq"] + 1
    whole = part1 + part2
    assert verify_audit(whole).valid
    assert verify_audit(to_jsonl(part1) + to_jsonl(part2)).valid
    assert verify_audit(part2, previous=part1).valid
    assert not verify_audit(part2).valid
    snapshot = agent.last_snapshot()
    assert snapshot is not None
    exported = [r["meta"]["idx"] for r in whole if r["meta"]["kind"] == "commit"]
    assert exported == [c.idx for c in snapshot.commit_log]  # every commit of both legs exactly once
    for prev, rec in itertools.pairwise(whole):
        assert rec["prev_hash"] == prev["hash"]


@pytest.mark.parametrize("keep_events", [True, False], ids=["events", "no-events"])
@pytest.mark.parametrize("fresh", [False, True], ids=["same-agent", "fresh-agent"])
@pytest.mark.parametrize("mode", MODES)
async def test_a_paused_then_resumed_run_exported_in_two_segments_stays_chained(
    mode: str, fresh: bool, keep_events: bool
) -> None:
    rec = Recorder()
    replies = lookup_then_ask() + ([] if fresh else after_resume())
    agent = asking_agent(rec, replies, keep_events=keep_events)
    paused = await agent.run("Should we refund?")
    assert paused.status == "paused" and paused.question == "Refund this customer?"
    part1 = export_audit(agent, payload_mode=mode)  # type: ignore[arg-type]
    assert verify_audit(part1).valid

    resumer = asking_agent(rec, after_resume(), keep_events=keep_events) if fresh else agent
    checkpoint = json.loads(json.dumps(paused.checkpoint))
    done = await resumer.resume(checkpoint, "yes, refund")
    assert done.status == "completed" and done.resumed_from == paused.run_id  # R004-17: a new run, one turn
    part2 = export_audit(resumer, payload_mode=mode, segment=part1)  # type: ignore[arg-type]
    origin = part2[0]["payload"]["resumed_from"]
    assert origin["run_id"] == paused.run_id and origin["sealed"] is False
    assert origin["commits"] == len([r for r in part1 if r["meta"]["kind"] == "commit"])

    _check_two_segments(part1, part2, resumer)
    text = _dump(part1 + part2)
    assert SECRET not in text
    assert rec.tool_args == [{"ssn": SECRET}]
    if keep_events:
        types1 = [r["type"] for r in part1 if r["meta"]["kind"] == "event"]
        types2 = [r["type"] for r in part2 if r["meta"]["kind"] == "event"]
        assert "agentfootprint.pause.requested" in types1 and types1[-1] == "agentfootprint.agent.turn_end"
        # the resumed leg's events are all there, even when a fresh agent restarted event numbering
        assert types2[0] == "agentfootprint.agent.turn_start" and types2[-1] == "agentfootprint.agent.turn_end"
        assert "agentfootprint.pause.resumed" in types2
        assert types2.count("agentfootprint.stream.tool_end") == 1  # the answered ask_human call
        assert (types1 + types2).count("agentfootprint.agent.turn_start") == 2


async def test_re_exporting_the_same_leg_after_its_segment_adds_nothing_new() -> None:
    agent = asking_agent(Recorder(), lookup_then_ask())
    await agent.run("Should we refund?")
    part1 = export_audit(agent)
    again = export_audit(agent, segment=part1)
    assert _kinds(again) == ["genesis"]
    assert again[0]["payload"]["commit_count"] == 0 and again[0]["payload"]["event_count"] == 0
    assert verify_audit(part1 + again).valid


async def test_tampering_with_the_first_segment_breaks_the_chained_second() -> None:
    rec = Recorder()
    agent = asking_agent(rec, lookup_then_ask() + after_resume())
    paused = await agent.run("Should we refund?")
    part1 = export_audit(agent)
    await agent.resume(paused.checkpoint, "yes")
    part2 = export_audit(agent, segment=part1)
    del part1[2]
    verdict = verify_audit(part1 + part2)
    assert not verdict.valid and verdict.broken_at == 2
