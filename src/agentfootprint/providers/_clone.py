"""Deep copies of provider models: what ``copy.deepcopy`` returns, with a direct path for the plain values they hold."""

from __future__ import annotations

import copy
from typing import Any, TypeVar, cast

from pydantic import BaseModel

T = TypeVar("T")
_ATOMS = frozenset({str, int, float, bool, type(None), bytes})
_PLAIN_DEEPCOPY = BaseModel.__deepcopy__


def deep_clone(value: T) -> T:
    """``copy.deepcopy(value)``: shared and cyclic parts stay shared in the copy; unknown types go to deepcopy."""
    out: T = _clone(value, {})
    return out


def _clone(value: Any, memo: dict[int, Any]) -> Any:
    t = type(value)
    if t in _ATOMS:
        return value
    done = memo.get(id(value), memo)
    if done is not memo:
        return done
    if t is dict:
        d: dict[Any, Any] = {}
        memo[id(value)] = d
        for k, v in value.items():  # atoms inline: most keys and leaves need no call
            d[k if type(k) is str else _clone(k, memo)] = v if type(v) in _ATOMS else _clone(v, memo)
        return d
    if t is list:
        items: list[Any] = []
        memo[id(value)] = items
        for v in value:
            items.append(v if type(v) in _ATOMS else _clone(v, memo))
        return items
    if (
        isinstance(value, BaseModel)
        and t.__deepcopy__ is _PLAIN_DEEPCOPY
        and getattr(value, "__pydantic_private__", None) is None
    ):
        m = cast(Any, t).__new__(t)
        memo[id(value)] = m
        object.__setattr__(m, "__dict__", _clone(value.__dict__, memo))
        object.__setattr__(m, "__pydantic_extra__", _clone(value.__pydantic_extra__, memo))
        object.__setattr__(m, "__pydantic_fields_set__", set(value.__pydantic_fields_set__))
        object.__setattr__(m, "__pydantic_private__", None)
        return m
    return copy.deepcopy(value, memo)


__all__ = ["deep_clone"]
