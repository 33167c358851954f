"""The wire manifest's whole digest is extended call by call (only the parts a call adds are hashed), and equals the
digest of all part digests in order on any sequence of requests: growing history, an edited message, a new system
prompt, changed tool specs, keyed or not."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint.agent._integrity_wire import WireMemo, digest, full_parts, wire_manifest
from agentfootprint.providers import LLMRequest, Message, ToolSpec

TEXT = st.text(alphabet="abc xyz\n", min_size=1, max_size=12)
STEP = st.one_of(
    st.tuples(st.just("say"), TEXT),
    st.tuples(st.just("edit"), TEXT),
    st.tuples(st.just("system"), TEXT),
    st.tuples(st.just("tool"), TEXT),
    st.tuples(st.just("drop"), TEXT),
)


def _spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description=name, input_schema={"type": "object"})


def _requests(steps: list[tuple[str, Any]], system: str) -> list[LLMRequest]:
    """The request after each step: a message said, the first edited, the last dropped, a new system or tool."""
    messages, tools, out = [Message(role="user", content="hi")], [_spec("a")], []
    for kind, text in steps:
        if kind == "say":
            messages = [*messages, Message(role="assistant" if len(messages) % 2 else "user", content=text)]
        elif kind == "edit":
            messages = [Message(role="user", content=text), *messages[1:]]
        elif kind == "system":
            system = text
        elif kind == "drop":
            messages = messages[:-1] or messages
        else:
            tools = [*tools, _spec(f"t{len(tools)}")]
        out.append(LLMRequest(system_prompt=system, messages=messages, tools=tools))
    return out


@settings(max_examples=80, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=12), keyed=st.booleans())
def test_property_the_extended_digest_is_the_digest_of_all_parts(steps: list[tuple[str, Any]], keyed: bool) -> None:
    key = b"k" * 32 if keyed else None
    memo, previous, rows = WireMemo(key), [], []
    for request in _requests(steps, "You help."):
        row = wire_manifest(request, 1, key, previous, memo)
        fresh = wire_manifest(request, 1, key)
        (rebuilt,) = full_parts([fresh])
        assert rebuilt is not None and row["sha256"] == fresh["sha256"] == digest("".join(p[:64] for p in rebuilt), key)
        previous = [*previous[: row["kept"]], *row["parts"]]
        assert previous == rebuilt
        rows.append(row)
    assert full_parts(rows)[-1] == previous


@settings(max_examples=80, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=12), keyed=st.booleans())
def test_property_the_memo_alone_records_what_the_full_list_does(steps: list[tuple[str, Any]], keyed: bool) -> None:
    key = b"k" * 32 if keyed else None
    by_list, by_memo, previous = WireMemo(key), WireMemo(key), []
    for request in _requests(steps, "You help.\n\nBe brief."):
        row = wire_manifest(request, 1, key, previous, by_list)
        assert wire_manifest(request, 1, key, memo=by_memo) == row
        previous = [*previous[: row["kept"]], *row["parts"]]
