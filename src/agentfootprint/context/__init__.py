"""Context engineering: every piece of context is an Injection (slot × trigger × cache), born tracked."""

from agentfootprint.context.evaluate import evaluate_injections
from agentfootprint.context.factories import define_fact, define_instruction, define_skill, define_steering
from agentfootprint.context.injection import (
    Injection,
    InjectionContext,
    InvalidInjectionError,
    ToolReturn,
    Trigger,
)

__all__ = [
    "Injection",
    "InjectionContext",
    "InvalidInjectionError",
    "ToolReturn",
    "Trigger",
    "define_fact",
    "define_instruction",
    "define_skill",
    "define_steering",
    "evaluate_injections",
]
