"""The conversation checkpoint a leg leaves: its history, what each extension carries across turns, and the folded
spans and window scale of its own committed state (one reader for the kept text and the handed-out JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pydantic_core import PydanticSerializationError

from agentfootprint.agent._resume import stamp
from agentfootprint.agent._run import AgentRun
from agentfootprint.agent._seal import seal
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.models import ConversationCheckpoint
from agentfootprint.flow._trusted import trusted
from agentfootprint.identity import Identity

_conversation_checkpoint = trusted(ConversationCheckpoint)  # model_construct, planned once

History = list[dict[str, Any]]


def identity_dict(identity: Identity | None) -> dict[str, Any] | None:
    """A caller as stored in a checkpoint (None: no caller, or one that says nothing)."""
    return identity.model_dump(exclude_none=True) or None if identity is not None else None


def conversation_key(conversation: ConversationCheckpoint | None) -> str | None:
    """The key a turn of a stored conversation holds while it runs (None: a new conversation, never contended)."""
    return f"conversation:{conversation.run_id}" if conversation is not None and conversation.run_id else None


def read_kept(text: str) -> ConversationCheckpoint:
    """A conversation this agent kept (``RunRecord.conversation_text``), as the checkpoint it was written from."""
    kept = json.loads(text)
    return _conversation_checkpoint(**{k: v for k, v in kept.items() if k in ConversationCheckpoint.model_fields})


def conversation_model(
    config: AgentConfig, run: AgentRun, history: History, iterations: int, raw: Mapping[str, Any] | None
) -> ConversationCheckpoint:
    """The checkpoint model of the conversation ``run`` leaves with ``history`` (not yet sealed)."""
    carried = {}
    for ext in config.hooks.checkpoint:
        value = ext.checkpoint(run.ctx(ext))
        if value is not None:
            carried[ext.name] = json.loads(json.dumps(value))
    return _conversation_checkpoint(
        run_id=run.run_id,
        history=history,
        identity=identity_dict(run.identity),
        last_completed_iteration=iterations,
        original_input=run.original_input,
        extensions=carried or None,
        folded=_thawed(raw, "folded_spans"),
        window_measure=_measure(raw),
        agent=stamp(config),
        seal=None,
    )


def conversation(
    config: AgentConfig, run: AgentRun, history: History, iterations: int, raw: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The conversation checkpoint as JSON (sealed with a key): freshly built, nothing shared."""
    return seal(conversation_model(config, run, history, iterations, raw).to_json(), config.checkpoint_key)


def conversation_text(
    config: AgentConfig, run: AgentRun, history: History, iterations: int, raw: Mapping[str, Any] | None
) -> str | Callable[[], str]:
    """``json.dumps(conversation(...))`` up to spacing: the kept form of the last conversation. Unsealed, it is
    built now and written out when first read (what it holds is committed, read-only, or copied here)."""
    model = conversation_model(config, run, history, iterations, raw)
    if config.checkpoint_key is None:
        return partial(_unsealed_text, model)
    return json.dumps(seal(model.to_json(), config.checkpoint_key))


def _unsealed_text(model: ConversationCheckpoint) -> str:
    try:
        return model.to_json_text()
    except PydanticSerializationError:  # text only Python's encoder writes (a lone surrogate)
        return json.dumps(model.to_json())


def _thawed(raw: Mapping[str, Any] | None, key: str) -> list[dict[str, Any]] | None:
    """A list from the run's committed state as plain JSON (None when absent or empty)."""
    value = (raw or {}).get(key)
    return json.loads(json.dumps(value)) if value else None


def _measure(raw: Mapping[str, Any] | None) -> dict[str, int] | None:
    """The last request's provider token count and characters, when a counted window measured it."""
    chars = int((raw or {}).get("window_chars") or 0)
    tokens = int(((raw or {}).get("last_response") or {}).get("usage", {}).get("input_tokens") or 0)
    if chars and tokens:
        return {"input_tokens": tokens, "chars": chars}
    carried = (raw or {}).get("window_measure")
    return dict(carried) if carried else None
