"""Tool calling for models without native tool calls: a JSON reply schema, a prompt, and the reply → tool-call map."""

from __future__ import annotations

import json
from typing import Any

from agentfootprint.providers._models import Message, ToolCall, ToolSpec

REPLY_SHAPE = '{"tool": <tool name or null>, "args": {<arguments>}, "answer": <text>}'


def _args_schema(tool: ToolSpec) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    schema.setdefault("type", "object")
    return schema


def reply_schema(tools: list[ToolSpec], *, allow_tools: bool = True) -> dict[str, Any]:
    """JSON Schema of one reply: call a named tool with schema-valid args, or answer with ``tool: null``."""
    answer = {
        "type": "object",
        "properties": {
            "tool": {"type": "null"},
            "args": {"type": "object", "properties": {}, "additionalProperties": False},
            "answer": {"type": "string", "minLength": 1},
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
    """The system-prompt addendum that lists the tools and the one-JSON-object reply format."""
    if not allow_tools:
        return (
            'Reply with one JSON object only: {"tool": null, "args": {}, "answer": "<your final answer>"}. '
            "Use the tool results above; do not call tools again."
        )
    lines = ["You can call these tools:"]
    for tool in tools:
        params = json.dumps(tool.input_schema.get("properties", {}), separators=(",", ":"), sort_keys=True)
        description = f": {tool.description}" if tool.description else ""
        lines.append(f"- {tool.name}{description} Arguments: {params}")
    lines.append(
        f"Reply with one JSON object only, shaped {REPLY_SHAPE}. "
        'To call a tool: {"tool": "<name>", "args": {...}, "answer": ""}. '
        'To give the final answer: {"tool": null, "args": {}, "answer": "<your answer>"}. '
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


def parse_reply(text: str, *, call_id: str) -> tuple[str, list[ToolCall]]:
    """Map one JSON reply to ``(answer text, tool calls)``; text that is not such a reply is the answer as-is.

    An unknown tool name is passed on as a call, so the agent refuses it the way it refuses any unknown tool.
    """
    stripped = text.strip()
    try:
        data = json.loads(stripped)
    except ValueError:
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
