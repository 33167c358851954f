"""localize_context_bug(executor=...): reruns go out as run specs and the report matches the in-process one."""

from __future__ import annotations

import pytest

from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
from agentfootprint.explain import LocalizeError, localize_context_bug
from agentfootprint.scale import ExecutorBase, InProcessExecutor, RunOutcome, RunSpec

FLAGSHIP = "agentfootprint._flagship:refunds_agent"


class Counting(ExecutorBase):
    """Wraps an executor and keeps every spec it was handed."""

    def __init__(self) -> None:
        self.inner = InProcessExecutor(concurrency=4)
        self.specs: list[RunSpec] = []

    async def submit(self, spec: RunSpec) -> RunOutcome:
        self.specs.append(spec)
        return await self.inner.submit(spec)


async def test_reruns_through_an_executor_give_the_same_report() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION, identity={"tenant": "acme", "principal": "ops"})
    local = await localize_context_bug(
        agent, samples=5, outcome_changed=approved_flipped, progress=False, max_samples=None
    )  # the plain rule: 5 paired seeds per arm, exactly (the default "auto" adds a search rerun)
    counting = Counting()
    remote = await localize_context_bug(
        agent,
        samples=5,
        max_samples=None,
        outcome_changed=approved_flipped,
        progress=False,
        executor=counting,
        agent_factory=FLAGSHIP,
    )
    assert remote.model_dump() == local.model_dump()
    assert len(counting.specs) == 20
    assert {s.seed for s in counting.specs} == set(range(5))
    assert sorted({tuple(s.ablate) for s in counting.specs}) == [
        (),
        ("lookup_order",),
        ("style-fact",),
        ("vip-override-fact",),
    ]
    assert all(s.message == QUESTION and s.identity == {"tenant": "acme", "principal": "ops"} for s in counting.specs)


async def test_an_executor_needs_a_factory_path() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    with pytest.raises(LocalizeError, match="agent_factory"):
        await localize_context_bug(agent, samples=1, executor=InProcessExecutor(), progress=False)


async def test_correlational_mode_never_touches_the_executor() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    counting = Counting()
    report = await localize_context_bug(agent, samples=0, executor=counting)
    assert report.mode == "correlational" and counting.specs == []


async def test_failed_remote_reruns_are_counted_as_errors() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    report = await localize_context_bug(
        agent,
        samples=2,
        outcome_changed=approved_flipped,
        progress=False,
        executor=InProcessExecutor(),
        agent_factory="tests.scale.factories:broken",
    )
    assert report.baseline_errors == 2 and report.reruns == 2  # nothing more is spent once the baseline failed
    assert {"rerun-errors", "baseline-reruns-failed"} <= set(report.honesty_flags)
    assert report.confirmed_sets == [] and all(s.verdict == "inconclusive" for s in report.suspects)


async def test_group_search_through_an_executor_finds_the_same_culprit_set() -> None:
    from agentfootprint._flagship import refunds_agent_pair

    agent = refunds_agent_pair()
    await agent.run(QUESTION)
    local = await localize_context_bug(agent, outcome_changed=approved_flipped, progress=False)
    counting = Counting()
    remote = await localize_context_bug(
        agent,
        outcome_changed=approved_flipped,
        progress=False,
        executor=counting,
        agent_factory="agentfootprint._flagship:refunds_agent_pair",
    )
    assert [c.ids for c in remote.confirmed_sets] == [("goodwill-fact", "vip-override-fact")]
    assert remote.culprit_sets == local.culprit_sets and remote.reruns == local.reruns == len(counting.specs)
    assert remote.model_calls == local.model_calls


async def test_a_step_through_an_executor_reads_the_rerun_recordings() -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    first = next(c.runtime_stage_id for c in agent.last_snapshot().commit_log if c.stage_id == "call-llm")  # type: ignore[union-attr]

    def tool_changed(a: str, b: str) -> bool:
        return ("lookup_order" in a) != ("lookup_order" in b)

    report = await localize_context_bug(
        agent,
        at=first,
        outcome_changed=tool_changed,
        search="single",
        progress=False,
        executor=InProcessExecutor(),
        agent_factory=FLAGSHIP,
    )
    assert report.answer == '\n-> lookup_order {"orderId": "A-1001"}'
    assert [s.id for s in report.confirmed] == ["lookup_order"]  # without the tool the model cannot ask for it
