"""`time` on a door (R004-60): read by an agent with .time(), refused on one without; the turn's clock is committed
and handed to tools; a paused turn keeps its clock on resume (a differing one is recorded, never applied)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, ask_human, define_tool
from agentfootprint.agent import InvalidRunOptionError, InvalidTimeError
from agentfootprint.providers import LLMRequest, mock

seen: list[Any] = []


def _clock(args: dict[str, Any], ctx: Any) -> str:
    seen.append(ctx.service("clock"))
    return "ok"


clock_tool = define_tool(name="what_time", description="d", input_schema={"type": "object"}, execute=_clock)
NOON = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def build(*, time: bool = True, zone: str | None = None) -> Agent:
    def respond(req: LLMRequest) -> Any:
        tools = [m for m in req.messages if m.role == "tool"]
        if not tools:
            return {"tool_calls": [{"id": "a", "name": "ask_human", "args": {"question": "When?"}}]}
        if len(tools) == 1:
            return {"tool_calls": [{"id": "t", "name": "what_time", "args": {}}]}
        return "done"

    builder = Agent.create(provider=mock(respond=respond), model="m").tool(ask_human).tool(clock_tool)
    return (builder.time(zone=zone) if time else builder).build()


async def test_R004_60_the_runs_time_is_the_turns_clock_committed_and_served_to_tools() -> None:
    seen.clear()
    agent = build(zone="Europe/Paris")
    paused = await agent.run("book it", time={"now": "2026-03-01T13:00:00+01:00"})
    clock = paused.checkpoint["flow"]["namespaces"][""]["state"]["clock"]  # type: ignore[index]
    assert clock == {"now": NOON.isoformat(), "now_source": "run", "zone": "Europe/Paris", "zone_source": "builder"}
    done = await agent.resume(paused.checkpoint, "tomorrow")
    assert done.answer == "done" and seen == [clock]


async def test_R004_60_the_input_time_wins_and_no_zone_is_unknown_never_the_servers() -> None:
    agent = build()
    paused = await agent.run({"message": "go", "time": NOON}, time={"zone": "Asia/Tokyo"})
    clock = paused.checkpoint["flow"]["namespaces"][""]["state"]["clock"]  # type: ignore[index]
    assert clock["now"] == NOON.isoformat() and clock["zone"] is None and clock["zone_source"] == "unknown"


async def test_R004_60_a_paused_turn_keeps_its_clock_a_differing_one_is_recorded() -> None:
    seen.clear()
    paused = await build().run("go", time={"now": NOON, "zone": "Europe/Paris"})
    cp = json.loads(json.dumps(paused.checkpoint))
    fresh = build()
    done = await fresh.resume(cp, "later", time={"zone": "America/New_York"})
    assert done.answer == "done"
    snap = fresh.last_snapshot()
    assert snap is not None
    kept = snap.state["clock"]
    assert kept["zone"] == "Europe/Paris" and seen[-1] == kept  # never applied
    assert snap.state["clock_rows"] == [
        {"kind": "clock-on-resume", "passed": {"zone": "America/New_York"}, "kept": kept, "applied": False}
    ]


async def test_R004_60_the_same_clock_on_resume_records_nothing() -> None:
    paused = await build().run("go", time={"now": NOON, "zone": "Europe/Paris"})
    agent = build()
    await agent.resume(paused.checkpoint, "x", time={"now": NOON, "zone": "Europe/Paris"})
    snap = agent.last_snapshot()
    assert snap is not None and "clock_rows" not in snap.state


@pytest.mark.parametrize("door", ["run", "follow_up", "resume", "resume_on_error"])
async def test_R004_60_time_on_an_agent_without_time_is_refused_by_name(door: str) -> None:
    agent = build(time=False)
    provider_calls_before = 0
    with pytest.raises(InvalidRunOptionError) as info:
        if door == "run":
            await agent.run("go", time=NOON)
        elif door == "follow_up":
            await agent.follow_up("go", time=NOON)
        elif door == "resume":
            await agent.resume({}, "x", time=NOON)
        else:
            await agent.resume_on_error({}, time=NOON)
    assert info.value.option == "time" and info.value.code == "ERR_INVALID_RUN_OPTION"
    assert info.value.door == f"Agent.{door}" and provider_calls_before == 0


async def test_R004_60_time_in_the_input_on_an_agent_without_time_is_refused() -> None:
    with pytest.raises(InvalidRunOptionError):
        await build(time=False).run({"message": "go", "time": NOON})


@pytest.mark.parametrize(
    ("value", "option"),
    [
        ({"zone": "Mars/Olympus_987"}, "time.zone"),
        ({"zone": "../../etc/passwd"}, "time.zone"),
        ({"now": "yesterday-987"}, "time.now"),
        ({"now": datetime(2026, 1, 1)}, "time.now"),
        ({"now": 987}, "time.now"),
        ({"when": NOON}, "time"),
        ("2026-01-01", "time"),
    ],
)
async def test_R004_60_a_malformed_time_is_refused_before_anything_runs(value: Any, option: str) -> None:
    agent = build()
    with pytest.raises(InvalidRunOptionError) as info:
        await agent.run("go", time=value)
    assert info.value.option == option and "987" not in str(info.value) and "passwd" not in str(info.value)
    assert agent.last_snapshot() is None


@pytest.mark.parametrize("zone", ["Mars/Olympus", "", "/etc/localtime", 5])
def test_R004_60_a_builder_zone_that_is_no_zone_is_refused(zone: Any) -> None:
    with pytest.raises(InvalidTimeError) as info:
        Agent.create(provider=mock(reply="x"), model="m").time(zone=zone)
    assert info.value.code == "ERR_INVALID_TIME" and "Olympus" not in str(info.value)


async def test_R004_60_without_time_the_record_has_no_clock() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").build()
    await agent.run("go")
    snap = agent.last_snapshot()
    assert snap is not None and "clock" not in snap.state


@settings(max_examples=30, deadline=None)
@given(st.datetimes(timezones=st.just(UTC), min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1)))
def test_R004_60_any_aware_now_is_kept_as_the_same_instant(now: datetime) -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").time().build()
    agent.run_sync("go", time=now)
    snap = agent.last_snapshot()
    assert snap is not None and datetime.fromisoformat(snap.state["clock"]["now"]) == now
