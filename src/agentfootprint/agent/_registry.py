"""Extensions known by name: the built-in ones an agent gets by default, and those builder sugar asks for.

The agent layer never imports the features above it: the package's composition root (``agentfootprint``)
registers factories here, and each factory imports its feature only when an agent is built with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentfootprint.agent.errors import AgentBuildError
from agentfootprint.agent.extension import Extension, check_extension

ExtensionFactory = Callable[..., Extension]

_factories: dict[str, ExtensionFactory] = {}
_defaults: list[str] = []


def register_extension(name: str, factory: ExtensionFactory, *, default: bool = False) -> None:
    """Make ``factory`` the extension named ``name``; ``default=True`` gives it to every agent built from now on."""
    _factories[name] = factory
    if default and name not in _defaults:
        _defaults.append(name)


def named_extension(name: str, **options: Any) -> Extension:
    """A new extension from the factory registered as ``name``."""
    factory = _factories.get(name)
    if factory is None:
        raise AgentBuildError(f"no extension named '{name[:80]}' is registered")
    return check_extension(factory(**options))


def default_extensions() -> list[Extension]:
    """One fresh instance of every default extension, in registration order."""
    return [named_extension(name) for name in _defaults]


__all__ = ["ExtensionFactory", "default_extensions", "named_extension", "register_extension"]
