"""Scale out: run many independent agent runs through an executor (in-process asyncio or Ray) and evaluate them."""

from agentfootprint.scale.evaluate import (
    Check,
    CheckResult,
    CheckSummary,
    EvaluationReport,
    EvaluationSummary,
    ItemResult,
    evaluate,
    evaluate_sync,
    expected_in_answer,
)
from agentfootprint.scale.executor import (
    Executor,
    ExecutorBase,
    InProcessExecutor,
    ProgressFn,
    RerunFailedError,
    run_specs,
)
from agentfootprint.scale.ray_executor import RayExecutor
from agentfootprint.scale.run import build_agent, load_agent_factory, run_spec
from agentfootprint.scale.spec import (
    AgentFactoryError,
    EvaluationError,
    RayExecutorError,
    RayUnavailableError,
    RunError,
    RunOutcome,
    RunSpec,
    ScaleError,
)

__all__ = [
    "AgentFactoryError",
    "Check",
    "CheckResult",
    "CheckSummary",
    "EvaluationError",
    "EvaluationReport",
    "EvaluationSummary",
    "Executor",
    "ExecutorBase",
    "InProcessExecutor",
    "ItemResult",
    "ProgressFn",
    "RayExecutor",
    "RayExecutorError",
    "RayUnavailableError",
    "RerunFailedError",
    "RunError",
    "RunOutcome",
    "RunSpec",
    "ScaleError",
    "build_agent",
    "evaluate",
    "evaluate_sync",
    "expected_in_answer",
    "load_agent_factory",
    "run_spec",
    "run_specs",
]
