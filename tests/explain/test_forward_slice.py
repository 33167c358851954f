"""Issue 35 (forward slice): the steps that read a source and what those reads fed, in order, up to the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, RunResult, define_fact, define_tool
from agentfootprint.agent import NoRunRecordError
from agentfootprint.compose import Sequence
from agentfootprint.explain import WhatIfError, backtrack, forward_slice, load_recording, save_recording
from agentfootprint.providers import mock
from tests.explain._backtrack_scenarios import SCENARIOS, _member


def _look(result: str) -> Any:
    return define_tool(
        name="look", description="Look around", input_schema={"type": "object"}, execute=lambda a, c: result
    )


def _agent(replies: list[Any]) -> Agent:
    return (
        Agent.create(provider=mock(replies=replies), model="m")
        .system("base")
        .tool(_look("a view"))
        .fact(define_fact(id="policy", data="Be brief."))
        .build()
    )


_ONE_TOOL = [{"tool_calls": [{"id": "c1", "name": "look", "args": {}}]}, "seen"]


async def test_a_fact_reaches_its_injection_every_model_call_and_the_answer_in_order() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    ids = forward_slice(run, "policy")
    assert ids[:3] == ["injection-engine#1", "system-prompt#2", "call-llm#5"]
    assert "call-llm#12" in ids and ids[-1] == "final#14"
    assert "tools#4" not in ids and "messages#3" not in ids  # they read no value the fact fed
    snap = run.last_snapshot()
    assert snap is not None
    order = [c.runtime_stage_id for c in snap.commit_log]
    assert ids == sorted(ids, key=order.index)


async def test_a_tool_result_feeds_only_what_came_after_it() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    ids = forward_slice(run, "look#1")
    assert ids[0] == "tool-calls#7" and "call-llm#12" in ids and ids[-1] == "final#14"
    assert "call-llm#5" not in ids
    assert forward_slice(run, "look")[0] == "tools#4"  # the tool itself: its spec reached the first call


async def test_a_history_message_is_sliced_from_where_it_landed(tmp_path: Path) -> None:
    run = await _agent(_ONE_TOOL).run("go")
    ids = forward_slice(run, "user-0")
    assert ids[0] == "seed#0" and "call-llm#5" in ids and ids[-1] == "final#14"
    saved = load_recording(save_recording(run, tmp_path / "r.json"))
    assert forward_slice(saved, "user-0") == ids and forward_slice(saved, "policy") == forward_slice(run, "policy")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_every_source_of_every_scenario_slices_through_its_reading_call_to_the_answer(name: str) -> None:
    target = await SCENARIOS[name][0]()
    for source in backtrack(target).sources:
        ids = forward_slice(target, source.result_id or source.id)
        reads = [h.runtime_stage_id for h in source.hops if h.kind == "read"]
        assert reads and all(r in ids for r in reads), (source.id, reads, ids)
        assert source.hops[0].runtime_stage_id in ids  # the answer
        assert len(ids) == len(set(ids))


@settings(max_examples=20, deadline=None)
@given(calls=st.integers(min_value=0, max_value=4), fact=st.booleans())
def test_the_slice_of_a_fact_holds_every_model_call_after_it(calls: int, fact: bool) -> None:
    replies: list[Any] = [{"tool_calls": [{"id": f"c{i}", "name": "look", "args": {}}]} for i in range(calls)]
    builder = Agent.create(provider=mock(replies=[*replies, "done"]), model="m").tool(_look("v"))
    if fact:
        builder = builder.fact(define_fact(id="policy", data="Be brief."))
    run = builder.build().run_sync("go")
    snap = run.last_snapshot()
    assert snap is not None
    model_calls = [c.runtime_stage_id for c in snap.commit_log if c.stage_id == "call-llm"]
    assert len(model_calls) == calls + 1
    if not fact:
        with pytest.raises(WhatIfError):
            forward_slice(run, "policy")
        return
    ids = forward_slice(run, "policy")
    assert all(m in ids for m in model_calls) and ids[-1].startswith("final#")
    for n in range(1, calls + 1):
        assert f"look#{n}" in {s.result_id for s in backtrack(run).sources}
        assert forward_slice(run, f"look#{n}")[0].startswith("tool-calls#")


# ---------------------------------------------------------------------------------------------------- hostile


async def test_an_unknown_source_is_refused_by_code_without_quoting() -> None:
    run = await _agent(_ONE_TOOL).run("go")
    with pytest.raises(WhatIfError) as err:
        forward_slice(run, "secret-value")
    assert err.value.code == "ERR_WHATIF_UNKNOWN_SOURCE" and "secret-value" not in str(err.value)
    with pytest.raises(WhatIfError) as err:
        forward_slice(run, "look#9")
    assert err.value.code == "ERR_WHATIF_UNKNOWN_SOURCE"


async def test_a_declared_source_that_never_landed_fed_nothing(tmp_path: Path) -> None:
    agent = (
        Agent.create(provider=mock(reply="ok"), model="m")
        .fact(define_fact(id="policy", data="Be brief."))
        .fact(define_fact(id="later", data="Only on Sundays.", active_when=lambda ctx: False))
        .build()
    )
    run = await agent.run("go")
    assert forward_slice(run, "later") == [] and forward_slice(run, "policy")
    saved = load_recording(save_recording(run, tmp_path / "r.json"))
    assert forward_slice(saved, "later") == []


@pytest.mark.parametrize("source_id", [42, None, ""])
async def test_a_source_id_that_is_not_a_name_is_refused(source_id: Any) -> None:
    run = await _agent(_ONE_TOOL).run("go")
    with pytest.raises(WhatIfError) as err:
        forward_slice(run, source_id)
    assert err.value.code == "ERR_WHATIF_SOURCE_ID"


async def test_not_a_run_is_refused() -> None:
    with pytest.raises(WhatIfError) as err:
        forward_slice("secret-value", "policy")
    assert err.value.code == "ERR_WHATIF_NOT_A_RUN" and "secret-value" not in str(err.value)
    run = await _agent(_ONE_TOOL).run("go")
    with pytest.raises(NoRunRecordError):
        forward_slice(RunResult.model_validate_json(run.model_dump_json()), "policy")


async def test_a_member_fact_feeds_the_next_member_through_the_handover() -> None:
    seq = Sequence.create().step("research", _member("research", "R1", "rf")).step("write", _member("w", "W", "wf"))
    run = await seq.build().run("go")
    ids = forward_slice(run, "rf")
    assert ids[:3] == ["research/injection-engine#3", "research/system-prompt#4", "research/call-llm#7"]
    assert "write/call-llm#17" in ids and ids[-1] == "write#20"
    assert all(i.startswith("write") for i in forward_slice(run, "wf"))
