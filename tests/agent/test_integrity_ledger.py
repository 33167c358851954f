"""R004-15: the integrity disposition ledger is on every agent (posture ``observe``), not only with ``.integrity()``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.extensions import Integrity
from agentfootprint.providers import ProviderServerError, mock

CHECKS = [
    "column-types",
    "dangling-reference",
    "empty-lookup",
    "external-grounds",
    "invariants",
    "offered-tool",
    "prior-turn-evidence",
    "unmapped-conclusion",
    "unsupported-claim",
]


def _echo() -> Any:
    return define_tool(
        name="echo",
        description="Echo.",
        input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
        execute=lambda a: str(a.get("x", "")),
    )


async def test_R004_15_every_agent_files_one_disposition_per_leg_without_integrity_option() -> None:
    """R004-15: one integrity.disposition event per run, both doors (run and resume), on an agent built with no
    ``.integrity()``: default posture 'observe', listener-gated and throw-proof."""
    rows: list[Any] = []
    replies = [{"tool_calls": [{"id": "q", "name": "ask_human", "args": {"question": "ok?"}}]}, "fine"]
    agent = Agent.create(provider=mock(replies=replies)).tool(ask_human).build()
    assert isinstance(agent.extension("integrity"), Integrity)
    agent.on("integrity.disposition", lambda e: rows.append(e.payload))

    def boom(e: Any) -> None:
        raise RuntimeError("listener down")

    agent.on("integrity.disposition", boom)
    paused = await agent.run("hi")
    done = await agent.resume(paused.checkpoint, "yes")
    assert done.answer == "fine"
    assert [(r["status"], r["posture"]) for r in rows] == [("paused", "observe"), ("completed", "observe")]
    first = {r["check"]: r for r in rows[0]["rows"]}
    assert sorted(first) == CHECKS
    assert first["offered-tool"]["checked"] == 1 and first["offered-tool"]["disposition"] == "ran"
    assert first["empty-lookup"]["disposition"] == "not-armed"
    second = {r["check"]: r for r in rows[1]["rows"]}
    assert second["offered-tool"]["not_applicable"] == 1 and second["offered-tool"]["checked"] == 0
    assert done.extensions["integrity"]["disposition"] == rows[1]["rows"]


async def test_R004_15_unwatched_agent_still_keeps_the_ledger_in_its_result() -> None:
    """R004-15: with no listener, no event is built, yet the run's rows are in its result."""
    agent = Agent.create(provider=mock(reply="x")).build()
    result = await agent.run("hi")
    offered = result.extensions["integrity"]["disposition"][0]
    assert offered == {
        "check": "offered-tool",
        "seam": "wire",
        "armed": True,
        "checked": 0,
        "findings": 0,
        "not_applicable": 1,
        "disposition": "not-applicable",
    }


async def test_R004_15_a_failing_run_files_its_rows_too() -> None:
    """R004-15: every exit files: a run whose provider fails files a 'failed' disposition."""
    rows: list[Any] = []

    def down(request: Any) -> Any:
        raise ProviderServerError("down")

    agent = Agent.create(provider=mock(respond=down)).build()
    agent.on("integrity.disposition", lambda e: rows.append(e.payload))
    with pytest.raises(ProviderServerError):
        await agent.run("hi")
    assert [r["status"] for r in rows] == ["failed"]


async def test_R004_15_the_integrity_option_replaces_the_default_ledger() -> None:
    """R004-15: ``.integrity(...)`` configures the one ledger (no second extension, options kept)."""
    agent = Agent.create(provider=mock(reply="x")).integrity(notice_empty_lookups=True).build()
    names = [e.name for e in agent.config.extensions]
    assert names.count("integrity") == 1
    ext = agent.extension(Integrity)
    assert ext is not None and ext.notice_empty is True
    rows = {r["check"]: r for r in (await agent.run("hi")).extensions["integrity"]["disposition"]}
    assert rows["empty-lookup"]["armed"] is True


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=4))
async def test_R004_15_rows_count_every_model_call(calls: list[bool]) -> None:
    """R004-15 (property): each model call files exactly one offered-tool row entry (checked per tool call or
    not-applicable), so the ledger's counts add up to the run's calls."""
    replies: list[Any] = [
        {"tool_calls": [{"id": f"c{i}", "name": "echo" if offered else "ghost", "args": {"x": "v"}}]}
        for i, offered in enumerate(calls)
    ]
    agent = Agent.create(provider=mock(replies=[*replies, "done"])).tool(_echo()).build()
    result = await agent.run("go")
    row = {r["check"]: r for r in result.extensions["integrity"]["disposition"]}["offered-tool"]
    assert row["checked"] == len(calls) and row["not_applicable"] == 1
    assert row["findings"] == calls.count(False)


# -- the dev posture: a canary per armed check ------------------------------------------------------------------------


def _dev_agent() -> Agent:
    search = define_tool(
        name="search", description="S.", input_schema={"type": "object", "properties": {}}, execute=lambda a: "A-1"
    )
    get = define_tool(
        name="get",
        description="G.",
        input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
        execute=lambda a: "ok",
        arguments_from={"id": "search"},
    )
    return (
        Agent.create(provider=mock(reply="Order A-1 is fine."))
        .tool(search)
        .tool(get)
        .claims(lambda answer: [answer])
        .maps({"fine": {"from": ["get"], "says": ["is fine"]}})
        .integrity(integrity_posture="dev")
        .build()
    )


async def test_dev_posture_canaries_pass_for_healthy_checks() -> None:
    result = await _dev_agent().run("status?")
    rows = {r["check"]: r for r in result.extensions["integrity"]["disposition"]}
    assert rows["unmapped-conclusion"]["findings"] == 1 and rows["unsupported-claim"]["disposition"] == "ran"


@pytest.mark.parametrize(
    ("rotted", "check"),
    [
        ("dangling_references", "dangling-reference"),
        ("unsupported_values", "unsupported-claim"),
        ("unmapped_tools", "unmapped-conclusion"),
    ],
)
async def test_dev_posture_a_rotted_check_misses_its_canary(
    monkeypatch: pytest.MonkeyPatch, rotted: str, check: str
) -> None:
    from agentfootprint.extensions import integrity as module

    monkeypatch.setattr(module, rotted, lambda *a: [])
    with pytest.raises(module.CheckerDeadError) as info:
        await _dev_agent().run("status?")
    assert info.value.check == check and info.value.code == "ERR_CHECKER_DEAD"
