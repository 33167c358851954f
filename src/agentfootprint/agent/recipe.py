"""Agent recipes: a named, versioned unit of configuration applied with ``AgentBuilder.recipe(r)``.

A recipe's ``configure(builder)`` calls builder methods that already exist, at the point where ``.recipe()`` is
written (a later call still wins). Nothing is registered or deferred; the run records which recipes built the agent.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentfootprint.agent.errors import AgentBuildError

if TYPE_CHECKING:
    from agentfootprint.agent.builder import AgentBuilder

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_VERSION = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]{1,40})?$")


@dataclass(frozen=True)
class AgentRecipe:
    """``id`` (lowercase), ``version`` (semver), ``configure(builder)`` and a one-line ``description``."""

    id: str
    version: str
    configure: Callable[[AgentBuilder], Any]
    description: str = ""

    def row(self) -> dict[str, str]:
        return {"id": self.id, "version": self.version}


def define_agent_recipe(
    *, id: str, version: str, configure: Callable[[AgentBuilder], Any], description: str = ""
) -> AgentRecipe:
    """A recipe; refused by name when the id or version is malformed or ``configure`` is async (never awaited)."""
    if not isinstance(id, str) or not _ID.match(id):
        raise AgentBuildError("recipe id must be 1-64 lowercase letters, digits, '.', '_' or '-'", code="ERR_RECIPE")
    if not isinstance(version, str) or not _VERSION.match(version):
        raise AgentBuildError(f"recipe '{id}' version must be semver (1.2.0)", code="ERR_RECIPE")
    if not callable(configure):
        raise AgentBuildError(f"recipe '{id}' configure must be a function of the builder", code="ERR_RECIPE")
    if inspect.iscoroutinefunction(configure):
        raise AgentBuildError(
            f"recipe '{id}' configure is async: it would never be awaited; make it a plain function",
            code="ERR_RECIPE_ASYNC",
        )
    return AgentRecipe(id=id, version=version, configure=configure, description=str(description)[:300])


__all__ = ["AgentRecipe", "define_agent_recipe"]
