"""Hosting: the AG-UI door. A request is UNTRUSTED input, read, checked and planned by seed 001's rules.

Names load on first use, so ``import agentfootprint.hosting`` stays cheap (starlette, psycopg load when used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentfootprint._lazy import lazy_exports as _lazy_exports
from agentfootprint.hosting._ids import MAX_ID_LENGTH as AG_UI_MAX_ID_LENGTH

if TYPE_CHECKING:
    from agentfootprint.hosting._otlp import OtlpReceiver, otlp_app, otlp_run_id
    from agentfootprint.hosting.app import AgentFactory, ServedTurn, ag_ui_app, current_turn
    from agentfootprint.hosting.identity import JwtIdentity, jwt_identity
    from agentfootprint.hosting.limits import AdmissionLimits
    from agentfootprint.hosting.memory_store import MemorySessions, memory_sessions
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
    from agentfootprint.hosting.postgres_store import PostgresSessions, postgres_sessions
    from agentfootprint.hosting.refusal import (
        INVALID_RUN_INPUT,
        REFUSALS,
        HostingConfigError,
        HostUnavailableError,
        WireRequestRefusal,
    )
    from agentfootprint.hosting.request import (
        RequestFacts,
        RequestReader,
        TurnRequest,
        check_turn_request,
        read_request,
        run_agent_input_reader,
    )
    from agentfootprint.hosting.serve import load_factory, open_sessions, serve
    from agentfootprint.hosting.sessions import (
        DEFAULT_LEASE_SECONDS,
        LeaseLostError,
        PauseRecord,
        SessionStore,
        StoredThreadUnreadableError,
        ThreadLease,
        ThreadRecord,
        ThreadSummary,
        ThreadTranscript,
    )
    from agentfootprint.hosting.sqlite_store import SqliteSessions, sqlite_sessions

_EXPORTS: dict[str, str] = {
    "AgentFactory": "app",
    "ServedTurn": "app",
    "ag_ui_app": "app",
    "current_turn": "app",
    "OtlpReceiver": "_otlp",
    "otlp_app": "_otlp",
    "otlp_run_id": "_otlp",
    "PostgresSessions": "postgres_store",
    "postgres_sessions": "postgres_store",
    "load_factory": "serve",
    "open_sessions": "serve",
    "serve": "serve",
    "JwtIdentity": "identity",
    "jwt_identity": "identity",
    "AdmissionLimits": "limits",
    "MemorySessions": "memory_store",
    "memory_sessions": "memory_store",
    "DEFAULT_LEASE_SECONDS": "sessions",
    "LeaseLostError": "sessions",
    "PauseRecord": "sessions",
    "SessionStore": "sessions",
    "StoredThreadUnreadableError": "sessions",
    "ThreadLease": "sessions",
    "ThreadRecord": "sessions",
    "ThreadSummary": "sessions",
    "ThreadTranscript": "sessions",
    "SqliteSessions": "sqlite_store",
    "sqlite_sessions": "sqlite_store",
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
    "INVALID_RUN_INPUT": "refusal",
    "REFUSALS": "refusal",
    "HostUnavailableError": "refusal",
    "HostingConfigError": "refusal",
    "WireRequestRefusal": "refusal",
    "RequestFacts": "request",
    "RequestReader": "request",
    "TurnRequest": "request",
    "check_turn_request": "request",
    "read_request": "request",
    "run_agent_input_reader": "request",
}

__all__ = [
    "AG_UI_MAX_ID_LENGTH",
    "DEFAULT_LEASE_SECONDS",
    "INVALID_RUN_INPUT",
    "REFUSALS",
    "AdmissionLimits",
    "AgentFactory",
    "FrontendTool",
    "HeldPause",
    "HeldThread",
    "HostUnavailableError",
    "HostingConfigError",
    "JwtIdentity",
    "LeaseLostError",
    "MemorySessions",
    "OtlpReceiver",
    "PauseRecord",
    "PostgresSessions",
    "RequestFacts",
    "RequestReader",
    "ResumeAnswer",
    "ServedTurn",
    "SessionStore",
    "SqliteSessions",
    "StoredThreadUnreadableError",
    "ThreadBinder",
    "ThreadLease",
    "ThreadRecord",
    "ThreadSummary",
    "ThreadTranscript",
    "ToolAnswer",
    "TurnPlan",
    "TurnRequest",
    "TurnRules",
    "UserTurn",
    "ValidationScope",
    "Validator",
    "WireRequestRefusal",
    "ag_ui_app",
    "bind_identity",
    "check_turn_request",
    "current_turn",
    "jwt_identity",
    "load_factory",
    "memory_sessions",
    "open_sessions",
    "otlp_app",
    "otlp_run_id",
    "plan_turn",
    "postgres_sessions",
    "read_request",
    "run_agent_input_reader",
    "serve",
    "sqlite_sessions",
]
__getattr__, __dir__ = _lazy_exports(__name__, globals(), {name: "." + module for name, module in _EXPORTS.items()})
