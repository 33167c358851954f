"""The one ``module:factory`` loader: a dotted module, a colon, a dotted attribute; imported and checked."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any, Literal

from agentfootprint.errors import AgentFootprintError

FACTORY_PATH = re.compile(r"(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)", re.ASCII)
FACTORY_PATTERN = "^" + FACTORY_PATH.pattern + "$"


class FactoryPathError(AgentFootprintError, ValueError):
    """A ``module:factory`` path that cannot be used; ``reason`` says why (never quoting the path)."""

    code = "ERR_FACTORY_PATH"

    def __init__(self, message: str, *, reason: Literal["shape", "import", "attribute"]) -> None:
        super().__init__(message)
        self.reason = reason


def import_path(path: str, *, from_cwd: bool = False) -> Any:
    """The object ``path`` names (``pkg.module:make`` or ``pkg.module:Class.make``), imported; ``from_cwd`` makes
    the current directory importable first (a command line's convention). Callers check what they got."""
    match = FACTORY_PATH.fullmatch(path) if isinstance(path, str) else None
    if match is None:
        raise FactoryPathError("a factory path looks like 'module:function' (e.g. 'myapp.agents:make')", reason="shape")
    module_name, attr = match["module"], match["attr"]
    if from_cwd:
        cwd = str(Path.cwd())
        if cwd not in sys.path:
            sys.path.insert(0, cwd)
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise FactoryPathError(f"cannot import module {module_name!r}: {err}", reason="import") from None
    for part in attr.split("."):
        if not hasattr(value, part):
            raise FactoryPathError(f"module {module_name!r} has no attribute {attr!r}", reason="attribute")
        value = getattr(value, part)
    return value


__all__ = ["FACTORY_PATH", "FACTORY_PATTERN", "FactoryPathError", "import_path"]
