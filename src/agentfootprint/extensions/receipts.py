"""Per-call receipts (on by default): every model call mints a receipt under ``model_receipts``.

A receipt is what a later reader needs to prove which request produced which reply: the iteration, model, the
SHA-256 of the request (system prompt, messages, tools, seed) and of the response, and the tools offered.
``AgentBuilder.record_receipt(False)`` declines the mint; nothing else about the run changes.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from operator import is_
from typing import Any

from agentfootprint.agent import CallModel, Extension, RunContext
from agentfootprint.providers import LLMRequest, LLMResponse

__all__ = ["RECEIPTS_KEY", "Receipts", "digest"]

RECEIPTS_KEY = "model_receipts"
_START = hashlib.sha256(b"messages").hexdigest()


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
"""The encoder ``json.dumps`` builds for those options on every call, built once."""


_UNCHECKED = (
    c_make_encoder(None, _CANONICAL.default, encode_basestring, None, ":", ",", True, False, True)
    if c_make_encoder is not None
    else None
)
"""The C encoder ``_CANONICAL`` builds, made once and without a marker table (it keeps no state between calls, so
threads share it): a cycle recurses until ``RecursionError`` instead of being named."""


def canonical_json(value: Any) -> str:
    """``_CANONICAL.encode(value)``: the C encoder called directly; only a value that recursed too deep is encoded
    again with the cycle check, so a cycle is refused as ``json.dumps`` refuses it."""
    if _UNCHECKED is None or isinstance(value, str):
        return _CANONICAL.encode(value)
    try:
        return "".join(_UNCHECKED(value, 0))
    except RecursionError:
        encode = c_make_encoder({}, _CANONICAL.default, encode_basestring, None, ":", ",", True, False, True)
        return "".join(encode(value, 0))


def digest(value: Any) -> str:
    """SHA-256 of ``value``'s canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def _model_digest(model: Any, **dump: Any) -> str | None:
    """The digest of a pydantic model's JSON form; None when it nests too deeply to serialise."""
    try:
        return digest(model.model_dump(mode="json", **dump))
    except (ValueError, RecursionError):
        return None


class Receipts(Extension):
    """Mints one receipt per model call; message digests chain, so each call hashes only what is new."""

    name = "receipts"

    def _messages_digest(self, ctx: RunContext, request: LLMRequest) -> str:
        chained: list[Any] = ctx.state.setdefault("chain_messages", [])  # the messages already chained (kept alive)
        digests: list[str] = ctx.state.setdefault("chain", [])  # the running digest after each of them
        messages = request.messages
        keep = len(chained)
        if len(messages) < keep or not all(map(is_, messages, chained)):  # not an extension: find where they part
            keep = next(
                (i for i, (a, b) in enumerate(zip(messages, chained, strict=False)) if a is not b),
                min(len(messages), keep),
            )
            del chained[keep:], digests[keep:]
        running = digests[-1] if digests else _START
        for i in range(keep, len(messages)):
            running = hashlib.sha256((running + str(_model_digest(messages[i]))).encode()).hexdigest()
            chained.append(messages[i])
            digests.append(running)
        return running

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
