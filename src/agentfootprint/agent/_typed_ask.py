"""Reading a typed ask's answer on resume: validated against the declared JSON Schema, never quoted."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentfootprint.tools.validation import ArgIssue, validate_json


def read_repeat(value: Any) -> int:
    """How many times the ask was asked again before this answer (0 when absent)."""
    count = value.get("count") if isinstance(value, Mapping) else 0
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else 0


def read_typed_answer(schema: Mapping[str, Any], answer: Any) -> tuple[Any, list[ArgIssue]]:
    """The answer as its type (a text answer is read as JSON when the type is not a string), and what does not fit."""
    value = answer
    if isinstance(answer, str) and schema.get("type") != "string":
        try:
            value = json.loads(answer)
        except ValueError:
            value = answer
    issues = validate_json(dict(schema), value)
    return value, issues


__all__ = ["read_repeat", "read_typed_answer"]
