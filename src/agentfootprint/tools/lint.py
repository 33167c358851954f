"""Tool-catalog lint: tools a model will confuse or misuse, found before a run (our, OpenAI, Anthropic, MCP)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentfootprint._text import content_tokens
from agentfootprint.errors import AgentFootprintError
from agentfootprint.tools.tool import Tool

Severity = Literal["error", "warning", "info"]
LINT_MISSING_DESCRIPTION = "LINT_MISSING_DESCRIPTION"
LINT_DUPLICATE_DESCRIPTION = "LINT_DUPLICATE_DESCRIPTION"
LINT_NEAR_TWIN = "LINT_NEAR_TWIN"
LINT_NAME_COLLISION = "LINT_NAME_COLLISION"
LINT_LONG_DESCRIPTION = "LINT_LONG_DESCRIPTION"
LINT_PARAM_NO_DESCRIPTION = "LINT_PARAM_NO_DESCRIPTION"
LINT_PARAM_NO_TYPE = "LINT_PARAM_NO_TYPE"
LINT_SCHEMA_NO_TYPE = "LINT_SCHEMA_NO_TYPE"
LINT_SCHEMA_NO_REQUIRED = "LINT_SCHEMA_NO_REQUIRED"
DEFAULT_TWIN_THRESHOLD = 0.8
DEFAULT_MAX_DESCRIPTION = 1024
_MAX_TOOLS = 1000
_MAX_NAME = 200


class ToolLintInputError(AgentFootprintError, ValueError):
    """A tool list that cannot be read; names the entry (index and field), never quotes its content."""

    code = "ERR_TOOL_LINT_INPUT"

    def __init__(self, message: str, *, entry: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.entry = entry
        self.field = field


class LintFinding(BaseModel):
    """One lint finding: a stable code, the tools involved, and what to do about it."""

    code: str
    severity: Severity
    tools: list[str]
    message: str
    similarity: float | None = None
    parameter: str | None = None


class ToolEntry(BaseModel):
    """A tool as the linter reads it, whatever shape it came in."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=dict)
    shape: Literal["tool", "ours", "openai", "anthropic", "mcp"] = "ours"


def _entry(raw: Any, i: int) -> ToolEntry:
    if isinstance(raw, ToolEntry):
        return raw
    if isinstance(raw, Tool):
        return ToolEntry(name=raw.name, description=raw.description, input_schema=dict(raw.input_schema), shape="tool")
    if not isinstance(raw, Mapping):
        raise ToolLintInputError(f"tool entry {i} must be an object, got {type(raw).__name__}", entry=i)
    shape: Literal["ours", "openai", "anthropic", "mcp"]
    if isinstance(raw.get("function"), Mapping):
        body: Mapping[str, Any] = raw["function"]
        shape, schema_key = "openai", "parameters"
    else:
        body = raw
        if "inputSchema" in raw:
            shape, schema_key = "mcp", "inputSchema"
        elif "parameters" in raw:
            shape, schema_key = "openai", "parameters"
        else:
            shape, schema_key = ("anthropic" if "input_schema" in raw else "ours"), "input_schema"
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolLintInputError(f"tool entry {i}: field 'name' must be a non-empty string", entry=i, field="name")
    if len(name) > _MAX_NAME:
        raise ToolLintInputError(f"tool entry {i}: field 'name' is longer than {_MAX_NAME}", entry=i, field="name")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise ToolLintInputError(
            f"tool entry {i} ({name}): field 'description' must be a string", entry=i, field="description"
        )
    schema = body.get(schema_key, {})
    if schema is None:
        schema = {}
    if not isinstance(schema, Mapping):
        raise ToolLintInputError(
            f"tool entry {i} ({name}): field '{schema_key}' must be an object", entry=i, field=schema_key
        )
    return ToolEntry(name=name, description=description, input_schema=dict(schema), shape=shape)


def read_tools(data: Any) -> list[ToolEntry]:
    """Tool entries from Tools or JSON in our, OpenAI, Anthropic or MCP shape (a list, or ``{"tools": [...]}``)."""
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if isinstance(data, str | bytes) or not isinstance(data, Iterable):
        raise ToolLintInputError("a tool list must be a list of tools (or an object with a 'tools' list)")
    items = list(data)
    if len(items) > _MAX_TOOLS:
        raise ToolLintInputError(f"a tool list may hold at most {_MAX_TOOLS} tools")
    return [_entry(raw, i) for i, raw in enumerate(items)]


def read_tools_file(path: str | Path) -> list[ToolEntry]:
    """Tool entries from a JSON file; a file that cannot be read or parsed is a ``ToolLintInputError``."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolLintInputError(f"cannot read {source.name}: {type(exc).__name__}") from None
    except json.JSONDecodeError as exc:
        raise ToolLintInputError(f"{source.name} is not JSON (line {exc.lineno}, column {exc.colno})") from None
    return read_tools(data)


@lru_cache(maxsize=512)  # a pure function of two strings, asked again for the same pair on every tool call
def description_similarity(a: str, b: str) -> float:
    """How alike two descriptions read: the larger of content-word Jaccard and character sequence ratio (0..1)."""
    ta, tb = set(content_tokens(a)), set(content_tokens(b))
    jaccard = len(ta & tb) / len(ta | tb) if ta and tb else 0.0
    fa, fb = sorted((" ".join(a.casefold().split()), " ".join(b.casefold().split())))
    ratio = SequenceMatcher(None, fa[:1000], fb[:1000], autojunk=False).ratio() if fa and fb else 0.0
    return round(max(jaccard, ratio), 4)


def _schema_findings(entry: ToolEntry) -> list[LintFinding]:
    out: list[LintFinding] = []
    schema = entry.input_schema
    props = schema.get("properties")
    if schema and "type" not in schema:
        out.append(
            LintFinding(
                code=LINT_SCHEMA_NO_TYPE,
                severity="warning",
                tools=[entry.name],
                message=f"{entry.name}: the input schema has no 'type' (models guess the shape)",
            )
        )
    if not isinstance(props, Mapping):
        return out
    if props and not isinstance(schema.get("required"), list):
        out.append(
            LintFinding(
                code=LINT_SCHEMA_NO_REQUIRED,
                severity="info",
                tools=[entry.name],
                message=f"{entry.name}: the input schema lists no 'required' parameters",
            )
        )
    for pname, pschema in list(props.items())[:500]:
        spec = pschema if isinstance(pschema, Mapping) else {}
        has_type = any(k in spec for k in ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"))
        if not has_type:
            out.append(
                LintFinding(
                    code=LINT_PARAM_NO_TYPE,
                    severity="warning",
                    tools=[entry.name],
                    parameter=str(pname),
                    message=f"{entry.name}: parameter '{pname}' has no type",
                )
            )
        description = spec.get("description")
        if not isinstance(description, str) or not description.strip():
            out.append(
                LintFinding(
                    code=LINT_PARAM_NO_DESCRIPTION,
                    severity="info",
                    tools=[entry.name],
                    parameter=str(pname),
                    message=f"{entry.name}: parameter '{pname}' has no description",
                )
            )
    return out


def lint_tools(
    tools: Any,
    *,
    twin_threshold: float = DEFAULT_TWIN_THRESHOLD,
    max_description: int = DEFAULT_MAX_DESCRIPTION,
) -> list[LintFinding]:
    """Lint a tool catalog: missing, duplicate, near-twin or overlong descriptions, weak schemas, name collisions."""
    if not 0.0 < twin_threshold <= 1.0:
        raise ToolLintInputError("twin_threshold must be in (0, 1]")
    entries = read_tools(tools)
    findings: list[LintFinding] = []
    by_folded: dict[str, list[str]] = {}
    for e in entries:
        by_folded.setdefault(e.name.casefold().replace("-", "_"), []).append(e.name)
    for names in by_folded.values():
        if len(names) > 1:
            exact = len(set(names)) < len(names)
            findings.append(
                LintFinding(
                    code=LINT_NAME_COLLISION,
                    severity="error",
                    tools=names,
                    message=f"tool names collide{'' if exact else ' ignoring case'}: {', '.join(names)}",
                )
            )
    for e in entries:
        if e.description is None or not e.description.strip():
            findings.append(
                LintFinding(
                    code=LINT_MISSING_DESCRIPTION,
                    severity="error",
                    tools=[e.name],
                    message=f"{e.name}: no description (the model sees only the name)",
                )
            )
        elif len(e.description) > max_description:
            findings.append(
                LintFinding(
                    code=LINT_LONG_DESCRIPTION,
                    severity="warning",
                    tools=[e.name],
                    message=f"{e.name}: description is {len(e.description)} characters (over {max_description})",
                )
            )
        findings.extend(_schema_findings(e))
    described = [e for e in entries if e.description and e.description.strip()]
    for i, a in enumerate(described):
        for b in described[i + 1 :]:
            da, db = a.description or "", b.description or ""
            if " ".join(da.casefold().split()) == " ".join(db.casefold().split()):
                findings.append(
                    LintFinding(
                        code=LINT_DUPLICATE_DESCRIPTION,
                        severity="error",
                        tools=[a.name, b.name],
                        similarity=1.0,
                        message=f"{a.name} and {b.name} have the same description: the model cannot tell them apart",
                    )
                )
                continue
            sim = description_similarity(da, db)
            if sim >= twin_threshold:
                findings.append(
                    LintFinding(
                        code=LINT_NEAR_TWIN,
                        severity="warning",
                        tools=[a.name, b.name],
                        similarity=sim,
                        message=f"{a.name} and {b.name} read alike (similarity {sim:.2f}): say when to use each",
                    )
                )
    return findings


def format_findings(findings: Iterable[LintFinding]) -> str:
    """Findings as lines for a terminal (``CODE severity tools: message``)."""
    rows = [f"{f.code} {f.severity} [{', '.join(f.tools)}]: {f.message}" for f in findings]
    return "\n".join(rows) if rows else "no findings"


__all__ = [
    "DEFAULT_MAX_DESCRIPTION",
    "DEFAULT_TWIN_THRESHOLD",
    "LINT_DUPLICATE_DESCRIPTION",
    "LINT_LONG_DESCRIPTION",
    "LINT_MISSING_DESCRIPTION",
    "LINT_NAME_COLLISION",
    "LINT_NEAR_TWIN",
    "LINT_PARAM_NO_DESCRIPTION",
    "LINT_PARAM_NO_TYPE",
    "LINT_SCHEMA_NO_REQUIRED",
    "LINT_SCHEMA_NO_TYPE",
    "LintFinding",
    "ToolEntry",
    "ToolLintInputError",
    "description_similarity",
    "format_findings",
    "lint_tools",
    "read_tools",
    "read_tools_file",
]
