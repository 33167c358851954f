"""Schema ``pattern`` safety: a static bound on backtracking work, so no pattern runs unbounded on the event loop.

Stdlib ``re`` backtracks; rather than add a dependency (``regex`` with a timeout still burns the loop until the
timeout; an RE2 binding is a compiled extra), a pattern is parsed once and refused when it can backtrack
exponentially (a quantifier inside a quantifier, an alternation inside a quantifier, a backreference). What is left
is polynomial: at most ``n ** degree / degree!`` steps for a subject of length ``n``, so the subject is capped to
keep that within ``_BUDGET`` steps, and a pattern whose cap would be uselessly short is refused as well.
"""

from __future__ import annotations

import importlib
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "MAX_PATTERN_LENGTH",
    "MAX_PATTERN_SUBJECT",
    "PatternCheck",
    "check_pattern",
    "find_unsafe_pattern",
]

_parser: Any = importlib.import_module("re._parser")
_MAXREPEAT: int = importlib.import_module("re._constants").MAXREPEAT

MAX_PATTERN_LENGTH = 1_000
"""Longest schema pattern accepted (characters)."""
MAX_PATTERN_SUBJECT = 10_000
"""Longest string ever matched against a schema pattern (a longer one is an argument issue, not a match)."""
_MIN_SUBJECT = 64
_BUDGET = 10**8
_LEAVES = frozenset({"LITERAL", "NOT_LITERAL", "IN", "ANY", "AT", "CATEGORY"})
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


@dataclass(frozen=True, slots=True)
class PatternCheck:
    """A vetted pattern: ``compiled`` with ``max_subject`` (longest string matched), or a ``refusal`` reason;
    neither for a pattern Python cannot compile (ignored, as before)."""

    compiled: re.Pattern[str] | None
    max_subject: int
    refusal: str | None


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Cost:
    unbounded: int = 0  # quantifiers whose upper bound is open (each a factor of n)
    factor: int = 1  # product of the choice counts of bounded quantifiers


def _walk(items: Any, under: int, cost: _Cost) -> None:
    """``under``: 0 outside any repeat, 1 inside a fixed-count repeat, 2 inside a variable one."""
    for op, av in items:
        name = str(op)
        if name in _LEAVES:
            continue
        if name in ("SUBPATTERN",):
            _walk(av[3], under, cost)
        elif name == "ATOMIC_GROUP":
            _walk(av, under, cost)
        elif name in ("ASSERT", "ASSERT_NOT"):
            _walk(av[1], under, cost)
        elif name == "BRANCH":
            if under:
                raise _Refused("alternation_in_repeat")
            for branch in av[1]:
                _walk(branch, under, cost)
        elif name in _REPEATS:
            lo, hi, body = av
            if lo == hi:
                if hi <= 1:
                    _walk(body, under, cost)
                    continue
                inner = _Cost()
                _walk(body, max(under, 1), inner)
                cost.unbounded += inner.unbounded * hi
                cost.factor = min(cost.factor * inner.factor**hi, _BUDGET + 1)
                continue
            if under == 2:
                raise _Refused("nested_quantifier")
            if hi == _MAXREPEAT:
                cost.unbounded += 1
            else:
                cost.factor = min(cost.factor * (hi - lo + 1), _BUDGET + 1)
            _walk(body, 2 if hi > 1 else under, cost)  # an optional part (``?``) is no loop
        elif name in ("GROUPREF", "GROUPREF_EXISTS"):
            raise _Refused("backreference")
        else:
            raise _Refused("unsupported_construct")


def _max_subject(cost: _Cost) -> int:
    degree = cost.unbounded + 1  # + 1: a search tries every start position
    ways = math.factorial(degree)  # k open quantifiers split n characters in at most n**k / k! ways
    n = MAX_PATTERN_SUBJECT
    while n >= _MIN_SUBJECT and cost.factor * n**degree > _BUDGET * ways:
        n = n * 3 // 4
    return n


@lru_cache(maxsize=512)
def check_pattern(pattern: str) -> PatternCheck:
    """Vet ``pattern`` once: compiled with its subject cap, or refused (``refusal`` names why, never the pattern)."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return PatternCheck(None, 0, "pattern_too_long")
    try:
        compiled = re.compile(pattern)
        tree = _parser.parse(pattern)
        cost = _Cost()
        _walk(tree, 0, cost)
    except _Refused as refused:
        return PatternCheck(None, 0, refused.reason)
    except (re.error, TypeError, ValueError, RecursionError, OverflowError):
        return PatternCheck(None, 0, None)  # not a Python regex (an ECMA-only construct, say): not checked
    limit = _max_subject(cost)
    if limit < _MIN_SUBJECT:
        return PatternCheck(None, 0, "too_many_quantifiers")
    return PatternCheck(compiled, limit, None)


def find_unsafe_pattern(schema: object, *, max_nodes: int = 100_000) -> tuple[str, str] | None:
    """The first ``(field, reason)`` in ``schema`` whose ``pattern`` (or ``patternProperties`` key) is refused."""
    stack: list[tuple[object, str]] = [(schema, "")]
    seen = 0
    while stack and seen < max_nodes:
        node, where = stack.pop()
        seen += 1
        if isinstance(node, list):
            stack.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict):
            continue
        pattern = node.get("pattern")
        if isinstance(pattern, str) and (refusal := check_pattern(pattern).refusal) is not None:
            return (f"{where}.pattern".lstrip("."), refusal)
        props = node.get("patternProperties")
        if isinstance(props, dict):
            for i, key in enumerate(props):
                if isinstance(key, str) and (refusal := check_pattern(key).refusal) is not None:
                    return (f"{where}.patternProperties[{i}]".lstrip("."), refusal)
        for key, value in reversed(list(node.items())):
            if isinstance(value, dict | list):
                stack.append((value, f"{where}.{key}" if isinstance(key, str) else where))
    return None
