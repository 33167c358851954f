"""The request each model call sends: what validating its fields builds, in a list of its own, at no history cost."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.agent import CallModel, Extension, RunContext
from agentfootprint.providers import LLMRequest, LLMResponse, Message, ToolCall, Usage
from agentfootprint.providers.base import BaseProvider

STEP = define_tool(
    name="step",
    description="Do one step",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=lambda args: f"step {args['n']} done",
)
SENT_FIELDS = {"system_prompt", "messages", "tools", "model", "seed", "temperature", "max_tokens", "thinking"}
SENT_FIELDS |= {"cache_markers"}


class Keeper(BaseProvider):
    """Keeps every request object it is sent (no copy) and the messages it held on arrival; ``steps`` tool calls,
    then an answer."""

    name = "keeper"

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.requests: list[LLMRequest] = []
        self.arrived: list[list[Message]] = []
        self.validated: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        self.arrived.append(list(request.messages))
        self.validated.append(_validated(request))
        k = len(self.requests)
        usage = Usage(input_tokens=1, output_tokens=1)
        if k > self.steps:
            return LLMResponse(content="done", usage=usage, finish_reason="stop", model="m")
        call = ToolCall(id=f"c{k}", name="step", args={"n": k})
        return LLMResponse(content="", tool_calls=[call], usage=usage, finish_reason="tool_calls", model="m")


class Meddler(Extension):
    """Notes what each request held on the way in; with ``meddle``, then changes that request's list in place."""

    name = "meddler"

    def __init__(self, meddle: bool) -> None:
        self.meddle = meddle
        self.seen: list[list[dict[str, Any]]] = []

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        self.seen.append([m.model_dump() for m in request.messages])
        response = await call_next(request)
        if self.meddle:
            request.messages.append(Message(role="user", content="added by a hook"))
            del request.messages[0]
        return response


def _agent(provider: Keeper, *, fact: bool, max_turns: int | None, meddler: Meddler | None) -> Any:
    builder = Agent.create(provider=provider, model="m", max_iterations=10).system("Be brief.").tool(STEP)
    if fact:
        builder = builder.fact(define_fact(id="note", data="A note.", slot="messages"))
    if max_turns is not None:
        builder = builder.window(max_turns=max_turns)
    if meddler is not None:
        builder = builder.use(meddler)
    return builder.build()


def _validated(request: LLMRequest) -> LLMRequest:
    """The request validation builds from the same fields (what the loop built before it skipped revalidation)."""
    return LLMRequest(**{name: getattr(request, name) for name in request.model_fields_set})


def _assert_as_validated(provider: Keeper) -> None:
    """Each request, as it arrived, equals its validated twin field by field and holds the very same messages."""
    for request, arrived, rebuilt in zip(provider.requests, provider.arrived, provider.validated, strict=True):
        assert request.model_fields_set == rebuilt.model_fields_set == SENT_FIELDS
        assert type(request.messages) is list
        assert [type(m) for m in arrived] == [Message] * len(rebuilt.messages)
        assert all(a is b for a, b in zip(arrived, rebuilt.messages, strict=True))
        assert request.model_copy(update={"messages": arrived}) == rebuilt
    lists = [id(r.messages) for r in provider.requests]
    assert len(set(lists)) == len(lists)


async def test_each_request_is_what_validating_its_fields_builds() -> None:
    provider = Keeper(steps=3)
    result = await _agent(provider, fact=True, max_turns=None, meddler=None).run("go")
    assert (result.answer, result.iterations) == ("done", 4)
    _assert_as_validated(provider)
    assert [[m.role for m in r.messages] for r in provider.requests] == [
        ["user", "user"],
        ["user", "user", "assistant", "tool"],
        ["user", "user", "assistant", "tool", "assistant", "tool"],
        ["user", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"],
    ]
    assert [r.messages[0].content for r in provider.requests] == ["A note."] * 4


async def test_a_conversation_message_is_one_object_from_call_to_call() -> None:
    provider = Keeper(steps=2)
    await _agent(provider, fact=False, max_turns=None, meddler=None).run("go")
    first, second, third = provider.requests
    assert first.messages[0] is second.messages[0] is third.messages[0]
    assert second.messages[1] is third.messages[1] and second.messages[2] is third.messages[2]


async def test_a_hook_changing_one_request_list_leaves_the_next_requests_as_they_were() -> None:
    quiet, meddling = Meddler(meddle=False), Meddler(meddle=True)
    plain, touched = Keeper(steps=3), Keeper(steps=3)
    await _agent(plain, fact=False, max_turns=None, meddler=quiet).run("go")
    await _agent(touched, fact=False, max_turns=None, meddler=meddling).run("go")
    assert meddling.seen == quiet.seen
    assert len(meddling.seen) == 4 and len(meddling.seen[3]) == 7
    assert [m.content for m in touched.requests[0].messages] == ["added by a hook"]
    assert [[m.model_dump() for m in r] for r in touched.arrived] == quiet.seen


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.integers(0, 4),
    fact=st.booleans(),
    max_turns=st.one_of(st.none(), st.integers(1, 3)),
    meddle=st.booleans(),
)
async def test_any_run_sends_what_validation_builds(
    steps: int, fact: bool, max_turns: int | None, meddle: bool
) -> None:
    provider, quiet = Keeper(steps), Keeper(steps)
    meddler, watcher = Meddler(meddle), Meddler(False)
    agent = _agent(provider, fact=fact, max_turns=max_turns, meddler=meddler)
    result = await agent.run("go")
    await _agent(quiet, fact=fact, max_turns=max_turns, meddler=watcher).run("go")
    assert result.iterations == steps + 1
    _assert_as_validated(provider)
    assert meddler.seen == watcher.seen
    assert [[m.model_dump() for m in r] for r in provider.arrived] == watcher.seen
    calls = [w.value for c in agent.last_snapshot().commit_log for w in c.writes if w.path == "llm_call"]
    assert [c["message_count"] for c in calls] == [len(seen) for seen in watcher.seen]
