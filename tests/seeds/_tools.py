"""A counted refund tool the seed probes share."""

from __future__ import annotations

from typing import Any

from agentfootprint import define_tool


def refund_tool(ran: list[Any], **options: Any) -> Any:
    """``refund``: appends its arguments to ``ran`` and answers "refunded" (``options`` such as ``check_in``)."""
    return define_tool(
        name="refund",
        description="Refund.",
        input_schema={"type": "object", "properties": {}},
        execute=lambda a: ran.append(a) or "refunded",
        **options,
    )
