"""Typed asks: ``ask_human`` variants that declare the type of the answer they wait for. The agent loop pauses on
them like ``ask_human``; a resume's answer is validated against the declared type, and an answer that does not fit
is asked again (the re-ask count travels on the pause checkpoint) until the tool's ``max_reasks`` is spent."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentfootprint.tools.errors import InvalidToolDefinitionError, PauseOutsideAgentError
from agentfootprint.tools.tool import Tool, define_tool, question_schema

_SCALARS: dict[type, dict[str, Any]] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
}


def answer_schema_of(answer: Any) -> dict[str, Any]:
    """The JSON Schema of an answer type: ``bool``/``int``/``float``/``str``, a pydantic model, or a schema dict."""
    if isinstance(answer, type) and answer in _SCALARS:
        return dict(_SCALARS[answer])
    if isinstance(answer, type) and issubclass(answer, BaseModel):
        return answer.model_json_schema()
    if isinstance(answer, dict) and answer:
        return dict(answer)
    raise InvalidToolDefinitionError(
        "a typed ask's answer must be bool, int, float, str, a pydantic model class or a JSON Schema dict"
    )


def _never_runs(args: dict[str, Any], ctx: Any) -> Any:
    raise PauseOutsideAgentError("a typed ask pauses the run; it only runs inside an agent loop")


def ask_human_typed(
    answer: Any,
    *,
    name: str = "ask_human_typed",
    description: str | None = None,
    max_reasks: int = 2,
) -> Tool:
    """A pausing tool like ``ask_human`` (args ``{"question": str}``) whose answer must be of type ``answer``."""
    if isinstance(max_reasks, bool) or not isinstance(max_reasks, int) or not 0 <= max_reasks <= 20:
        raise InvalidToolDefinitionError(f"tool {name[:64]}: max_reasks must be an int in 0..20")
    schema = answer_schema_of(answer)
    declared = schema.get("type")
    kind = declared if isinstance(declared, str) else "structured"
    article = "an" if kind in ("array", "integer", "object") else "a"  # the JSON Schema types read with "an"
    made = define_tool(
        name=name,
        description=description
        or f"Ask the human user a question whose answer is {article} {kind} value, and wait for it. "
        "Use it when you need information only the user can give.",
        input_schema=question_schema(),
        execute=_never_runs,
    )
    return Tool(
        name=made.name,
        description=made.description,
        input_schema=made.input_schema,
        execute=made.execute,
        pauses=True,
        answer_schema=schema,
        max_reasks=max_reasks,
    )


__all__ = ["answer_schema_of", "ask_human_typed"]
