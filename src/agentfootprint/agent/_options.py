"""A run's options, read once at the door: correlation fields for every event, the abort signal and timeout, the
caller's redaction. Each is checked by name before anything runs; a refusal never quotes the value."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import CancelToken, RedactionPolicy

_MAX_ID = 200
_ENV_KEYS = frozenset({"signal", "timeout_ms", "trace_id"})


class InvalidRunOptionError(AgentFootprintError, ValueError):
    """A run option that cannot be used (wrong type, too long, unknown ``env`` key); ``option`` names it."""

    code = "ERR_INVALID_RUN_OPTION"

    def __init__(self, door: str, option: str, problem: str) -> None:
        super().__init__(f"{door}: option '{option}' {problem}")
        self.door = door
        self.option = option


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What a door was given besides its input, validated."""

    session_id: str | None = None
    correlation_id: str | None = None
    trace_id: str | None = None
    signal: CancelToken | None = None
    timeout: float | None = None
    redact: RedactionPolicy | None = None
    seed: int | None = None
    time: Any = None
    """The ``time`` given (read by an agent with ``.time()``; refused by one without)."""
    on_event: Callable[[Any], Any] | None = None
    """A listener for this run's own events only (every type, redacted): a server's per-request stream."""

    def meta(self) -> dict[str, str]:
        """The fields every event of the run carries on its meta (only those that were given)."""
        out = {"session_id": self.session_id, "correlation_id": self.correlation_id, "trace_id": self.trace_id}
        return {k: v for k, v in out.items() if v is not None}


def _id(door: str, option: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > _MAX_ID:
        raise InvalidRunOptionError(door, option, f"must be a non-empty str of at most {_MAX_ID} characters")
    return value


def read_redaction(door: str, value: Any) -> RedactionPolicy | None:
    """A caller's ``redact``: a ``RedactionPolicy`` or ``{"keys": [...], "patterns": [...]}``; checked like the
    builder's (a pattern that does not compile is refused without being quoted)."""
    if value is None or isinstance(value, RedactionPolicy):
        return value
    if not isinstance(value, Mapping) or set(value) - {"keys", "patterns"}:
        raise InvalidRunOptionError(door, "redact", 'must be a RedactionPolicy or {"keys": [...], "patterns": [...]}')
    keys, patterns = value.get("keys") or (), value.get("patterns") or ()
    if isinstance(keys, str) or isinstance(patterns, str):
        raise InvalidRunOptionError(door, "redact", "keys and patterns must be lists of str")
    keys, patterns = list(keys), list(patterns)
    if not all(isinstance(k, str) and k for k in keys) or not all(isinstance(p, str) and p for p in patterns):
        raise InvalidRunOptionError(door, "redact", "keys and patterns must be lists of non-empty str")
    try:
        return RedactionPolicy.of(keys=keys, patterns=patterns)
    except Exception:
        raise InvalidRunOptionError(door, "redact", "holds a pattern that is not a valid regular expression") from None


class RunOptionArgs(TypedDict, total=False):
    """The options every run door takes (``run``, ``follow_up``, ``resume``, ``resume_on_error``)."""

    session_id: str | None
    """The hosting conversation this run belongs to: on every event's meta; scopes memory when no identity."""
    seed: int | None
    """Handed to every model call (``LLMRequest.seed``)."""
    redact: RedactionPolicy | Mapping[str, Any] | None
    """A redaction the caller adds for this run (joined with the agent's; it can only add)."""
    correlation_id: str | None
    """Your own id for this run: on every event's meta."""
    trace_id: str | None
    """An OpenTelemetry-style trace id: on every event's meta (beats ``env``'s)."""
    signal: CancelToken | None
    """Cancel the run from anywhere: ``token.cancel()`` stops it at its next stage."""
    timeout: float | None
    """Seconds the run may take."""
    env: Mapping[str, Any] | None
    """``{"signal": ..., "timeout_ms": ..., "trace_id": ...}``: the same options in one dict."""
    time: Any
    """This turn's clock, for an agent built with ``.time()``: a datetime or ``{"now": ..., "zone": ...}``."""
    on_event: Callable[[Any], Any] | None
    """A listener for this run's own events only (every type, already redacted); other runs' never reach it."""


def read_options(door: str, given: Mapping[str, Any]) -> RunOptions:
    """Every option of a run door, checked; ``trace_id`` and ``signal``/``timeout`` given directly beat ``env``'s."""
    unknown = sorted(k for k in given if k not in RunOptionArgs.__annotations__)
    if unknown:
        raise InvalidRunOptionError(door, unknown[0][:60], "is not an option of this door")
    session_id, correlation_id, trace_id = given.get("session_id"), given.get("correlation_id"), given.get("trace_id")
    signal, timeout, env = given.get("signal"), given.get("timeout"), given.get("env")
    redact, seed = given.get("redact"), given.get("seed")
    env_signal = env_timeout = env_trace = None
    if env is not None:
        if not isinstance(env, Mapping) or not all(isinstance(k, str) for k in env) or set(env) - _ENV_KEYS:
            raise InvalidRunOptionError(door, "env", "must be a dict with only signal, timeout_ms and trace_id")
        env_signal, env_trace = env.get("signal"), env.get("trace_id")
        ms = env.get("timeout_ms")
        if ms is not None:
            if isinstance(ms, bool) or not isinstance(ms, int | float) or not math.isfinite(ms) or ms <= 0:
                raise InvalidRunOptionError(door, "env.timeout_ms", "must be a positive number of milliseconds")
            env_timeout = float(ms) / 1000.0
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0
    ):
        raise InvalidRunOptionError(door, "timeout", "must be a positive number of seconds")
    chosen_signal = signal if signal is not None else env_signal
    if chosen_signal is not None and not isinstance(chosen_signal, CancelToken):
        raise InvalidRunOptionError(door, "signal", "must be an agentfootprint.flow.CancelToken")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InvalidRunOptionError(door, "seed", "must be an int")
    on_event = given.get("on_event")
    if on_event is not None and not callable(on_event):
        raise InvalidRunOptionError(door, "on_event", "must be a callable taking one event")
    return RunOptions(
        session_id=_id(door, "session_id", session_id),
        correlation_id=_id(door, "correlation_id", correlation_id),
        trace_id=_id(door, "trace_id", trace_id if trace_id is not None else env_trace),
        signal=chosen_signal,
        timeout=float(timeout) if timeout is not None else env_timeout,
        redact=read_redaction(door, redact),
        seed=seed,
        time=given.get("time"),
        on_event=on_event,
    )


__all__ = ["InvalidRunOptionError", "RunOptionArgs", "RunOptions", "read_options", "read_redaction"]
