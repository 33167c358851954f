"""Plain-data run specs and outcomes: what an executor runs and what it hands back, as JSON-safe models."""

from __future__ import annotations

import os
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint._loader import FACTORY_PATTERN
from agentfootprint.errors import AgentFootprintError

MAX_ERROR_CHARS = 500
RunStatus = Literal["completed", "paused", "error"]


class ScaleError(AgentFootprintError):
    """Root of the scale-out refusals (factories, executors, evaluations)."""

    code = "ERR_SCALE"


class AgentFactoryError(ScaleError, ValueError):
    """An agent factory path that cannot be imported or called, or that did not return an Agent."""

    code = "ERR_AGENT_FACTORY"


class RayUnavailableError(ScaleError, ImportError):
    """``RayExecutor`` was used but ray is not installed (``pip install 'agentfootprint[ray]'``)."""

    code = "ERR_RAY_MISSING"


class RayExecutorError(ScaleError, RuntimeError):
    """Ray could not be started or reached at the given address."""

    code = "ERR_RAY_EXECUTOR"


class EvaluationError(ScaleError, ValueError):
    """An evaluation that cannot run as asked (bad dataset item, bad check); names the culprit."""

    code = "ERR_EVALUATION"


class RunSpec(BaseModel):
    """One independent run as plain data: an importable agent factory, the input, ablated source ids and a seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent_factory: str = Field(pattern=FACTORY_PATTERN, max_length=300)
    message: str
    identity: dict[str, Any] | None = None
    ablate: list[str] = Field(default_factory=list)
    seed: int | None = None
    history: list[dict[str, Any]] = Field(default_factory=list)


class RunError(BaseModel):
    """What went wrong in a run: the exception's type, its stable code if typed, and a scrubbed message."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    code: str | None = None


class RunOutcome(BaseModel):
    """One run's result: answer, status, run id, error, the run's recording as JSON and its wall time."""

    status: RunStatus
    answer: str | None = None
    run_id: str | None = None
    error: RunError | None = None
    recording: dict[str, Any] | None = None
    elapsed_s: float = 0.0
    worker: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "error"


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|DSN|DATABASE_URL", re.IGNORECASE)
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 [redacted]"),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"), "[redacted]"),
    (re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"), "[redacted]"),
    (
        re.compile(
            r"(?i)(?<![A-Za-z])(api[_-]?key|access[_-]?token|token|secret|password|passwd|authorization)"
            r"(\s*[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&]+"
        ),
        r"\1\2[redacted]",
    ),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
REDACTED = "[redacted]"


def _env_secrets() -> list[str]:
    values = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8 and not v.isalpha()]
    return sorted(set(values), key=len, reverse=True)


def scrub_message(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """An error message safe to ship and show: secret-looking values and env secrets replaced, cut to ``limit``."""
    for secret in _env_secrets():
        text = text.replace(secret, REDACTED)
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    text = _CONTROL.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_error(exc: BaseException) -> RunError:
    """A shippable description of ``exc``: type name, ``code`` for agentfootprint errors, scrubbed message."""
    code = exc.code if isinstance(exc, AgentFootprintError) else None
    return RunError(type=type(exc).__name__, message=scrub_message(str(exc)), code=code)
