"""Contract (API.md §2, issue 3): redaction on every recorded surface, events and their invariants, hostile input."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, EmptyAnswerWarning, ask_human, define_tool
from agentfootprint.errors import AgentFootprintError
from agentfootprint.events import AgentEvent
from agentfootprint.providers import LLMRequest, mock

from .conftest import lookup_calls, lookup_order

SSN = "123-45-6789"
SYSTEM = "You are an identity-check assistant."

seen_ssn: list[str] = []


def _verify(args: dict[str, Any], ctx: Any) -> Any:
    seen_ssn.append(args["ssn"])
    return {"ssn": args["ssn"], "match": True, "note": f"record {args['ssn']} belongs to {args['name']}"}


verify_identity = define_tool(
    name="verify_identity",
    description="Verify a person's identity",
    input_schema={
        "type": "object",
        "properties": {"ssn": {"type": "string"}, "name": {"type": "string"}},
        "required": ["ssn", "name"],
    },
    execute=_verify,
)


def _echo_ssn(args: dict[str, Any], ctx: Any) -> str:
    return f"on file: {args['ssn']} (ok)"


echo_ssn = define_tool(
    name="echo_ssn",
    description="Echo",
    input_schema={"type": "object", "properties": {"ssn": {"type": "string"}}, "required": ["ssn"]},
    execute=_echo_ssn,
)


def _raise_ssn(args: dict[str, Any], ctx: Any) -> str:
    raise ValueError(f"no record for {args['ssn']}")


raise_ssn = define_tool(
    name="raise_ssn",
    description="Raises",
    input_schema={"type": "object", "properties": {"ssn": {"type": "string"}}, "required": ["ssn"]},
    execute=_raise_ssn,
)


@pytest.fixture(autouse=True)
def _reset() -> None:
    seen_ssn.clear()


def _all_recorded(agent: Agent, events: list[AgentEvent], result: Any) -> list[str]:
    snap = agent.last_snapshot()
    assert snap is not None
    surfaces = [
        snap.model_dump_json(),
        json.dumps(
            [e.model_dump() if hasattr(e, "model_dump") else str(e) for e in agent.last_narrative()], default=str
        ),
        "\n".join(e.text for e in agent.last_narrative()),
        result.model_dump_json(),
        str(result),
    ]
    surfaces += [json.dumps(e.model_dump(), default=str) for e in events]
    surfaces += [json.dumps(e.model_dump(), default=str) for e in agent.last_events()]
    return surfaces


async def test_redacted_key_reaches_the_tool_but_no_recorded_surface() -> None:
    provider = mock(
        replies=[
            {
                "tool_calls": [
                    {"id": "v1", "name": "verify_identity", "args": {"ssn": SSN, "name": "Dana"}},
                    {"id": "v2", "name": "echo_ssn", "args": {"ssn": SSN}},
                ]
            },
            f"Verified: SSN {SSN} belongs to Dana.",
        ]
    )
    agent = (
        Agent.create(provider=provider, model="m")
        .system(SYSTEM)
        .tool(verify_identity)
        .tool(echo_ssn)
        .redact(keys=["ssn"])
        .keep_events()
        .build()
    )
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = await agent.run("Check Dana")
    assert result.status == "completed"
    assert seen_ssn == [SSN]  # the tool got the real value
    assert events, "no events were delivered"
    assert any(e.type == "agentfootprint.stream.tool_end" for e in events)
    for text in _all_recorded(agent, events, result):
        assert SSN not in text
    # the record still shows something happened: the tool names and non-secret values survive
    snap_json = agent.last_snapshot().model_dump_json()  # type: ignore[union-attr]
    assert "verify_identity" in snap_json and "Dana" in snap_json


async def test_redacted_value_inside_an_error_message_is_not_recorded() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "r1", "name": "raise_ssn", "args": {"ssn": SSN}}]}, "sorry"])
    agent = Agent.create(provider=provider, model="m").tool(raise_ssn).redact(keys=["ssn"]).build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = await agent.run("check")
    assert result.answer == "sorry"
    for text in _all_recorded(agent, events, result):
        assert SSN not in text


async def test_redaction_pattern_scrubs_the_user_message_everywhere() -> None:
    provider = mock(respond=lambda req: f"you said {req.messages[0].content}")
    agent = Agent.create(provider=provider, model="m").redact(patterns=[r"\d{3}-\d{2}-\d{4}"]).build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = await agent.run(f"my ssn is {SSN}")
    assert provider.requests[0].messages[0].content == f"my ssn is {SSN}"  # the model sees the real text
    for text in _all_recorded(agent, events, result):
        assert SSN not in text


async def test_redaction_report_names_keys_never_values() -> None:
    agent = Agent.create(provider=mock(reply="x"), model="m").tool(verify_identity).redact(keys=["ssn"]).build()
    await agent.run("go")
    report = json.dumps(agent.redaction_report())
    assert "ssn" in report


# ------------------------------------------------------------------------------------------ events


def _tool_agent(provider: Any, **kw: Any) -> Agent:
    return Agent.create(provider=provider, model="m", **kw).tool(lookup_order).build()


def _script() -> Any:
    return mock(replies=[{"tool_calls": [{"id": "t1", "name": "lookup_order", "args": {"orderId": "A"}}]}, "done"])


async def test_star_listener_sees_the_whole_turn_in_order() -> None:
    agent = _tool_agent(_script())
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = await agent.run("go")
    types = [e.type for e in events]
    assert types[0] == "agentfootprint.agent.turn_start"
    assert types[-1] == "agentfootprint.agent.turn_end"
    for needed in (
        "agentfootprint.stream.llm_start",
        "agentfootprint.stream.llm_end",
        "agentfootprint.stream.tool_start",
        "agentfootprint.stream.tool_end",
        "agentfootprint.agent.iteration_start",
        "agentfootprint.agent.route_decided",
    ):
        assert needed in types
    assert all(e.type.startswith("agentfootprint.") and e.type.count(".") == 2 for e in events)
    assert all(e.meta.run_id == result.run_id for e in events)
    seqs = [e.meta.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert types.index("agentfootprint.stream.tool_start") < types.index("agentfootprint.stream.tool_end")
    start = next(e for e in events if e.type == "agentfootprint.stream.tool_start")
    end = next(e for e in events if e.type == "agentfootprint.stream.tool_end")
    assert start.payload["tool_call_id"] == end.payload["tool_call_id"] == "t1"
    assert start.meta.iteration == end.meta.iteration == 1


async def test_domain_glob_listener_only_sees_that_domain() -> None:
    agent = _tool_agent(_script())
    stream: list[AgentEvent] = []
    agent.on("stream.*", stream.append)
    full: list[AgentEvent] = []
    agent.on("agentfootprint.stream.*", full.append)
    await agent.run("go")
    assert stream and all(e.type.startswith("agentfootprint.stream.") for e in stream)
    assert [e.type for e in stream] == [e.type for e in full]


async def test_exact_type_listener() -> None:
    provider = _script()
    agent = _tool_agent(provider)
    starts: list[AgentEvent] = []
    short: list[AgentEvent] = []
    agent.on("agentfootprint.stream.llm_start", starts.append)
    agent.on("stream.llm_start", short.append)
    await agent.run("go")
    assert len(starts) == len(short) == provider.calls == 2
    assert {e.type for e in starts} == {"agentfootprint.stream.llm_start"}
    assert [e.meta.iteration for e in starts] == [1, 2]


async def test_unsubscribe_stops_delivery_and_is_idempotent() -> None:
    agent = _tool_agent(mock(reply="x"))
    got: list[AgentEvent] = []
    off = agent.on("*", got.append)
    await agent.run("one")
    n = len(got)
    assert n > 0
    off()
    off()
    await agent.run("two")
    assert len(got) == n


async def test_a_raising_listener_never_breaks_the_run() -> None:
    def bad(event: AgentEvent) -> None:
        raise RuntimeError("listener bug")

    async def bad_async(event: AgentEvent) -> None:
        raise RuntimeError("async listener bug")

    provider = _script()
    agent = _tool_agent(provider)
    agent.on("*", bad)
    agent.on("stream.*", bad_async)
    good: list[AgentEvent] = []
    agent.on("*", good.append)
    result = await agent.run("go")
    assert result.status == "completed" and result.answer == "done"
    assert lookup_calls == [{"orderId": "A"}]
    assert good[-1].type == "agentfootprint.agent.turn_end"


async def test_async_listener_has_finished_when_run_returns() -> None:
    agent = _tool_agent(_script())
    done: list[str] = []

    async def slow(event: AgentEvent) -> None:
        await asyncio.sleep(0)
        done.append(event.type)

    sync_seen: list[str] = []
    agent.on("*", slow)
    agent.on("*", lambda e: sync_seen.append(e.type))
    await agent.run("go")
    assert sorted(done) == sorted(sync_seen)
    assert "agentfootprint.agent.turn_end" in done


def test_unknown_event_type_is_a_typed_error() -> None:
    agent = _tool_agent(mock(reply="x"))
    with pytest.raises(AgentFootprintError):
        agent.on("stream.llm_begin", lambda e: None)
    with pytest.raises(AgentFootprintError):
        agent.on("nosuchdomain.*", lambda e: None)


async def test_pause_requested_event_on_ask_human() -> None:
    provider = mock(replies=[{"tool_calls": [{"id": "h", "name": "ask_human", "args": {"question": "which?"}}]}])
    agent = Agent.create(provider=provider, model="m").tool(ask_human).build()
    events: list[AgentEvent] = []
    agent.on("pause.*", events.append)
    r = await agent.run("go")
    assert r.status == "paused"
    assert [e.type for e in events] == ["agentfootprint.pause.requested"]
    assert events[0].payload.get("tool_call_id") == "h"


# ------------------------------------------------------------------------------------------ event invariants (property)

KINDS = st.sampled_from(["ok", "unknown", "badargs", "raise"])


def _tool_call(kind: str, call_id: str) -> dict[str, Any]:
    if kind == "ok":
        return {"id": call_id, "name": "lookup_order", "args": {"orderId": "A"}}
    if kind == "unknown":
        return {"id": call_id, "name": "no_such_tool", "args": {}}
    if kind == "badargs":
        return {"id": call_id, "name": "lookup_order", "args": {"orderId": 7}}
    return {"id": call_id, "name": "explode", "args": {}}


def _explode(args: dict[str, Any], ctx: Any) -> str:
    raise RuntimeError("tool failed")


explode = define_tool(name="explode", description="Always raises", input_schema={"type": "object"}, execute=_explode)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    script=st.lists(st.lists(KINDS, min_size=1, max_size=3), min_size=0, max_size=5),
    max_iterations=st.integers(min_value=1, max_value=7),
)
def test_event_invariants_over_random_tool_call_scripts(script: list[list[str]], max_iterations: int) -> None:
    counter = {"n": 0}

    def respond(req: LLMRequest) -> Any:
        i = counter["n"]
        counter["n"] += 1
        if i < len(script):
            return {"tool_calls": [_tool_call(k, f"c{i}_{j}") for j, k in enumerate(script[i])]}
        return "final answer"

    provider = mock(respond=respond)
    agent = (
        Agent.create(provider=provider, model="m", max_iterations=max_iterations)
        .tool(lookup_order)
        .tool(explode)
        .build()
    )
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = agent.run_sync("go")

    wrapped = len(script) >= max_iterations  # R004-92: the cut turn asks once more, with the tools withheld
    calls = min(len(script) + 1, max_iterations) + (1 if wrapped else 0)
    executed_batches = script[: min(len(script), max_iterations - 1)]
    expected_tools = sum(len(b) for b in executed_batches)

    def of(t: str) -> list[AgentEvent]:
        return [e for e in events if e.type == f"agentfootprint.{t}"]

    assert result.status == "completed"
    assert provider.calls == calls
    # one llm_start / llm_end per iteration
    assert len(of("stream.llm_start")) == len(of("stream.llm_end")) == calls
    assert [e.meta.iteration for e in of("stream.llm_start")] == list(range(1, calls + 1))
    assert [e.meta.iteration for e in of("stream.llm_end")] == list(range(1, calls + 1))
    # iteration indexes strictly increase
    its = [e.meta.iteration for e in of("agent.iteration_start")]
    assert its == sorted(set(its)) and len(its) == calls
    # tool_start count == tool_end count, each start followed by its own end in the same iteration
    starts, ends = of("stream.tool_start"), of("stream.tool_end")
    assert len(starts) == len(ends) == expected_tools
    assert [e.payload["tool_call_id"] for e in starts] == [e.payload["tool_call_id"] for e in ends]
    for s, e in zip(starts, ends, strict=True):
        assert s.meta.seq < e.meta.seq and s.meta.iteration == e.meta.iteration
    # bracketing and identity
    assert events[0].type == "agentfootprint.agent.turn_start" and events[-1].type == "agentfootprint.agent.turn_end"
    assert len(of("agent.turn_start")) == len(of("agent.turn_end")) == 1
    assert {e.meta.run_id for e in events} == {result.run_id}
    seqs = [e.meta.seq for e in events]
    assert seqs == sorted(seqs)
    # stopped early exactly when the model still wanted tools on the last allowed call
    stopped = agent.stopped_early()
    if len(script) >= max_iterations:
        assert stopped is not None and stopped.iteration == max_iterations and stopped.wrapped_up
        assert stopped.pending_tool_calls == len(script[max_iterations - 1])
        assert provider.requests[-1].tools == []
    else:
        assert stopped is None and result.answer == "final answer"
    # every tool call got exactly one tool message, in call order, on the next request
    for i, batch in enumerate(executed_batches):
        nxt = provider.requests[i + 1].messages
        tool_ids = [m.tool_call_id for m in nxt if m.role == "tool" and m.tool_call_id.startswith(f"c{i}_")]
        assert tool_ids == [f"c{i}_{j}" for j in range(len(batch))]


# ------------------------------------------------------------------------------------------ hostile


async def test_model_that_always_calls_tools_ends_at_max_iterations() -> None:
    n = {"i": 0}

    def respond(req: LLMRequest) -> Any:
        n["i"] += 1
        return {"tool_calls": [{"id": f"c{n['i']}", "name": "lookup_order", "args": {"orderId": "A"}}]}

    provider = mock(respond=respond)
    agent = _tool_agent(provider, max_iterations=25)
    with pytest.warns(EmptyAnswerWarning):  # R004-90: the wrap-up came back empty too
        r = await agent.run("go")
    assert r.status == "completed" and r.answer == ""
    assert provider.calls == 26 and len(lookup_calls) == 24  # R004-92: 25 allowed calls, then the wrap-up
    stopped = agent.stopped_early()
    assert stopped is not None and stopped.reason == "max-iterations" and stopped.pending_tool_calls == 1
    assert stopped.wrapped_up and stopped.iteration == 25
    agent.last_snapshot().model_dump_json()  # type: ignore[union-attr]


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "x"}
    for _ in range(depth):
        value = {"a": value}
    return value


async def test_args_too_deep_for_the_provider_to_copy_give_a_typed_error() -> None:
    from agentfootprint import AgentFootprintError

    sink = define_tool(name="sink", description="d", input_schema={"type": "object"}, execute=lambda a, c: "ok")
    provider = mock(replies=[{"tool_calls": [{"id": "d", "name": "sink", "args": _nested(2000)}]}, "survived"])
    with pytest.raises(AgentFootprintError) as info:
        await Agent.create(provider=provider, model="m").tool(sink).build().run("go")
    assert not isinstance(info.value, RecursionError)


@pytest.mark.parametrize("depth", [50, 150, 400])
async def test_deeply_nested_tool_args_never_crash_the_run(depth: int) -> None:
    got: list[Any] = []
    sink = define_tool(
        name="sink",
        description="takes anything",
        input_schema={"type": "object"},
        execute=lambda a, c: got.append(a) or "ok",
    )
    provider = mock(replies=[{"tool_calls": [{"id": "d", "name": "sink", "args": _nested(depth)}]}, "survived"])
    agent = Agent.create(provider=provider, model="m").tool(sink).build()
    r = await agent.run("go")
    assert r.answer == "survived"
    tool_msg = provider.requests[1].messages[-1]
    assert tool_msg.role == "tool" and tool_msg.tool_call_id == "d"
    snap = agent.last_snapshot()
    assert snap is not None
    snap.model_dump_json()
    agent.last_narrative()


async def test_huge_tool_output_is_bounded_and_the_run_continues() -> None:
    big = define_tool(
        name="big", description="d", input_schema={"type": "object"}, execute=lambda a, c: "y" * 5_000_000
    )
    provider = mock(replies=[{"tool_calls": [{"id": "b", "name": "big", "args": {}}]}, "ok"])
    agent = Agent.create(provider=provider, model="m", max_tool_result_chars=100_000).tool(big).build()
    r = await agent.run("go")
    assert r.answer == "ok"
    content = provider.requests[1].messages[-1].content
    assert 0 < len(content) <= 110_000
    assert len(agent.last_snapshot().model_dump_json()) < 2_000_000  # type: ignore[union-attr]


HOSTILE = "naïve \x00 \x1b[31mred\x1b[0m \u202eevil\u202c 🙂 日本語 \r\n\t \u200b end"


async def test_unicode_and_control_characters_travel_verbatim() -> None:
    provider = mock(respond=lambda req: req.messages[-1].content)
    agent = _tool_agent(provider)
    r = await agent.run(HOSTILE)
    assert provider.requests[0].messages[0].content == HOSTILE
    assert r.answer == HOSTILE
    cp = agent.checkpoint()
    assert cp is not None
    stored = json.loads(json.dumps(cp))
    p2 = mock(respond=lambda req: req.messages[0].content)
    r2 = await _tool_agent(p2).run("again", continue_from=stored)
    assert r2.answer == HOSTILE
    json.loads(agent.last_snapshot().model_dump_json())  # type: ignore[union-attr]
    for entry in agent.last_narrative():
        assert isinstance(entry.text, str)


async def test_unicode_in_tool_args_and_results() -> None:
    echo = define_tool(
        name="echo",
        description="echo",
        input_schema={"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]},
        execute=lambda a, c: {"back": a["s"]},
    )
    provider = mock(replies=[{"tool_calls": [{"id": "u", "name": "echo", "args": {"s": HOSTILE}}]}, "ok"])
    await Agent.create(provider=provider, model="m").tool(echo).build().run("go")
    assert json.loads(provider.requests[1].messages[-1].content) == {"back": HOSTILE}


async def test_unserialisable_tool_result_is_an_error_result_and_run_continues() -> None:
    weird = define_tool(
        name="weird", description="d", input_schema={"type": "object"}, execute=lambda a, c: {"x": object()}
    )
    provider = mock(replies=[{"tool_calls": [{"id": "w", "name": "weird", "args": {}}]}, "ok"])
    r = await Agent.create(provider=provider, model="m").tool(weird).build().run("go")
    assert r.answer == "ok"
    assert provider.requests[1].messages[-1].content.lower().startswith("error")


async def test_many_tool_calls_in_one_batch_each_get_one_message_in_order() -> None:
    calls = [{"id": f"k{i}", "name": "lookup_order", "args": {"orderId": str(i)}} for i in range(50)]
    provider = mock(replies=[{"tool_calls": calls}, "ok"])
    await _tool_agent(provider).run("go")
    tool_msgs = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_msgs] == [f"k{i}" for i in range(50)]
    assert lookup_calls == [{"orderId": str(i)} for i in range(50)]


# ------------------------------------------------------------------------------------------ redaction, harder


async def test_redaction_holds_on_a_follow_up_turn() -> None:
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "v1", "name": "verify_identity", "args": {"ssn": SSN, "name": "Dana"}}]},
            "verified",
            "you are welcome",
        ]
    )
    agent = Agent.create(provider=provider, model="m").tool(verify_identity).redact(keys=["ssn"]).build()
    await agent.run("check")
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = await agent.follow_up("thanks")
    assert any(SSN in m.content for m in provider.requests[2].messages)  # the model keeps the real conversation
    for text in _all_recorded(agent, events, result):
        assert SSN not in text


async def test_redaction_holds_on_a_fresh_agent_continuing_a_conversation() -> None:
    p1 = mock(
        replies=[{"tool_calls": [{"id": "v1", "name": "verify_identity", "args": {"ssn": SSN, "name": "D"}}]}, "ok"]
    )
    a1 = Agent.create(provider=p1, model="m").tool(verify_identity).redact(keys=["ssn"]).build()
    await a1.run("check")
    cp = json.loads(json.dumps(a1.checkpoint()))
    a2 = Agent.create(provider=mock(reply="later"), model="m").tool(verify_identity).redact(keys=["ssn"]).build()
    events: list[AgentEvent] = []
    a2.on("*", events.append)
    result = await a2.run("anything else?", continue_from=cp)
    for text in _all_recorded(a2, events, result):
        assert SSN not in text


async def test_redaction_after_resume_from_a_pause() -> None:
    script = [
        {"tool_calls": [{"id": "v1", "name": "echo_ssn", "args": {"ssn": SSN}}]},
        {"tool_calls": [{"id": "h1", "name": "ask_human", "args": {"question": "confirm?"}}]},
        f"confirmed {SSN}",
    ]

    def make(replies: list[Any]) -> Agent:
        return (
            Agent.create(provider=mock(replies=replies), model="m")
            .tool(echo_ssn)
            .tool(ask_human)
            .redact(keys=["ssn"])
            .build()
        )

    a1 = make(script[:2])
    paused = await a1.run("go")
    assert paused.status == "paused"
    assert SSN not in a1.last_snapshot().model_dump_json()  # type: ignore[union-attr]
    a2 = make(script[2:])
    events: list[AgentEvent] = []
    a2.on("*", events.append)
    done = await a2.resume(json.loads(json.dumps(paused.checkpoint)), "yes")
    assert done.status == "completed"
    for text in _all_recorded(a2, events, done):
        assert SSN not in text


@settings(max_examples=40, deadline=None)
@given(
    secret=st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=10, max_size=24),
    depth=st.integers(min_value=0, max_value=6),
    key=st.sampled_from(["ssn", "SSN_not", "card"]),
)
def test_redacted_key_at_any_depth_never_recorded(secret: str, depth: int, key: str) -> None:
    target = "ssn" if key != "card" else "card"
    inner: Any = {target: secret, "other": "visible"}
    for i in range(depth):
        inner = {f"level{i}": inner} if i % 2 == 0 else {f"level{i}": [inner]}
    sink = define_tool(
        name="sink",
        description="anything",
        input_schema={"type": "object"},
        execute=lambda a, c: {"echo": a, "summary": f"got {secret}"},
    )
    provider = mock(replies=[{"tool_calls": [{"id": "s", "name": "sink", "args": inner}]}, f"done with {secret}"])
    agent = Agent.create(provider=provider, model="m").tool(sink).redact(keys=[target]).build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = agent.run_sync("go")
    for text in _all_recorded(agent, events, result):
        assert secret not in text
    assert "visible" in agent.last_snapshot().model_dump_json()  # type: ignore[union-attr]


async def test_redacted_key_only_in_a_tool_result_is_scrubbed_from_later_model_text() -> None:
    find = define_tool(
        name="find_customer",
        description="d",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        execute=lambda a, c: {"name": a["name"], "ssn": SSN},
    )
    provider = mock(
        replies=[
            {"tool_calls": [{"id": "f", "name": "find_customer", "args": {"name": "Dana"}}]},
            f"Dana's SSN is {SSN}.",
        ]
    )
    agent = Agent.create(provider=provider, model="m").tool(find).redact(keys=["ssn"]).keep_events().build()
    events: list[AgentEvent] = []
    agent.on("*", events.append)
    result = await agent.run("who is Dana?")
    assert SSN in provider.requests[1].messages[-1].content  # the model got the real result
    for text in _all_recorded(agent, events, result):
        assert SSN not in text
