"""The catalogue: one frozen payload class per known type, the registry derived from it, the page generated from
it, typed reads of delivered events, and typed refusals of what does not fit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import agentfootprint.events as events_pkg
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import (
    KNOWN_EVENT_TYPES,
    AgentEvent,
    CustomEventPayload,
    EventDispatcher,
    EventPayload,
    InvalidEventPayloadError,
    UnknownEventTypeError,
    parse_payload,
    payload_class,
    payload_classes,
)
from agentfootprint.events import catalogue as cat
from agentfootprint.events import types as t
from agentfootprint.events._docs import render
from agentfootprint.flow import RedactionPolicy, Redactor

DOCS = Path(__file__).parents[2] / "docs" / "events.md"


# ---------------------------------------------------------------- unit


def test_every_known_type_has_one_class_and_every_class_is_known() -> None:
    declared = [c.event_type for c in payload_classes()]
    assert len(declared) == len(set(declared))
    assert set(declared) == set(KNOWN_EVENT_TYPES)


def test_constants_are_the_classes_event_types() -> None:
    for cls in payload_classes():
        constant = cls.event_type.removeprefix("agentfootprint.").replace(".", "_").upper()
        assert getattr(t, constant) == cls.event_type
        assert constant in t.__all__


def test_the_package_exports_every_class_by_name() -> None:
    for cls in payload_classes():
        assert cls.__name__ in events_pkg.__all__ and getattr(events_pkg, cls.__name__) is cls
        assert cls.__name__ in cat.__all__


def test_every_class_says_when_it_fires_and_names_real_redacted_fields() -> None:
    for cls in payload_classes():
        doc = (cls.__doc__ or "").strip()
        assert doc and len(doc.splitlines()) == 1, cls.__name__
        assert set(cls.redacted) <= set(cls.model_fields), cls.__name__


def test_payloads_are_frozen() -> None:
    p = cat.AgentIterationStart(iteration=1)
    with pytest.raises(ValidationError):
        p.iteration = 2  # type: ignore[misc]


def test_mapping_has_the_given_fields_by_wire_name_in_declared_order() -> None:
    routed = cat.CompositionRouteDecided(composition="g", chosen="b", **{"from": "a"})
    assert list(routed.mapping().items()) == [("composition", "g"), ("from", "a"), ("chosen", "b")]
    assert cat.CompositionIterationStart(composition="l", **{"pass": 2}).mapping() == {"composition": "l", "pass": 2}
    paused = cat.AgentTurnEnd(status="paused", iterations=1)
    assert paused.mapping() == {"status": "paused", "iterations": 1}  # an optional field left out stays out


def test_the_seam_takes_an_object_a_mapping_or_a_factory_of_either() -> None:
    d = EventDispatcher()
    got: list[AgentEvent] = []
    d.on("*", got.append)
    d.emit(t.STREAM_TOKEN, cat.StreamToken(text="a"))
    d.emit(t.STREAM_TOKEN, {"text": "b"})
    d.emit(t.STREAM_TOKEN, lambda: cat.StreamToken(text="c"))
    d.emit(t.STREAM_TOKEN, lambda: {"text": "d"})
    assert [e.payload for e in got] == [{"text": x} for x in "abcd"]
    assert all(isinstance(e.payload, dict) for e in got)
    typed = got[0].typed
    assert isinstance(typed, cat.StreamToken) and typed.text == "a"


def test_a_payload_object_of_another_type_is_not_delivered() -> None:
    d = EventDispatcher()
    got: list[AgentEvent] = []
    d.on("*", got.append)
    assert d.emit(t.STREAM_TOKEN, cat.AgentIterationStart(iteration=1)) is None
    assert got == [] and d.listener_errors[0].error_type == "InvalidEventPayloadError"


def test_a_custom_type_reads_as_a_custom_payload() -> None:
    d = EventDispatcher()
    d.register_type("myapp.thing_done")
    got: list[AgentEvent] = []
    d.on("*", got.append)
    d.emit("myapp.thing_done", {"x": 1})
    typed = got[0].typed
    assert type(typed) is CustomEventPayload and typed.mapping() == {"x": 1}


def test_redaction_applies_to_payload_objects_as_to_mappings() -> None:
    redactor = Redactor(RedactionPolicy.of(keys=["args"], patterns=[r"\d{3}-\d{2}-\d{4}"]))

    def redact(payload: Any) -> Any:
        redactor.observe("", payload)
        return redactor.redact(payload)

    d = EventDispatcher(redact=redact)
    got: list[AgentEvent] = []
    d.on("*", got.append)
    d.emit(t.STREAM_TOOL_START, lambda: cat.StreamToolStart(tool_call_id="c", name="n", args={"ssn": "123-45-6789"}))
    d.emit(t.STREAM_TOKEN, cat.StreamToken(text="ssn 123-45-6789"))
    assert got[0].payload["args"] == "[REDACTED]" and got[1].payload == {"text": "ssn [REDACTED]"}
    view = got[0].typed
    assert isinstance(view, cat.StreamToolStart) and view.args == "[REDACTED]"  # the view reads what was delivered


def test_the_view_reads_a_missing_field_as_none() -> None:
    view = cat.StreamLlmEnd.view({"content": "hi"})
    assert view.content == "hi" and view.usage is None and view.model_fields_set == {"content"}


def test_docs_page_is_generated_from_the_catalogue() -> None:
    assert DOCS.read_text(encoding="utf-8") == render(), (
        "docs/events.md is stale: run `python -m agentfootprint.events._docs docs/events.md`"
    )


def test_docs_page_lists_every_type_and_its_redacted_fields() -> None:
    page = render()
    for cls in payload_classes():
        assert f"### `{cls.event_type}`" in page
        for name in cls.redacted:
            wire = cls.model_fields[name].alias or name
            assert f"| `{wire}` |" in page


# ---------------------------------------------------------------- property: object ⇄ mapping


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_SCALARS: dict[Any, st.SearchStrategy[Any]] = {
    str: st.text(max_size=12),
    int: st.integers(),
    bool: st.booleans(),
    str | None: st.none() | st.text(max_size=12),
    int | None: st.none() | st.integers(),
    bool | None: st.none() | st.booleans(),
    int | float: st.integers() | st.floats(allow_nan=False, allow_infinity=False),  # JSON carries no infinity
    int | float | None: st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False),
    list[str]: st.lists(st.text(max_size=5), max_size=3),
    list[str] | None: st.none() | st.lists(st.text(max_size=5), max_size=3),
    list[int] | None: st.none() | st.lists(st.integers(), max_size=3),
    dict[str, int]: st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
}


def _value(annotation: Any) -> st.SearchStrategy[Any]:
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if annotation in (dict[str, Any], dict[str, Any] | None):
        return st.dictionaries(st.text(max_size=5), _JSON, max_size=3)
    if annotation in (list[dict[str, Any]], list[dict[str, Any]] | None):
        return st.lists(st.dictionaries(st.text(max_size=5), _JSON, max_size=2), max_size=2)
    if annotation in (list[Any], list[Any] | None):
        return st.lists(_JSON, max_size=3)
    return _JSON  # Any


@st.composite
def _payloads(draw: st.DrawFn) -> EventPayload:
    cls = draw(st.sampled_from(payload_classes()))
    values: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        if info.is_required() or draw(st.booleans()):
            values[info.alias or name] = draw(_value(info.annotation))
    return cls.model_validate(values)


@settings(max_examples=300, deadline=None)
@given(_payloads())
def test_payload_object_and_mapping_round_trip(payload: EventPayload) -> None:
    mapping = payload.mapping()
    again = type(payload).from_mapping(mapping)
    assert again == payload and again.mapping() == mapping
    assert parse_payload(payload.event_type, mapping) == payload
    event = AgentEvent(type=payload.event_type, payload=mapping)
    assert json.loads(event.model_dump_json())["payload"] == json.loads(json.dumps(mapping))
    assert type(payload).view(event.payload).mapping() == mapping


# ---------------------------------------------------------------- hostile input


@pytest.mark.parametrize("bad", ["stream.nope", "agentfootprint.nope.x", "<script>alert(1)</script>", "", 7, None])
def test_an_unknown_type_is_refused_with_a_code(bad: Any) -> None:
    with pytest.raises(UnknownEventTypeError) as info:
        payload_class(bad)
    assert info.value.code == "ERR_UNKNOWN_EVENT_TYPE" and isinstance(info.value, AgentFootprintError)
    assert "<script>" not in str(info.value)


SECRET = "sk-live-4f9a8b7c6d5e"


@pytest.mark.parametrize(
    ("event_type", "data", "field"),
    [
        ("stream.token", {"text": ["not", SECRET]}, "text"),
        ("stream.token", {}, "text"),
        ("stream.token", {"text": "ok", SECRET: 1}, "*"),
        ("agent.iteration_end", {"iteration": SECRET, "tool_calls": 0}, "iteration"),
        (
            "stream.tool_end",
            {"tool_call_id": "c", "name": "n", "content": "x", "is_error": SECRET, "error_code": None},
            "is_error",
        ),
        ("composition.iteration_start", {"composition": "l", "pass": SECRET}, "pass"),
    ],
)
def test_a_misfit_payload_names_the_field_never_the_value(event_type: str, data: Any, field: str) -> None:
    with pytest.raises(InvalidEventPayloadError) as info:
        parse_payload(event_type, data)
    assert info.value.code == "ERR_INVALID_EVENT_PAYLOAD" and info.value.field == field
    assert SECRET not in str(info.value) and SECRET not in repr(info.value.args)
    assert info.value.__cause__ is None


def test_a_payload_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(InvalidEventPayloadError) as info:
        parse_payload("stream.token", [SECRET])  # type: ignore[arg-type]
    assert info.value.field == "payload" and SECRET not in str(info.value)
