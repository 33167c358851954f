"""Run specs, outcomes and errors: plain data, scrubbed messages, typed refusals, the in-process executor."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import ClassVar

import pytest
from pydantic import ValidationError

from agentfootprint.scale import (
    AgentFactoryError,
    Executor,
    InProcessExecutor,
    RayExecutor,
    RayExecutorError,
    RayUnavailableError,
    RunOutcome,
    RunSpec,
    ScaleError,
    load_agent_factory,
    run_spec,
    run_specs,
)
from agentfootprint.scale.run import run_spec_json
from agentfootprint.scale.spec import describe_error, scrub_message

CALC = "tests.scale.factories:calculator"


def test_a_spec_is_plain_frozen_data_that_round_trips_as_json() -> None:
    spec = RunSpec(agent_factory=CALC, message="What is 1 plus 2?", identity={"tenant": "acme"}, ablate=["add"], seed=3)
    assert RunSpec.model_validate_json(spec.model_dump_json()) == spec
    assert json.loads(spec.model_dump_json())["ablate"] == ["add"]
    with pytest.raises(ValidationError):
        spec.seed = 4  # type: ignore[misc]


@pytest.mark.parametrize("path", ["calculator", "tests.scale.factories:", ":x", "a b:c", "mod:fn()"])
def test_a_spec_refuses_a_factory_that_is_not_module_colon_function(path: str) -> None:
    with pytest.raises(ValidationError):
        RunSpec(agent_factory=path, message="hi")


def test_a_spec_refuses_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        RunSpec(agent_factory=CALC, message="hi", provider="openai")  # type: ignore[call-arg]


async def test_a_run_returns_answer_status_run_id_recording_and_time() -> None:
    outcome = await run_spec(RunSpec(agent_factory=CALC, message="What is 2 plus 3?", seed=1))
    assert outcome.status == "completed" and outcome.ok and outcome.error is None
    assert outcome.answer == "Kindly: The sum is 5."
    assert outcome.run_id and outcome.elapsed_s > 0 and outcome.worker
    assert outcome.recording is not None and outcome.recording["format"] == "agentfootprint.recording"
    assert outcome.recording["snapshot"]["run_id"] == outcome.run_id
    assert RunOutcome.model_validate_json(outcome.model_dump_json()) == outcome


async def test_ablation_and_identity_reach_the_run() -> None:
    outcome = await run_spec(
        RunSpec(agent_factory=CALC, message="What is 2 plus 3?", ablate=["add", "politeness"], identity={"tenant": "t"})
    )
    assert outcome.answer == "The sum is 6."
    assert outcome.recording is not None and outcome.recording["snapshot"]["state"]["run"]["identity"] == {
        "tenant": "t"
    }


@pytest.mark.parametrize(
    ("factory", "kind", "code"),
    [
        ("tests.scale.factories:broken", "RuntimeError", None),
        ("tests.scale.factories:not_an_agent", "AgentFactoryError", "ERR_AGENT_FACTORY"),
        ("tests.scale.factories:missing", "AgentFactoryError", "ERR_AGENT_FACTORY"),
        ("tests.scale.no_such_module:make", "AgentFactoryError", "ERR_AGENT_FACTORY"),
    ],
)
async def test_a_failing_run_is_an_error_outcome_not_a_raise(factory: str, kind: str, code: str | None) -> None:
    outcome = await run_spec(RunSpec(agent_factory=factory, message="hi"))
    assert outcome.status == "error" and not outcome.ok and outcome.answer is None
    assert outcome.error is not None and (outcome.error.type, outcome.error.code) == (kind, code)


async def test_an_unknown_ablation_id_is_a_typed_error_outcome() -> None:
    outcome = await run_spec(RunSpec(agent_factory=CALC, message="What is 1 plus 1?", ablate=["nope"]))
    assert outcome.error is not None and outcome.error.code == "ERR_UNKNOWN_SOURCE"


async def test_error_outcomes_carry_no_secrets() -> None:
    outcome = await run_spec(RunSpec(agent_factory="tests.scale.factories:broken", message="hi"))
    assert outcome.error is not None
    assert "sk-live" not in outcome.model_dump_json() and "[redacted]" in outcome.error.message


def test_scrub_message_replaces_secret_shapes_and_env_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-9f8e7d6c5b")
    text = (
        "Authorization: Bearer abc.def.ghi123 failed for postgresql://app:hunter22@db/x "
        "with password=letmein1 and sk-proj-1234567890abc; token tok-9f8e7d6c5b\x07"
    )
    clean = scrub_message(text)
    for leaked in ("abc.def.ghi123", "hunter22", "letmein1", "sk-proj-1234567890abc", "tok-9f8e7d6c5b", "\x07"):
        assert leaked not in clean
    assert "postgresql://[redacted]@db/x" in clean and "password=[redacted]" in clean
    assert len(scrub_message("x" * 2000)) == 500


def test_describe_error_keeps_type_and_code() -> None:
    err = describe_error(AgentFactoryError("bad factory"))
    assert (err.type, err.code, err.message) == ("AgentFactoryError", "ERR_AGENT_FACTORY", "bad factory")
    assert describe_error(KeyError("k")).code is None


def test_load_agent_factory_refuses_agents_and_non_callables() -> None:
    with pytest.raises(AgentFactoryError):
        load_agent_factory("tests.scale.factories:NUMBERS")
    with pytest.raises(AgentFactoryError):
        load_agent_factory("no_colon")
    assert load_agent_factory(CALC) is load_agent_factory(CALC)


def test_run_spec_json_is_json_in_json_out() -> None:
    text = run_spec_json(RunSpec(agent_factory=CALC, message="What is 4 plus 4?").model_dump_json())
    assert RunOutcome.model_validate_json(text).answer == "Kindly: The sum is 8."
    bad = RunOutcome.model_validate_json(run_spec_json("{not json"))
    assert bad.status == "error" and bad.error is not None and bad.error.type == "ValidationError"


async def test_in_process_executor_limits_concurrency_and_keeps_order() -> None:
    executor = InProcessExecutor(concurrency=3)
    assert isinstance(executor, Executor)
    specs = [RunSpec(agent_factory=CALC, message=f"What is {i} plus 1?") for i in range(12)]
    seen: list[tuple[int, int]] = []
    outcomes = await executor.map(specs, progress=lambda done, total, _o: seen.append((done, total)))
    assert [o.answer for o in outcomes] == [f"Kindly: The sum is {i + 1}." for i in range(12)]
    assert seen == [(i + 1, 12) for i in range(12)]


async def test_in_process_executor_never_runs_more_than_its_limit() -> None:
    live = peak = 0

    class Slow:
        async def submit(self, spec: RunSpec) -> RunOutcome:
            nonlocal live, peak
            live += 1
            peak = max(peak, live)
            await asyncio.sleep(0.01)
            live -= 1
            return RunOutcome(status="completed", answer=spec.message)

    outcomes = await run_specs(Slow(), [RunSpec(agent_factory=CALC, message=str(i)) for i in range(20)], concurrency=4)
    assert peak == 4 and [o.answer for o in outcomes] == [str(i) for i in range(20)]


async def test_an_executor_that_raises_becomes_an_error_outcome() -> None:
    class Down:
        async def submit(self, spec: RunSpec) -> RunOutcome:
            raise ConnectionError("cluster at ray://u:pw123456@head:10001 is down")

    (outcome,) = await run_specs(Down(), [RunSpec(agent_factory=CALC, message="hi")])
    assert outcome.error is not None and outcome.error.type == "ConnectionError"
    assert "pw123456" not in outcome.error.message


def test_executors_refuse_bad_limits() -> None:
    with pytest.raises(ScaleError):
        InProcessExecutor(concurrency=0)
    with pytest.raises(ScaleError):
        RayExecutor(num_cpus=0)
    with pytest.raises(ScaleError):
        RayExecutor(cpus_per_run=0)


async def test_ray_executor_without_ray_is_a_clear_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    executor = RayExecutor()
    with pytest.raises(RayUnavailableError) as missing:
        await executor.submit(RunSpec(agent_factory=CALC, message="hi"))
    assert missing.value.code == "ERR_RAY_MISSING" and "agentfootprint[ray]" in str(missing.value)
    assert isinstance(missing.value, ImportError)


async def test_ray_executor_wraps_a_failed_start_in_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeRay:
        calls: ClassVar[list[dict[str, object]]] = []

        @staticmethod
        def is_initialized() -> bool:
            return False

        @classmethod
        def init(cls, **kwargs: object) -> None:
            cls.calls.append(kwargs)
            raise ConnectionError("no cluster at ray://ops:s3cr3t-pass@head:10001")

    monkeypatch.setitem(sys.modules, "ray", FakeRay)
    with pytest.raises(RayExecutorError) as failed:
        RayExecutor(address="ray://ops:s3cr3t-pass@head:10001").start()
    assert failed.value.code == "ERR_RAY_EXECUTOR" and "s3cr3t" not in str(failed.value)
    with pytest.raises(RayExecutorError):
        RayExecutor(num_cpus=2).start()
    assert FakeRay.calls[1]["address"] == "local" and FakeRay.calls[1]["num_cpus"] == 2
    assert "num_cpus" not in FakeRay.calls[0] and FakeRay.calls[0]["include_dashboard"] is False
