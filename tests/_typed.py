"""Value comparison that also compares types, all the way down: a dict is not a FrozenDict, True is not 1."""

from __future__ import annotations

from typing import Any


def typed_shape(value: Any) -> Any:
    """Types and values all the way down (so a dict and a FrozenDict with equal items do not compare equal)."""
    if isinstance(value, dict):
        return (type(value).__name__, [(k, typed_shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed_shape(v) for v in value])
    return (type(value).__name__, value)


def same_typed(a: Any, b: Any) -> bool:
    """Equal value for value and type for type, keys in the same order (a NaN equals a NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_typed(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_typed(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or a != a
