"""The features above the agent, as builder sugar and the default list need them: typed classes, no names.

The agent layer never imports ``honesty`` or ``extensions``: it reads ``features()`` from this leaf module, which
the package root (``agentfootprint/__init__.py``, the composition root) fills once on import without loading any
feature; each class loads when a builder first asks for it.
"""

from typing import TYPE_CHECKING  # no ``from __future__``: this module loads with every ``import agentfootprint``

if TYPE_CHECKING:  # the classes the root hands down (nothing here imports them at run time)
    from collections.abc import Callable
    from typing import Protocol

    from agentfootprint.agent.extension import Extension
    from agentfootprint.extensions.answer_contract import AnswerContract
    from agentfootprint.extensions.artifacts import Artifacts
    from agentfootprint.extensions.credentials import Credentials
    from agentfootprint.extensions.declared_structure import DeclaredStructure
    from agentfootprint.extensions.integrity import Integrity
    from agentfootprint.extensions.middleware import MessageMiddlewareChain, ToolMiddlewareChain
    from agentfootprint.extensions.receipts import Receipts
    from agentfootprint.extensions.reliability import Reliability
    from agentfootprint.extensions.skill_graph import SkillGraphWalker
    from agentfootprint.extensions.skill_visibility import SkillVisibility
    from agentfootprint.extensions.tool_provider import ToolProviders
    from agentfootprint.extensions.tool_sessions import ToolSessions
    from agentfootprint.honesty.extension import EvidenceGate, Honesty, SelfExplain

    # a checker's contract only: at run time the root's object is all there is (nothing to build on import)
    ExtensionFactory = Callable[[], Extension]
    """Makes one fresh extension (an ``Extension`` class with no required arguments is one)."""

    class Features(Protocol):
        """The extension classes builder sugar constructs, and the list every agent gets by default."""

        def defaults(self) -> tuple[ExtensionFactory, ...]: ...

        @property
        def honesty(self) -> type[Honesty]: ...
        @property
        def evidence_gate(self) -> type[EvidenceGate]: ...
        @property
        def self_explain(self) -> type[SelfExplain]: ...
        @property
        def tool_sessions(self) -> type[ToolSessions]: ...
        @property
        def receipts(self) -> type[Receipts]: ...
        @property
        def message_middleware(self) -> type[MessageMiddlewareChain]: ...
        @property
        def tool_middleware(self) -> type[ToolMiddlewareChain]: ...
        @property
        def tool_providers(self) -> type[ToolProviders]: ...
        @property
        def reliability(self) -> type[Reliability]: ...
        @property
        def credentials(self) -> type[Credentials]: ...
        @property
        def artifacts(self) -> type[Artifacts]: ...
        @property
        def integrity(self) -> type[Integrity]: ...
        @property
        def skill_visibility(self) -> type[SkillVisibility]: ...
        @property
        def skill_graph(self) -> type[SkillGraphWalker]: ...
        @property
        def answer_contract(self) -> type[AnswerContract]: ...
        @property
        def declared_structure(self) -> type[DeclaredStructure]: ...


_installed: "list[Features]" = []


def install_features(features: "Features") -> None:
    """Hand the agent layer its features (the composition root does this once, on ``import agentfootprint``)."""
    _installed[:] = [features]


def features() -> "Features":
    """The features the composition root installed."""
    if not _installed:
        from agentfootprint.errors import AgentFootprintError

        raise AgentFootprintError("no features are installed: import agentfootprint first", code="ERR_NO_FEATURES")
    return _installed[0]


def installed_defaults() -> "tuple[ExtensionFactory, ...]":
    """The default extension list a new ``AgentConfig`` starts from."""
    return features().defaults() if _installed else ()


__all__ = ["features", "install_features", "installed_defaults"]  # and, for checkers, ExtensionFactory and Features
