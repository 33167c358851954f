"""What a tool's result says about itself: ``coverage()``, ``absent()``, ``period()``, ``semantic()``, ``script()``.

Each returns a plain dict under a reserved key (``af_coverage`` / ``af_absent`` / ``af_period`` / ``af_facts`` /
``af_script``); the model sees it as JSON like any result, and an agent armed with the matching option reads it back
from the record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentfootprint.errors import AgentFootprintError

__all__ = ["CoverageDeclarationError", "absent", "coverage", "period", "script", "semantic"]

_MAX_ITEMS = 50
_MAX_TEXT = 500


class CoverageDeclarationError(AgentFootprintError, ValueError):
    """A coverage, absence or period declaration that says nothing or is malformed; names the field."""

    code = "ERR_COVERAGE_DECLARATION"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CoverageDeclarationError(f"{field} must be a non-empty str", field=field)
    return value.strip()[:_MAX_TEXT]


def _items(items: Iterable[Any] | None, field: str, *, with_why: bool) -> list[dict[str, str]]:
    if items is None:
        return []
    if isinstance(items, str | bytes | Mapping):
        raise CoverageDeclarationError(f"{field} must be a list", field=field)
    out: list[dict[str, str]] = []
    for i, item in enumerate(items):
        if i >= _MAX_ITEMS:
            raise CoverageDeclarationError(f"{field} holds more than {_MAX_ITEMS} entries", field=field)
        if isinstance(item, str):
            out.append({"what": _text(item, f"{field}[{i}]")})
        elif isinstance(item, Mapping):
            entry = {"what": _text(item.get("what"), f"{field}[{i}].what")}
            if item.get("why") is not None:
                entry["why"] = _text(item.get("why"), f"{field}[{i}].why")
            elif with_why:
                raise CoverageDeclarationError(f"{field}[{i}].why is required: say why it is a limit", field=field)
            out.append(entry)
        else:
            raise CoverageDeclarationError(f"{field}[{i}] must be a str or {{what, why}}", field=field)
    return out


def _ledger(checked: Any, not_checked: Any, cannot_cover: Any) -> dict[str, list[dict[str, str]]]:
    return {
        "checked": _items(checked, "checked", with_why=False),
        "not_checked": _items(not_checked, "not_checked", with_why=True),
        "cannot_cover": _items(cannot_cover, "cannot_cover", with_why=True),
    }


def coverage(
    value: Any,
    *,
    checked: Iterable[Any] | None = None,
    not_checked: Iterable[Any] | None = None,
    cannot_cover: Iterable[Any] | None = None,
) -> dict[str, Any]:
    """``value`` with what the verdict covers: ``checked`` (str or ``{what}``), ``not_checked`` and
    ``cannot_cover`` (``{what, why}``). A declaration that says nothing is refused."""
    ledger = _ledger(checked, not_checked, cannot_cover)
    if not any(ledger.values()):
        raise CoverageDeclarationError("coverage() needs checked, not_checked or cannot_cover", field="coverage")
    return {"af_coverage": ledger, "value": value}


def absent(
    what: str,
    *,
    checked: Iterable[Any] | None = None,
    not_checked: Iterable[Any] | None = None,
    cannot_cover: Iterable[Any] | None = None,
    try_instead: str | None = None,
) -> dict[str, Any]:
    """ "I looked HERE and there is nothing": an absence with its coverage, never shaped like an error (a retry
    returns the same)."""
    body: dict[str, Any] = {"what": _text(what, "what"), **_ledger(checked, not_checked, cannot_cover)}
    if try_instead is not None:
        body["try_instead"] = _text(try_instead, "try_instead")
    return {"af_absent": body}


def period(
    value: Any, *, queried: Iterable[str], held: Iterable[str] | None, read_at: str | None = None
) -> dict[str, Any]:
    """``value`` with the period its read covered: ``queried`` (start, end) asked for, ``held`` (start, end) the
    source actually holds (None: it holds nothing for it). ISO dates or datetimes compare as text."""

    def pair(raw: Iterable[str], field: str) -> list[str]:
        items = list(raw) if not isinstance(raw, str | bytes) else []
        if len(items) != 2 or not all(isinstance(x, str) and x.strip() for x in items) or items[0] > items[1]:
            raise CoverageDeclarationError(f"{field} must be (start, end) ISO strings with start <= end", field=field)
        return [items[0][:64], items[1][:64]]

    body: dict[str, Any] = {"queried": pair(queried, "queried"), "held": None if held is None else pair(held, "held")}
    if read_at is not None:
        body["read_at"] = _text(read_at, "read_at")[:64]
    return {"af_period": body, "value": value}


def semantic(value: Any, *, facts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``value`` with the typed facts it settles: ``[{"entity": "screen2", "nav": 2}, ...]`` (each non-``entity``
    key is a field); an answer's ``.claims()`` are checked against them."""
    rows: list[dict[str, Any]] = []
    for i, fact in enumerate(list(facts)[:_MAX_ITEMS]):
        if not isinstance(fact, Mapping):
            raise CoverageDeclarationError(f"facts[{i}] must be a mapping with an entity", field=f"facts[{i}]")
        entity = _text(fact.get("entity"), f"facts[{i}].entity")
        fields = {str(k)[:64]: v for k, v in fact.items() if k != "entity"}
        if not fields:
            raise CoverageDeclarationError(f"facts[{i}] settles no field", field=f"facts[{i}]")
        rows.append({"entity": entity, "fields": fields})
    if not rows:
        raise CoverageDeclarationError("semantic() needs at least one fact", field="facts")
    return {"af_facts": rows, "value": value}


def script(value: Any, *, code: str, language: str = "python") -> dict[str, Any]:
    """``value`` with the script that computed it, so the script can travel with the answer
    (``.script_travels_with_the_answer()``)."""
    if not isinstance(code, str) or not code.strip():
        raise CoverageDeclarationError("script code must be a non-empty str", field="code")
    return {"af_script": {"code": code[:20_000], "language": _text(language, "language")[:32]}, "value": value}
