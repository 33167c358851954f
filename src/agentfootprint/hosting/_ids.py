"""What an id and a frontend tool's name may look like on the wire: longer or other characters are refused."""

from __future__ import annotations

import re

__all__ = ["ID_PATTERN", "MAX_ID_LENGTH", "TOOL_NAME_PATTERN"]

MAX_ID_LENGTH = 128
"""The longest id read (thread, run, message, tool call, interrupt): longer is refused, never truncated."""

ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}", re.ASCII)
"""An id's charset: ASCII letters, digits, ``.``, ``_``, ``:`` and ``-`` (UUIDs, ULIDs, ``run_1:a``); whole match."""

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", re.ASCII)
"""A frontend tool's name, as ``agentfootprint.tools`` names tools; whole match."""
