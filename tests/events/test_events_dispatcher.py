"""EventDispatcher: subscription forms, unsubscribe, isolation, async listeners, redaction, zero-cost path."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import (
    KNOWN_EVENT_TYPES,
    AgentEvent,
    EventDispatcher,
    EventMeta,
    InvalidListenerError,
    ListenerError,
    UnknownEventTypeError,
)
from agentfootprint.events import types as t


def collect(d: EventDispatcher, pattern: str) -> list[AgentEvent]:
    got: list[AgentEvent] = []
    d.on(pattern, got.append)
    return got


# ---------------------------------------------------------------- subscription forms


def test_exact_type_full_and_short() -> None:
    d = EventDispatcher()
    full = collect(d, "agentfootprint.stream.llm_start")
    short = collect(d, "stream.llm_start")
    d.emit(t.STREAM_LLM_START, {"iteration": 1})
    d.emit(t.STREAM_LLM_END, {"iteration": 1})
    assert [e.type for e in full] == [t.STREAM_LLM_START]
    assert [e.type for e in short] == [t.STREAM_LLM_START]
    assert full[0].payload == {"iteration": 1}


def test_domain_glob_both_forms_and_star() -> None:
    d = EventDispatcher()
    stream = collect(d, "stream.*")
    stream_full = collect(d, "agentfootprint.stream.*")
    everything = collect(d, "*")
    d.emit(t.STREAM_TOKEN, {"text": "a"})
    d.emit(t.AGENT_TURN_END, {})
    d.emit(t.STREAM_TOOL_END, {})
    assert [e.type for e in stream] == [t.STREAM_TOKEN, t.STREAM_TOOL_END]
    assert [e.type for e in stream_full] == [t.STREAM_TOKEN, t.STREAM_TOOL_END]
    assert [e.type for e in everything] == [t.STREAM_TOKEN, t.AGENT_TURN_END, t.STREAM_TOOL_END]


def test_short_form_emit() -> None:
    d = EventDispatcher()
    got = collect(d, "*")
    d.emit("agent.turn_start", {})
    assert got[0].type == t.AGENT_TURN_START
    assert got[0].short_type == "agent.turn_start" and got[0].domain == "agent" and got[0].name == "turn_start"


@pytest.mark.parametrize(
    "pattern", ["stream.nope", "agentfootprint.stream.nope", "nope.*", "nope", "", "agentfootprint.", "stream.**"]
)
def test_unknown_types_are_refused_by_name(pattern: str) -> None:
    d = EventDispatcher()
    with pytest.raises(UnknownEventTypeError) as info:
        d.on(pattern, lambda e: None)
    assert repr(pattern) in str(info.value)
    assert info.value.code == "ERR_UNKNOWN_EVENT_TYPE"
    assert isinstance(info.value, AgentFootprintError)


def test_non_str_pattern_and_non_callable_listener_refused() -> None:
    d = EventDispatcher()
    with pytest.raises(UnknownEventTypeError):
        d.on(42, lambda e: None)  # type: ignore[arg-type]
    with pytest.raises(InvalidListenerError):
        d.on("*", "not callable")  # type: ignore[arg-type]


def test_delivery_in_subscription_order_across_forms() -> None:
    d = EventDispatcher()
    order: list[str] = []
    d.on("*", lambda e: order.append("all"))
    d.on("stream.llm_start", lambda e: order.append("exact"))
    d.on("stream.*", lambda e: order.append("domain"))
    d.emit(t.STREAM_LLM_START)
    assert order == ["all", "exact", "domain"]


def test_emitting_an_unknown_type_with_listeners_raises() -> None:
    d = EventDispatcher()
    d.on("*", lambda e: None)
    with pytest.raises(UnknownEventTypeError):
        d.emit("stream.typo", {})


def test_register_custom_type() -> None:
    d = EventDispatcher()
    assert d.register_type("myapp.thing_done") == "agentfootprint.myapp.thing_done"
    got = collect(d, "myapp.*")
    d.emit("myapp.thing_done", {"x": 1})
    assert got[0].type == "agentfootprint.myapp.thing_done"
    assert d.is_known("myapp.thing_done")
    for bad in ["Bad.Name", "x", "a.b.c.d", "agentfootprint.x", ""]:
        with pytest.raises(UnknownEventTypeError):
            d.register_type(bad)


# ---------------------------------------------------------------- meta


def test_meta_fields_and_sequence() -> None:
    d = EventDispatcher()
    got = collect(d, "*")
    d.emit(t.STREAM_LLM_START, {}, run_id="r1", runtime_stage_id="call-llm#3", iteration=2, timestamp=12.5)
    d.emit(t.STREAM_LLM_END, {})
    assert got[0].meta == EventMeta(run_id="r1", runtime_stage_id="call-llm#3", iteration=2, timestamp=12.5, seq=1)
    assert got[1].meta.seq == 2 and got[1].meta.run_id is None and got[1].meta.timestamp > 0


def test_event_is_frozen_and_serialisable() -> None:
    d = EventDispatcher()
    got = collect(d, "*")
    event = d.emit(t.COST_USAGE, {"input_tokens": 3})
    assert event is got[0]
    with pytest.raises(ValidationError):  # pydantic's frozen-instance error
        event.type = "x"  # type: ignore[misc]
    assert event.model_dump(mode="json")["payload"] == {"input_tokens": 3}


def test_payload_is_copied_from_the_caller() -> None:
    d = EventDispatcher()
    got = collect(d, "*")
    payload = {"a": 1}
    d.emit(t.COST_USAGE, payload)
    payload["a"] = 2
    assert got[0].payload == {"a": 1}


# ---------------------------------------------------------------- unsubscribe


def test_unsubscribe_is_idempotent_and_exact() -> None:
    d = EventDispatcher()
    a: list[AgentEvent] = []
    b: list[AgentEvent] = []
    off_a = d.on("*", a.append)
    d.on("*", b.append)
    d.emit(t.STREAM_TOKEN)
    off_a()
    off_a()
    d.emit(t.STREAM_TOKEN)
    assert len(a) == 1 and len(b) == 2


def test_same_function_subscribed_twice_unsubscribes_one_at_a_time() -> None:
    d = EventDispatcher()
    got: list[AgentEvent] = []
    off1 = d.on("*", got.append)
    d.on("*", got.append)
    d.emit(t.STREAM_TOKEN)
    off1()
    d.emit(t.STREAM_TOKEN)
    assert len(got) == 3


def test_unsubscribe_during_delivery_is_safe() -> None:
    d = EventDispatcher()
    got: list[str] = []
    offs: list[Any] = []

    def first(e: AgentEvent) -> None:
        got.append("first")
        offs[0]()

    offs.append(d.on("*", first))
    d.on("*", lambda e: got.append("second"))
    d.emit(t.STREAM_TOKEN)
    d.emit(t.STREAM_TOKEN)
    assert got == ["first", "second", "second"]


def test_clear_and_listener_probes() -> None:
    d = EventDispatcher()
    assert not d.has_any_listeners and not d.has_listeners(t.STREAM_TOKEN)
    off = d.on("stream.token", lambda e: None)
    assert d.has_any_listeners
    assert d.has_listeners(t.STREAM_TOKEN) and d.has_listeners("stream.token")
    assert not d.has_listeners(t.STREAM_LLM_START)
    off()
    assert not d.has_listeners(t.STREAM_TOKEN)
    d.on("*", lambda e: None)
    assert d.has_listeners(t.ERROR_RUN)
    d.clear()
    assert not d.has_any_listeners and not d.has_listeners(t.ERROR_RUN)


# ---------------------------------------------------------------- zero-cost path


def test_no_listener_means_no_event_and_no_payload_factory_call() -> None:
    d = EventDispatcher()
    calls: list[int] = []

    def factory() -> dict[str, Any]:
        calls.append(1)
        return {"big": "x"}

    assert d.emit(t.STREAM_TOKEN, factory) is None
    d.on("agent.*", lambda e: None)
    assert d.emit(t.STREAM_TOKEN, factory) is None
    assert calls == []
    got = collect(d, "stream.token")
    d.emit(t.STREAM_TOKEN, factory)
    assert calls == [1] and got[0].payload == {"big": "x"}


def test_no_listener_emit_allocates_nothing_per_call() -> None:
    d = EventDispatcher()
    d.on("agent.*", lambda e: None)
    d.emit(t.STREAM_TOKEN, {"warm": 1})
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(10_000):
            d.emit(t.STREAM_TOKEN, None)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename") if "dispatcher" in str(s.traceback))
    assert grown < 1024


def test_unknown_type_without_listeners_is_a_noop() -> None:
    d = EventDispatcher()
    assert d.emit("stream.typo", {}) is None


# ---------------------------------------------------------------- isolation


def test_raising_listener_is_isolated_and_recorded() -> None:
    d = EventDispatcher()
    got: list[AgentEvent] = []

    def bad(e: AgentEvent) -> None:
        raise ValueError("listener broke")

    d.on("*", bad)
    d.on("*", got.append)
    event = d.emit(t.AGENT_TURN_START, {"x": 1})
    assert event is not None and got == [event]
    assert d.listener_errors == [ListenerError(t.AGENT_TURN_START, bad.__qualname__, "ValueError", "listener broke")]
    kind, _who, error_type, _message = d.listener_errors[0]
    assert kind == t.AGENT_TURN_START and error_type == "ValueError"


def test_listener_errors_are_capped() -> None:
    d = EventDispatcher(max_listener_errors=3)
    d.on("*", lambda e: 1 / 0)
    for _ in range(10):
        d.emit(t.STREAM_TOKEN)
    assert len(d.listener_errors) == 3 and d.dropped_listener_errors == 7


def test_raising_payload_factory_drops_the_event_only() -> None:
    d = EventDispatcher()
    got = collect(d, "*")

    def factory() -> dict[str, Any]:
        raise KeyError("missing")

    assert d.emit(t.STREAM_TOKEN, factory) is None
    assert got == [] and d.listener_errors[0].listener == "<payload>"


def test_base_exceptions_are_not_swallowed() -> None:
    d = EventDispatcher()

    def stop(e: AgentEvent) -> None:
        raise KeyboardInterrupt

    d.on("*", stop)
    with pytest.raises(KeyboardInterrupt):
        d.emit(t.STREAM_TOKEN)


# ---------------------------------------------------------------- redaction


def test_redact_hook_sees_payload_before_listeners() -> None:
    def redact(payload: Any) -> Any:
        return {k: ("[REDACTED]" if k == "api_key" else v) for k, v in payload.items()}

    d = EventDispatcher(redact=redact)
    got = collect(d, "*")
    d.emit(t.STREAM_TOOL_START, {"api_key": "sk-SECRET", "tool": "x"})
    assert got[0].payload == {"api_key": "[REDACTED]", "tool": "x"}


@pytest.mark.parametrize("result", ["not a dict", None, ["x"]])
def test_redact_failures_fail_closed(result: Any) -> None:
    d = EventDispatcher(redact=lambda p: result)
    got = collect(d, "*")
    assert d.emit(t.STREAM_TOKEN, {"secret": "sk-SECRET"}) is None
    assert got == []
    assert "sk-SECRET" not in repr(d.listener_errors)


def test_raising_redact_fails_closed() -> None:
    def redact(payload: Any) -> Any:
        raise RuntimeError("redactor broke")

    d = EventDispatcher(redact=redact)
    got = collect(d, "*")
    assert d.emit(t.STREAM_TOKEN, {"secret": "x"}) is None and got == []
    assert d.listener_errors[0].listener == "<payload or redact>"


# ---------------------------------------------------------------- async listeners


async def test_async_listener_runs_on_the_loop_and_drain_waits() -> None:
    d = EventDispatcher()
    got: list[str] = []

    async def listener(e: AgentEvent) -> None:
        await asyncio.sleep(0.01)
        got.append(e.type)

    d.on("*", listener)
    d.emit(t.STREAM_TOKEN)
    d.emit(t.STREAM_LLM_END)
    assert d.pending == 2
    assert await d.drain() == 0
    assert got == [t.STREAM_TOKEN, t.STREAM_LLM_END] and d.pending == 0


async def test_async_listener_errors_are_recorded() -> None:
    d = EventDispatcher()

    async def bad(e: AgentEvent) -> None:
        raise RuntimeError("async broke")

    d.on("*", bad)
    d.emit(t.STREAM_TOKEN)
    await d.drain()
    assert [(x.error_type, x.message) for x in d.listener_errors] == [("RuntimeError", "async broke")]


async def test_drain_timeout_reports_pending() -> None:
    d = EventDispatcher()
    release = asyncio.Event()

    async def slow(e: AgentEvent) -> None:
        await release.wait()

    d.on("*", slow)
    d.emit(t.STREAM_TOKEN)
    assert await d.drain(timeout=0.01) == 1
    release.set()
    assert await d.drain() == 0


async def test_async_listener_that_emits_more_is_drained_too() -> None:
    d = EventDispatcher()
    got: list[str] = []

    async def chain(e: AgentEvent) -> None:
        await asyncio.sleep(0)
        got.append(e.type)
        if e.type == t.STREAM_TOKEN:
            d.emit(t.STREAM_LLM_END)

    d.on("*", chain)
    d.emit(t.STREAM_TOKEN)
    await d.drain()
    assert got == [t.STREAM_TOKEN, t.STREAM_LLM_END]


def test_async_listener_without_a_running_loop_waits_for_drain_sync() -> None:
    d = EventDispatcher()
    got: list[str] = []

    async def listener(e: AgentEvent) -> None:
        got.append(e.type)

    d.on("*", listener)
    d.emit(t.STREAM_TOKEN)
    assert got == [] and d.pending == 1
    assert d.drain_sync() == 0
    assert got == [t.STREAM_TOKEN]


def test_dispatcher_survives_successive_event_loops() -> None:
    d = EventDispatcher()
    got: list[int] = []

    async def listener(e: AgentEvent) -> None:
        got.append(e.meta.seq)

    d.on("*", listener)

    async def one_run() -> None:
        d.emit(t.STREAM_TOKEN)
        await d.drain()

    asyncio.run(one_run())
    asyncio.run(one_run())
    assert got == [1, 2]


# ---------------------------------------------------------------- property: glob matching


PATTERNS = st.sampled_from(
    [
        "*",
        "agentfootprint.*",
        *sorted({f"{x.split('.')[1]}.*" for x in KNOWN_EVENT_TYPES}),
        *sorted(KNOWN_EVENT_TYPES),
        *sorted(x.removeprefix("agentfootprint.") for x in KNOWN_EVENT_TYPES),
    ]
)


def _expected(pattern: str, event_type: str) -> bool:
    if pattern in ("*", "agentfootprint.*"):
        return True
    full = pattern if pattern.startswith("agentfootprint.") else "agentfootprint." + pattern
    if full.endswith(".*"):
        return event_type.split(".")[1] == full.split(".")[1]
    return full == event_type


@given(st.lists(PATTERNS, min_size=1, max_size=5), st.lists(st.sampled_from(sorted(KNOWN_EVENT_TYPES)), max_size=10))
def test_each_listener_gets_exactly_its_matching_events(patterns: list[str], emitted: list[str]) -> None:
    d = EventDispatcher()
    boxes: list[list[str]] = []
    for pattern in patterns:
        box: list[str] = []
        d.on(pattern, lambda e, box=box: box.append(e.type))  # type: ignore[misc]
        boxes.append(box)
    for event_type in emitted:
        assert d.has_listeners(event_type) == any(_expected(p, event_type) for p in patterns)
        d.emit(event_type, {})
    for pattern, box in zip(patterns, boxes, strict=True):
        assert box == [e for e in emitted if _expected(pattern, e)]
