"""Per-call receipts (on by default): every model call mints a receipt under ``model_receipts``.

A receipt is what a later reader needs to prove which request produced which reply: the iteration, model, the
SHA-256 of the request (system prompt, messages, tools, seed) and of the response, and the tools offered.
``AgentBuilder.record_receipt(False)`` declines the mint; nothing else about the run changes.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from json.encoder import encode_basestring
from operator import is_
from typing import Any

from agentfootprint._text import json_writer
from agentfootprint.agent import CallModel, Extension, RunContext
from agentfootprint.providers import LLMRequest, LLMResponse, Message, ToolCall

__all__ = ["RECEIPTS_KEY", "Receipts", "chain_digest", "digest", "message_digest"]

RECEIPTS_KEY = "model_receipts"
_START = hashlib.sha256(b"messages").hexdigest()


canonical_json = json_writer(ensure_ascii=False)
"""``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)``, the encoder built
once (a cycle is refused as ``json.dumps`` refuses it)."""


def digest(value: Any) -> str:
    """SHA-256 of ``value``'s canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def _model_digest(model: Any, **dump: Any) -> str | None:
    """The digest of a pydantic model's JSON form; None when it nests too deeply to serialise."""
    try:
        return digest(model.model_dump(mode="json", **dump))
    except (ValueError, RecursionError):
        return None


_LEAVES = frozenset({str, int, bool, type(None)})


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is JSON as it stands (str keys, finite floats, not too deep): what a json-mode dump keeps."""
    t = type(value)
    if t in _LEAVES:
        return True
    if t is float:
        return math.isfinite(value)
    if depth > 100 or (t is not dict and t is not list):
        return False
    for k, v in value.items() if t is dict else enumerate(value):
        if (t is dict and type(k) is not str) or (type(v) is not str and not _plain(v, depth + 1)):
            return False
    return True


def _text(value: Any) -> str | None:
    """A str or None field as canonical JSON; None when it is neither."""
    if value is None:
        return "null"
    return encode_basestring(value) if type(value) is str else None


_CALL = '{"args":%s,"args_error":%s,"id":%s,"name":%s,"signature":%s}'
_MESSAGE = '{"content":%s,"reasoning":[],"role":%s,"tool_call_id":%s,"tool_calls":[%s],"tool_name":%s}'


def _message_json(m: Any) -> str | None:
    """``canonical_json(m.model_dump(mode="json"))`` written out for a plain message (no reasoning, JSON arguments);
    None for any other."""
    if type(m) is not Message:
        return None
    f = m.__dict__
    reasoning, tool_calls = f["reasoning"], f["tool_calls"]
    if type(reasoning) is not list or reasoning or type(tool_calls) is not list:
        return None
    calls = ""
    if tool_calls:
        written = []
        for c in tool_calls:
            if type(c) is not ToolCall:
                return None
            g = c.__dict__
            args = g["args"]
            if type(args) is not dict or not _plain(args):
                return None
            fields = (_text(g["args_error"]), _text(g["id"]), _text(g["name"]), _text(g["signature"]))
            if None in fields:
                return None
            written.append(_CALL % (canonical_json(args) if args else "{}", *fields))
        calls = ",".join(written)
    texts = (_text(f["content"]), _text(f["role"]), _text(f["tool_call_id"]), calls, _text(f["tool_name"]))
    return None if None in texts else _MESSAGE % texts


def message_digest(message: Any) -> str | None:
    """``digest(message.model_dump(mode="json"))`` (None when it cannot be dumped); a plain message is written out
    directly instead of dumped first."""
    text = _message_json(message)
    if text is None:
        return _model_digest(message)
    try:
        return hashlib.sha256(text.encode()).hexdigest()
    except ValueError:  # a lone surrogate: the dumped form cannot be encoded either
        return None


def chain_digest(messages: Sequence[Any], chained: list[Any], digests: list[str]) -> str:
    """The running digest of ``messages`` (a receipt's ``messages`` field), given the messages already chained and
    the running digest after each (both updated in place): only the messages after the shared prefix are hashed."""
    keep = len(chained)
    if len(messages) < keep or not all(map(is_, messages, chained)):  # not an extension: find where they part
        keep = next(
            (i for i, (a, b) in enumerate(zip(messages, chained, strict=False)) if a is not b),
            min(len(messages), keep),
        )
        del chained[keep:], digests[keep:]
    running = digests[-1] if digests else _START
    for i in range(keep, len(messages)):
        running = hashlib.sha256((running + str(message_digest(messages[i]))).encode()).hexdigest()
        chained.append(messages[i])
        digests.append(running)
    return running


class Receipts(Extension):
    """Mints one receipt per model call; message digests chain, so each call hashes only what is new."""

    name = "receipts"

    def _messages_digest(self, ctx: RunContext, request: LLMRequest) -> str:
        chained: list[Any] = ctx.state.setdefault("chain_messages", [])  # the messages already chained (kept alive)
        return chain_digest(request.messages, chained, ctx.state.setdefault("chain", []))

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        response = await call_next(request)
        if ctx.turn is None:
            return response
        head = {
            "system_prompt": request.system_prompt,
            "tools": [_model_digest(t) for t in request.tools],
            "model": request.model,
            "seed": request.seed,
            "messages": self._messages_digest(ctx, request),
        }
        receipt = {
            "iteration": ctx.iteration,
            "model": request.model,
            "request_digest": digest(head),
            "response_digest": _model_digest(response, exclude={"attempts"}),
            "message_count": len(request.messages),
            "tools": [t.name for t in request.tools],
        }
        ctx.record_append(RECEIPTS_KEY, receipt)
        return response
