"""The import's fast paths read exactly what the plain reading does: OpenInference spans through the prefix cache,
string-only attribute lists through the one-comprehension read, and shared history entries in the builder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.interop import InvalidTraceError, import_trace
from agentfootprint.interop._conventions import PrefixCache, index_groups, indexed, read_llm
from agentfootprint.interop._spans import Span, spans_from_otlp_json

IN = "llm.input_messages"


def oi_attrs(messages: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "m"}
    for i, m in enumerate(messages):
        for key, value in m.items():
            attrs[f"{IN}.{i}.message.{key}"] = value
    attrs["llm.output_messages.0.message.role"] = "assistant"
    attrs["llm.output_messages.0.message.content"] = "done"
    attrs["llm.tools.0.tool.json_schema"] = json.dumps({"type": "function", "function": {"name": "lookup"}})
    attrs.update(extra or {})
    return attrs


def span(n: int, attrs: dict[str, Any]) -> Span:
    return Span(f"{1:032x}", f"{n + 1:016x}", None, "ChatModel", n * 10, n * 10 + 5, attrs)


def read(spans: list[Span], cache: PrefixCache | None) -> list[tuple[Any, ...]]:
    out = []
    for s in spans:
        c = read_llm(s, cache)
        out.append(([m.as_dict() for m in c.messages], c.system, c.output.as_dict(), c.tools, c.has_content))
    return out


message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": st.text(max_size=8)},
    optional={"tool_call_id": st.sampled_from(["c1", "c2"]), "name": st.text(max_size=3)},
)
edit = st.sampled_from(["append", "same", "change-middle", "drop-first", "add-key", "gap", "remove-key"])


@settings(max_examples=150, deadline=None)
@given(st.lists(message, min_size=1, max_size=4), st.lists(st.tuples(edit, message), min_size=1, max_size=6))
def test_the_prefix_cache_reads_each_span_as_a_fresh_reading_does(
    first: list[dict[str, Any]], edits: list[tuple[str, dict[str, Any]]]
) -> None:
    history, spans = list(first), [span(0, oi_attrs(first))]
    extra: dict[str, Any] = {}
    for n, (kind, m) in enumerate(edits, start=1):
        if kind == "append":
            history = [*history, m]
        elif kind == "change-middle" and history:
            history = [*history[: len(history) // 2], m, *history[len(history) // 2 + 1 :]]
        elif kind == "drop-first" and len(history) > 1:
            history = history[1:]
        elif kind == "add-key" and history:
            extra = {f"{IN}.0.message.name": "late"}
        elif kind == "remove-key":
            extra = {}
        attrs = oi_attrs(history, extra)
        if kind == "gap":  # a message at a far index, then the next span fills the gap below it
            attrs[f"{IN}.{len(history) + 3}.message.role"] = "user"
            attrs[f"{IN}.{len(history) + 3}.message.content"] = "late"
        spans.append(span(n, attrs))
    assert read(spans, PrefixCache()) == read(spans, None)


def test_a_message_at_a_lower_new_index_keeps_index_order() -> None:
    a = oi_attrs([{"role": "user", "content": "a"}])
    b = {**a, f"{IN}.5.message.role": "user", f"{IN}.5.message.content": "f"}
    c = {**b, f"{IN}.2.message.role": "user", f"{IN}.2.message.content": "c"}
    got = read([span(0, a), span(1, b), span(2, c)], PrefixCache())
    assert [m["content"] for m in got[2][0]] == ["a", "c", "f"]


def test_index_groups_reads_several_prefixes_as_indexed_reads_each() -> None:
    attrs = {"a.1.x": 1, "a.0.y": 2, "b.3.z": 3, "a.x.y": 4, "a.2": 5, "ab.1.x": 6, "c": 7, "b.٣.z": 8}
    assert index_groups(attrs, ("a.", "b.")) == {"a.": indexed(attrs, "a."), "b.": indexed(attrs, "b.")}
    assert index_groups(attrs, ("a.", "b.")) == {"a.": {0: {"y": 2}, 1: {"x": 1}}, "b.": {3: {"z": 3}}}


def doc(attributes: list[Any]) -> dict[str, Any]:
    sp = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "s", "attributes": attributes}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [sp]}]}]}


def test_string_only_attributes_and_mixed_ones_read_alike() -> None:
    strings = [{"key": "a", "value": {"stringValue": "x"}}, {"key": "a", "value": {"stringValue": "y"}}]
    assert spans_from_otlp_json(doc(strings))[0].attributes == {"a": "y"}
    mixed = [*strings, {"key": "n", "value": {"intValue": "3"}}, {"key": "s", "value": {"stringValue": 5}}]
    assert spans_from_otlp_json(doc(mixed))[0].attributes == {"a": "y", "n": 3, "s": "5"}


@pytest.mark.parametrize(
    "bad",
    [
        {"key": 5, "value": {"stringValue": "SECRET-VALUE"}},
        {"key": ["k"], "value": {"stringValue": "SECRET-VALUE"}},
        "key=SECRET-VALUE",
        {"value": {"stringValue": "SECRET-VALUE"}},
    ],
)
def test_a_key_that_is_not_a_string_is_refused_on_the_fast_path_too(bad: Any) -> None:
    attributes = [{"key": "a", "value": {"stringValue": "x"}}, bad]
    with pytest.raises(InvalidTraceError) as err:
        spans_from_otlp_json(doc(attributes))
    assert err.value.code == "ERR_INVALID_TRACE"
    assert "SECRET" not in str(err.value)


def otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    out = []
    for n, attrs in enumerate(spans):
        out.append(
            {
                "traceId": "ab" * 16,
                "spanId": f"{n + 1:016x}",
                "name": "ChatModel",
                "startTimeUnixNano": str(10 * n),
                "endTimeUnixNano": str(10 * n + 5),
                "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
            }
        )
    return {"resourceSpans": [{"scopeSpans": [{"spans": out}]}]}


def test_a_middle_message_a_later_span_rewrote_is_not_taken_from_the_earlier_span() -> None:
    msgs = [{"role": "user", "content": f"m{i}"} for i in range(4)]
    later = [*msgs[:2], {"role": "user", "content": "rewritten"}, msgs[3], {"role": "user", "content": "m4"}]
    rec = import_trace(otlp([oi_attrs(msgs), oi_attrs(later)]))
    history = rec.snapshot.state["history"]
    assert [m["content"] for m in history] == ["m0", "m1", "rewritten", "m3", "m4"]


@pytest.mark.parametrize("was_on", [True, False])
def test_the_collector_is_left_as_it_was_after_an_import_or_a_refusal(was_on: bool) -> None:
    import gc

    msgs = [{"role": "user", "content": "m"}]
    (gc.enable if was_on else gc.disable)()
    try:
        assert import_trace(otlp([oi_attrs(msgs)])).snapshot.state["answer"] == "done"
        assert gc.isenabled() is was_on
        with pytest.raises(InvalidTraceError):
            import_trace({"resourceSpans": "not a list"})
        assert gc.isenabled() is was_on
    finally:
        gc.enable()


def oi_loop(names: list[str], late: list[bool]) -> tuple[dict[str, Any], list[tuple[str, str, int, int]]]:
    """An OpenInference agent loop whose tool spans carry no call id; a ``late`` tool span ends after the next call
    starts. Returns the trace and its tool spans as (span id, name, start, end)."""
    spans: list[dict[str, Any]] = []
    tools: list[tuple[str, str, int, int]] = []
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]

    def add(attrs: dict[str, Any], start: int, end: int) -> str:
        sid = f"{len(spans) + 1:016x}"
        spans.append({"traceId": "ab" * 16, "spanId": sid, "name": "s", "startTimeUnixNano": str(start),
                      "endTimeUnixNano": str(end),
                      "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]})  # fmt: skip
        return sid

    clock = 0
    for n, (name, is_late) in enumerate(zip(names, late, strict=True)):
        ask = {"role": "assistant", "content": "", "tool_calls.0.tool_call.id": f"c{n}",
               "tool_calls.0.tool_call.function.name": name}  # fmt: skip
        add(oi_attrs(history), clock, clock + 1)
        end = clock + (25 if is_late else 5)
        tools.append((add({"openinference.span.kind": "TOOL", "tool.name": name, "output.value": f"r{n}"}, clock + 2,
                          end), name, clock + 2, end))  # fmt: skip
        history = [*history, ask, {"role": "tool", "content": f"r{n}", "tool_call_id": f"c{n}"}]
        clock += 10
    add(oi_attrs(history), clock, clock + 1)
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}, tools


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), min_size=1, max_size=8))
def test_tool_spans_without_ids_are_matched_as_the_plain_scan_matches_them(plan: list[tuple[str, bool]]) -> None:
    doc, tools = oi_loop([n for n, _ in plan], [late for _, late in plan])
    rec = import_trace(doc)
    calls = [c for c in rec.snapshot.commit_log if c.stage_id == "call-llm"]
    got = [c.runtime_stage_id for c in rec.snapshot.commit_log if c.stage_id == "tool-calls"]
    taken: set[str] = set()
    want = []
    for k, (name, _) in enumerate(plan):  # the reference: the first untaken span of that tool ended by the next call
        start = int(next(s["startTimeUnixNano"] for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
                         if s["spanId"] == calls[k + 1].runtime_stage_id))  # fmt: skip
        hit = next((sid for sid, n, _, end in tools if n == name and end <= start and sid not in taken), None)
        want.append(hit or got[k])  # no span fits: the commit is named by its position instead
        if hit:
            taken.add(hit)
    assert got == want
    assert all(r.startswith("tool-results#") for r, w in zip(got, want, strict=True) if r not in {t[0] for t in tools})


def _otlp(attrs: list[dict[str, Any]]) -> dict[str, Any]:
    body = {"traceId": f"{1:032x}", "spanId": f"{2:016x}", "name": "chat m", "attributes": attrs}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [body]}]}]}


@pytest.mark.parametrize(
    "value",
    [{"intValue": str(2**70)}, {"doubleValue": float("nan")}, {"stringValue": "x" * 3}],
    ids=["integer-past-64-bits", "nan", "plain"],
)
def test_bytes_read_by_the_fast_parser_or_the_standard_one_give_the_same_spans(value: dict[str, Any]) -> None:
    from agentfootprint.interop._spans import spans_from_bytes, spans_from_text

    text = json.dumps(
        _otlp([{"key": "k", "value": value}, {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}])
    )
    fast, plain = spans_from_bytes(text.encode()), spans_from_text(text)
    assert [(s.span_id, s.name, repr(s.attributes)) for s in fast] == [
        (s.span_id, s.name, repr(s.attributes)) for s in plain
    ]
    assert len(fast) == 1


def test_json_lines_and_deep_nesting_fall_back_to_the_standard_parser() -> None:
    from agentfootprint.interop._spans import spans_from_bytes

    one = json.dumps(_otlp([]))
    assert [s.span_id for s in spans_from_bytes(f"{one}\n{one}\n".encode())] == [f"{2:016x}", f"{2:016x}"]
    deep = ("[" * 5000 + "]" * 5000).encode()
    with pytest.raises(InvalidTraceError) as err:
        spans_from_bytes(deep)
    assert (err.value.code, str(err.value)) == (
        "ERR_INVALID_TRACE",
        "the trace nests deeper than a JSON parser follows",
    )


def _entry(key: Any, value: Any) -> dict[str, Any]:
    return {"key": key, "value": value}


PARTNERS = [({"stringValue": 1}, {"stringValue": True}), ({"bytesValue": 1}, {"bytesValue": 1.0})]
"""Values equal as JSON that read unalike ("1" and "True", "1" and "1.0")."""
attribute_entry = st.builds(
    _entry,
    st.sampled_from("abcdefgh"),
    st.sampled_from(
        [{"stringValue": "x"}, {"stringValue": "y"}, {"stringValue": "x", "ignored": 1}, {"intValue": "3"}]
        + [v for pair in PARTNERS for v in pair]
    ),
) | st.sampled_from([_entry(5, {"stringValue": "SECRET"}), "SECRET", _entry("e", {"intValue": "SECRET"})])
attribute_edit = st.tuples(
    st.sampled_from(["same", "append", "insert", "replace", "revalue", "delete"]), st.integers(0, 5)
)


def _attribute_lists(first: list[Any], edits: list[tuple[tuple[str, int], Any]]) -> list[list[Any]]:
    lists, cur = [first], list(first)
    for (kind, at), entry in edits:
        at = min(at, len(cur))
        if kind == "append":
            cur = [*cur, entry]
        elif kind == "insert":
            cur = [*cur[:at], entry, *cur[at:]]
        elif kind == "revalue" and at < len(cur) and isinstance(cur[at], dict):  # same key, its value's partner
            value = next(
                (b for a, b in [*PARTNERS, *map(reversed, PARTNERS)] if repr(a) == repr(cur[at]["value"])), None
            )
            cur = [*cur[:at], _entry(cur[at]["key"], value or {"stringValue": "z"}), *cur[at + 1 :]]
        elif kind in ("replace", "delete") and at < len(cur):
            cur = [*cur[:at], *([entry] if kind == "replace" else []), *cur[at + 1 :]]
        lists.append(cur)
    return lists


def _read_all(read: Any) -> Any:
    try:
        return [(s.name, list(s.attributes.items())) for s in read()]
    except InvalidTraceError as err:
        return (err.code, str(err))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(attribute_entry, max_size=6, unique_by=lambda e: repr(e["key"] if isinstance(e, dict) else e)),
    st.lists(st.tuples(attribute_edit, attribute_entry), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=9, max_size=9),
)
def test_attributes_a_span_repeats_from_the_last_one_of_its_name_read_as_a_fresh_reading_does(
    first: list[Any], edits: list[tuple[tuple[str, int], Any]], tool_between: list[bool]
) -> None:
    from agentfootprint.interop._spans import spans_from_bytes, spans_from_text

    spans = []
    for n, attributes in enumerate(_attribute_lists(first, edits)):
        if tool_between[n]:  # another name between two model calls
            spans.append({"traceId": "ab" * 16, "spanId": f"{2 * n + 1:016x}", "name": "tool",
                          "attributes": [_entry("a", {"stringValue": "t"})]})  # fmt: skip
        spans.append({"traceId": "ab" * 16, "spanId": f"{2 * n + 2:016x}", "name": "chat", "attributes": attributes})
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    text = json.dumps(doc)
    plain = _read_all(lambda: spans_from_otlp_json(json.loads(text)))
    assert _read_all(lambda: spans_from_bytes(text.encode())) == plain  # parsed by orjson
    assert _read_all(lambda: spans_from_text(text)) == plain  # by the standard parser
    assert not isinstance(plain, tuple) or "SECRET" not in plain[1]


def test_repeated_attributes_are_the_previous_span_s_strings_and_end_in_its_order() -> None:
    from agentfootprint.interop._spans import spans_from_bytes

    shared = [_entry(k, {"stringValue": f"v{k}"}) for k in "abc"]
    first = [*shared, _entry("out", {"stringValue": "1"}), _entry("n", {"intValue": "1"})]
    second = [
        *shared,
        _entry("d", {"stringValue": "vd"}),
        _entry("n", {"intValue": "2"}),
        _entry("a", {"stringValue": "z"}),
    ]
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": f"{n + 1:016x}", "name": "chat", "attributes": attrs}
        for n, attrs in enumerate([first, second])
    ]}]}]}  # fmt: skip
    one, two = spans_from_bytes(json.dumps(doc).encode())
    assert list(two.attributes.items()) == [("a", "z"), ("b", "vb"), ("c", "vc"), ("d", "vd"), ("n", 2)]
    assert two.attributes["b"] is one.attributes["b"]


@pytest.mark.parametrize(
    ("before", "after", "read"),
    [({"stringValue": 1}, {"stringValue": True}, "True"), ({"bytesValue": 1}, {"bytesValue": 1.0}, "1.0")],
)
def test_an_entry_equal_to_the_previous_one_but_not_a_plain_string_is_read_again(
    before: dict[str, Any], after: dict[str, Any], read: str
) -> None:
    from agentfootprint.interop._spans import spans_from_bytes

    lists = [
        [_entry("a", {"stringValue": "x"}), _entry("b", before)],
        [_entry("a", {"stringValue": "x"}), _entry("b", after)],
    ]
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": f"{n + 1:016x}", "name": "chat", "attributes": attrs}
        for n, attrs in enumerate(lists)
    ]}]}]}  # fmt: skip
    assert [s.attributes["b"] for s in spans_from_bytes(json.dumps(doc).encode())] == [str(before.popitem()[1]), read]


def test_a_repeated_entry_nested_past_the_comparison_s_depth_is_read_plainly() -> None:
    from agentfootprint.interop._spans import spans_from_bytes

    entry = '{"key": "a", "value": {"stringValue": "x", "ignored": ' + "[" * 1000 + "]" * 1000 + "}}"
    spans = [
        f'{{"traceId": "{"ab" * 16}", "spanId": "{n:016x}", "name": "chat", "attributes": [{entry}]}}' for n in (1, 2)
    ]
    text = '{"resourceSpans": [{"scopeSpans": [{"spans": [' + ", ".join(spans) + "]}]}]}"
    assert [s.attributes for s in spans_from_bytes(text.encode())] == [{"a": "x"}, {"a": "x"}]


def test_an_error_in_a_repeating_span_is_the_one_the_plain_reading_raises_first() -> None:
    from agentfootprint.interop._spans import spans_from_bytes

    attrs = [_entry("a", {"stringValue": "x"}), _entry("b", {"stringValue": "y"})]
    spans = [
        {"traceId": "ab" * 16, "spanId": f"{1:016x}", "name": "chat", "attributes": attrs},
        {"traceId": "SECRET", "spanId": f"{2:016x}", "name": "chat", "attributes": [*attrs, "SECRET"]},
    ]
    with pytest.raises(InvalidTraceError) as err:
        spans_from_bytes(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode())
    assert (err.value.code, str(err.value)) == (
        "ERR_INVALID_TRACE",
        "trace.resourceSpans[0].scopeSpans[0].spans[1].traceId is neither hex nor base64",
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), unique=True), st.data())
def test_the_attributes_beside_the_repeated_ones_are_those_a_full_scan_finds(keys: list[str], data: Any) -> None:
    from agentfootprint.interop._conventions import _beside

    attrs = {k: n for n, k in enumerate(keys)}
    flat = {k: attrs[k] for k in data.draw(st.lists(st.sampled_from(keys), unique=True) if keys else st.just([]))}
    assert list(_beside(attrs, flat).items()) == [(k, v) for k, v in attrs.items() if k not in flat]


def test_shared_counts_the_leading_messages_that_are_the_same_objects() -> None:
    from agentfootprint.interop._build import _shared

    a, b, c, d = ["a"], ["b"], ["c"], ["d"]
    assert _shared([a, b, c], [a, b, d, c]) == 2
    assert _shared([a, b], [a, b, c]) == 2
    assert _shared([a, b, c], [a, b]) == 2
    assert _shared([], [a]) == 0
    assert _shared([["a"]], [a]) == 0  # equal is not the same
