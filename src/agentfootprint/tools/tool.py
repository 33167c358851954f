"""Tool definitions: the ``Tool`` value, ``define_tool`` and the ``@tool`` decorator."""

from __future__ import annotations

import copy
import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agentfootprint.tools._patterns import find_unsafe_pattern
from agentfootprint.tools.context import ToolContext
from agentfootprint.tools.errors import (
    InvalidToolDefinitionError,
    PauseOutsideAgentError,
    ToolArgumentsError,
    UnsafeSchemaPatternError,
)
from agentfootprint.tools.validation import ArgIssue, format_path

__all__ = [
    "TOOL_NAME_PATTERN",
    "CheckIn",
    "PermissionChecker",
    "Tool",
    "ToolExecute",
    "ask_human",
    "define_tool",
    "tool",
]

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
_ARG_HEADERS = ("args:", "arguments:", "parameters:")
_PARAM_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")

ToolExecute = Callable[[dict[str, Any], ToolContext], Any]
"""``execute(args, ctx)``: returns a value, or an awaitable of one."""
CheckIn = bool | Callable[[dict[str, Any]], bool]
PermissionChecker = Callable[[str, dict[str, Any], ToolContext], Any]
"""``fn(name, args, ctx)`` → ``"allow" | "deny" | "halt"`` | PermissionDecision | bool; sync or async."""


@dataclass(frozen=True, eq=False)
class Tool:
    """A tool the model may call: name, description, JSON-Schema input, and ``execute(args, ctx)``."""

    name: str
    description: str
    input_schema: dict[str, Any]
    execute: ToolExecute
    check_in: CheckIn = False
    permission: PermissionChecker | None = None
    pauses: bool = False
    fn: Callable[..., Any] | None = None
    answer_schema: dict[str, Any] | None = None
    """A typed ask's declared answer (JSON Schema); None for every other tool."""
    max_reasks: int = 0
    """How many times a typed ask asks again when an answer does not fit its type."""
    arguments_from: Mapping[str, tuple[str, ...]] | None = None
    """Which tools' results each argument's value comes from (``{"order_id": ("search_orders",)}``); integrity
    flags a call whose value no such result holds (a dangling reference) before it runs."""
    repeated_when: Literal["result", "arguments"] = "result"
    """What makes a call a repeat for the repeated-call nudge: the same arguments and result (default), or the same
    arguments alone (a tool whose result varies call to call, e.g. a clock or a random sample)."""

    def to_spec(self) -> dict[str, Any]:
        """``{name, description, input_schema}`` — what a provider shows the model (schema: do not mutate)."""
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}

    def needs_check_in(self, args: dict[str, Any]) -> bool:
        """Whether this call needs human consent first; a raising predicate means yes (fail closed)."""
        if isinstance(self.check_in, bool):
            return self.check_in
        try:
            return bool(self.check_in(args))
        except Exception:
            return True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the decorated function directly (``@tool``), or ``execute`` for a ``define_tool`` tool."""
        target = self.fn if self.fn is not None else self.execute
        return target(*args, **kwargs)


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise InvalidToolDefinitionError(f"tool name must be a str, got {type(name).__name__}")
    if not TOOL_NAME_PATTERN.match(name):
        shown = name if len(name) <= 80 and name.isprintable() else "<name>"
        raise InvalidToolDefinitionError(
            f"invalid tool name {shown!r}: use 1-64 characters, letters, digits, '_', '.', '-',"
            " starting with a letter or '_'"
        )
    return name


def _refuse_unsafe_patterns(name: str, schema: dict[str, Any]) -> None:
    found = find_unsafe_pattern(schema)
    if found is not None:
        raise UnsafeSchemaPatternError(name, *found)


def _check_schema(name: str, schema: object) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise InvalidToolDefinitionError(
            f"tool {name}: input_schema must be a JSON Schema dict, got {type(schema).__name__}"
        )
    if schema.get("type") != "object":
        raise InvalidToolDefinitionError(f'tool {name}: input_schema must have "type": "object"')
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise InvalidToolDefinitionError(f"tool {name}: input_schema.properties must be a dict")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise InvalidToolDefinitionError(f"tool {name}: input_schema.required must be a list of str")
    _refuse_unsafe_patterns(name, schema)
    try:
        return copy.deepcopy(schema)
    except Exception as exc:
        raise InvalidToolDefinitionError(f"tool {name}: input_schema cannot be copied ({type(exc).__name__})") from exc


def _adapt_execute(name: str, execute: object) -> ToolExecute:
    if not callable(execute):
        raise InvalidToolDefinitionError(f"tool {name}: execute must be callable")
    try:
        params = list(inspect.signature(execute).parameters.values())
    except (TypeError, ValueError):
        return typing.cast(ToolExecute, execute)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    if not varargs and len(positional) == 1:
        one = typing.cast(Callable[[dict[str, Any]], Any], execute)
        return lambda args, ctx: one(args)
    if not varargs and not positional:
        raise InvalidToolDefinitionError(f"tool {name}: execute must accept (args, ctx)")
    return typing.cast(ToolExecute, execute)


def _check_hooks(name: str, check_in: object, permission: object) -> None:
    if not isinstance(check_in, bool) and not callable(check_in):
        raise InvalidToolDefinitionError(f"tool {name}: check_in must be a bool or a callable(args) -> bool")
    if permission is not None and not callable(permission):
        raise InvalidToolDefinitionError(f"tool {name}: permission must be a callable(name, args, ctx)")


def define_tool(
    *,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    execute: Callable[..., Any],
    check_in: CheckIn = False,
    permission: PermissionChecker | None = None,
    pauses: bool = False,
    arguments_from: Mapping[str, str | Sequence[str]] | None = None,
    repeated_when: Literal["result", "arguments"] = "result",
) -> Tool:
    """Declare a tool from a JSON Schema and ``execute(args, ctx)`` (sync or async); refuses bad ones.
    ``arguments_from``: which tools' results each argument's value must come from (see ``Tool.arguments_from``)."""
    checked = _check_name(name)
    if not isinstance(description, str):
        raise InvalidToolDefinitionError(f"tool {checked}: description must be a str")
    schema = _check_schema(checked, input_schema)
    _check_hooks(checked, check_in, permission)
    sources = _check_arguments_from(checked, schema, arguments_from)
    if repeated_when not in ("result", "arguments"):
        raise InvalidToolDefinitionError(f"tool {checked}: repeated_when must be 'result' or 'arguments'")
    return Tool(
        name=checked,
        description=description,
        input_schema=schema,
        execute=_adapt_execute(checked, execute),
        check_in=check_in,
        permission=permission,
        pauses=bool(pauses),
        arguments_from=sources,
        repeated_when=repeated_when,
    )


def _check_arguments_from(name: str, schema: dict[str, Any], value: object) -> dict[str, tuple[str, ...]] | None:
    """``{argument: tool name or names}``: each argument a property of the schema, each source a tool name."""
    if value is None:
        return None
    bad = f"tool {name}: arguments_from maps argument names of its schema to tool names"
    if not isinstance(value, Mapping) or not value or len(value) > 64:
        raise InvalidToolDefinitionError(bad)
    properties = schema.get("properties", {})
    out: dict[str, tuple[str, ...]] = {}
    for arg, sources in value.items():
        names = (sources,) if isinstance(sources, str) else sources
        if not isinstance(arg, str) or arg not in properties or not isinstance(names, Sequence) or not names:
            raise InvalidToolDefinitionError(bad)
        if len(names) > 64 or not all(isinstance(n, str) and TOOL_NAME_PATTERN.match(n) for n in names):
            raise InvalidToolDefinitionError(bad)
        out[arg] = tuple(names)
    return out


# ---------------------------------------------------------------- @tool


def _is_context_annotation(annotation: object) -> bool:
    if annotation is ToolContext:
        return True
    return any(arg is ToolContext for arg in typing.get_args(annotation))


def _doc_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """First paragraph of the docstring, and Google-style ``Args:`` descriptions."""
    doc = inspect.getdoc(fn) or ""
    summary = " ".join(re.split(r"\n\s*\n", doc.strip())[0].split())
    if summary.lower().startswith(_ARG_HEADERS):
        summary = ""
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    args_indent: int | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in _ARG_HEADERS:
            in_args, current, args_indent = True, None, None
            continue
        if not in_args or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            break
        match = _PARAM_LINE.match(stripped)
        if match and (args_indent is None or indent == args_indent):
            args_indent = indent
            current = match.group(1)
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return summary, params


def _resolve_hints(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise InvalidToolDefinitionError(
            f"tool {name}: cannot resolve the type annotations ({type(exc).__name__}); "
            "define the annotated types at module level"
        ) from exc


_NAME_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_VALUE_KEYS = frozenset({"default", "const", "enum", "examples"})


def _strip_titles(node: Any, names: bool = False) -> Any:
    """Drop pydantic's auto ``title`` keys (noise for a model); a property named title and values stay as they are."""
    if isinstance(node, dict):
        if names:
            return {k: _strip_titles(v) for k, v in node.items()}
        return {
            k: v if k in _VALUE_KEYS else _strip_titles(v, names=k in _NAME_MAPS)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _issues_from_pydantic(error: ValidationError) -> list[ArgIssue]:
    issues: list[ArgIssue] = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        path = format_path(tuple(p for p in item["loc"] if isinstance(p, str | int)))
        kind = item["type"]
        issues.append(ArgIssue(path=path, expected=kind, problem=f"{kind}: {item['msg']}"))
    return issues


def _build_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    check_in: CheckIn,
    permission: PermissionChecker | None,
    pauses: bool,
) -> Tool:
    if not callable(fn):
        raise InvalidToolDefinitionError("@tool must decorate a function")
    tool_name = _check_name(name if name is not None else getattr(fn, "__name__", ""))
    summary, param_docs = _doc_parts(fn)
    hints = _resolve_hints(fn, tool_name)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise InvalidToolDefinitionError(f"tool {tool_name}: cannot read the signature") from exc
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in signature.parameters.values():
        annotation = hints.get(param.name, Any)
        if param.name == "ctx" or _is_context_annotation(annotation):
            ctx_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InvalidToolDefinitionError(f"tool {tool_name}: *args/**kwargs cannot become a schema")
        if param.kind is param.POSITIONAL_ONLY:
            raise InvalidToolDefinitionError(f"tool {tool_name}: positional-only parameter {param.name}")
        default: Any = ... if param.default is inspect.Parameter.empty else param.default
        doc = param_docs.get(param.name)
        if doc and typing.get_origin(annotation) is not typing.Annotated:
            default = Field(default, description=doc)
        fields[param.name] = (annotation, default)
    try:  # the model's name never shows: schema titles are stripped and issues are built from errors()
        model: type[BaseModel] = create_model("ToolArgs", __config__=ConfigDict(extra="forbid"), **fields)
        schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    except Exception as exc:
        raise InvalidToolDefinitionError(
            f"tool {tool_name}: cannot build an input schema from the signature ({type(exc).__name__})"
        ) from exc
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    _refuse_unsafe_patterns(tool_name, schema)
    field_names = tuple(model.model_fields)
    is_async = inspect.iscoroutinefunction(fn)

    def convert(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        try:
            parsed = model.model_validate(args)
        except ValidationError as exc:
            raise ToolArgumentsError(_issues_from_pydantic(exc)) from None
        kwargs = {f: getattr(parsed, f) for f in field_names}
        if ctx_param is not None:
            kwargs[ctx_param] = ctx
        return kwargs

    execute: ToolExecute
    if is_async:

        async def execute_async(args: dict[str, Any], ctx: ToolContext) -> Any:
            return await typing.cast(Callable[..., Awaitable[Any]], fn)(**convert(args, ctx))

        execute = execute_async
    else:

        def execute_sync(args: dict[str, Any], ctx: ToolContext) -> Any:
            return fn(**convert(args, ctx))

        execute = execute_sync
    _check_hooks(tool_name, check_in, permission)
    return Tool(
        name=tool_name,
        description=description if description is not None else summary,
        input_schema=schema,
        execute=execute,
        check_in=check_in,
        permission=permission,
        pauses=bool(pauses),
        fn=fn,
    )


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    check_in: CheckIn = False,
    permission: PermissionChecker | None = None,
    pauses: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    check_in: CheckIn = False,
    permission: PermissionChecker | None = None,
    pauses: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a ``Tool``: schema from the signature, description from the docstring."""

    def wrap(target: Callable[..., Any]) -> Tool:
        return _build_from_function(
            target,
            name=name,
            description=description,
            check_in=check_in,
            permission=permission,
            pauses=pauses,
        )

    if fn is not None:
        return wrap(fn)
    return wrap


def _ask_human_execute(args: dict[str, Any], ctx: ToolContext) -> Any:
    raise PauseOutsideAgentError("ask_human pauses the run; it only runs inside an agent loop")


def question_schema() -> dict[str, Any]:
    """The input schema of every asking tool: one non-empty ``question`` string (a fresh copy each call)."""
    return {
        "type": "object",
        "properties": {"question": {"type": "string", "minLength": 1, "description": "The question to ask."}},
        "required": ["question"],
        "additionalProperties": False,
    }


ask_human: Tool = define_tool(
    name="ask_human",
    description="Ask the human user a question and wait for the answer. Use it when you need information "
    "or a decision only the user can give.",
    input_schema=question_schema(),
    execute=_ask_human_execute,
    pauses=True,
)
"""The ready-made pausing tool: the agent loop pauses with ``args["question"]`` instead of executing it."""
