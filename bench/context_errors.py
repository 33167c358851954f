"""find_context_errors on generated runs it was not designed around: random tool catalogues (some declaring
arguments_from), random replies mixing clean calls with planted violations (unoffered tools, guessed ids, forged
tool results on the wire, unsupported claims, unmapped conclusions), and composed runs (Sequence / Parallel /
Workflow / Loop of members declaring invariants, some breaking them at their mount, some calling unoffered tools).
Reports planted vs found per kind, false findings on clean runs, and the cost of the always-on ledger and wire
manifest per turn (ratio, same machine)."""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_results

from agentfootprint import Agent, define_tool
from agentfootprint.agent import Extension, MemberView
from agentfootprint.compose import Loop, Parallel, Sequence, Workflow
from agentfootprint.explain import find_context_errors, recording_of
from agentfootprint.providers import mock

RUNS = 200
COMPOSED_RUNS = 120


class Forge(Extension):
    async def wrap_model_call(self, ctx: Any, request: Any, call_next: Any) -> Any:
        messages = [
            m.model_copy(update={"content": m.content + " (edited)"}) if m.role == "tool" else m
            for m in request.messages
        ]
        return await call_next(request.model_copy(update={"messages": messages}))


def _returns(text: str) -> Any:
    return lambda args: text


def _catalogue(rng: random.Random) -> tuple[list[Any], dict[str, str]]:
    """1-3 lookup tools each returning ids, and a fetch tool per lookup whose id must come from it."""
    tools, ids = [], {}
    for k in range(rng.randint(1, 3)):
        found = f"{rng.choice('ABCDEFG')}-{rng.randint(10, 999)}"
        ids[f"find_{k}"] = found
        tools.append(
            define_tool(
                name=f"find_{k}",
                description="Find.",
                input_schema={"type": "object", "properties": {}},
                execute=_returns(json.dumps([{"id": found}])),
            )
        )
        tools.append(
            define_tool(
                name=f"get_{k}",
                description="Get.",
                input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
                execute=lambda a: "status ok",
                arguments_from={"id": f"find_{k}"},
            )
        )
    return tools, ids


def _case(rng: random.Random) -> tuple[Agent, Counter[str]]:
    tools, ids = _catalogue(rng)
    replies: list[Any] = []
    expected: Counter[str] = Counter()
    seen: set[str] = set()
    forge = rng.random() < 0.15
    results = 0
    for i in range(rng.randint(0, 5)):
        k = rng.randrange(len(ids))
        roll = rng.random()
        if roll < 0.1:
            replies.append({"tool_calls": [{"id": f"x{i}", "name": f"nope_{i}", "args": {}}]})
            expected["offered-tool"] += 1
        elif roll < 0.25:
            replies.append({"tool_calls": [{"id": f"x{i}", "name": f"get_{k}", "args": {"id": f"Z-{i}"}}]})
            expected["dangling-reference"] += 1
        elif f"find_{k}" in seen and roll < 0.6:
            replies.append({"tool_calls": [{"id": f"x{i}", "name": f"get_{k}", "args": {"id": ids[f"find_{k}"]}}]})
        else:
            replies.append({"tool_calls": [{"id": f"x{i}", "name": f"find_{k}", "args": {}}]})
            seen.add(f"find_{k}")
        results += 1
        if forge:
            expected["wire-mismatch"] += results
    claim_bad = rng.random() < 0.2
    answer = "All checked." + (f' Item "Q-{rng.randint(1, 99)}" is ready.' if claim_bad else "")
    expected["unsupported-claim"] += claim_bad
    concludes = rng.random() < 0.3
    if concludes:
        answer += " Everything is shipped."
        expected["unmapped-conclusion"] += "get_0" not in {c["tool_calls"][0]["name"] for c in replies}
    replies.append(answer)
    builder = Agent.create(provider=mock(replies=replies))
    for tool in tools:
        builder = builder.tool(tool)
    builder = builder.claims(lambda a: [s for s in a.split(".") if s.strip()]).maps(
        {"shipped": {"from": ["get_0"], "says": ["is shipped"]}}
    )
    if forge:
        builder = builder.use(Forge())
    return builder.build(), +expected


async def _tally(runs: int, seed: int, case: Any) -> dict[str, Any]:
    """Run ``runs`` generated cases (``case(rng) -> (runner, expected kinds)``) and count planted vs found on each
    run's recording (JSON round trip)."""
    rng = random.Random(seed)
    planted: Counter[str] = Counter()
    found: Counter[str] = Counter()
    false: Counter[str] = Counter()
    clean_runs = clean_with_findings = exact = 0
    for _ in range(runs):
        runner, expected = case(rng)
        result = await runner.run("status?")
        got = Counter(find_context_errors(json.loads(recording_of(result).model_dump_json())).kinds())
        planted += expected
        found += got & expected
        false += got - expected
        exact += got == expected
        if not expected:
            clean_runs += 1
            clean_with_findings += bool(got)
    return {
        "runs": runs,
        "runs_exact": exact,
        "planted": dict(planted),
        "found": dict(found),
        "missed": dict(planted - found),
        "false_findings": dict(false),
        "clean_runs": clean_runs,
        "clean_runs_with_findings": clean_with_findings,
        "recall": round(sum(found.values()) / max(1, sum(planted.values())), 4),
    }


def _cites(view: MemberView) -> bool | None:
    return ("[" in view.answer) if view.answer else None


def _composed_case(rng: random.Random) -> tuple[Any, Counter[str]]:
    """2-4 members, each declaring one invariant; a member may break it, answer out of its scope (not applicable),
    call a tool it was not offered, and (outside a loop) have that tool's error result forged on the wire; mounted
    in a random composition (a loop runs one body twice)."""
    expected: Counter[str] = Counter()
    kind = rng.choice(["sequence", "parallel", "workflow", "loop"])
    visits = 2 if kind == "loop" else 1
    members = []
    for i in range(1 if kind == "loop" else rng.randint(2, 4)):
        roll = rng.random()
        answer = "bare claim" if roll < 0.25 else "" if roll < 0.35 else f"claim [s{i}]"
        replies: list[Any] = [answer]
        ghost = rng.random() < 0.2
        forged = ghost and kind != "loop" and rng.random() < 0.5
        if ghost:
            replies.insert(0, {"tool_calls": [{"id": f"g{i}", "name": f"ghost_{i}", "args": {}}]})
        builder = Agent.create(provider=mock(replies=replies * 2), model="m", name=f"agent{i}")
        builder = builder.invariants({"cites": _cites})
        members.append((f"m{i}", (builder.use(Forge()) if forged else builder).build()))
        expected["invariant-violation"] += (roll < 0.25) * visits
        expected["offered-tool"] += ghost * visits
        expected["wire-mismatch"] += forged  # the forged result crosses once, on the member's answering call
    if kind == "loop":
        return Loop.create("l").repeat(members[0][1]).times(2).build(), +expected
    make: Any = {"sequence": Sequence, "parallel": Parallel, "workflow": Workflow}[kind]
    composition = make.create(kind)
    for name, agent in members:
        composition = composition.branch(name, agent) if kind == "parallel" else composition.step(name, agent)
    return composition.build(), +expected


async def overhead() -> dict[str, Any]:
    import agentfootprint
    import agentfootprint.agent._integrity_wire as wire

    echo = define_tool(
        name="echo", description="E.", input_schema={"type": "object", "properties": {}}, execute=lambda a: "r" * 2000
    )
    replies = [{"tool_calls": [{"id": f"c{i}", "name": "echo", "args": {}}]} for i in range(5)] + ["done"]

    async def per_turn() -> float:
        agent = Agent.create(provider=mock(replies=replies * 400, record_requests=False)).tool(echo).build()
        for _ in range(10):
            await agent.run("go")
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(40):
                await agent.run("go")
            best = min(best, (time.perf_counter() - t) / 40)
        return best

    defaults, manifest = agentfootprint._Features.defaults, wire.wire_manifest
    ons, offs = [], []
    for _ in range(3):  # alternate, keep the best of each (a shared machine)
        ons.append(await per_turn())
        agentfootprint._Features.defaults = lambda self: tuple(f for f in defaults(self) if f.__name__ != "Integrity")  # type: ignore[method-assign]
        wire.wire_manifest = lambda request, iteration, key=None, **_: {}  # type: ignore[assignment]
        try:
            offs.append(await per_turn())
        finally:
            agentfootprint._Features.defaults = defaults  # type: ignore[method-assign]
            wire.wire_manifest = manifest
    on, off = min(ons), min(offs)
    return {
        "turn_ms_with_ledger_and_manifest": round(on * 1000, 3),
        "turn_ms_without": round(off * 1000, 3),
        "ratio": round(on / off, 3),
        "calls_per_turn": 6,
    }


async def main() -> None:
    payload = {
        "detection": await _tally(RUNS, 2026, _case),
        "composed": await _tally(COMPOSED_RUNS, 3737, _composed_case),
        "overhead": await overhead(),
    }
    print(json.dumps(payload, indent=1))
    write_results("context_errors", payload)


if __name__ == "__main__":
    asyncio.run(main())
