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
