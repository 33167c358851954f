"""Cache policy → provider-agnostic markers in call-llm state; ``anthropic_cache_control`` applies them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agentfootprint import Agent
from agentfootprint.context import InvalidInjectionError, define_fact, define_steering
from agentfootprint.context.cache import anthropic_cache_control, compute_cache_markers
from agentfootprint.context.injection import Injection
from agentfootprint.providers import LLMRequest, Message, mock
from agentfootprint.providers.anthropic_api import build_body


def rec(source_id: str, text: str) -> dict[str, Any]:
    return {"source_id": source_id, "text": text}


def test_markers_end_the_always_run_and_the_cacheable_prefix() -> None:
    records = [
        rec("system", "BASE"),
        rec("persona", "PERSONA"),
        rec("skill", "SKILL"),
        rec("rag", "RAG"),
        rec("x", "X"),
    ]
    policies = {"persona": "always", "skill": "while-active", "rag": "never", "x": "always"}
    markers = compute_cache_markers(records, [], policies)
    composed = "\n\n".join(r["text"] for r in records)
    assert [(m["source_id"], m["policy"]) for m in markers] == [("persona", "always"), ("skill", "while-active")]
    assert composed[: markers[0]["char_offset"]] == "BASE\n\nPERSONA"
    assert composed[: markers[1]["char_offset"]] == "BASE\n\nPERSONA\n\nSKILL"
    assert compute_cache_markers([rec("n", "N")], [], {"n": "never"}) == []
    msgs = compute_cache_markers([], [rec("m1", "a"), rec("m2", "b")], {"m1": "always", "m2": "never"})
    assert msgs == [{"slot": "messages", "source_id": "m1", "record_index": 0, "message_index": 0, "policy": "always"}]


def test_anthropic_cache_control_splits_system_and_marks_messages_without_mutating() -> None:
    request = LLMRequest(
        system_prompt="BASE\n\nPERSONA\n\nDYNAMIC",
        messages=[Message(role="user", content="injected"), Message(role="user", content="question")],
    )
    body = build_body(request, "claude-x", 1024, stream=False)
    original = copy.deepcopy(body)
    markers = [
        {"slot": "system_prompt", "source_id": "persona", "char_offset": len("BASE\n\nPERSONA"), "policy": "always"},
        {"slot": "messages", "source_id": "m", "message_index": 0, "policy": "always"},
    ]
    out = anthropic_cache_control(markers, body)
    assert body == original
    blocks = out["system"]
    assert "".join(b["text"] for b in blocks) == request.system_prompt
    assert blocks[0] == {"type": "text", "text": "BASE\n\nPERSONA", "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in blocks[1]
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "injected", "cache_control": {"type": "ephemeral"}}
    ]
    assert out["messages"][1] == original["messages"][1]
    assert anthropic_cache_control([], body) == original


def test_anthropic_cache_control_respects_the_four_breakpoint_limit() -> None:
    body = {"system": "x" * 100, "messages": [{"role": "user", "content": "q"}]}
    markers = [{"slot": "system_prompt", "char_offset": n * 10, "policy": "always"} for n in range(1, 8)]
    out = anthropic_cache_control(markers, body)
    assert sum("cache_control" in b for b in out["system"]) == 4
    assert "".join(b["text"] for b in out["system"]) == body["system"]


async def test_run_commits_cache_markers_in_the_call_llm_stage() -> None:
    provider = mock(reply="ok")
    volatile: Injection = define_fact(id="clock", data=lambda ctx: f"iteration {ctx.iteration}", cache="never")
    agent = (
        Agent.create(provider=provider, model="m")
        .system("BASE")
        .steering(define_steering(id="persona", prompt="PERSONA", cache="always"))
        .fact(define_fact(id="skill-ish", data="WHILE"))
        .fact(volatile)
        .fact(define_fact(id="after", data="AFTER", cache="always"))
        .build()
    )
    await agent.run("hi")
    snap = agent.last_snapshot()
    assert snap is not None
    written = [(c.stage_id, w.value) for c in snap.commit_log for w in c.writes if w.path == "cache_markers"]
    assert [stage for stage, _ in written] == ["call-llm"]
    markers = written[0][1]
    assert [(m["source_id"], m["policy"]) for m in markers] == [("persona", "always"), ("skill-ish", "while-active")]
    prompt = provider.requests[0].system_prompt
    assert prompt[: markers[0]["char_offset"]] == "BASE\n\nPERSONA"
    assert prompt[: markers[1]["char_offset"]] == "BASE\n\nPERSONA\n\nWHILE"


def test_factories_take_and_validate_a_cache_policy() -> None:
    assert define_fact(id="f", data="d", cache="always").cache == "always"
    assert define_steering(id="s", prompt="p").cache == "while-active"
    with pytest.raises(InvalidInjectionError):
        define_fact(id="f", data="d", cache="forever")  # type: ignore[arg-type]
