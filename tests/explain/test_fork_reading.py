"""Issue 35 (fork cost): a fork reads its recording in one walk (model calls, tool results, a person's answers and
the reply each tool-calls commit went on from) and checks the served prefix from that walk; both give exactly what
the separate plain walks gave, on generated runs, pause chains, compositions and tampered recordings."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentfootprint.explain import _fork as fork_module
from agentfootprint.explain import fork, load_recording, save_recording
from agentfootprint.explain._fork import _check_served, _leg_of, _read_log, _served_fold, _served_reply, _written
from agentfootprint.extensions.receipts import Receipts, digest
from agentfootprint.flow import Commit, FlowSnapshot, Write, thaw
from agentfootprint.providers import LLMRequest
from tests.explain.test_fork import ASK
from tests.explain.test_fork_fast import Loop, call_ids, re_executed, restored
from tests.explain.test_fork_members import compositions, record

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROOT = frozenset({""})


# -- the plain walks (as the fork read its recording before the one walk) -----------------------------------------
def plain_calls(snap: FlowSnapshot, namespaces: frozenset[str]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for c in snap.commit_log:
        if c.stage_id != "call-llm" or c.namespace not in namespaces or not c.applied or c.failed:
            continue
        wrote = {w.path: w.value for w in c.writes}
        llm = wrote.get("llm_call") or {}
        reply = wrote.get("last_response")
        receipts = wrote.get("model_receipts")
        receipt = receipts[-1] if isinstance(receipts, list) and receipts else None
        if not isinstance(reply, Mapping):
            continue
        out.append(
            (
                c,
                reply,
                str(llm.get("model", "")),
                [str(t) for t in llm.get("tools") or ()],
                int(llm.get("message_count", 0)),
                llm.get("seed"),
                receipt.get("request_digest") if isinstance(receipt, Mapping) else None,
                snap,
            )
        )
    return out


def plain_tool_records(snap: FlowSnapshot, namespaces: frozenset[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in snap.commit_log:
        if c.namespace not in namespaces or c.stage_id != "tool-calls" or not c.applied:
            continue
        for w in c.writes:
            if w.path == "tool_results" and w.verb == "append" and isinstance(w.value, list | tuple):
                out.extend({**r, "_idx": c.idx} for r in w.value if isinstance(r, Mapping))
    return out


def plain_answered(snap: FlowSnapshot, namespaces: frozenset[str] | None) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for c in snap.commit_log:
        mine = c.stage_id == "tool-calls" and c.applied and (namespaces is None or c.namespace in namespaces)
        for w in c.writes if mine else ():
            if w.path == "tool_results" and isinstance(w.value, list | tuple):
                for r in w.value:
                    if isinstance(r, Mapping) and r.get("answered_by") == "human":
                        out.append((str(r.get("call_id")), thaw(r.get("content"))))
    return out


def _items(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else [value]


def plain_served_fold(reply: Any, commit: Commit) -> bool:
    entries = [e for w in commit.writes if w.path == "history" and w.verb == "append" for e in _items(w.value)]
    results = [r for w in commit.writes if w.path == "tool_results" and w.verb == "append" for r in _items(w.value)]
    if not all(isinstance(x, Mapping) for x in (*entries, *results)):
        return False
    asked = [e for e in entries if e.get("role") == "assistant"]
    told = [(e.get("tool_call_id"), e.get("content")) for e in entries if e.get("role") == "tool"]
    if not isinstance(reply, Mapping) or len(asked) != 1:
        return False
    said = asked[0]
    calls = [(c.get("id"), c.get("name")) for c in reply.get("tool_calls") or ()]
    return (
        said.get("content") == reply.get("content")
        and said.get("tool_calls") == reply.get("tool_calls")
        and (said.get("reasoning") or None) == (reply.get("reasoning") or None)
        and told == [(r.get("call_id"), r.get("content")) for r in results]
        and all((r.get("call_id"), r.get("name")) in calls for r in results)
    )


def plain_check_served(leg: Any, at_idx: int) -> None:
    reply: Any = None
    n = -1
    for c in leg.snap.commit_log[:at_idx]:
        if c.stage_id == "call-llm" and c.namespace in leg.namespaces and c.applied and not c.failed:
            reply, n = _written(c, "last_response"), n + 1
        elif c.stage_id == "tool-calls" and not plain_served_fold(reply, c):
            if 0 <= n < len(leg.calls):
                _served_reply(leg, n)
            raise fork_module.ForkMismatchError(
                "a recorded reply or tool result before the fork step is not what the run went on from",
                field="request",
            )


def fields_of(call: Any) -> tuple[Any, ...]:
    """A read call's fields, in the plain walk's order (its call record read when asked)."""
    return (
        call.commit,
        call.reply,
        call.model,
        call.tools,
        call.message_count,
        call.seed,
        call.request_digest,
        call.snap,
    )


def outcome(fn: Any, *args: Any) -> Any:
    """What ``fn(*args)`` gave: its value, or the error it raised (type, code, field and message)."""
    try:
        return ("value", fn(*args))
    except Exception as exc:
        return ("raised", type(exc), getattr(exc, "code", None), getattr(exc, "field", None), str(exc))


def assert_reads_as_plain(snap: FlowSnapshot) -> None:
    spaces = {c.namespace for c in snap.commit_log}
    for namespaces in {ROOT, frozenset(spaces), *(frozenset({s}) for s in spaces)}:
        for asked in (None, ROOT, namespaces, frozenset()):
            read = _read_log(snap, namespaces, asked)
            assert [fields_of(c) for c in read.calls] == plain_calls(snap, namespaces)
            assert read.tool_records == plain_tool_records(snap, namespaces)
            assert read.answered == plain_answered(snap, asked)


def assert_checks_as_plain(snap_or_run: Any) -> None:
    leg = _leg_of(snap_or_run)
    for at_idx in range(len(leg.snap.commit_log) + 1):
        assert outcome(_check_served, leg, at_idx) == outcome(plain_check_served, leg, at_idx), at_idx


# -- generated runs -------------------------------------------------------------------------------------------------
_PLAN = st.lists(st.sampled_from(["t0", "t1", "ask_human"]), min_size=1, max_size=6)


@SETTINGS
@given(plan=_PLAN, facts=st.lists(st.sampled_from(["f1", "f2"]), unique=True, max_size=2))
def test_one_walk_reads_an_agents_run_and_pause_chain_as_the_plain_walks(plan: list[str], facts: list[str]) -> None:
    loop = Loop(plan, ["t0", "t1"], facts, ask="ask_human" in plan)
    agent = loop.agent()

    async def go() -> None:
        legs = [await agent.run("go", seed=3)]
        while legs[-1].paused:
            legs.append(await agent.resume(legs[-1].checkpoint or {}, f"yes {len(legs)}"))
        for leg in legs:
            snap = leg.recorded().snapshot
            assert snap is not None
            assert_reads_as_plain(snap)
            assert_checks_as_plain(leg)
        assert_checks_as_plain(legs)

    asyncio.run(go())


@pytest.mark.parametrize("kind", ["sequence", "nested", "loop"])
async def test_one_walk_reads_a_compositions_run_as_the_plain_walks(kind: str) -> None:
    from tests.explain.test_fork import World

    world = World(["t0", "t1"] if kind == "nested" else ["t0", ASK, "t1"], ["t0", "t1"], ["policy"])  # nested: no
    # pause (both parallel branches would ask at once)
    legs = await record(compositions(world)[kind])
    for leg in legs:
        snap = leg.recorded().snapshot
        assert snap is not None
        assert_reads_as_plain(snap)


# -- tampered recordings ---------------------------------------------------------------------------------------------
def _edit(log: list[dict[str, Any]], pick: int, kind: str) -> None:
    tools = [c for c in log if c["stage_id"] == "tool-calls"]
    calls = [c for c in log if c["stage_id"] == "call-llm"]
    commit = tools[pick % len(tools)]
    writes = {w["path"]: w for w in commit["writes"]}
    if kind == "history" and "history" in writes:
        writes["history"]["value"][-1]["content"] = "forged"
    elif kind == "result" and "tool_results" in writes:
        writes["tool_results"]["value"][0]["content"] = "forged"
    elif kind == "scalar" and "tool_results" in writes:
        writes["tool_results"]["value"] = "forged"
    elif kind == "second-assistant" and "history" in writes:
        writes["history"]["value"].append({"role": "assistant", "content": ""})
    elif kind == "no-entries" and "history" in writes:
        writes["history"]["value"] = []
    elif kind == "reply":
        call = calls[pick % len(calls)]
        reply = next(w for w in call["writes"] if w["path"] == "last_response")
        reply["value"]["content"] = "forged"
    elif kind == "unreadable-reply":
        call = calls[pick % len(calls)]
        reply = next(w for w in call["writes"] if w["path"] == "last_response")
        reply["value"]["tool_calls"] = "forged"
    elif kind == "reply-not-a-map":
        call = calls[pick % len(calls)]
        next(w for w in call["writes"] if w["path"] == "last_response")["value"] = ["forged"]
    elif kind == "failed-tool-commit":
        commit["failed"] = True


@SETTINGS
@given(
    pick=st.integers(0, 20),
    kind=st.sampled_from(
        [
            "none",
            "history",
            "result",
            "scalar",
            "second-assistant",
            "no-entries",
            "reply",
            "unreadable-reply",
            "reply-not-a-map",
            "failed-tool-commit",
        ]
    ),
)
def test_a_tampered_recording_is_read_and_checked_as_the_plain_walks_read_and_checked_it(
    tmp_path_factory: pytest.TempPathFactory, pick: int, kind: str
) -> None:
    loop = Loop(["t0", "t1", "t0", "t1"], ["t0", "t1"], ["f1"])

    async def go() -> None:
        original = await loop.agent().run("go", seed=3)
        path = save_recording(original, tmp_path_factory.mktemp("run") / "run.json")
        raw = json.loads(path.read_text())
        _edit(raw["snapshot"]["commit_log"], pick, kind)
        path.write_text(json.dumps(raw))
        loaded = load_recording(path)
        assert_reads_as_plain(loaded.snapshot)
        assert_checks_as_plain(loaded)

    asyncio.run(go())


# -- the served-fold check on generated commits ------------------------------------------------------------------
_SCALAR = st.one_of(st.none(), st.sampled_from(["", "x", "STOP"]), st.integers(0, 2))
_CALL = st.fixed_dictionaries({"id": st.sampled_from(["c0", "c1"]), "name": st.sampled_from(["t0", "t1"])})
_ENTRY = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["assistant", "tool", "user"]), "content": _SCALAR},
        optional={
            "tool_call_id": st.sampled_from(["c0", "c1"]),
            "tool_calls": st.lists(_CALL, max_size=2),
            "reasoning": st.lists(st.just({"text": "r"}), max_size=1),
        },
    ),
    _SCALAR,
)
_RESULT = st.one_of(
    st.fixed_dictionaries(
        {"call_id": st.sampled_from(["c0", "c1"]), "name": st.sampled_from(["t0", "t1"]), "content": _SCALAR}
    ),
    _SCALAR,
)
_WRITE = st.one_of(
    st.tuples(st.just("history"), st.sampled_from(["append", "set"]), st.one_of(st.lists(_ENTRY, max_size=3), _ENTRY)),
    st.tuples(
        st.just("tool_results"), st.sampled_from(["append", "set"]), st.one_of(st.lists(_RESULT, max_size=2), _RESULT)
    ),
    st.tuples(st.just("other"), st.just("append"), st.lists(_SCALAR, max_size=2)),
)
_REPLY = st.one_of(
    st.fixed_dictionaries(
        {"content": _SCALAR, "tool_calls": st.lists(_CALL, max_size=2)},
        optional={"reasoning": st.lists(st.just({"text": "r"}), max_size=1)},
    ),
    _SCALAR,
)


@settings(max_examples=300, deadline=None)
@given(writes=st.lists(_WRITE, max_size=4), reply=_REPLY, agree=st.booleans())
def test_the_served_fold_check_decides_as_the_plain_check_on_generated_commits(
    writes: list[tuple[str, str, Any]], reply: Any, agree: bool
) -> None:
    if agree and isinstance(reply, dict):  # one commit that folds the reply it read, so both verdicts occur
        said = {"role": "assistant", "content": reply["content"], "tool_calls": reply["tool_calls"]}
        if reply.get("reasoning"):
            said["reasoning"] = reply["reasoning"]
        results = [{"call_id": c["id"], "name": c["name"], "content": "r"} for c in reply["tool_calls"]]
        told = [{"role": "tool", "tool_call_id": r["call_id"], "content": "r"} for r in results]
        writes = [("history", "append", [said, *told]), ("tool_results", "append", results)]
    commit = Commit(
        idx=0,
        stage_id="tool-calls",
        runtime_stage_id="tool-calls#0",
        writes=[Write(path=p, verb=v, value=value) for p, v, value in writes],  # type: ignore[arg-type]
    )
    assert outcome(_served_fold, reply, commit) == outcome(plain_served_fold, reply, commit)


# -- the receipts a fork mints ----------------------------------------------------------------------------------------
def _plain_receipt_digests(requests: list[dict[str, Any]]) -> list[str]:
    """Each request's digest as a fresh ``Receipts`` chains it (its own chain, nothing shared)."""
    ctx = SimpleNamespace(state={})
    receipts = Receipts()
    out = []
    for dumped in requests:
        request = LLMRequest.model_validate(dumped)
        head = {
            "system_prompt": request.system_prompt,
            "tools": [digest(t.model_dump(mode="json")) for t in request.tools],
            "model": request.model,
            "seed": request.seed,
            "messages": receipts._messages_digest(ctx, request),  # type: ignore[arg-type]
        }
        out.append(digest(head))
    return out


def _minted(result: Any, live: int) -> list[str]:
    receipts = result.recorded().snapshot.state.get("model_receipts") or []
    return [r["request_digest"] for r in receipts[-live:]] if live else []


@pytest.mark.parametrize("path", ["restored", "re-executed"])
@pytest.mark.parametrize(
    "change", [{}, {"replace": {"f1": "changed."}}, {"replace": {"t1#1": "STOP"}}, {"without": ["t1"]}]
)
async def test_a_forks_receipts_are_what_plain_receipts_mint_for_its_live_requests(
    path: str, change: dict[str, Any], tmp_path: Path
) -> None:
    """The fork's receipts share the chain its provider built to check the step's request: each live request's
    receipt digest is the one a fresh ``Receipts`` computes, and so is every receipt of a later run of its agent."""
    loop = Loop(["t0", "t1", "t0", "t1"], ["t0", "t1"], ["f1"])
    agent = loop.agent()
    original = await agent.run("go", seed=3)
    at = call_ids(original)[1]
    loop.reset()
    if path == "restored":
        with restored() as starts:
            forked = await fork(original, agent, at=at, **change)
        assert starts == ["injection-engine"]
    else:
        with re_executed():
            forked = await fork(original, agent, at=at, **change)
    assert loop.requests  # the fork went live at its step
    assert _minted(forked, len(loop.requests)) == _plain_receipt_digests(loop.requests)
    loop.reset()
    again = await forked.recorded().runner.run("go", seed=3)
    assert _minted(again, len(loop.requests)) == _plain_receipt_digests(loop.requests)
