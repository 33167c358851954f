"""RayExecutor on a local Ray (2 CPUs): a 20-run localization and a 50-item evaluation match the in-process ones."""

from __future__ import annotations

import os

import pytest

from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
from agentfootprint.explain import localize_context_bug
from agentfootprint.scale import (
    Check,
    ExecutorBase,
    InProcessExecutor,
    RayExecutor,
    RunOutcome,
    RunSpec,
    evaluate,
    expected_in_answer,
)
from tests.scale.conftest import normalized
from tests.scale.test_evaluate import dataset, polite, short

pytestmark = pytest.mark.integration


class Counting(ExecutorBase):
    """Wraps an executor and counts the specs it ran and the worker processes that ran them."""

    def __init__(self, inner: RayExecutor) -> None:
        self.inner = inner
        self.outcomes: list[RunOutcome] = []

    async def submit(self, spec: RunSpec) -> RunOutcome:
        outcome = await self.inner.submit(spec)
        self.outcomes.append(outcome)
        return outcome


async def test_a_20_run_localization_on_ray_matches_in_process(ray_executor: RayExecutor) -> None:
    agent = refunds_agent()
    await agent.run(QUESTION)
    local = await localize_context_bug(
        agent, samples=5, outcome_changed=approved_flipped, progress=False, max_samples=None
    )  # the plain rule: exactly 5 paired seeds per arm (the default "auto" adds a search rerun)
    counting = Counting(ray_executor)
    on_ray = await localize_context_bug(
        agent,
        samples=5,
        max_samples=None,
        outcome_changed=approved_flipped,
        progress=False,
        executor=counting,
        agent_factory="agentfootprint._flagship:refunds_agent",
        concurrency=20,
    )
    assert on_ray.model_dump() == local.model_dump()
    assert len(counting.outcomes) == 20 and all(o.ok for o in counting.outcomes)
    assert on_ray.suspect("vip-override-fact") is not None and len(on_ray.confirmed) == 1
    pids = {o.worker.rsplit(":", 1)[1] for o in counting.outcomes}
    assert str(os.getpid()) not in pids


async def test_a_50_item_evaluation_on_ray_matches_in_process(ray_executor: RayExecutor) -> None:
    items = dataset(50)
    checks: list[Check] = [expected_in_answer, polite, short]
    local = await evaluate("tests.scale.factories:calculator", items, checks=checks, progress=False)
    on_ray = await evaluate(
        "tests.scale.factories:calculator", items, executor=ray_executor, checks=checks, progress=False
    )
    assert on_ray.summary.model_dump(exclude={"wall_s", "mean_run_s"}) == local.summary.model_dump(
        exclude={"wall_s", "mean_run_s"}
    )
    assert on_ray.summary.total == 50 and on_ray.summary.failed == 8 and on_ray.summary.errors == 0
    for a, b in zip(on_ray.items, local.items, strict=True):
        assert (a.index, a.item, a.passed, a.checks) == (b.index, b.item, b.passed, b.checks)
        assert (a.outcome.status, a.outcome.answer, a.outcome.error) == (b.outcome.status, b.outcome.answer, None)
        assert normalized(a.outcome.recording) == normalized(b.outcome.recording)
    assert on_ray.executor.startswith("RayExecutor(")


async def test_ray_errors_come_back_as_typed_outcomes(ray_executor: RayExecutor) -> None:
    outcomes = await ray_executor.map(
        [
            RunSpec(agent_factory="tests.scale.factories:broken", message="x"),
            RunSpec(agent_factory="tests.scale.factories:calculator", message="What is 1 plus 1?", ablate=["nope"]),
        ]
    )
    assert [o.error.type if o.error else None for o in outcomes] == ["RuntimeError", "UnknownSourceError"]
    assert "sk-live" not in outcomes[0].model_dump_json()


async def test_in_process_and_ray_agree_on_a_single_spec(ray_executor: RayExecutor) -> None:
    spec = RunSpec(agent_factory="tests.scale.factories:calculator", message="What is 20 plus 22?", seed=3)
    here, there = await InProcessExecutor().submit(spec), await ray_executor.submit(spec)
    assert (here.answer, here.status) == (there.answer, there.status) == ("Kindly: The sum is 42.", "completed")
    assert normalized(here.recording) == normalized(there.recording)
