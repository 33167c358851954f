"""What a door hands one leg of a turn: the caller a linked parent run serves, the resumed leg's composite answer
and redactor, a crashed turn's retry point, and the ``time`` a door was given."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agentfootprint.agent._clock import read_time
from agentfootprint.agent._options import InvalidRunOptionError, RunOptions
from agentfootprint.agent._resume import PreparedResume, caller
from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import InvalidConversationError, ParentRunRefusedError
from agentfootprint.agent.member_run import resolve_parent_run
from agentfootprint.agent.models import ConversationCheckpoint
from agentfootprint.flow import Redactor
from agentfootprint.identity import Identity


def link_parent(
    link: Any, door: str, ident: Identity | None, request: Any, opts: RunOptions
) -> tuple[Identity | None, str | None, Any, RunOptions]:
    """Whom a turn serves (caller, run id, request, options): a turn linked to a live composition run serves that
    run (its id, caller, request and session); None for the run id: a run of its own."""
    if link is None:
        return ident, None, request, opts
    record = resolve_parent_run(link, door)
    if ident is not None and ident != caller(record.identity):
        raise ParentRunRefusedError(door, "identity is not the linked run's caller")
    if request is not None and request is not record.request:
        raise ParentRunRefusedError(door, "request is not the one the linked run serves")
    if opts.session_id is None and record.session_id is not None:
        opts = replace(opts, session_id=record.session_id)
    return record.identity, record.run_id, record.request, opts


def resumed_answer(ready: PreparedResume, answer: Any) -> tuple[dict[str, Any], Redactor]:
    """What the paused stage receives on resume, and the resumed leg's redactor (it knows the paused leg's secrets)."""
    flow = ready.flow
    pause_data = flow.pause_data if isinstance(flow.pause_data, dict) else {}
    composite = {
        "kind": ready.facts.kind,
        "answer": answer,
        "completed": pause_data.get("completed", []),
        "question": pause_data.get("question"),
        "repeat": pause_data.get("repeat"),
    }
    redactor = Redactor(ready.policy)
    if redactor.active:  # learn the paused leg's secrets so the resumed leg's events stay clean
        for ns in flow.namespaces.values():
            for key, value in ns.state.items():
                redactor.observe(key, value)
        redactor.observe("", pause_data)
    return composite, redactor


def retry_point(conv: ConversationCheckpoint) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """A crashed turn's last user message, the history before it, and the whole history it replays."""
    history = list(conv.history)
    last_user = max((i for i, m in enumerate(history) if m.get("role") == "user"), default=None)
    if last_user is None:
        raise InvalidConversationError("checkpoint has no user turn to retry", field="history")
    return str(history[last_user].get("content") or ""), history[:last_user], history


def passed_time(config: AgentConfig, door: str, value: Any) -> dict[str, Any] | None:
    """A door's ``time``, read — or refused on an agent without ``.time()`` (it would do nothing), or malformed."""
    if value is None:
        return None
    if not config.time_enabled:
        raise InvalidRunOptionError(door, "time", "is read only by an agent built with .time()")
    return read_time(door, value)
