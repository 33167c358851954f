"""Read-only containers for committed state, and value equality that tells True from 1."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NoReturn

_READ_ONLY = (
    "committed state is read-only: write a new value back with scope[key] = ..., "
    "scope.append(key, item) or scope.merge(key, {...})"
)


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError(_READ_ONLY)


class FrozenDict(dict[str, Any]):
    """A dict that refuses mutation; still a dict for json.dumps, pydantic and isinstance checks."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        if self is EMPTY_DICT:  # the shared empty stays itself: a copy never aliases one plain dict across fields
            return self
        return thaw(self)  # type: ignore[no-any-return]


class FrozenList(list[Any]):
    """A list that refuses mutation; the engine extends it in place only through ``list.extend``."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        if self is EMPTY_LIST:  # the shared empty stays itself: a copy never aliases one plain list across fields
            return self
        return thaw(self)  # type: ignore[no-any-return]


EMPTY_LIST = FrozenList()
EMPTY_DICT = FrozenDict()
"""What ``freeze`` makes of any empty list, tuple or dict: one immutable value each, so state keeps no empty
container of its own (``extend_in_place`` is for the lists the engine made itself, never these)."""

_extend = list.extend
_dict_set = dict.__setitem__
_list_set = list.__setitem__


def extend_in_place(target: list[Any], items: Iterable[Any]) -> None:
    """Engine-only append path: grows a committed list without copying it (one the engine made, never shared)."""
    if target is EMPTY_LIST:
        raise TypeError("the shared empty list is never grown in place")
    _extend(target, items)


_ATOMIC = frozenset({str, int, float, bool, type(None)})
"""Types kept as they are by ``freeze`` and ``thaw``: checked inline, so a leaf costs no call."""
_TOO_DEEP = "value is nested more than 200 levels deep"


def freeze(value: Any, _depth: int = 0) -> Any:
    """Deep-copy dicts and lists into read-only twins; other values are kept as they are."""
    if _depth > 200:
        raise ValueError(_TOO_DEEP)
    t = type(value)
    if t in _ATOMIC:
        return value
    if t is dict or t is FrozenDict or t is list or t is tuple or t is FrozenList:  # copied whole, then patched
        if not value:  # nothing to copy: the one shared empty (the engine grows only lists it made itself)
            return EMPTY_DICT if t is dict or t is FrozenDict else EMPTY_LIST
        depth = _depth + 1
        if depth > 200 and value:  # each item would be refused one level down
            raise ValueError(_TOO_DEEP)
        if t is dict or t is FrozenDict:
            frozen_dict = FrozenDict(value)
            for k, v in value.items():
                if type(v) not in _ATOMIC:
                    _dict_set(frozen_dict, k, freeze(v, depth))
            return frozen_dict
        frozen_list = FrozenList(value)
        for i, v in enumerate(value):
            if type(v) not in _ATOMIC:
                _list_set(frozen_list, i, freeze(v, depth))
        return frozen_list
    if isinstance(value, dict):
        depth = _depth + 1
        if depth > 200 and value:
            raise ValueError(_TOO_DEEP)
        return FrozenDict({k: v if type(v) in _ATOMIC else freeze(v, depth) for k, v in value.items()})
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        depth = _depth + 1
        if depth > 200 and value:
            raise ValueError(_TOO_DEEP)
        return FrozenList([v if type(v) in _ATOMIC else freeze(v, depth) for v in value])
    return value


def freeze_over(value: list[Any], committed: list[Any]) -> FrozenList:
    """``freeze(value)`` for a list written over a committed one: an item that is the committed item at the same
    position is kept (committed items are frozen for good), so re-writing a grown list costs no deep copy."""
    n = len(committed)
    return FrozenList(v if i < n and v is committed[i] else freeze(v, 1) for i, v in enumerate(value))


def thaw(value: Any) -> Any:
    """Plain mutable deep copy of a (possibly frozen) value: dicts and lists become new dicts and lists."""
    t = type(value)
    if t is FrozenDict or t is dict:  # the common containers: copied whole, then patched (no comprehension frame)
        plain_dict = dict.copy(value)
        for k, v in plain_dict.items():
            if type(v) not in _ATOMIC:
                plain_dict[k] = thaw(v)  # an existing key: the dict does not grow while iterated
        return plain_dict
    if t is FrozenList or t is list:
        plain_list = list.copy(value)
        for i, v in enumerate(plain_list):
            if type(v) not in _ATOMIC:
                plain_list[i] = thaw(v)
        return plain_list
    if isinstance(value, dict):
        return {k: v if type(v) in _ATOMIC else thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _ATOMIC else thaw(v) for v in value]
    return value


def deep_equal(a: Any, b: Any) -> bool:
    """Structural equality where True != 1, 1 != 1.0 is False only by value, and NaN equals NaN."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b or not deep_equal(v, b[k]):
                return False
        return True
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(b, dict | list):
        return False
    if ta is float and tb is float and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def list_tail_if_extended(base: list[Any], new: list[Any]) -> list[Any] | None:
    """If ``new`` is ``base`` plus more items, return the added tail (the delta); else None."""
    n = len(base)
    if len(new) < n:
        return None
    for i in range(n):
        x, y = base[i], new[i]
        if x is not y and not deep_equal(x, y):
            return None
    return list(new[n:])
