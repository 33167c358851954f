"""The composition root: features above the agent register as named extensions (loaded only when used)."""

from __future__ import annotations

from typing import Any

from agentfootprint.agent._registry import register_extension
from agentfootprint.agent.extension import Extension


def _honesty(attr: str) -> Any:
    def make(**options: Any) -> Extension:
        from agentfootprint.honesty import extension

        ext: Extension = getattr(extension, attr)(**options)
        return ext

    return make


register_extension("honesty", _honesty("Honesty"), default=True)
register_extension("evidence_gate", _honesty("EvidenceGate"))
register_extension("self_explain", _honesty("SelfExplain"))


def _ext(module: str, attr: str) -> Any:
    def make(**options: Any) -> Extension:
        import importlib

        ext: Extension = getattr(importlib.import_module(f"agentfootprint.extensions.{module}"), attr)(**options)
        return ext

    return make


register_extension("tool_sessions", _ext("tool_sessions", "ToolSessions"), default=True)
register_extension("receipts", _ext("receipts", "Receipts"), default=True)
register_extension("message_middleware", _ext("middleware", "MessageMiddlewareChain"))
register_extension("tool_middleware", _ext("middleware", "ToolMiddlewareChain"))
register_extension("tool_providers", _ext("tool_provider", "ToolProviders"))
register_extension("reliability", _ext("reliability", "Reliability"))
register_extension("credentials", _ext("credentials", "Credentials"))
register_extension("artifacts", _ext("artifacts", "Artifacts"))
register_extension("integrity", _ext("integrity", "Integrity"))
register_extension("skill_visibility", _ext("skill_visibility", "SkillVisibility"))
register_extension("skill_graph", _ext("skill_graph", "SkillGraphWalker"))
register_extension("answer_contract", _ext("answer_contract", "AnswerContract"))
register_extension("declared_structure", _ext("declared_structure", "DeclaredStructure"))
