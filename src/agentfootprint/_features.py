"""The features above the agent, as builder sugar and the default list need them: typed classes, no names.

The agent layer never imports ``honesty`` or ``extensions``: it reads ``features()`` from this leaf module, which
the package root (``agentfootprint/__init__.py``, the composition root) fills once on import without loading any
feature; each class loads when a builder first asks for it.
"""

from typing import TYPE_CHECKING  # no ``from __future__``: this module loads with every ``import agentfootprint``

if TYPE_CHECKING:  # a checker's contract only: at run time the root's object is all there is (nothing to build)
    from collections.abc import Callable
    from typing import Any, Protocol

    ExtensionFactory = Callable[[], Any]
    """Makes one fresh extension (an ``Extension`` class with no required arguments is one); the builder checks
    what it makes (``check_extension``), so this leaf names no layer above it."""

    class Features(Protocol):
        """The extension classes builder sugar constructs, and the list every agent gets by default: each property
        is the feature's class (honesty's ``Honesty``, extensions' ``Reliability``, ...), typed here only as a class."""

        def defaults(self) -> tuple[ExtensionFactory, ...]: ...

        @property
        def honesty(self) -> type[Any]: ...
        @property
        def evidence_gate(self) -> type[Any]: ...
        @property
        def self_explain(self) -> type[Any]: ...
        @property
        def tool_sessions(self) -> type[Any]: ...
        @property
        def receipts(self) -> type[Any]: ...
        @property
        def message_middleware(self) -> type[Any]: ...
        @property
        def tool_middleware(self) -> type[Any]: ...
        @property
        def tool_providers(self) -> type[Any]: ...
        @property
        def reliability(self) -> type[Any]: ...
        @property
        def credentials(self) -> type[Any]: ...
        @property
        def artifacts(self) -> type[Any]: ...
        @property
        def integrity(self) -> type[Any]: ...
        @property
        def skill_visibility(self) -> type[Any]: ...
        @property
        def skill_graph(self) -> type[Any]: ...
        @property
        def answer_contract(self) -> type[Any]: ...
        @property
        def declared_structure(self) -> type[Any]: ...


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
