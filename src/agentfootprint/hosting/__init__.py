"""Hosting: the AG-UI door. A request is UNTRUSTED input, read, checked and planned by seed 001's rules.

Names load on first use, so ``import agentfootprint.hosting`` stays cheap (``ag_ui`` loads only to check parts)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentfootprint.hosting.body import (
        DEFAULT_MAX_BODY_BYTES,
        MAX_JSON_DEPTH,
        check_content_length,
        parse_json_body,
        plain_json_copy,
        read_body_capped,
    )
    from agentfootprint.hosting.plan import (
        FrontendTool,
        HeldPause,
        HeldThread,
        ResumeAnswer,
        ThreadBinder,
        ToolAnswer,
        TurnPlan,
        TurnRules,
        UserTurn,
        ValidationScope,
        Validator,
        bind_identity,
        plan_turn,
    )
    from agentfootprint.hosting.refusal import REFUSALS, HostingConfigError, WireRequestRefusal
    from agentfootprint.hosting.request import (
        ID_PATTERN,
        MAX_ID_LENGTH,
        RequestFacts,
        RequestReader,
        TurnRequest,
        check_turn_request,
        read_request,
        run_agent_input_reader,
    )

_EXPORTS: dict[str, str] = {
    "DEFAULT_MAX_BODY_BYTES": "body",
    "MAX_JSON_DEPTH": "body",
    "check_content_length": "body",
    "parse_json_body": "body",
    "plain_json_copy": "body",
    "read_body_capped": "body",
    "FrontendTool": "plan",
    "HeldPause": "plan",
    "HeldThread": "plan",
    "ResumeAnswer": "plan",
    "ThreadBinder": "plan",
    "ToolAnswer": "plan",
    "TurnPlan": "plan",
    "TurnRules": "plan",
    "UserTurn": "plan",
    "ValidationScope": "plan",
    "Validator": "plan",
    "bind_identity": "plan",
    "plan_turn": "plan",
    "REFUSALS": "refusal",
    "HostingConfigError": "refusal",
    "WireRequestRefusal": "refusal",
    "ID_PATTERN": "request",
    "MAX_ID_LENGTH": "request",
    "RequestFacts": "request",
    "RequestReader": "request",
    "TurnRequest": "request",
    "check_turn_request": "request",
    "read_request": "request",
    "run_agent_input_reader": "request",
}

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "ID_PATTERN",
    "MAX_ID_LENGTH",
    "MAX_JSON_DEPTH",
    "REFUSALS",
    "FrontendTool",
    "HeldPause",
    "HeldThread",
    "HostingConfigError",
    "RequestFacts",
    "RequestReader",
    "ResumeAnswer",
    "ThreadBinder",
    "ToolAnswer",
    "TurnPlan",
    "TurnRequest",
    "TurnRules",
    "UserTurn",
    "ValidationScope",
    "Validator",
    "WireRequestRefusal",
    "bind_identity",
    "check_content_length",
    "check_turn_request",
    "parse_json_body",
    "plain_json_copy",
    "plan_turn",
    "read_body_capped",
    "read_request",
    "run_agent_input_reader",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentfootprint.hosting' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agentfootprint.hosting.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
