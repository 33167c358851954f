"""The name a model sees for an MCP tool: the server's own name when every provider accepts it, else a mapped one.

OpenAI, Anthropic and Bedrock accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$``; MCP names may be longer and
hold dots, slashes or any other character. A name that fits (and starts with a letter or ``_``) is kept as is; any
other is mapped to its characters outside that set replaced by ``_``, cut to 52, then ``-x`` and the first 10 hex
digits of its SHA-256. Kept names never end in that suffix (a name that does is mapped too), so a kept name and a
mapped one never meet; ``MCPToolProvider.server_names`` maps each name back to the server's.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["WIRE_NAME", "model_tool_name"]

WIRE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
"""A tool name every provider accepts (and ours: a letter or ``_`` first)."""
_SUFFIX = re.compile(r"-x[0-9a-f]{10}$")
_OUTSIDE = re.compile(r"[^A-Za-z0-9_-]")
_HEAD = 52


def model_tool_name(server_name: str) -> str:
    """The name the model sees for the server's tool ``server_name`` (deterministic; the identity when it fits)."""
    if WIRE_NAME.match(server_name) and not _SUFFIX.search(server_name):
        return server_name
    digest = hashlib.sha256(server_name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    head = _OUTSIDE.sub("_", server_name)
    if not head[:1].isascii() or not (head[:1].isalpha() or head[:1] == "_"):
        head = "_" + head
    return f"{head[:_HEAD]}-x{digest}"
