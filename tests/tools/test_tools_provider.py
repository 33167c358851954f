"""Tool providers exactly: static, gated and skill-scoped lists, async listing, ids and refusals."""

from __future__ import annotations

from typing import Any

import pytest

from agentfootprint.tools import (
    InvalidToolDefinitionError,
    ProviderContext,
    Tool,
    define_tool,
    gated_tools,
    list_provider_tools,
    skill_scoped_tools,
    static_tools,
)

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def _tool(name: str) -> Tool:
    return define_tool(name=name, description=f"The {name} tool.", input_schema=SCHEMA, execute=lambda args: name)


A, B, C = _tool("a"), _tool("b"), _tool("c")


class _Listing:
    def __init__(self, listed: Any, *, id: str = "listing") -> None:
        self._listed = listed
        self._id = id
        self.seen: list[ProviderContext] = []
        self.closed = 0

    @property
    def id(self) -> str:
        return self._id

    def list(self, ctx: ProviderContext) -> Any:
        self.seen.append(ctx)
        return self._listed


class _AsyncListing(_Listing):
    async def list(self, ctx: ProviderContext) -> Any:  # type: ignore[override]
        self.seen.append(ctx)
        return self._listed

    async def aclose(self) -> None:
        self.closed += 1


def test_provider_context_defaults() -> None:
    ctx = ProviderContext()
    assert (ctx.iteration, ctx.run_id, ctx.active_skills, ctx.identity, ctx.session_id, ctx.extras) == (
        0,
        "",
        (),
        None,
        None,
        {},
    )


async def test_list_provider_tools_awaits_and_copies() -> None:
    ctx = ProviderContext(iteration=2)
    sync, asynchronous = _Listing((A, B)), _AsyncListing([C])
    assert await list_provider_tools(sync, ctx) == [A, B]
    assert await list_provider_tools(asynchronous, ctx) == [C]
    assert sync.seen == [ctx] and asynchronous.seen == [ctx]
    assert await list_provider_tools(_Listing(None), ctx) == []
    assert await list_provider_tools(_AsyncListing(None), ctx) == []


async def test_list_provider_tools_refuses_a_non_tool_by_provider_and_type() -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        await list_provider_tools(_Listing([A, "b"], id="mcp:files"), ProviderContext())
    assert str(info.value) == "tool provider 'mcp:files' listed a str, not a Tool"


async def test_static_tools_offer_the_same_tools_every_time() -> None:
    provider = static_tools([A, B])
    assert provider.id == "static"
    assert await list_provider_tools(provider, ProviderContext()) == [A, B]
    assert await list_provider_tools(provider, ProviderContext(iteration=9)) == [A, B]
    assert static_tools(iter([C]), id="mine").id == "mine"
    assert await list_provider_tools(static_tools([]), ProviderContext()) == []


def test_static_tools_refuse_a_non_tool() -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        static_tools([A, {"name": "b"}])  # type: ignore[list-item]
    assert str(info.value) == "static_tools() takes Tools, got dict"


async def test_gated_tools_offer_what_the_predicate_allows() -> None:
    asked: list[tuple[str, int]] = []

    def allow(name: str, ctx: ProviderContext) -> bool:
        asked.append((name, ctx.iteration))
        return name != "b" and ctx.iteration < 3

    inner = static_tools([A, B, C], id="base")
    gated = gated_tools(inner, allow)
    assert gated.id == "gated:base"
    assert await list_provider_tools(gated, ProviderContext(iteration=1)) == [A, C]
    assert await list_provider_tools(gated, ProviderContext(iteration=3)) == []
    assert asked == [("a", 1), ("b", 1), ("c", 1), ("a", 3), ("b", 3), ("c", 3)]
    assert gated_tools(inner, allow, id="custom").id == "custom"


async def test_gated_tools_over_an_async_provider_and_its_close() -> None:
    inner = _AsyncListing([A, B], id="remote")
    gated = gated_tools(inner, lambda name, ctx: name == "b")
    ctx = ProviderContext(iteration=4)
    assert await list_provider_tools(gated, ctx) == [B]
    assert inner.seen == [ctx]
    await gated.aclose()  # type: ignore[attr-defined]
    assert inner.closed == 1
    await gated_tools(static_tools([A]), lambda n, c: True).aclose()  # type: ignore[attr-defined]


async def test_a_raising_predicate_fails_the_listing() -> None:
    def broken(name: str, ctx: ProviderContext) -> bool:
        raise RuntimeError("policy down")

    with pytest.raises(RuntimeError, match="policy down"):
        await list_provider_tools(gated_tools(static_tools([A]), broken), ProviderContext())


def test_gated_tools_refuse_a_predicate_that_is_not_callable() -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        gated_tools(static_tools([A]), True)  # type: ignore[arg-type]
    assert str(info.value) == "gated_tools() needs a predicate fn(tool_name, ctx) -> bool"


async def test_skill_scoped_tools_follow_the_active_skills() -> None:
    provider = skill_scoped_tools("billing", [A, B])
    assert provider.id == "skill-scoped:billing"
    assert provider.inner.id == "skill:billing"  # type: ignore[attr-defined]
    assert await list_provider_tools(provider, ProviderContext()) == []
    assert await list_provider_tools(provider, ProviderContext(active_skills=("search",))) == []
    assert await list_provider_tools(provider, ProviderContext(active_skills=("search", "billing"))) == [A, B]
