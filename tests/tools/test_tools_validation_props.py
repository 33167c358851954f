"""Property tests: generated values validate; a mutated type yields one issue at its path; no value leaks."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.tools import validate_json, validate_tool_args

KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=6)
LEAVES = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
        {"type": "string", "enum": ["red", "blue"]},
        {"type": "integer", "minimum": 0, "maximum": 9},
        {"type": "string", "minLength": 1, "maxLength": 5},
    ]
)


def _object(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props), "additionalProperties": False}


SCHEMAS = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.builds(lambda c: {"type": "array", "items": c}, children),
        st.dictionaries(KEYS, children, min_size=1, max_size=4).map(_object),
    ),
    max_leaves=12,
)
OBJECT_SCHEMAS = st.dictionaries(KEYS, SCHEMAS, min_size=1, max_size=4).map(_object)


def values_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema["type"]
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 12))
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers()
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(values_for(schema["items"]), max_size=3)
    return st.fixed_dictionaries({k: values_for(v) for k, v in schema["properties"].items()})


WRONG: dict[str, Any] = {
    "string": 12345,
    "integer": "not-an-int",
    "number": "not-a-number",
    "boolean": "not-a-bool",
    "null": "not-null",
    "array": "not-an-array",
    "object": "not-an-object",
}


def spots(schema: dict[str, Any], value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    out = [(path, schema["type"])]
    if schema["type"] == "array":
        for i, item in enumerate(value):
            out += spots(schema["items"], item, (*path, i))
    elif schema["type"] == "object":
        for k, sub in schema["properties"].items():
            out += spots(sub, value[k], (*path, k))
    return out


def render(path: tuple[Any, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        copy = list(value)
        copy[head] = replace(value[head], rest, new)
        return copy
    return {**value, head: replace(value[head], rest, new)}


@settings(max_examples=200)
@given(st.data(), SCHEMAS)
def test_values_generated_from_a_schema_validate(data: st.DataObject, schema: dict[str, Any]) -> None:
    value = data.draw(values_for(schema))
    assert validate_json(schema, value) == []


@settings(max_examples=200)
@given(st.data(), OBJECT_SCHEMAS)
def test_a_mutated_type_yields_one_issue_naming_its_path(data: st.DataObject, schema: dict[str, Any]) -> None:
    value = data.draw(values_for(schema))
    candidates = [s for s in spots(schema, value) if s[0]]
    path, kind = data.draw(st.sampled_from(candidates))
    broken = replace(value, path, WRONG[kind])
    issues = validate_tool_args(schema, broken)
    assert [i.path for i in issues] == [render(path)]
    assert issues[0].expected == kind
    assert str(WRONG[kind]) not in issues[0].message


SECRET_STRINGS = st.text(min_size=1, max_size=10).map(lambda s: f"§SECRET§{s}")
HOSTILE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | SECRET_STRINGS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(SCHEMAS, HOSTILE_JSON)
def test_messages_never_contain_a_generated_secret(schema: dict[str, Any], value: Any) -> None:
    for issue in validate_json(schema, value):
        assert "§SECRET§" not in issue.message
        assert "§SECRET§" not in issue.expected
        assert "§SECRET§" not in issue.path


@settings(max_examples=200)
@given(OBJECT_SCHEMAS, st.dictionaries(KEYS, HOSTILE_JSON, max_size=5))
def test_validator_never_raises_on_arbitrary_args(schema: dict[str, Any], args: dict[str, Any]) -> None:
    issues = validate_tool_args(schema, args)
    assert len(issues) <= 20
