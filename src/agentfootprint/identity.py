"""Who a run is for: tenant, principal and conversation, each optional."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfootprint.errors import AgentFootprintError


class InvalidIdentityError(AgentFootprintError, TypeError):
    """An identity that is neither an ``Identity`` nor a dict of its string fields."""

    code = "ERR_INVALID_IDENTITY"


class Identity(BaseModel):
    """The caller a run serves; used for memory namespaces and handed to tools as ``ctx.identity``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: str | None = Field(default=None, max_length=256)
    principal: str | None = Field(default=None, max_length=256)
    conversation_id: str | None = Field(default=None, max_length=256)
    issuer: str | None = Field(default=None, max_length=256)
    """Who vouched for ``principal`` (set by ``jwt_identity`` with several issuers): threads are owned per issuer."""


_FIELDS = ("tenant", "principal", "conversation_id", "issuer")


def coerce_identity(value: Any) -> Identity | None:
    """Accept an ``Identity``, a dict with its keys, or None; refuse anything else by naming the problem."""
    if value is None or isinstance(value, Identity):
        return value
    if isinstance(value, dict):
        unknown = sorted(str(k) for k in value if k not in _FIELDS)
        if unknown:
            raise InvalidIdentityError(f"identity has unknown keys: {', '.join(unknown)[:200]}")
        for key in _FIELDS:
            v = value.get(key)
            if v is not None and not isinstance(v, str):
                raise InvalidIdentityError(f"identity.{key} must be a string, got {type(v).__name__}")
            if isinstance(v, str) and len(v) > 256:
                raise InvalidIdentityError(f"identity.{key} is longer than 256 characters")
        return Identity(**{k: value.get(k) for k in _FIELDS})
    raise InvalidIdentityError(f"identity must be an Identity or a dict, got {type(value).__name__}")
