"""Short, stable text summaries of values for narratives and evidence."""

from __future__ import annotations

import json
from typing import Any

MAX_VALUE_LENGTH = 80


def summarize_value(value: Any, max_length: int = MAX_VALUE_LENGTH) -> str:
    """Strings quoted and cut at ``max_length``; lists as ``(3 items)``; dicts as ``{a, b, ... (9 keys)}``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if len(value) > max_length:
            return json.dumps(value[:max_length], ensure_ascii=False)[:-1] + '..."'
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        n = len(value)
        return f"({n} item{'s' if n != 1 else ''})"
    if isinstance(value, dict):
        keys = [str(k)[:40] for k in list(value)[:5]]
        if len(value) > 4:
            return "{" + ", ".join(keys[:4]) + f", ... ({len(value)} keys)}}"
        return "{" + ", ".join(keys) + "}"
    text = repr(value)
    return text[:max_length] + ("..." if len(text) > max_length else "")
