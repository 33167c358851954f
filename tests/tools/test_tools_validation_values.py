"""``const``, ``enum`` and ``uniqueItems`` compare whole JSON values (objects and arrays too), and odd keys of any
length never make the validator raise; checked on random values against an independent JSON equality."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.tools import validate_json, validate_tool_args

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.0]),
    st.sampled_from(["", "a", "b", "1"]),
)
JSON = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.sampled_from(["a", "b", "c"]), JSON, min_size=1, max_size=3)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), booleans only equal booleans, objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if type(a) in (list, dict) or type(b) in (list, dict):
        return False
    return type(a) is type(b) and a == b


@st.composite
def near(draw: Any, value: Any) -> Any:
    """``value`` itself, a copy with one leaf changed, or something unrelated."""
    how = draw(st.sampled_from(["same", "leaf", "other"]))
    if how == "same":
        return value
    if how == "other":
        return draw(JSON)
    return tweak(draw, value)


def tweak(draw: Any, value: Any) -> Any:
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: tweak(draw, value[key])}
    if isinstance(value, list) and value:
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], tweak(draw, value[i]), *value[i + 1 :]]
    return draw(LEAF)


@SETTINGS
@given(st.one_of(OBJECTS, JSON), st.data())
def test_const_accepts_exactly_the_equal_values(const: Any, data: Any) -> None:
    value = data.draw(near(const))
    issues = validate_json({"const": const}, value)
    assert (issues == []) == json_equal(value, const), (const, value)
    if issues:
        assert [i.path for i in issues] == [""]
        assert issues[0].expected.startswith("the constant ")


@SETTINGS
@given(st.lists(st.one_of(OBJECTS, JSON), min_size=1, max_size=4), st.data())
def test_enum_accepts_exactly_the_listed_values(enum: list[Any], data: Any) -> None:
    value = data.draw(near(data.draw(st.sampled_from(enum))))
    issues = validate_json({"properties": {"p": {"enum": enum}}}, {"p": value})
    assert (issues == []) == any(json_equal(value, e) for e in enum), (enum, value)
    if issues:
        assert [i.path for i in issues] == ["p"]


@SETTINGS
@given(st.lists(st.one_of(OBJECTS, JSON), max_size=5), st.data())
def test_unique_items_finds_equal_objects_and_arrays(items: list[Any], data: Any) -> None:
    if items and data.draw(st.booleans()):
        items = [*items, data.draw(near(data.draw(st.sampled_from(items))))]
    duplicated = any(json_equal(items[i], items[j]) for i in range(len(items)) for j in range(i))
    issues = validate_json({"type": "array", "uniqueItems": True}, items)
    assert [i.problem for i in issues] == (["array has duplicate items"] if duplicated else [])
    assert validate_json({"type": "array", "uniqueItems": False}, items) == []


def test_object_values_are_compared_whole() -> None:
    assert validate_json({"const": {"a": 1}}, {"a": 1.0}) == []
    assert validate_json({"const": {"a": 1}}, {"a": 2})[0].problem == (
        'expected the constant {"a": 1}, got a different object'
    )
    assert validate_json({"const": {"a": 1}}, {"a": 1, "b": 1}) != []
    assert validate_json({"const": {"a": True}}, {"a": 1}) != []
    assert validate_json({"enum": [{"a": [1, {"b": None}]}]}, {"a": [1, {"b": None}]}) == []
    assert validate_json({"enum": [{"a": [1, {"b": None}]}]}, {"a": [1, {"b": 0}]})[0].problem == (
        'expected one of [{"a": [1, {"b": null}]}], got a object not in that set'
    )
    assert validate_json({"uniqueItems": True}, [{"a": 1}, {"a": 1.0}]) != []
    assert validate_json({"uniqueItems": True}, [{"a": 1}, {"a": True}]) == []
    assert validate_json({"uniqueItems": True}, [[1, 2], [2, 1]]) == []


ODD_KEYS = st.text(min_size=1, max_size=300)


@SETTINGS
@given(st.dictionaries(ODD_KEYS, JSON, min_size=1, max_size=3), st.sampled_from(["closed", "typed", "names"]))
def test_odd_keys_of_any_length_never_raise_and_are_named_safely(args: dict[str, Any], mode: str) -> None:
    schema: dict[str, Any] = {
        "closed": {"type": "object", "additionalProperties": False},
        "typed": {"type": "object", "additionalProperties": {"type": "string", "const": "zz"}},
        "names": {"type": "object", "propertyNames": {"maxLength": 0}, "required": ["x" * 80, "a b" * 40]},
    }[mode]
    issues = validate_tool_args(schema, args)
    assert issues
    for issue in issues:
        assert len(issue.path) <= 300
        assert issue.path.isprintable()


def test_long_non_identifier_key_is_quoted_and_shortened() -> None:
    key = "not an identifier " * 5
    (issue,) = validate_tool_args({"type": "object", "additionalProperties": False}, {key: 1})
    assert issue.path == '["not an identifier not an identifier not an identifier not an id\\u2026"]'
    (issue,) = validate_tool_args({"type": "object", "additionalProperties": False}, {"k" * 65: 1})
    assert issue.path == '["' + "k" * 63 + '\\u2026"]'
    (issue,) = validate_tool_args({"type": "object", "additionalProperties": False}, {"k" * 64: 1})
    assert issue.path == "k" * 64
