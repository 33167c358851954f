"""A stage event asks the run's sink first: nobody listening means no stamp read and no payload built."""

from __future__ import annotations

from typing import Any

from agentfootprint.agent._stages import emit
from agentfootprint.events import types as ev


class _Scope:
    def __init__(self) -> None:
        self.stamps = 0

    @property
    def runtime_stage_id(self) -> str:
        self.stamps += 1
        return "call-llm#5"


class _Events:
    def __init__(self, listening: bool) -> None:
        self.listening = listening

    def has_listeners(self, event_type: str) -> bool:
        return self.listening


class _Run:
    def __init__(self, listening: bool) -> None:
        self.events = _Events(listening)
        self.sent: list[tuple[str, Any, dict[str, Any]]] = []

    def emit(self, event_type: str, payload: Any, **stamp: Any) -> None:
        self.sent.append((event_type, payload() if callable(payload) else payload, stamp))


def test_nobody_listening_reads_no_stamp_and_builds_no_payload() -> None:
    run, scope = _Run(False), _Scope()
    built: list[int] = []
    emit(run, scope, ev.AGENT_ITERATION_START, lambda: built.append(1), 2)  # type: ignore[arg-type]
    assert (run.sent, scope.stamps, built) == ([], 0, [])


def test_a_listened_event_carries_the_stage_stamp_and_iteration() -> None:
    run, scope = _Run(True), _Scope()
    emit(run, scope, ev.AGENT_ITERATION_START, {"iteration": 2}, 2)  # type: ignore[arg-type]
    stamp = {"runtime_stage_id": "call-llm#5", "iteration": 2}
    assert run.sent == [(ev.AGENT_ITERATION_START, {"iteration": 2}, stamp)]
    assert scope.stamps == 1


def test_the_runs_listener_check_is_the_sinks_own_and_sees_a_listener_added_mid_run() -> None:
    from agentfootprint.agent._run import RunEvents
    from agentfootprint.events import EventDispatcher
    from agentfootprint.flow import RedactionPolicy, Redactor

    sink = EventDispatcher()
    events = RunEvents(sink, Redactor(RedactionPolicy()))
    assert events.has_listeners(ev.AGENT_ITERATION_START) is False
    off = sink.on(ev.AGENT_ITERATION_START, lambda e: None)
    assert events.has_listeners(ev.AGENT_ITERATION_START) is True
    assert events.has_listeners(ev.STREAM_TOKEN) is False
    off()
    assert events.has_listeners(ev.AGENT_ITERATION_START) is False
