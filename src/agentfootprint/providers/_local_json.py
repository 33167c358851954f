"""Tool calling for models without native tool calls: a JSON reply schema, a prompt, and the reply → tool-call map."""

from __future__ import annotations

import json
import re
from typing import Any

from agentfootprint.providers._models import Message, ToolCall, ToolSpec


def _args_schema(tool: ToolSpec) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    schema.setdefault("type", "object")
    return schema


def reply_schema(
    tools: list[ToolSpec], *, allow_tools: bool = True, answer_pattern: str | None = None
) -> dict[str, Any]:
    """JSON Schema of one reply: call a named tool with schema-valid args, or answer with ``tool: null``."""
    answer_text: dict[str, Any] = {"type": "string", "minLength": 1}
    if answer_pattern is not None:
        answer_text["pattern"] = answer_pattern
    answer = {
        "type": "object",
        "properties": {
            "tool": {"type": "null"},
            "args": {"type": "object", "properties": {}, "additionalProperties": False},
            "answer": answer_text,
        },
        "required": ["tool", "args", "answer"],
        "additionalProperties": False,
    }
    options: list[dict[str, Any]] = []
    if allow_tools:
        for tool in tools:
            options.append(
                {
                    "type": "object",
                    "properties": {"tool": {"const": tool.name}, "args": _args_schema(tool), "answer": {"const": ""}},
                    "required": ["tool", "args", "answer"],
                    "additionalProperties": False,
                }
            )
    options.append(answer)
    return options[0] if len(options) == 1 else {"anyOf": options}


def tool_instructions(tools: list[ToolSpec], *, allow_tools: bool = True) -> str:
    """The system-prompt addendum that lists the tools and the one-JSON-object reply format.

    It names the keys but shows no placeholder values: small models copy a placeholder word for word.
    """
    if not tools:
        return (
            'Reply with exactly one JSON object with the keys "tool", "args" and "answer": "tool" is null, '
            '"args" is {}, and "answer" is your answer to the user.'
        )
    if not allow_tools:
        return (
            'Reply with exactly one JSON object with the keys "tool", "args" and "answer": "tool" is null, '
            '"args" is {}, and "answer" is your final answer to the user, based on the tool results above.'
        )
    lines = ["You can call these tools:"]
    for tool in tools:
        params = json.dumps(tool.input_schema.get("properties", {}), separators=(",", ":"), sort_keys=True)
        description = f": {tool.description}" if tool.description else ""
        lines.append(f"- {tool.name}{description} Arguments: {params}")
    lines.append(
        'Reply with exactly one JSON object with the keys "tool", "args" and "answer". '
        'To call a tool, "tool" is its name, "args" its arguments, and "answer" is "". '
        'To answer the user, "tool" is null, "args" is {}, and "answer" is your answer. '
        "Once a tool result answers the question, give the final answer."
    )
    return "\n".join(lines)


def reply_json(call: ToolCall) -> str:
    """How an earlier tool call is shown back to the model: the JSON reply it made."""
    return json.dumps({"tool": call.name, "args": call.args, "answer": ""}, separators=(", ", ": "))


def rewrite_messages(messages: list[Message]) -> list[Message]:
    """The conversation with tool turns as plain text: calls become the JSON replies, results become user turns."""
    out: list[Message] = []
    for message in messages:
        if message.role == "assistant" and message.tool_calls:
            out.append(Message(role="assistant", content="\n".join(reply_json(c) for c in message.tool_calls)))
        elif message.role == "tool":
            name = message.tool_name or "the tool"
            out.append(Message(role="user", content=f"Result of {name}: {message.content}"))
        else:
            out.append(Message(role=message.role, content=message.content))
    return out


def tool_rounds(messages: list[Message]) -> int:
    """How many tool results the conversation already holds."""
    return sum(1 for m in messages if m.role == "tool")


def _salvage_answer(text: str) -> str | None:
    """The ``answer`` string of a cut-off JSON reply (e.g. ``max_tokens`` reached), decoded as far as it goes."""
    key = text.find('"answer"')
    if key < 0:
        return None
    colon = text.find(":", key + len('"answer"'))
    if colon < 0:
        return None
    rest = text[colon + 1 :].lstrip()
    if not rest.startswith('"'):
        return None
    body, escaped = [], False
    for char in rest[1:]:
        if escaped:
            body.append(char)
            escaped = False
        elif char == "\\":
            body.append(char)
            escaped = True
        elif char == '"':
            break
        else:
            body.append(char)
    raw = "".join(body).rstrip("\\")
    for end in range(len(raw), -1, -1):
        try:
            decoded: str = json.loads(f'"{raw[:end]}"')
            return decoded
        except ValueError:
            continue
    return None


_TOOL_KEY = re.compile(r'^\{\s*"tool"\s*:\s*"([^"\\]+)"\s*,\s*"args"\s*:\s*')


def _salvage_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The tool name and complete ``args`` object of a tool reply cut off after its args (``max_tokens`` reached)."""
    match = _TOOL_KEY.match(text)
    if match is None:
        return None
    try:
        args, _ = json.JSONDecoder().raw_decode(text, match.end())
    except ValueError:
        return None
    return (match.group(1), args) if isinstance(args, dict) else None


def parse_reply(text: str, *, call_id: str) -> tuple[str, list[ToolCall]]:
    """Map one JSON reply to ``(answer text, tool calls)``; text that is not such a reply is the answer as-is.

    An unknown tool name is passed on as a call, so the agent refuses it the way it refuses any unknown tool.
    """
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except ValueError:
        call = _salvage_call(stripped)
        if call is not None:
            return "", [ToolCall(id=call_id, name=call[0], args=call[1])]
        salvaged = _salvage_answer(stripped) if stripped.startswith("{") else None
        return (salvaged if salvaged is not None else text), []
    if not isinstance(data, dict) or "tool" not in data:
        return text, []
    tool = data.get("tool")
    answer = data.get("answer")
    answer_text = answer if isinstance(answer, str) else ("" if answer is None else json.dumps(answer))
    if tool is None or tool == "":
        return answer_text, []
    if not isinstance(tool, str):
        return text, []
    raw_args = data.get("args", {})
    if raw_args is None:
        raw_args = {}
    if not isinstance(raw_args, dict):
        error = f"the model's args for {tool!r} were {type(raw_args).__name__}, not a JSON object"
        return answer_text, [ToolCall(id=call_id, name=tool, args={}, args_error=error)]
    return answer_text, [ToolCall(id=call_id, name=tool, args=raw_args)]
