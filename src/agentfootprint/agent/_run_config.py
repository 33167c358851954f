"""``.configure(fn)``: a per-run resolver of the model and the base instructions, called once when a turn starts;
what it returns is committed to the turn's record before the first model call."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentfootprint.errors import AgentFootprintError, safe_segment, validation_field
from agentfootprint.identity import Identity


class RunConfig(BaseModel):
    """What a resolver may change for one run: the model every call uses, and the base system prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, min_length=1, max_length=200)
    instructions: str | None = Field(default=None, max_length=1_000_000)


@dataclass(frozen=True)
class RunConfigContext:
    """What a resolver is given: the turn's message and caller, its run id, and what the agent was built with."""

    message: str
    identity: Identity | None
    run_id: str
    session_id: str | None
    defaults: RunConfig


RunConfigFn = Callable[[RunConfigContext], Any]


class InvalidRunConfigError(AgentFootprintError, ValueError):
    """A ``.configure()`` resolver returned something that is not a run configuration; ``field`` names what."""

    code = "ERR_INVALID_RUN_CONFIG"

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"configure(): the resolver's {field} {problem}; return None or {{'model'?, 'instructions'?}}")
        self.field = field


async def resolve_run_config(fn: RunConfigFn, ctx: RunConfigContext) -> dict[str, str]:
    """The run's resolved model and instructions (the defaults where the resolver said nothing)."""
    returned = fn(ctx)
    if inspect.isawaitable(returned):
        returned = await returned
    if returned is None:
        chosen = RunConfig()
    elif isinstance(returned, RunConfig):
        chosen = returned
    elif isinstance(returned, Mapping):
        unknown = [k for k in returned if k not in ("model", "instructions")]
        if unknown:
            raise InvalidRunConfigError(f"key '{safe_segment(unknown[0])}'", "is not a run configuration field")
        try:
            chosen = RunConfig.model_validate(dict(returned))
        except ValidationError as err:
            raise InvalidRunConfigError(validation_field(err, "return value"), "is not a usable value") from None
    else:
        raise InvalidRunConfigError("return value", f"is a {type(returned).__name__}, not a mapping")
    defaults = ctx.defaults
    return {
        "model": chosen.model if chosen.model is not None else (defaults.model or ""),
        "instructions": chosen.instructions if chosen.instructions is not None else (defaults.instructions or ""),
    }


__all__ = ["InvalidRunConfigError", "RunConfig", "RunConfigContext", "RunConfigFn", "resolve_run_config"]
