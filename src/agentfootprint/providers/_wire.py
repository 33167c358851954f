"""Defensive readers for untrusted JSON from model servers, plus SSE framing."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any


class WireFormatError(Exception):
    """Internal: a server body of the wrong shape (becomes ``ProviderResponseError``)."""


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SPACES = re.compile(r"\s+")
MAX_SERVER_TEXT = 300


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def as_dict(value: object, where: str) -> dict[str, Any]:
    """``value`` as a JSON object, else ``WireFormatError`` naming ``where``."""
    if not isinstance(value, dict):
        raise WireFormatError(f"'{where}' should be an object, got {_kind(value)}")
    return value


def as_list(value: object, where: str) -> list[Any]:
    """``value`` as a JSON array (null counts as empty), else ``WireFormatError``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise WireFormatError(f"'{where}' should be an array, got {_kind(value)}")
    return value


def opt_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    """An optional string field."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise WireFormatError(f"'{where}.{key}' should be a string, got {_kind(value)}")


def req_str(obj: dict[str, Any], key: str, where: str) -> str:
    """A required string field."""
    value = opt_str(obj, key, where)
    if value is None:
        raise WireFormatError(f"'{where}.{key}' is missing")
    return value


def opt_int(obj: dict[str, Any], key: str, where: str) -> int:
    """An optional non-negative integer field (missing or null → 0)."""
    value = obj.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        raise WireFormatError(f"'{where}.{key}' should be a non-negative number, got {_kind(value)}")
    return int(value)


def parse_json(raw: bytes | str, what: str) -> Any:
    """Parse JSON or raise ``WireFormatError`` describing ``what`` was unreadable."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise WireFormatError(f"{what} is not valid JSON") from None


def parse_arguments(raw: object) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments (JSON text or object) as a dict, plus a reason when they were unusable."""
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return {}, f"arguments should be a JSON object, got {_kind(raw)}"
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    except (ValueError, RecursionError):
        return {}, "arguments are not valid JSON"
    if not isinstance(value, dict):
        return {}, f"arguments should be a JSON object, got {_kind(value)}"
    return value, None


MIN_FRAGMENT = 6
"""A run of this many characters shared with a configured secret counts as part of that secret."""


def scrub_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret, and every fragment of ``MIN_FRAGMENT``+ characters of one, as ``[redacted]``.

    A server echoing a masked key (``sk-SENT****123``) still leaks its visible part; each maximal run of text that
    is covered by ``MIN_FRAGMENT``-character pieces of a secret is replaced. Shorter secrets match only whole.
    """
    grams: set[str] = set()
    for secret in secrets:
        if len(secret) >= MIN_FRAGMENT:
            grams.update(secret[i : i + MIN_FRAGMENT] for i in range(len(secret) - MIN_FRAGMENT + 1))
        elif secret:
            text = text.replace(secret, "[redacted]")
    if not grams or len(text) < MIN_FRAGMENT:
        return text
    covered_to = -1
    spans: list[list[int]] = []
    for i in range(len(text) - MIN_FRAGMENT + 1):
        if text[i : i + MIN_FRAGMENT] in grams:
            if spans and i <= covered_to:
                spans[-1][1] = i + MIN_FRAGMENT
            else:
                spans.append([i, i + MIN_FRAGMENT])
            covered_to = i + MIN_FRAGMENT
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append("[redacted]")
        last = end
    out.append(text[last:])
    return "".join(out)


def clean_text(text: str, secrets: tuple[str, ...], limit: int = MAX_SERVER_TEXT) -> str:
    """Server text made safe to show: secrets (and fragments of them) replaced, control characters dropped, cut."""
    text = scrub_secrets(_CONTROL.sub("", text), secrets)
    text = _SPACES.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def server_message(raw: bytes) -> str:
    """The error text in an error body (OpenAI, Anthropic, Ollama, vLLM shapes), else the body."""
    text = raw.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
        for key in ("message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return text


async def iter_sse(lines: AsyncIterator[str]) -> AsyncGenerator[tuple[str, str], None]:
    """Server-sent events as ``(event, data)`` pairs; ``event`` defaults to ``"message"``."""
    event = ""
    data: list[str] = []
    async for line in lines:
        line = line.rstrip("\r")
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)


THINKING_FORCED_TOOL = "ERR_PROVIDER_THINKING_FORCED_TOOL"


def refuse_forced_tool_with_thinking(vendor: str, tool_choice: str | None, thinking_budget: int | None) -> None:
    """Anthropic models refuse a forced ``tool_choice`` while thinking: say so before sending the request."""
    if tool_choice is not None and thinking_budget is not None:
        from agentfootprint.providers.errors import ProviderConfigError

        raise ProviderConfigError(
            f"{vendor}: a thinking budget and a forced tool_choice cannot go together (the API refuses it); "
            "use output_schema strategy='instruct', or turn thinking off for this agent",
            code=THINKING_FORCED_TOOL,
        )
