"""A small JSON-Schema validator for tool arguments: issues name the path and type, never the value.

Draft 2020-12 semantics, including ``contains``/``minContains``/``maxContains``, ``dependentRequired``,
``dependentSchemas``, ``if``/``then``/``else`` and ``unevaluatedProperties``/``unevaluatedItems``. It stays ours
rather than a dependency: its patterns are vetted against unbounded backtracking, its work is bounded, its issues
never quote a value, and ``multipleOf`` on floats is judged with a tolerance (``0.3`` is a multiple of ``0.1``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict

from agentfootprint.tools._patterns import PatternCheck, check_pattern

__all__ = [
    "MAX_ARG_DEPTH",
    "MAX_ARG_NODES",
    "MAX_ISSUES",
    "ArgIssue",
    "describe_schema",
    "format_issues",
    "json_type_name",
    "validate_json",
    "validate_tool_args",
]

MAX_ARG_DEPTH = 64
MAX_ARG_NODES = 100_000
MAX_ISSUES = 20
_MAX_FRAMES = 200
_MAX_STEPS = 1_000_000
_MAX_PATH = 300
_MAX_EXPECTED = 200
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

PathPart = str | int
Path = tuple[PathPart, ...]


class ArgIssue(BaseModel):
    """One argument problem: where (``path``, e.g. ``order.items[2].qty``), what was expected, the problem."""

    model_config = ConfigDict(frozen=True)

    path: str
    expected: str
    problem: str

    @property
    def message(self) -> str:
        """``path: problem`` — safe to show a model or a log (it never holds the received value)."""
        return f"{self.path or '(arguments)'}: {self.problem}"

    def __str__(self) -> str:
        return self.message


def json_type_name(value: object) -> str:
    """The JSON type of ``value`` (``null``, ``boolean``, ``integer``...); else the Python type name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__[:60]


def _clean(text: str, limit: int = 64) -> str:
    out = "".join(ch if ch.isprintable() else "?" for ch in text[: limit + 1])
    return out if len(out) <= limit else out[: limit - 1] + "…"


def format_path(path: Path) -> str:
    """Render a path tuple as ``a.b[2]["odd key"]``, capped in length."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.fullmatch(part) and len(part) <= 64:
            out.append(f".{part}" if out else part)
        else:
            out.append("[" + json.dumps(_clean(part)) + "]")
    text = "".join(out)
    return text if len(text) <= _MAX_PATH else "…" + text[-(_MAX_PATH - 1) :]


def _short(text: str) -> str:
    return text if len(text) <= _MAX_EXPECTED else text[: _MAX_EXPECTED - 1] + "…"


def _literal(value: object) -> str:
    try:
        return _short(json.dumps(value, sort_keys=True, default=str))
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def describe_schema(schema: Any, root: Any = None, _depth: int = 0) -> str:
    """A short human description of what ``schema`` accepts (``string or null``, ``one of ["a", "b"]``)."""
    if root is None:
        root = schema
    if _depth > 4:
        return "a value"
    if schema is True or schema is None or (isinstance(schema, dict) and not schema):
        return "any value"
    if schema is False:
        return "no value"
    if not isinstance(schema, dict):
        return "any value"
    if "const" in schema:
        return f"the constant {_literal(schema['const'])}"
    enum = schema.get("enum")
    if isinstance(enum, list):
        return f"one of {_literal(enum)}"
    types = schema.get("type")
    if isinstance(types, str):
        return types
    if isinstance(types, list) and types:
        return _short(" or ".join(str(t) for t in types))
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve(root, ref)
        return describe_schema(target, root, _depth + 1) if target is not None else "a value"
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            names = dict.fromkeys(describe_schema(b, root, _depth + 1) for b in branches)
            return _short(" or ".join(names))
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        return describe_schema(all_of[0], root, _depth + 1)
    if "properties" in schema or "additionalProperties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return "any value"


def _resolve(root: Any, ref: str) -> Any:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_ok(name: object, value: object) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
    if name == "number":
        return _is_number(value)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list | tuple)
    if name == "object":
        return isinstance(value, dict)
    return True  # an unknown type name constrains nothing (a lenient reading of a malformed schema)


def _freeze(value: object) -> object:
    """A hashable form with JSON equality: ``1 == 1.0`` but ``True != 1``."""
    if isinstance(value, bool):
        return ("b", value)
    if _is_number(value):
        return ("n", float(value))
    if isinstance(value, list | tuple):
        return ("a", tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((str(k), _freeze(v)) for k, v in value.items()))
    if value is None or isinstance(value, str):
        return ("s", value)
    return ("x", id(value))


def _json_equal(a: object, b: object) -> bool:
    try:
        return _freeze(a) == _freeze(b)
    except (TypeError, RecursionError):
        return False


_Found = list[tuple[int, ArgIssue]]


class _Validator:
    __slots__ = ("frames", "halted", "issues", "limit", "matched", "root", "steps", "stopped")

    def __init__(self, root: Any, limit: int) -> None:
        self.root = root
        self.issues: _Found = []
        self.limit = limit
        self.steps = 0
        self.frames = 0
        self.stopped = False
        self.halted: ArgIssue | None = None
        self.matched: dict[tuple[int, int], frozenset[int]] = {}

    def add(self, path: Path, expected: str, problem: str) -> None:
        if len(self.issues) < self.limit:
            self.issues.append((len(path), ArgIssue(path=format_path(path), expected=expected, problem=problem)))

    def halt(self, path: Path, expected: str, problem: str) -> None:
        """Stop validating; the reason is reported even when the stop happened inside a probe."""
        self.stopped = True
        self.halted = ArgIssue(path=format_path(path), expected=expected, problem=problem)
        self.add(path, expected, problem)

    @property
    def full(self) -> bool:
        return self.stopped or len(self.issues) >= self.limit

    def probe(self, schema: Any, value: Any, path: Path) -> _Found:
        saved, saved_limit = self.issues, self.limit
        self.issues, self.limit = [], MAX_ISSUES
        try:
            self.check(schema, value, path)
            return self.issues
        finally:
            self.issues, self.limit = saved, saved_limit

    def check(self, schema: Any, value: Any, path: Path) -> None:
        if self.full:
            return
        self.steps += 1
        if self.steps > _MAX_STEPS:
            self.halt(path, "smaller arguments", "arguments are too complex to validate")
            return
        if schema is True or schema is None:
            return
        if schema is False:
            self.add(path, "no value", "no value is allowed here")
            return
        if not isinstance(schema, dict) or not schema:
            return
        self.frames += 1
        try:
            if self.frames > _MAX_FRAMES:
                self.halt(path, "a shallower value", "schema nesting is too deep to validate")
                return
            self._check_dict(schema, value, path)
        finally:
            self.frames -= 1

    def _check_dict(self, schema: dict[str, Any], value: Any, path: Path) -> None:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = _resolve(self.root, ref)
            if target is not None:
                self.check(target, value, path)
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            for sub in all_of:
                self.check(sub, value, path)
        any_of = schema.get("anyOf")
        if isinstance(any_of, list) and any_of:
            self._alternatives(any_of, value, path, exactly_one=False)
        one_of = schema.get("oneOf")
        if isinstance(one_of, list) and one_of:
            self._alternatives(one_of, value, path, exactly_one=True)
        if "not" in schema and not self.probe(schema["not"], value, path):
            self.add(
                path,
                f"not {describe_schema(schema['not'], self.root)}",
                "value has a shape that is not allowed",
            )
        if "if" in schema:
            branch = schema.get("else") if self.probe(schema["if"], value, path) else schema.get("then")
            if branch is not None:
                self.check(branch, value, path)
        types = schema.get("type")
        if types is not None:
            names = types if isinstance(types, list) else [types]
            if names and not any(_type_ok(n, value) for n in names):
                expected = describe_schema({"type": types})
                self.add(path, expected, f"expected {expected}, got {json_type_name(value)}")
                return
        if "enum" in schema and isinstance(schema["enum"], list):
            if not any(_json_equal(value, e) for e in schema["enum"]):
                expected = f"one of {_literal(schema['enum'])}"
                self.add(path, expected, f"expected {expected}, got a {json_type_name(value)} not in that set")
                return
        if "const" in schema and not _json_equal(value, schema["const"]):
            expected = f"the constant {_literal(schema['const'])}"
            self.add(path, expected, f"expected {expected}, got a different {json_type_name(value)}")
            return
        if isinstance(value, str):
            self._string(schema, value, path)
        elif _is_number(value):
            self._number(schema, value, path)
        elif isinstance(value, list | tuple):
            self._array(schema, value, path)
        elif isinstance(value, dict):
            self._object(schema, value, path)
        if "unevaluatedProperties" in schema and isinstance(value, dict) and not self.full:
            self._unevaluated_properties(schema, value, path)
        if "unevaluatedItems" in schema and isinstance(value, list | tuple) and not self.full:
            self._unevaluated_items(schema, value, path)

    def _unevaluated_properties(self, schema: dict[str, Any], value: dict[Any, Any], path: Path) -> None:
        seen = _Annotations(self, value, path).keys(schema, own=True, depth=0)
        sub = schema["unevaluatedProperties"]
        for key, item in value.items():
            if seen is None or key in seen or self.full:
                continue
            if sub is False:
                self.add((*path, key), "no such property", "unexpected property (not evaluated by the schema)")
            else:
                self.check(sub, item, (*path, key))

    def _unevaluated_items(self, schema: dict[str, Any], value: list[Any] | tuple[Any, ...], path: Path) -> None:
        seen = _Annotations(self, value, path).items(schema, own=True, depth=0)
        sub = schema["unevaluatedItems"]
        for index, item in enumerate(value):
            if seen is None or index in seen or self.full:
                continue
            if sub is False:
                self.add((*path, index), "no such item", "unexpected item (not evaluated by the schema)")
            else:
                self.check(sub, item, (*path, index))

    def contained(self, sub: Any, value: list[Any] | tuple[Any, ...], path: Path) -> frozenset[int]:
        """The indexes of the items of ``value`` that ``sub`` accepts (worked out once per schema and array)."""
        key = (id(sub), id(value))
        found = self.matched.get(key)
        if found is None:
            found = frozenset(i for i, item in enumerate(value) if not self.probe(sub, item, (*path, i)))
            self.matched[key] = found
        return found

    def _contains(self, schema: dict[str, Any], value: list[Any] | tuple[Any, ...], path: Path) -> None:
        sub = schema["contains"]
        found = len(self.contained(sub, value, path))
        low, high = schema.get("minContains", 1), schema.get("maxContains")
        low = low if _is_number(low) else 1
        shown = describe_schema(sub, self.root)
        if found < low:
            problem = (
                f"array has no item matching {shown}"
                if low == 1
                else f"array has fewer than {low} items matching {shown}"
            )
            self.add(path, f"array with at least {low} items matching {shown}", problem)
        if _is_number(high) and found > high:
            self.add(
                path,
                f"array with at most {high} items matching {shown}",
                f"array has more than {high} items matching {shown}",
            )

    def _alternatives(self, branches: list[Any], value: Any, path: Path, *, exactly_one: bool) -> None:
        failures: list[_Found] = []
        passed = 0
        for branch in branches:
            found = self.probe(branch, value, path)
            if not found:
                passed += 1
                if not exactly_one or passed > 1:
                    break
            else:
                failures.append(found)
        if passed == 1 or (passed and not exactly_one):
            return
        expected = _short(" or ".join(dict.fromkeys(describe_schema(b, self.root) for b in branches)))
        if passed > 1:
            self.add(path, f"exactly one of: {expected}", "value matches more than one allowed shape")
            return
        here = len(path)
        deeper = [f for f in failures if all(n > here for n, _ in f)]
        if len(deeper) == 1:
            for item in deeper[0]:
                if len(self.issues) < self.limit:
                    self.issues.append(item)
            return
        self.add(path, expected, f"expected {expected}, got {json_type_name(value)}")

    def _string(self, schema: dict[str, Any], value: str, path: Path) -> None:
        min_len, max_len = schema.get("minLength"), schema.get("maxLength")
        if _is_number(min_len) and len(value) < min_len:
            self.add(
                path,
                f"string of at least {min_len} characters",
                f"string is shorter than {min_len} characters",
            )
        if _is_number(max_len) and len(value) > max_len:
            self.add(path, f"string of at most {max_len} characters", f"string is longer than {max_len} characters")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            vetted = check_pattern(pattern)
            if vetted.refusal is not None:
                self.add(
                    path,
                    "string (pattern refused)",
                    f"the schema's pattern cannot be checked safely ({vetted.refusal})",
                )
            elif vetted.compiled is not None and len(value) > vetted.max_subject:
                self.add(
                    path,
                    f"string of at most {vetted.max_subject} characters",
                    f"string is too long to check against its pattern (at most {vetted.max_subject} characters)",
                )
            elif vetted.compiled is not None and vetted.compiled.search(value) is None:
                shown = _short(pattern)
                self.add(path, f"string matching {shown}", f"string does not match the pattern {shown}")

    def _number(self, schema: dict[str, Any], value: float, path: Path) -> None:
        lo, hi = schema.get("minimum"), schema.get("maximum")
        ex_lo, ex_hi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if _is_number(lo):
            if ex_lo is True and value <= lo:  # draft-4 boolean form
                self.add(path, f"number greater than {lo}", f"number is not greater than {lo}")
            elif value < lo:
                self.add(path, f"number of at least {lo}", f"number is below the minimum {lo}")
        if _is_number(hi):
            if ex_hi is True and value >= hi:
                self.add(path, f"number less than {hi}", f"number is not less than {hi}")
            elif value > hi:
                self.add(path, f"number of at most {hi}", f"number is above the maximum {hi}")
        if _is_number(ex_lo) and value <= ex_lo:
            self.add(path, f"number greater than {ex_lo}", f"number is not greater than {ex_lo}")
        if _is_number(ex_hi) and value >= ex_hi:
            self.add(path, f"number less than {ex_hi}", f"number is not less than {ex_hi}")
        step = schema.get("multipleOf")
        if _is_number(step) and step > 0:
            try:
                ratio = value / step
                ok = math.isfinite(ratio) and abs(ratio - round(ratio)) <= 1e-9 * max(1.0, abs(ratio))
            except (OverflowError, ZeroDivisionError):
                ok = False
            if not ok:
                self.add(path, f"a multiple of {step}", f"number is not a multiple of {step}")

    def _array(self, schema: dict[str, Any], value: list[Any] | tuple[Any, ...], path: Path) -> None:
        n = len(value)
        min_items, max_items = schema.get("minItems"), schema.get("maxItems")
        if _is_number(min_items) and n < min_items:
            self.add(path, f"array of at least {min_items} items", f"array has fewer than {min_items} items")
        if _is_number(max_items) and n > max_items:
            self.add(path, f"array of at most {max_items} items", f"array has more than {max_items} items")
        if schema.get("uniqueItems") is True:
            seen: set[object] = set()
            for item in value:
                try:
                    key = _freeze(item)
                    duplicate = key in seen
                    seen.add(key)
                except (TypeError, RecursionError):
                    duplicate = False
                if duplicate:
                    self.add(path, "array of unique items", "array has duplicate items")
                    break
        if "contains" in schema:
            self._contains(schema, value, path)
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # draft-4..7 tuple form
            prefix, items = items, schema.get("additionalItems")
        if not isinstance(prefix, list):
            prefix = []
        if not prefix and (items is None or items is True or items == {}):
            return
        for index, item in enumerate(value):
            if self.full:
                return
            sub = prefix[index] if index < len(prefix) else items
            if sub is None:
                continue
            self.check(sub, item, (*path, index))

    def _object(self, schema: dict[str, Any], value: dict[Any, Any], path: Path) -> None:
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = schema.get("required")
        if isinstance(required, list):
            for name in required:
                if isinstance(name, str) and name not in value:
                    expected = describe_schema(props.get(name, True), self.root)
                    self.add((*path, name), expected, f"required property is missing (expected {expected})")
        self._dependent(schema, value, path)
        n = len(value)
        min_p, max_p = schema.get("minProperties"), schema.get("maxProperties")
        if _is_number(min_p) and n < min_p:
            self.add(path, f"object with at least {min_p} properties", f"object has fewer than {min_p} properties")
        if _is_number(max_p) and n > max_p:
            self.add(path, f"object with at most {max_p} properties", f"object has more than {max_p} properties")
        patterns = schema.get("patternProperties")
        compiled: list[tuple[PatternCheck, Any]] = []
        if isinstance(patterns, dict):
            for pat, sub in patterns.items():
                vetted = check_pattern(pat) if isinstance(pat, str) else None
                if vetted is not None and (vetted.compiled is not None or vetted.refusal is not None):
                    compiled.append((vetted, sub))
        extra = schema.get("additionalProperties", True)
        names = schema.get("propertyNames")
        if not props and not compiled and (extra is True or extra == {}) and names is None:
            return
        for key, item in value.items():
            if self.full:
                return
            sub_path = (*path, key)
            if names is not None and self.probe(names, key, sub_path):
                self.add(sub_path, describe_schema(names, self.root), "property name is not allowed")
            matched = False
            if key in props:
                matched = True
                self.check(props[key], item, sub_path)
            for vetted, sub in compiled:
                if vetted.compiled is None or len(key) > vetted.max_subject:
                    matched = True  # never run unbounded: a refused pattern or an over-long name is an issue
                    self.add(sub_path, "property name (pattern refused)", "property name cannot be checked safely")
                elif vetted.compiled.search(key) is not None:
                    matched = True
                    self.check(sub, item, sub_path)
            if matched:
                continue
            if extra is False:
                self.add(sub_path, "no such property", "unexpected property (not in the schema)")
            elif isinstance(extra, dict) and extra:
                self.check(extra, item, sub_path)

    def _dependent(self, schema: dict[str, Any], value: dict[Any, Any], path: Path) -> None:
        needs = schema.get("dependentRequired")
        if isinstance(needs, dict):
            for trigger, names in needs.items():
                if trigger not in value or not isinstance(names, list):
                    continue
                when = json.dumps(_clean(str(trigger)))
                for name in names:
                    if isinstance(name, str) and name not in value:
                        self.add(
                            (*path, name),
                            "a present property",
                            f"required property is missing (required when {when} is present)",
                        )
        subs = schema.get("dependentSchemas")
        if isinstance(subs, dict):
            for trigger, sub in subs.items():
                if trigger in value:
                    self.check(sub, value, path)


_MAX_ANNOTATION_DEPTH = 64


class _Annotations:
    """Which properties (or items) of one value the successful subschemas of a schema evaluated (2020-12
    annotations, for ``unevaluated*``); ``None`` means all of them."""

    __slots__ = ("path", "validator", "value")

    def __init__(self, validator: _Validator, value: Any, path: Path) -> None:
        self.validator, self.value, self.path = validator, value, path

    def _passes(self, schema: Any) -> bool:
        return not self.validator.probe(schema, self.value, self.path)

    def _applied(self, schema: dict[str, Any]) -> list[Any]:
        """The subschemas applied in place whose annotations count: all of allOf, $ref and present dependents;
        the passing branches of anyOf/oneOf; if with then, or else (never not)."""
        out: list[Any] = []
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = _resolve(self.validator.root, ref)
            if target is not None:
                out.append(target)
        for key in ("allOf", "anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                out.extend(b for b in branches if key == "allOf" or self._passes(b))
        if "if" in schema:
            if self._passes(schema["if"]):
                out.extend(s for s in (schema["if"], schema.get("then")) if s is not None)
            elif schema.get("else") is not None:
                out.append(schema["else"])
        subs = schema.get("dependentSchemas")
        if isinstance(subs, dict) and isinstance(self.value, dict):
            out.extend(sub for trigger, sub in subs.items() if trigger in self.value)
        return out

    def _budget(self, depth: int) -> bool:
        self.validator.steps += 1
        return depth <= _MAX_ANNOTATION_DEPTH and self.validator.steps <= _MAX_STEPS

    def keys(self, schema: Any, *, own: bool, depth: int) -> set[str] | None:
        """The evaluated property names of the object ``value``."""
        if not isinstance(schema, dict) or not self._budget(depth):
            return set()
        if "additionalProperties" in schema or (not own and "unevaluatedProperties" in schema):
            return None
        value: dict[str, Any] = self.value
        props = schema.get("properties")
        seen = {k for k in value if isinstance(props, dict) and k in props}
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            for pattern in patterns:
                vetted = check_pattern(pattern) if isinstance(pattern, str) else None
                if vetted is None or (vetted.compiled is None and vetted.refusal is None):
                    continue
                regex = vetted.compiled
                seen.update(k for k in value if regex is None or len(k) > vetted.max_subject or regex.search(k))
        for sub in self._applied(schema):
            more = self.keys(sub, own=False, depth=depth + 1)
            if more is None:
                return None
            seen |= more
        return seen

    def items(self, schema: Any, *, own: bool, depth: int) -> set[int] | None:
        """The evaluated indexes of the array ``value``."""
        if not isinstance(schema, dict) or not self._budget(depth):
            return set()
        items = schema.get("items")
        if (not own and "unevaluatedItems" in schema) or (items is not None and not isinstance(items, list)):
            return None
        if isinstance(items, list) and "additionalItems" in schema:
            return None
        prefix = items if isinstance(items, list) else schema.get("prefixItems")
        value: list[Any] | tuple[Any, ...] = self.value
        seen = set(range(min(len(prefix), len(value)))) if isinstance(prefix, list) else set()
        if "contains" in schema:
            seen |= self.validator.contained(schema["contains"], value, self.path)
        for sub in self._applied(schema):
            more = self.items(sub, own=False, depth=depth + 1)
            if more is None:
                return None
            seen |= more
        return seen


def _measure(value: Any) -> ArgIssue | None:
    """Iteratively bound depth and size of ``value``, and find non-string keys (no recursion)."""
    stack: list[tuple[Any, int, Path]] = [(value, 0, ())]
    nodes = 1  # every value counts once: the top one here, each item when its container is opened
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict | list | tuple) and node and depth >= MAX_ARG_DEPTH:
            return _too_deep(path)
        nodes += len(node) if isinstance(node, dict | list | tuple) else 0
        if nodes > MAX_ARG_NODES:
            return ArgIssue(
                path="",
                expected=f"at most {MAX_ARG_NODES} values",
                problem=f"arguments are too large (more than {MAX_ARG_NODES} values)",
            )
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str):
                    return ArgIssue(
                        path=format_path(path),
                        expected="object with string keys",
                        problem=f"object has a non-string key ({json_type_name(key)})",
                    )
                if isinstance(child, dict | list | tuple):
                    stack.append((child, depth + 1, (*path, key)))
        elif isinstance(node, list | tuple):
            for index, child in enumerate(node):
                if isinstance(child, dict | list | tuple):
                    stack.append((child, depth + 1, (*path, index)))
    return None


def _too_deep(path: Path) -> ArgIssue:
    return ArgIssue(
        path=format_path(path),
        expected=f"at most {MAX_ARG_DEPTH} levels of nesting",
        problem=f"nesting deeper than {MAX_ARG_DEPTH} levels",
    )


def validate_json(schema: Any, value: Any, *, max_issues: int = MAX_ISSUES) -> list[ArgIssue]:
    """Validate any value against ``schema``; never raises, never quotes the value."""
    guard = _measure(value)
    if guard is not None:
        return [guard]
    validator = _Validator(schema, max(1, max_issues))
    try:
        validator.check(schema, value, ())
    except RecursionError:  # a caller already deep in its own stack: refuse rather than crash
        return [_too_deep(())]
    if validator.halted is not None and not validator.issues:  # stopped inside a probe: never read as valid
        return [validator.halted]
    return [issue for _, issue in validator.issues]


_FLAT_OBJECT_KEYS = frozenset({"type", "properties", "required", "additionalProperties", "description", "title"})
_FLAT_PROPERTY_KEYS = frozenset({"type", "description", "title"})
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat_args_valid(schema: Any, args: dict[Any, Any]) -> bool:
    """True only when ``validate_json(schema, args)`` is ``[]`` for certain, judged without walking: a flat object
    schema (properties with at most a scalar ``type``, ``required``, a boolean ``additionalProperties``) and scalar
    arguments under string keys that meet it. False means "ask the full validator", never "invalid"."""
    if type(schema) is not dict or not schema.keys() <= _FLAT_OBJECT_KEYS or schema.get("type", "object") != "object":
        return False
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if type(props) is not dict or type(required) is not list or (extra is not True and extra is not False):
        return False
    if len(args) >= MAX_ARG_NODES or len(args) >= _MAX_STEPS or _MAX_FRAMES < 2:  # within every budget the walk has
        return False
    for name in required:
        if type(name) is not str or name not in args:
            return False
    for key, value in args.items():
        if type(key) is not str or type(value) not in _SCALARS:
            return False
        sub = props.get(key)
        if sub is None:
            if extra is False or key in props:
                return False
            continue
        if type(sub) is not dict or not sub.keys() <= _FLAT_PROPERTY_KEYS:
            return False
        kind = sub.get("type")
        if kind is not None and (type(kind) is not str or kind not in _SCALAR_TYPES or not _type_ok(kind, value)):
            return False
    return True


def validate_tool_args(schema: dict[str, Any], args: Any, *, max_issues: int = MAX_ISSUES) -> list[ArgIssue]:
    """Validate a tool call's arguments (always an object) against its input schema; ``[]`` means valid."""
    if not isinstance(args, dict):
        return [ArgIssue(path="", expected="object", problem=f"expected object, got {json_type_name(args)}")]
    if _flat_args_valid(schema, args):  # the common flat schema met by scalar arguments: nothing to report
        return []
    return validate_json(schema, args, max_issues=max_issues)


def format_issues(tool_name: str, issues: list[ArgIssue]) -> str:
    """The error text a model gets for invalid arguments: one line per issue, then how to recover."""
    lines = [f"Error: invalid arguments for tool {tool_name}:"]
    lines.extend(f"- {issue.message}" for issue in issues)
    lines.append("Fix the arguments and call the tool again.")
    return "\n".join(lines)
