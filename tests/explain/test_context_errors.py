"""find_context_errors: each integrity check with a planted violation and a clean control, read from a result, a
recording and its JSON; a generated set of runs where every planted violation is found and clean runs find none."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentfootprint import Agent, define_tool
from agentfootprint.agent import CallModel, Extension, RunContext
from agentfootprint.agent._integrity_wire import digest, parse_part, wire_manifest
from agentfootprint.explain import (
    ContextError,
    ContextErrors,
    ContextErrorsTargetError,
    find_context_errors,
    recording_of,
    save_recording,
)
from agentfootprint.explain._context_errors import wire_rows
from agentfootprint.extensions import Integrity
from agentfootprint.providers import LLMRequest, LLMResponse, Message, mock
from agentfootprint.tools import InvalidToolDefinitionError


def _search() -> Any:
    return define_tool(
        name="search_orders",
        description="Find orders.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        execute=lambda a: '[{"order_id": "A-17"}, {"order_id": "B-20"}]',
    )


def _get() -> Any:
    return define_tool(
        name="get_order",
        description="One order.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
        execute=lambda a: f"order {a.get('order_id')} shipped",
        arguments_from={"order_id": "search_orders"},
    )


def _call(i: int, name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": f"c{i}", "name": name, "args": args}]}


class ForgeToolResults(Extension):
    """Planted: rewrites every tool result on its way to the model."""

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        messages = [m.model_copy(update={"content": "forged"}) if m.role == "tool" else m for m in request.messages]
        return await call_next(request.model_copy(update={"messages": messages}))


class RottedIntegrity(Integrity):
    """Planted: the integrity ledger whose wire check stopped looking at model calls."""

    name = "integrity"

    async def wrap_model_call(self, ctx: RunContext, request: LLMRequest, call_next: CallModel) -> LLMResponse:
        return await call_next(request)


def _agent(replies: list[Any], *extensions: Extension) -> Agent:
    return Agent.create(provider=mock(replies=replies)).tool(_search()).tool(_get()).use(*extensions).build()


# -- each check: a planted violation and a clean control --------------------------------------------------------------


async def test_a_clean_run_has_no_context_errors() -> None:
    replies = [_call(1, "search_orders", q="x"), _call(2, "get_order", order_id="A-17"), "A-17 shipped."]
    result = await _agent(replies).run("where is my order?")
    assert find_context_errors(result) == ContextErrors()
    assert find_context_errors(recording_of(result)) == []


async def test_offered_tool_planted_and_clean() -> None:
    planted = await _agent([_call(1, "ghost"), "done"]).run("go")
    found = find_context_errors(planted)
    assert found == [
        ContextError(
            kind="offered-tool",
            stage_id="call-llm#5",
            source_id="ghost",
            message="the model called a tool it was not offered",
            iteration=1,
        )
    ]
    assert find_context_errors(await _agent([_call(1, "search_orders"), "done"]).run("go")) == []


async def test_dangling_reference_when_the_evidence_was_never_given() -> None:
    result = await _agent([_call(1, "get_order", order_id="A-17"), "done"]).run("go")
    found = find_context_errors(result)
    assert [(e.kind, e.source_id, e.message) for e in found] == [
        ("dangling-reference", "get_order", "the evidence its arguments depend on was never given")
    ]
    assert found[0].stage_id is not None and found[0].stage_id.startswith("tool-calls#")


async def test_dangling_reference_when_the_value_is_in_no_result() -> None:
    replies = [_call(1, "search_orders"), _call(2, "get_order", order_id="Z-99"), "done"]
    found = find_context_errors(await _agent(replies).run("go"))
    assert found.kinds() == ["dangling-reference"]
    assert found[0].message == "an argument's value is in none of the results it depends on"
    clean = [_call(1, "search_orders"), _call(2, "get_order", order_id="B-20"), "done"]
    assert find_context_errors(await _agent(clean).run("go")) == []


async def test_dangling_reference_is_flagged_before_the_call_runs() -> None:
    order: list[str] = []
    get = define_tool(
        name="get_order",
        description="One order.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
        execute=lambda a: order.append("tool ran") or "shipped",
        arguments_from={"order_id": ("search_orders", "list_orders")},
    )
    agent = Agent.create(provider=mock(replies=[_call(1, "get_order", order_id="A-17"), "done"])).tool(get).build()
    agent.on("integrity.context_error", lambda e: order.append(e.payload["kind"]))
    await agent.run("go")
    assert order == ["dangling-reference", "tool ran"]


async def test_wire_mismatch_planted_and_clean() -> None:
    replies = [_call(1, "search_orders"), "done"]
    planted = find_context_errors(await _agent(replies, ForgeToolResults()).run("go"))
    assert [(e.kind, e.source_id, e.iteration) for e in planted] == [("wire-mismatch", "c1", 2)]
    assert find_context_errors(await _agent(replies).run("go")) == []


async def test_a_tampered_manifest_in_a_recording_is_a_wire_mismatch(tmp_path: Path) -> None:
    result = await _agent([_call(1, "search_orders"), "done"]).run("go")
    path = save_recording(result, tmp_path / "run.json")
    assert find_context_errors(path) == []
    body = json.loads(path.read_text())
    for commit in body["snapshot"]["commit_log"]:
        for write in commit["writes"]:
            if write["path"] == "llm_call":
                part = write["value"]["wire"]["parts"][0]
                write["value"]["wire"]["parts"][0] = "0" * 64 + part[64:]
    assert find_context_errors(body).kinds() == ["wire-mismatch", "wire-mismatch"]


async def test_dead_check_planted_and_clean() -> None:
    planted = find_context_errors(await _agent(["done"], RottedIntegrity()).run("go"))
    assert [(e.kind, e.source_id) for e in planted] == [("dead-check", "offered-tool")]
    assert find_context_errors(await _agent(["done"], Integrity()).run("go")) == []


# -- the manifest itself ------------------------------------------------------------------------------------------


async def test_the_wire_manifest_names_every_part_that_crossed() -> None:
    agent = (
        Agent.create(provider=mock(replies=[_call(1, "search_orders", q="x"), "done"]))
        .system("You help.\n\nBe brief.")
        .tool(_search())
        .build()
    )
    result = await agent.run("go")
    writes = [w.value for c in result.record.snapshot.commit_log for w in c.writes if w.path == "llm_call"]
    recorded = writes[1]["wire"]  # only what follows the prefix it shares with the first call
    assert recorded["kept"] == 3 and [parse_part(p)[2] for p in recorded["parts"]] == [  # type: ignore[index]
        "message#1",
        "tool:c1",
        "tool-spec:search_orders",
    ]
    (_, first), (_, second) = wire_rows(result.record.snapshot)  # type: ignore[union-attr]
    assert len(first["parts"]) == 4
    ids = [parse_part(p)[2] for p in second["parts"]]  # type: ignore[index]
    assert ids == ["system#0", "system#1", "message#0", "message#1", "tool:c1", "tool-spec:search_orders"]
    tool_part = parse_part(second["parts"][4])
    assert tool_part == (digest('[{"order_id": "A-17"}, {"order_id": "B-20"}]'), "tool", "tool:c1")
    assert second["sha256"] == digest("".join(p[:64] for p in second["parts"]))
    assert second["keyed"] is False and second["iteration"] == 2


async def test_a_long_runs_manifests_grow_with_what_each_call_adds_not_its_history() -> None:
    calls = [_call(i, "search_orders", q=str(i)) for i in range(1, 41)]
    agent = Agent.create(provider=mock(replies=[*calls, "done"]), max_iterations=45).tool(_search()).build()
    result = await agent.run("go")
    snapshot = result.record.snapshot  # type: ignore[union-attr]
    rows = list(wire_rows(snapshot))
    recorded = [w.value["wire"] for c in snapshot.commit_log for w in c.writes if w.path == "llm_call"]
    # linear: each call records its 2 new messages and the tool spec that follows them
    assert len(rows) == 41 and sum(len(r["parts"]) for r in recorded) == 2 + 3 * 40
    assert [len(row["parts"]) for _, row in rows] == [2 + 2 * i for i in range(41)]
    assert find_context_errors(result) == []


def test_keyed_digests_cannot_be_recomputed_without_the_key() -> None:
    request = LLMRequest(messages=[Message(role="user", content="my pin is 1234")])
    plain, keyed = wire_manifest(request, 1), wire_manifest(request, 1, b"k" * 32)
    assert parse_part(plain["parts"][0])[0] == digest("my pin is 1234")  # type: ignore[index]
    assert parse_part(keyed["parts"][0])[0] != digest("my pin is 1234")  # type: ignore[index]
    assert keyed["keyed"] is True


# -- hostile input ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [42, None, "not a path", {"snapshot": {"run_id": 1}}, object()])
def test_what_is_not_a_run_is_refused_by_type(target: Any) -> None:
    with pytest.raises(ContextErrorsTargetError) as info:
        find_context_errors(target)
    assert info.value.code == "ERR_CONTEXT_ERRORS_TARGET"
    assert "not a path" not in str(info.value)


@pytest.mark.parametrize(
    "arguments_from",
    [{"missing": "search_orders"}, {"order_id": "bad name!"}, {"order_id": []}, "search_orders", {}],
)
def test_arguments_from_that_names_no_argument_or_tool_is_refused(arguments_from: Any) -> None:
    with pytest.raises(InvalidToolDefinitionError) as info:
        define_tool(
            name="get_order",
            description="One order.",
            input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
            execute=lambda a: "x",
            arguments_from=arguments_from,
        )
    assert "bad name" not in str(info.value) and info.value.code.startswith("ERR_")


async def test_forged_manifest_rows_in_a_recording_do_not_crash_the_reader() -> None:
    result = await _agent([_call(1, "search_orders"), "done"]).run("go")
    body = json.loads(recording_of(result).model_dump_json())
    for commit in body["snapshot"]["commit_log"]:
        for write in commit["writes"]:
            if write["path"] == "llm_call":
                write["value"]["wire"] = {"parts": [7, "x", None], "sha256": 3}
    assert find_context_errors(body).kinds() == ["wire-mismatch", "wire-mismatch"]


# -- a generated set: every planted violation found, no finding on a clean run --------------------------------------

PLANTS = ("offered-tool", "dangling-never-given", "dangling-value", "wire-mismatch")


def _scenario(rng: random.Random) -> tuple[list[Any], list[Extension], Counter[str]]:
    """A run of 1-4 steps; each step is clean or plants one violation; returns the replies and what it planted."""
    replies: list[Any] = []
    expected: Counter[str] = Counter()
    searched = False
    forge = False
    for i in range(rng.randint(1, 4)):
        plant = rng.choice([None, None, *PLANTS])
        if plant == "offered-tool":
            replies.append(_call(i, f"ghost_{i}"))
            expected["offered-tool"] += 1
        elif plant == "dangling-never-given" and not searched:
            replies.append(_call(i, "get_order", order_id="A-17"))
            expected["dangling-reference"] += 1
        elif plant == "dangling-value" and searched:
            replies.append(_call(i, "get_order", order_id=f"Q-{i}"))
            expected["dangling-reference"] += 1
        elif plant == "wire-mismatch" and not forge:
            forge = True
            replies.append(_call(i, "search_orders", q="x"))
            searched = True
        elif searched and rng.random() < 0.5:
            replies.append(_call(i, "get_order", order_id=rng.choice(["A-17", "B-20"])))
        else:
            replies.append(_call(i, "search_orders", q=str(i)))
            searched = True
    replies.append("done")
    tool_results = sum(1 for r in replies if isinstance(r, dict))
    if forge:  # every tool result sent after each tool step is forged: one finding per tool message per later call
        expected["wire-mismatch"] += sum(range(1, tool_results + 1))
    return replies, [ForgeToolResults()] if forge else [], expected


async def test_generated_runs_find_every_planted_violation_and_nothing_on_clean_runs() -> None:
    rng = random.Random(37)
    clean = planted = 0
    for _ in range(60):
        replies, extensions, expected = _scenario(rng)
        result = await _agent(replies, *extensions).run("where is my order?")
        found = Counter(find_context_errors(result).kinds())
        assert found == expected, (replies, found, expected)
        assert Counter(find_context_errors(json.loads(recording_of(result).model_dump_json())).kinds()) == expected
        clean += not expected
        planted += bool(expected)
    assert clean >= 5 and planted >= 30


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
async def test_property_found_equals_planted(seed: int) -> None:
    replies, extensions, expected = _scenario(random.Random(seed))
    result = await _agent(replies, *extensions).run("go")
    assert Counter(find_context_errors(result).kinds()) == expected


# -- the report -----------------------------------------------------------------------------------------------------


async def test_the_report_lists_context_errors_and_says_nothing_for_a_clean_run() -> None:
    from agentfootprint.explain import report_html

    planted = await _agent([_call(1, "get_order", order_id="<b>A-17</b>"), "done"]).run("go")
    html = report_html(planted)
    section = html[html.index("<h2>Context errors (1)</h2>") :]
    assert section.startswith(
        "<h2>Context errors (1)</h2><ul class='errors'><li><span class='mono'>dangling-reference</span> at "
        "<span class='mono'>tool-calls#7</span> (get_order): the evidence its arguments depend on was never given"
    )
    clean = await _agent([_call(1, "search_orders"), "done"]).run("go")
    assert "Context errors" not in report_html(clean)


# -- the claim seam -------------------------------------------------------------------------------------------------


def _sentences(answer: str) -> list[str]:
    return [s.strip() for s in answer.split(".") if s.strip()]


async def test_unsupported_claim_planted_and_clean() -> None:
    replies = [_call(1, "search_orders"), 'Order "A-17" exists. Order "C-55" costs 40. We are glad to help.']
    agent = Agent.create(provider=mock(replies=replies)).tool(_search()).tool(_get()).claims(_sentences).build()
    found = find_context_errors(await agent.run("go"))
    assert [(e.kind, e.source_id) for e in found] == [("unsupported-claim", "claim#1")]
    clean = [_call(1, "search_orders"), 'Order "A-17" and order "B-20" exist. Thanks.']
    ok = Agent.create(provider=mock(replies=clean)).tool(_search()).claims(_sentences).build()
    result = await ok.run("go")
    assert find_context_errors(result) == []
    row = {r["check"]: r for r in result.extensions["integrity"]["disposition"]}["unsupported-claim"]
    assert (row["checked"], row["not_applicable"], row["findings"]) == (1, 1, 0)


async def test_claims_then_integrity_keeps_the_seam_and_the_options() -> None:
    replies = [_call(1, "search_orders"), 'Order "Z-1" exists.']
    agent = (
        Agent.create(provider=mock(replies=replies))
        .tool(_search())
        .claims(_sentences)
        .integrity(notice_empty_lookups=True)
        .build()
    )
    ledger = agent.extension(Integrity)
    assert ledger is not None and ledger.notice_empty is True and ledger.claims is _sentences
    assert find_context_errors(await agent.run("go")).kinds() == ["unsupported-claim"]


async def test_a_failing_claim_extractor_is_a_finding_not_a_crash() -> None:
    def broken(answer: str) -> list[str]:
        raise RuntimeError("extractor down")

    agent = Agent.create(provider=mock(reply="fine")).claims(broken).build()
    result = await agent.run("go")
    assert result.answer == "fine"
    assert [e.message for e in find_context_errors(result)] == [
        "the claim extractor failed; no claim of the answer was checked"
    ]
