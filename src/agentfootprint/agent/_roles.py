"""Run-start check: every messages-slot injection's role is one the provider can carry in its message list."""

from __future__ import annotations

from typing import Any

from agentfootprint.agent.config import AgentConfig
from agentfootprint.agent.errors import MessageRoleError

DEFAULT_ROLES = frozenset({"user", "assistant"})


def message_roles(provider: Any) -> frozenset[str]:
    """The roles a provider declares it carries (``message_roles``); a retry or fallback wrapper carries only what
    every provider it wraps carries."""
    declared = getattr(provider, "message_roles", None)
    if declared is not None:
        return frozenset(declared)
    inner = getattr(provider, "inner", None)
    if inner is not None:
        return message_roles(inner)
    wrapped = getattr(provider, "providers", None)
    if isinstance(wrapped, list | tuple) and wrapped:
        roles = message_roles(wrapped[0])
        for other in wrapped[1:]:
            roles &= message_roles(other)
        return roles
    return DEFAULT_ROLES


def check_message_roles(config: AgentConfig) -> None:
    """Refuse, before any model call, a messages-slot role this provider cannot carry."""
    declared = [(i.id, i.role) for i in config.injections if i.slot == "messages"]
    if not declared:
        return
    carried = message_roles(config.provider)
    for source_id, role in declared:
        if role not in carried:
            raise MessageRoleError(role=role, source_id=source_id, provider=str(getattr(config.provider, "name", "")))


__all__ = ["DEFAULT_ROLES", "check_message_roles", "message_roles"]
