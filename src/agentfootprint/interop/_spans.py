"""Spans from anywhere (in-memory ``ReadableSpan``s, OTLP JSON, JSON lines, OTLP protobuf) as one plain shape."""

from __future__ import annotations

import base64
import binascii
import json
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress, count, islice
from pathlib import Path
from typing import Any

from agentfootprint.interop.errors import InvalidTraceError

MAX_TRACE_BYTES = 512 * 1024 * 1024
"""A trace file larger than this is refused before it is read."""
_HEX = set("0123456789abcdef")
_STR = {str}


@dataclass
class Span:
    """One span: ids as lower-case hex, times in nanoseconds, attributes as plain Python values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _hex_id(raw: Any, where: str, width: int) -> str:
    """An OTLP id: hex as the OTLP/JSON spec writes it, or base64 as protobuf's JSON mapping does."""
    if isinstance(raw, bytes):
        return raw.hex()
    if not isinstance(raw, str):
        raise InvalidTraceError(f"{where} is not a string")
    text = raw.strip().lower()
    if len(text) == width * 2 and set(text) <= _HEX:
        return text
    try:
        decoded = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidTraceError(f"{where} is neither hex nor base64") from None
    if len(decoded) != width:
        raise InvalidTraceError(f"{where} has the wrong length")
    return decoded.hex()


def _any_value(raw: Any, where: str, depth: int = 0) -> Any:
    """An OTLP/JSON ``AnyValue`` as a Python value."""
    if depth > 32:
        raise InvalidTraceError(f"{where} nests too deeply")
    if not isinstance(raw, Mapping):
        raise InvalidTraceError(f"{where} is not an AnyValue object")
    if "stringValue" in raw:
        return str(raw["stringValue"])
    if "boolValue" in raw:
        return bool(raw["boolValue"])
    if "intValue" in raw:
        try:
            return int(raw["intValue"])
        except (TypeError, ValueError):
            raise InvalidTraceError(f"{where}.intValue is not an integer") from None
    if "doubleValue" in raw:
        try:
            return float(raw["doubleValue"])
        except (TypeError, ValueError):
            raise InvalidTraceError(f"{where}.doubleValue is not a number") from None
    if "arrayValue" in raw:
        values = (raw["arrayValue"] or {}).get("values") or []
        if not isinstance(values, list):
            raise InvalidTraceError(f"{where}.arrayValue.values is not a list")
        return tuple(_any_value(v, f"{where}.arrayValue", depth + 1) for v in values)
    if "kvlistValue" in raw:
        return _attributes((raw["kvlistValue"] or {}).get("values") or [], f"{where}.kvlistValue", depth + 1)
    if "bytesValue" in raw:
        return str(raw["bytesValue"])
    return None


def _string_attributes(raw: list[Any]) -> dict[str, Any] | None:
    """Attributes that are all ``{"key": str, "value": {"stringValue": str}}`` (the common case) read in one
    comprehension; None when any is not."""
    try:
        out = {kv["key"]: kv["value"]["stringValue"] for kv in raw}
    except (KeyError, TypeError):
        return None
    return out if set(map(type, out)) | set(map(type, out.values())) <= _STR else None


def _attributes(raw: Any, where: str, depth: int = 0, others: list[int] | None = None) -> dict[str, Any]:
    """``raw`` read; ``others`` gets the positions of its entries that are not plain string attributes."""
    if not isinstance(raw, list):
        raise InvalidTraceError(f"{where} is not a list of key/value objects")
    fast = _string_attributes(raw)
    if fast is not None:
        return fast
    out: dict[str, Any] = {}
    for i, kv in enumerate(raw):
        if type(kv) is dict and type(kv.get("key")) is str and type(kv.get("value")) is dict:
            text = kv["value"].get("stringValue")
            if type(text) is str:  # the common case, read without the general walk
                out[kv["key"]] = text
                continue
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise InvalidTraceError(f"{where}[{i}] has no string key")
        out[kv["key"]] = _any_value(kv.get("value") or {}, f"{where}[{i}].value", depth)
        if others is not None:
            others.append(i)
    return out


_Read = tuple[list[Any], dict[str, Any], list[int]]
"""A raw attribute list, what it was read as (no key twice), and the positions of its entries that are not plain
string attributes."""


def _repeated(raw: list[Any], last: _Read) -> tuple[dict[str, Any], list[int]] | None:
    """``raw`` read, the plain string entries it repeats from ``last`` (equal, at the same place, before the first
    other key) taken from ``last``'s reading; None when it repeats nothing or an entry does not read."""
    prev_raw, prev, fresh = last
    cut = min(len(raw), len(prev_raw))
    redo: list[int] = []
    try:
        for i in compress(count(), map(operator.ne, raw, prev_raw)):
            kv = raw[i]
            if type(kv) is not dict or kv.get("key") != prev_raw[i]["key"]:
                cut = i
                break
            redo.append(i)
    except RecursionError:
        return None
    if not cut:
        return None
    if fresh:
        redo = sorted({*redo, *(i for i in fresh if i < cut)})
    others: list[int] = []
    try:
        new = _attributes([*(raw[i] for i in redo), *raw[cut:]], "attributes", 0, others)
    except InvalidTraceError:
        return None
    if cut * 2 >= len(prev):
        out = prev.copy()
        for key in list(islice(prev, cut, None)):
            del out[key]
    else:
        out = dict(islice(prev.items(), cut))
    out.update(new)
    at = [*redo, *range(cut, len(raw))]
    return out, [at[j] for j in others]


class _Repeats:
    """Each span name's last span, as read: an agent's next model call repeats most of the previous one's attributes,
    which are then taken from that reading instead of read again (for documents a JSON parser made)."""

    def __init__(self) -> None:
        self.last: dict[str, _Read] = {}

    def attributes(self, name: str, raw: Any, where: str) -> dict[str, Any]:
        """``raw`` read as ``_attributes`` reads it, with the same errors."""
        last = self.last.get(name) if type(raw) is list else None
        read = _repeated(raw, last) if last is not None else None
        if read is None:
            others: list[int] = []
            read = _attributes(raw, where, 0, others), others
        if len(read[0]) == len(raw):
            self.last[name] = (raw, *read)
        return read[0]


def _nanos(raw: Any, where: str) -> int:
    try:
        return int(raw or 0)
    except (TypeError, ValueError):
        raise InvalidTraceError(f"{where} is not an integer") from None


def _json_span(raw: Any, where: str, repeats: _Repeats | None = None) -> Span:
    if not isinstance(raw, Mapping):
        raise InvalidTraceError(f"{where} is not an object")
    parent = raw.get("parentSpanId")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise InvalidTraceError(f"{where}.name is not a string")
    events: list[tuple[str, dict[str, Any]]] = []
    for j, ev in enumerate(raw.get("events") or []):
        if not isinstance(ev, Mapping):
            raise InvalidTraceError(f"{where}.events[{j}] is not an object")
        events.append((str(ev.get("name", "")), _attributes(ev.get("attributes") or [], f"{where}.events[{j}]")))
    trace_id = _hex_id(raw.get("traceId"), f"{where}.traceId", 16)
    span_id = _hex_id(raw.get("spanId"), f"{where}.spanId", 8)
    parent_id = _hex_id(parent, f"{where}.parentSpanId", 8) if parent else None
    start = _nanos(raw.get("startTimeUnixNano"), f"{where}.startTimeUnixNano")
    end = _nanos(raw.get("endTimeUnixNano"), f"{where}.endTimeUnixNano")
    attrs, at = raw.get("attributes") or [], f"{where}.attributes"
    attributes = repeats.attributes(name, attrs, at) if repeats is not None else _attributes(attrs, at)
    return Span(trace_id, span_id, parent_id, name, start, end, attributes, events)


def spans_from_otlp_json(doc: Any, where: str = "trace") -> list[Span]:
    """Every span of one OTLP/JSON ``{"resourceSpans": [...]}`` document."""
    return _document_spans(doc, where, None)


def _document_spans(doc: Any, where: str, repeats: _Repeats | None) -> list[Span]:
    """``spans_from_otlp_json``; ``repeats`` only for a document a JSON parser made (plain types, compared safely)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("resourceSpans"), list):
        raise InvalidTraceError(f"{where} has no resourceSpans list (not an OTLP/JSON trace)")
    out: list[Span] = []
    for r, rs in enumerate(doc["resourceSpans"]):
        scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans")) if isinstance(rs, Mapping) else None
        if not isinstance(scopes, list):
            raise InvalidTraceError(f"{where}.resourceSpans[{r}] has no scopeSpans list")
        for s, ss in enumerate(scopes):
            spans = ss.get("spans") if isinstance(ss, Mapping) else None
            if not isinstance(spans, list):
                raise InvalidTraceError(f"{where}.resourceSpans[{r}].scopeSpans[{s}] has no spans list")
            base = f"{where}.resourceSpans[{r}].scopeSpans[{s}].spans"
            out.extend(_json_span(sp, f"{base}[{k}]", repeats) for k, sp in enumerate(spans))
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value


def spans_from_readable(spans: Iterable[Any]) -> list[Span]:
    """``ReadableSpan``s (e.g. from ``InMemorySpanExporter.get_finished_spans()``)."""
    out: list[Span] = []
    for i, sp in enumerate(spans):
        ctx = getattr(sp, "context", None)
        if ctx is None or not isinstance(getattr(ctx, "span_id", None), int):
            raise InvalidTraceError(f"spans[{i}] is not an OpenTelemetry ReadableSpan (no span context)")
        parent = getattr(sp, "parent", None)
        out.append(
            Span(
                trace_id=f"{ctx.trace_id:032x}",
                span_id=f"{ctx.span_id:016x}",
                parent_id=f"{parent.span_id:016x}" if parent is not None else None,
                name=str(getattr(sp, "name", "")),
                start=int(getattr(sp, "start_time", 0) or 0),
                end=int(getattr(sp, "end_time", 0) or 0),
                attributes={k: _plain(v) for k, v in dict(getattr(sp, "attributes", None) or {}).items()},
                events=[
                    (str(ev.name), {k: _plain(v) for k, v in dict(ev.attributes or {}).items()})
                    for ev in getattr(sp, "events", ()) or ()
                ],
            )
        )
    return out


def _pb_value(value: Any, depth: int = 0) -> Any:
    kind = value.WhichOneof("value")
    if kind is None or depth > 32:
        return None
    if kind == "array_value":
        return tuple(_pb_value(v, depth + 1) for v in value.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def spans_from_protobuf(body: bytes) -> list[Span]:
    """Every span of an OTLP protobuf ``TracesData`` / ``ExportTraceServiceRequest`` (same wire layout)."""
    try:
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.trace.v1.trace_pb2 import TracesData
    except ImportError:  # pragma: no cover - the interop extra brings both
        raise InvalidTraceError("reading OTLP protobuf needs the interop extra (opentelemetry-proto)") from None
    data = TracesData()
    try:
        data.ParseFromString(body)
    except DecodeError:
        raise InvalidTraceError("the file is not OTLP protobuf (TracesData)") from None
    out: list[Span] = []
    for rs in data.resource_spans:
        for ss in rs.scope_spans:
            for sp in ss.spans:
                if len(sp.span_id) != 8 or len(sp.trace_id) != 16:
                    raise InvalidTraceError("a protobuf span has a missing or malformed id")
                out.append(
                    Span(
                        trace_id=sp.trace_id.hex(),
                        span_id=sp.span_id.hex(),
                        parent_id=sp.parent_span_id.hex() or None,
                        name=sp.name,
                        start=sp.start_time_unix_nano,
                        end=sp.end_time_unix_nano,
                        attributes={kv.key: _pb_value(kv.value) for kv in sp.attributes},
                        events=[(ev.name, {kv.key: _pb_value(kv.value) for kv in ev.attributes}) for ev in sp.events],
                    )
                )
    return out


def spans_from_text(text: str) -> list[Span]:
    """One OTLP/JSON document, or JSON lines of them."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    except RecursionError:
        raise InvalidTraceError("the trace nests deeper than a JSON parser follows") from None
    if doc is not None:
        return _document_spans(doc, "trace", _Repeats())
    out: list[Span] = []
    for n, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise InvalidTraceError(f"line {n + 1} is not JSON (expected OTLP/JSON or JSON lines of it)") from None
        out.extend(_document_spans(doc, f"line {n + 1}", _Repeats()))
    return out


def read_spans(source: Any) -> list[Span]:
    """The spans of ``source``: ``ReadableSpan``s, an OTLP/JSON mapping, raw bytes, or a path to a trace file."""
    if isinstance(source, Mapping):
        return spans_from_otlp_json(source)
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            if path.stat().st_size > MAX_TRACE_BYTES:
                raise InvalidTraceError(f"the trace file is larger than {MAX_TRACE_BYTES} bytes")
            body = path.read_bytes()
        except OSError as exc:
            raise InvalidTraceError(f"cannot read the trace file: {type(exc).__name__}") from None
        return spans_from_bytes(body)
    if isinstance(source, bytes | bytearray):
        return spans_from_bytes(bytes(source))
    if isinstance(source, Iterable):
        return spans_from_readable(source)
    raise InvalidTraceError(
        f"cannot import a {type(source).__name__}: pass ReadableSpans, an OTLP/JSON mapping or a trace file path"
    )


def _fast_document(body: bytes) -> Any:
    """``body`` parsed by orjson when it is installed (the interop extra brings it), else None; what it refuses
    (JSON lines, NaN, integers past 64 bits, deep nesting) is left to the standard parser."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - the interop extra installs it
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def spans_from_bytes(body: bytes) -> list[Span]:
    head = body.lstrip()[:1]
    if head in (b"{", b"["):
        doc = _fast_document(body)
        if doc is not None:
            return _document_spans(doc, "trace", _Repeats())
        try:
            return spans_from_text(body.decode("utf-8"))
        except UnicodeDecodeError:
            raise InvalidTraceError("the trace file is not UTF-8 JSON") from None
    return spans_from_protobuf(body)


def _to_any(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_to_any(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _to_attributes(value)}}
    return {"stringValue": "" if value is None else str(value)}


def _to_attributes(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": _to_any(v)} for k, v in attrs.items()]


def to_otlp_json(spans: Iterable[Any]) -> dict[str, Any]:
    """``ReadableSpan``s as one OTLP/JSON document (``{"resourceSpans": [...]}``, hex ids), ready to save."""
    out = []
    for s in spans_from_readable(spans):
        item: dict[str, Any] = {
            "traceId": s.trace_id,
            "spanId": s.span_id,
            "name": s.name,
            "startTimeUnixNano": str(s.start),
            "endTimeUnixNano": str(s.end),
            "attributes": _to_attributes(s.attributes),
            "events": [{"timeUnixNano": str(s.start), "name": n, "attributes": _to_attributes(a)} for n, a in s.events],
        }
        if s.parent_id:
            item["parentSpanId"] = s.parent_id
        out.append(item)
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": out}]}]}


__all__ = [
    "MAX_TRACE_BYTES",
    "Span",
    "read_spans",
    "spans_from_otlp_json",
    "spans_from_readable",
    "to_otlp_json",
]
