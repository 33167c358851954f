"""Properties: any body is planned or refused by name (nothing else is raised), and a refusal never echoes a value."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.hosting import (
    REFUSALS,
    FrontendTool,
    HeldPause,
    HeldThread,
    RequestFacts,
    TurnRules,
    WireRequestRefusal,
    plan_turn,
    read_request,
)
from agentfootprint.hosting._body import parse_json_body
from agentfootprint.hosting.refusal import public_code

KEYS = (
    "threadId runId parentRunId messages tools context state resume id role content toolCallId toolCalls function "
    "name arguments error description value interruptId status type text"
).split()
WIRE_FIELDS = "threadId|runId|parentRunId|messages|tools|context|state|resume"
FIELD = re.compile(rf"({WIRE_FIELDS})(\[\d+\])?(\.({'|'.join(KEYS)})(\[\d+\])?)*")
# A refusal's own JSON (its keys, codes and literals such as a null field) is not a quoted request value.
VOCABULARY = "\n".join([*(m for _, m in REFUSALS.values()), *REFUSALS, *map(public_code, REFUSALS), *KEYS, "null"])

json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
any_json = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)

ids = st.sampled_from(["m1", "m2", "c1", "c2", "i1", "i2", "t1", "r1"]) | st.from_regex(
    r"[A-Za-z0-9._:-]{1,12}", fullmatch=True
)
odd = any_json | st.text(min_size=120, max_size=140) | st.text(alphabet="\x00\n\u202eé", max_size=5)


def mostly(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually ``strategy``, sometimes something odd: deep rules get reached, and every door gets probed."""
    return st.integers(0, 15).flatmap(lambda n: odd if n == 7 else strategy)


maybe_id = mostly(ids)
roles = mostly(
    st.sampled_from(["user", "user", "user", "assistant", "tool", "tool", "system", "activity", "reasoning"])
)
parts = st.lists(
    st.fixed_dictionaries({"type": mostly(st.sampled_from(["text", "image"])), "text": st.text()}), max_size=3
)
content = mostly(st.text(max_size=20) | parts)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    msg: dict[str, Any] = {"id": draw(maybe_id), "role": draw(roles), "content": draw(content)}
    if draw(st.booleans()):
        msg["toolCallId"] = draw(maybe_id)
    if draw(st.booleans()):
        function = st.fixed_dictionaries({"name": st.text(max_size=5), "arguments": st.text(max_size=5)})
        msg["toolCalls"] = draw(
            st.lists(st.fixed_dictionaries({"id": maybe_id, "function": mostly(function)}), max_size=2)
        )
    return msg


@st.composite
def run_inputs(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, strategy in (
        ("threadId", maybe_id),
        ("runId", maybe_id),
        ("parentRunId", maybe_id),
        ("messages", mostly(st.lists(messages(), max_size=5))),
        (
            "tools",
            mostly(st.lists(st.fixed_dictionaries({"name": mostly(st.sampled_from(["pick_color", "x"]))}), max_size=2)),
        ),
        (
            "context",
            mostly(st.lists(st.fixed_dictionaries({"description": st.text(), "value": mostly(st.text())}), max_size=2)),
        ),
        ("state", any_json),
        (
            "resume",
            mostly(
                st.lists(
                    st.fixed_dictionaries(
                        {"interruptId": maybe_id, "status": mostly(st.sampled_from(["resolved", "cancelled"]))}
                    ),
                    max_size=2,
                )
            ),
        ),
        ("forwardedProps", any_json),
    ):
        if draw(st.integers(0, 9)) > 0:
            out[key] = draw(strategy)
    return out


held_threads = st.builds(
    HeldThread,
    conversation=st.lists(st.fixed_dictionaries({"id": ids}), max_size=3).map(tuple),
    pause=st.none()
    | st.builds(
        HeldPause,
        frontend_tool_call_ids=st.lists(ids, max_size=2).map(tuple),
        interrupt_ids=st.lists(ids, max_size=2).map(tuple),
    ),
)
rules = st.sampled_from(
    [
        TurnRules.build(),
        TurnRules.build(
            frontend_tools=[FrontendTool(name="pick_color", description="Pick.")],
            accept_state=lambda v, s: v,
            accept_context=lambda v, s: v,
        ),
    ]
)


def strings_in(value: Any) -> list[str]:
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def pipeline(raw: bytes, held: HeldThread, turn_rules: TurnRules) -> WireRequestRefusal | None:
    try:
        turn = read_request(None, RequestFacts(body=parse_json_body(raw)))
        plan_turn(turn, held, turn_rules)
    except WireRequestRefusal as refusal:
        return refusal
    return None


def assert_quiet(refusal: WireRequestRefusal, value: Any) -> None:
    out = refusal.to_json()
    assert set(out) == {"error"} and set(out["error"]) == {"code", "field", "message", "reason"}
    assert 400 <= refusal.status <= 499 and refusal.reason in REFUSALS
    assert out["error"]["message"] == REFUSALS[refusal.reason][1]
    assert out["error"]["field"] is None or FIELD.fullmatch(out["error"]["field"])
    text = json.dumps(out, ensure_ascii=False)
    for s in strings_in(value):
        if len(s) > 3 and s in text:
            assert s in VOCABULARY, "a refusal quoted a request value"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=200))
def test_any_bytes_are_planned_or_refused(raw: bytes) -> None:
    refusal = pipeline(raw, HeldThread(), TurnRules.build())
    if refusal is not None:
        assert 400 <= refusal.status <= 499


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=any_json, held=held_threads, turn_rules=rules)
def test_any_json_body_is_planned_or_refused_quietly(value: Any, held: HeldThread, turn_rules: TurnRules) -> None:
    refusal = pipeline(json.dumps(value).encode(), held, turn_rules)
    if refusal is not None:
        assert_quiet(refusal, value)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=run_inputs(), held=held_threads, turn_rules=rules)
def test_run_agent_input_like_bodies_are_planned_or_refused_quietly(
    value: dict[str, Any], held: HeldThread, turn_rules: TurnRules
) -> None:
    refusal = pipeline(json.dumps(value).encode(), held, turn_rules)
    if refusal is not None:
        assert_quiet(refusal, value)


@settings(max_examples=200, deadline=None)
@given(value=run_inputs())
def test_custom_reader_output_is_checked_the_same(value: dict[str, Any]) -> None:
    def default() -> Any:
        return read_request(None, RequestFacts(body=json.loads(json.dumps(value))))

    def custom() -> Any:
        return read_request(lambda facts: facts.body, RequestFacts(body=json.loads(json.dumps(value))))

    outcomes = []
    for attempt in (default, custom):
        try:
            outcomes.append(attempt())
        except WireRequestRefusal as refusal:
            outcomes.append((refusal.reason, refusal.field))
    assert outcomes[0] == outcomes[1]
