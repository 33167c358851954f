"""``deep_clone`` returns what ``copy.deepcopy`` returns: equal, independent, sharing kept, unknown types delegated."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, PrivateAttr

from agentfootprint.providers import LLMRequest, LLMResponse, Message, ToolCall
from agentfootprint.providers._clone import deep_clone


def _request() -> LLMRequest:
    return LLMRequest.model_validate(
        {
            "system_prompt": "You are terse.",
            "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "ok", "tool_call_id": "c1"}],
            "tools": [
                {
                    "name": "weather",
                    "description": "Weather",
                    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                }
            ],
            "cache_markers": [{"at": "system"}],
        }
    )


def test_a_request_clone_equals_deepcopy_and_shares_nothing() -> None:
    req = _request()
    clone, reference = deep_clone(req), req.model_copy(deep=True)
    assert clone == reference == req
    assert clone.model_fields_set == reference.model_fields_set
    assert [m.model_fields_set for m in clone.messages] == [m.model_fields_set for m in req.messages]
    assert clone.messages is not req.messages and clone.messages[0] is not req.messages[0]
    assert clone.tools[0].input_schema is not req.tools[0].input_schema
    req.messages[0].content = "changed"
    req.tools[0].input_schema["properties"]["city"]["type"] = "integer"
    assert clone.messages[0].content == "hi"
    assert clone.tools[0].input_schema["properties"]["city"] == {"type": "string"}


def test_a_response_clone_keeps_its_fields_set() -> None:
    resp = LLMResponse(content="x", tool_calls=[ToolCall(id="c", name="t", args={"a": [1, {"b": 2}]})])
    clone = deep_clone(resp)
    assert clone == resp and clone.model_fields_set == {"content", "tool_calls"}
    assert "usage" not in clone.model_fields_set
    resp.tool_calls[0].args["a"][1]["b"] = 3
    assert clone.tool_calls[0].args == {"a": [1, {"b": 2}]}


def test_shared_parts_stay_shared_and_cycles_end() -> None:
    inner: dict[str, Any] = {"k": [1, 2]}
    outer: list[Any] = [inner, inner]
    outer.append(outer)
    clone = deep_clone(outer)
    assert clone[0] is clone[1] and clone[0] is not inner
    assert clone[2] is clone
    assert clone[0] == {"k": [1, 2]}


def test_a_model_shared_twice_is_copied_once() -> None:
    msg = Message(role="user", content="hi")
    clone = deep_clone(LLMRequest(messages=[msg, msg]))
    assert clone.messages[0] is clone.messages[1] and clone.messages[0] is not msg


def test_unknown_types_and_private_state_go_to_deepcopy() -> None:
    class WithPrivate(BaseModel):
        a: list[int] = []
        _secret: list[int] = PrivateAttr(default_factory=list)

    model = WithPrivate(a=[1])
    model._secret.append(7)
    when = datetime(2026, 1, 2, tzinfo=UTC)
    pair = (1, [2])
    clone = deep_clone({"m": model, "when": when, "t": pair, "s": {3}})
    assert clone["m"] == model and clone["m"]._secret == [7] and clone["m"]._secret is not model._secret
    assert clone["when"] == when
    assert clone["t"] == (1, [2]) and clone["t"][1] is not pair[1]
    assert clone["s"] == {3}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json)
def test_any_json_value_clones_like_deepcopy(value: Any) -> None:
    assert deep_clone(value) == copy.deepcopy(value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.text(max_size=8)), max_size=5), _json)
def test_any_request_clones_like_model_copy(turns: list[tuple[str, str]], marker: Any) -> None:
    req = LLMRequest(
        messages=[Message(role=r, content=c) for r, c in turns],  # type: ignore[arg-type]
        cache_markers=[{"m": marker}],
    )
    clone, reference = deep_clone(req), req.model_copy(deep=True)
    assert clone == reference
    assert clone.model_dump() == reference.model_dump()
    assert clone.model_fields_set == reference.model_fields_set
