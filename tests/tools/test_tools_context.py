"""``ToolContext``: its defaults, cancellation from either source, services and teardown registration."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentfootprint.flow.cancel import CancelToken
from agentfootprint.tools import ToolContext


def test_defaults() -> None:
    ctx = ToolContext()
    assert (ctx.tool_call_id, ctx.run_id, ctx.identity, ctx.iteration, ctx.tool_name) == ("", "", None, 0, "")
    assert (ctx.cancelled, ctx.request, ctx.parent_run, ctx.session_id, ctx.redact, ctx.signal) == (
        None,
        None,
        None,
        None,
        None,
        None,
    )
    assert dict(ctx.services) == {}
    assert ctx.is_cancelled is False


def test_cancellation_from_the_event_or_the_token() -> None:
    event = asyncio.Event()
    token = CancelToken()
    ctx = ToolContext(cancelled=event, signal=token)
    assert ctx.is_cancelled is False
    event.set()
    assert ctx.is_cancelled is True
    assert ToolContext(signal=token).is_cancelled is False
    token.cancel()
    assert ToolContext(signal=token).is_cancelled is True
    assert ToolContext(cancelled=asyncio.Event(), signal=token).is_cancelled is True


def test_services_by_name_with_a_default() -> None:
    clock = object()
    ctx = ToolContext(services={"clock": clock})
    assert ctx.service("clock") is clock
    assert ctx.service("missing") is None
    assert ctx.service("missing", 7) == 7


def test_on_teardown_needs_the_tool_sessions_service() -> None:
    with pytest.raises(RuntimeError) as info:
        ToolContext().on_teardown(lambda: None)
    assert str(info.value) == "on_teardown() needs a running agent (no tool sessions are offered here)"


def test_on_teardown_hands_the_cleanup_to_the_tier() -> None:
    calls: list[tuple[Any, ...]] = []

    class Tier:
        def register(self, ctx: ToolContext, cleanup: Any, *, key: str | None, scope: str) -> str:
            calls.append((ctx, cleanup, key, scope))
            return "reused" if key == "again" else "started"

    ctx = ToolContext(services={"tool_sessions": Tier()})

    def cleanup() -> None:
        return None

    assert ctx.on_teardown(cleanup) == "started"
    assert ctx.on_teardown(cleanup, key="again", scope="call") == "reused"
    assert calls == [(ctx, cleanup, None, "run"), (ctx, cleanup, "again", "call")]
