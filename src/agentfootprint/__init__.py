"""agentfootprint: the explainable agent framework."""

from agentfootprint.errors import AgentFootprintError
from agentfootprint.identity import Identity

__all__ = ["AgentFootprintError", "Identity"]
__version__ = "0.1.0"
