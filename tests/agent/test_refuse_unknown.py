"""``Agent.refuse_unknown`` refuses exactly what ``without_landed`` refuses (the same typed error, the same message)
without building the agent ``without_landed`` returns: a fork checks its change's ids and builds its own agent."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_fact, define_instruction, define_tool
from agentfootprint.providers import mock

IDS = ["t0", "t1", "policy", "cite", "t0#1", "t1#3", "chunk-1", "entry-1", "nope", "typo"]


def _agent() -> Agent:
    builder = Agent.create(provider=mock(reply="ok"), model="m").system("You help.")
    for name in ("t0", "t1"):
        builder = builder.tool(
            define_tool(name=name, description=name, input_schema={"type": "object"}, execute=lambda args, ctx: "r")
        )
    builder = builder.fact(define_fact(id="policy", data="Policy holds."))
    return builder.instruction(define_instruction(id="cite", prompt="Cite it.", active_when=lambda ctx: True)).build()


def _outcome(fn: Any) -> Any:
    try:
        fn()
    except Exception as exc:
        return (type(exc), getattr(exc, "code", None), str(exc))
    return None


AGENT = _agent()


@settings(max_examples=200, deadline=None)
@given(
    ids=st.lists(st.sampled_from(IDS), max_size=4),
    landed=st.dictionaries(st.sampled_from(["chunk-1", "entry-1"]), st.sampled_from(["rag", "memory"])),
)
def test_refuse_unknown_refuses_what_without_landed_refuses(ids: list[str], landed: dict[str, str]) -> None:
    refused = _outcome(lambda: AGENT.refuse_unknown(ids, landed))
    assert refused == _outcome(lambda: AGENT.without_landed(ids, landed))
    known = {"t0", "t1", "policy", "cite", "t0#1", "t1#3", *landed}
    assert (refused is None) == all(i in known for i in ids)
