"""Seeded checkpoint mutation: edit one place of a pause or conversation checkpoint, hand it back through its door
on a fresh agent, and classify what happened (refused, accepted, crashed, quoted)."""

from __future__ import annotations

import copy
import json
import math
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentfootprint import Agent, RunCheckpointError, ask_human, check_in_approved
from agentfootprint.agent import InMemoryDecisionLedger
from agentfootprint.errors import AgentFootprintError
from agentfootprint.flow import FlowCheckpoint
from agentfootprint.providers import LLMRequest, mock

from ._integrity import Effects, ask_script, lookup_tool, refund_script, refund_tool

MARK = "QQZX"
Path = tuple[Any, ...]


# ------------------------------------------------------------------------------------------ the JSON tree


def nodes(value: Any, path: Path = ()) -> list[Path]:
    """Every path in a JSON tree (the root excluded), depth first."""
    out: list[Path] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((*path, k))
            out.extend(nodes(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append((*path, i))
            out.extend(nodes(v, (*path, i)))
    return out


def get(value: Any, path: Path) -> Any:
    for p in path:
        value = value[p]
    return value


def _other_value(rng: random.Random, old: Any, n: int) -> Any:
    if isinstance(old, bool):
        choices: list[Any] = [not old, None, f"{MARK}{n}", 1]
    elif isinstance(old, int):
        choices = [old + 1, old - 1, -old - 7, 2**63, f"{MARK}{n}", None, float(old) + 0.5, True]
    elif isinstance(old, float):
        choices = [old + 1.5, math.inf, f"{MARK}{n}", None]
    elif isinstance(old, str):
        choices = [
            old + f"{MARK}{n}",
            f"{MARK}{n}",
            "",
            old[: len(old) // 2],
            old.upper() if old.upper() != old else old + "x",
            None,
            7,
            ["x", f"{MARK}{n}"],
            "x" * 70_000,
        ]
    elif isinstance(old, list):
        choices = [[], [f"{MARK}{n}"], {f"{MARK}{n}": 1}, f"{MARK}{n}", None]
    elif isinstance(old, dict):
        choices = [{}, [], f"{MARK}{n}", None, {f"Z-{MARK}{n}#": 1}]
    else:
        choices = [f"{MARK}{n}", 0, {}, []]
    return rng.choice(choices)


@dataclass
class Mutation:
    path: Path
    op: str


def mutate(
    rng: random.Random, original: dict[str, Any], n: int, paths: list[Path] | None = None
) -> tuple[dict[str, Any], Mutation] | None:
    """One edit somewhere in a copy of ``original``; None when the edit changed nothing."""
    cp = json.loads(json.dumps(original))
    path = rng.choice(paths if paths is not None else nodes(cp))
    parent, key = get(cp, path[:-1]), path[-1]
    old = parent[key]
    op = rng.choice(["replace", "replace", "replace", "delete", "add", "dup", "swap", "grow"])
    if op == "replace":
        parent[key] = _other_value(rng, old, n)
    elif op == "delete":
        del parent[key]
    elif op == "add":
        target = old if isinstance(old, dict | list) else parent
        if isinstance(target, dict):
            target[f"Z-{MARK}{n}#"] = rng.choice([f"{MARK}{n}", 0, None, {"k": f"{MARK}{n}"}])
        else:
            target.insert(rng.randrange(len(target) + 1), rng.choice([f"{MARK}{n}", 0, {}, None]))
        path = path if target is old else path[:-1]
    elif op == "dup" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(old))
    elif op == "swap" and isinstance(parent, list) and len(parent) > 1:
        j = rng.randrange(len(parent))
        parent[key], parent[j] = parent[j], parent[key]
    elif op == "grow" and isinstance(old, list) and old:
        old.extend([old[-1]] * (100_001 - len(old)))
    else:
        parent[key] = _other_value(rng, old, n)
        op = "replace"
    if _meaning(cp) == _meaning(original):
        return None
    return cp, Mutation(path=path, op=op)


def _meaning(cp: Any) -> str:
    """A checkpoint as its models read it (an edit that only spells a default out, or drops one, changes nothing)."""
    if isinstance(cp, dict):
        defaults = {"version": 1, "contains_unredacted_values": True}
        cp = {**{k: v for k, v in defaults.items() if "flow" in cp or k == "version"}, **cp}
        if "format" not in cp:
            cp["format"] = "agentfootprint.agent.pause" if "flow" in cp else "agentfootprint.conversation"
    try:
        if isinstance(cp, dict) and isinstance(cp.get("flow"), dict):
            flow = FlowCheckpoint.model_validate(cp["flow"], strict=True).model_dump(mode="json")
            flow["visits"] = {k: v for k, v in flow["visits"].items() if v != 0}  # a stage never visited
            cp = {**cp, "flow": flow}
    except Exception:
        pass
    return json.dumps(cp, sort_keys=True, default=str)


# ------------------------------------------------------------------------------------------ what must be refused

_UNNAMED_COMMIT_FIELDS = {
    "decision",
    "emits",
    "redacted_paths",
    "parent_runtime_stage_id",
    "fork_branch",
    "control_idx",
    "sources",
    "break_reason",
    "used_args",
    "error",
    "read_values",  # a copy of what each read saw (recording dials): evidence, like emits
}
_NAMED_TOP = {"run_id", "tool_call_id", "tool_name", "request_id", "question", "format", "version", "flow"}
_UNNAMED_FLOW = {"args", "contains_unredacted_values"}
_RECORD_DETAILS = {"error_code", "truncated", "elapsed_ms", "check_in", "decided_by", "answered_by"}


def _last_writers(flow: dict[str, Any]) -> dict[int, set[str]]:
    """For each commit, the keys whose final value it wrote (``set`` writes later overwritten are not among them)."""
    last: dict[str, int] = {}
    for c in flow["commit_log"]:
        if c["failed"] or c["paused"]:
            continue
        for w in c["writes"]:
            last[w["path"]] = c["idx"]
    out: dict[int, set[str]] = {}
    for key, idx in last.items():
        out.setdefault(idx, set()).add(key)
    return out


def _lying_read(mutated: dict[str, Any], original: dict[str, Any]) -> bool:
    """Whether some read of the edited log points at a commit that was not that key's writer then."""
    try:
        log = mutated["flow"]["commit_log"]
        last: dict[str, int] = {}
        for i, c in enumerate(original["flow"]["commit_log"]):
            reads = log[i].get("reads", {})
            if not isinstance(reads, dict) or any(j != last.get(k) for k, j in reads.items()):
                return True
            if not (c["failed"] or c["paused"]):
                for w in c["writes"]:
                    last[w["path"]] = i
    except (KeyError, IndexError, TypeError):
        return True
    return False


def _lying_provenance(commit: dict[str, Any], k: int) -> bool:
    """Whether a write's ``read_keys`` names anything but a prefix of its commit's reads, in the order made."""
    keys = commit["writes"][k].get("read_keys")
    return keys is not None and keys != list(commit["reads"])[: len(keys) if isinstance(keys, list) else 0]


def pause_named(m: Mutation, original: dict[str, Any], mutated: dict[str, Any]) -> bool:
    """Whether an edit touches what a pause checkpoint must be consistent about (run ids, the pause kind and
    position, answers to calls made, state vs commit log, the request id, sizes)."""
    p = m.path
    if m.op == "grow":  # a list grown to 100,001 entries: named where the list itself is
        return pause_named(Mutation(p, "replace"), original, mutated)
    if not p or p[0] not in _NAMED_TOP:
        return False
    if p[0] != "flow" or len(p) == 1:
        return True
    part = p[1]
    if part in _UNNAMED_FLOW or (part == "pause_data" and len(p) > 2 and p[2] == "evidence"):
        return False
    if part == "pause_data" and len(p) >= 6 and p[4] == "record" and p[5] in _RECORD_DETAILS:
        return False  # how a call done before the pause went (timing, codes): content of its answer
    if part == "pause_data" and len(p) > 2 and p[2] not in ("kind", "completed", "question", "request_id"):
        return p[2] in ("tool_call_id", "tool_name")
    if part == "commit_log" and len(p) > 3:
        commit = original["flow"]["commit_log"][p[2]]
        name = p[3]
        if name in _UNNAMED_COMMIT_FIELDS:
            return False  # evidence only: how a decision was reached, what a stage emitted
        if name == "reads":  # which keys a stage read is evidence; a read pointing at a non-writer is a lie
            return _lying_read(mutated, original)
        if name == "writes" and len(p) > 5 and p[5] == "read_keys":  # provenance is a prefix of the reads, or a lie
            return _lying_provenance(mutated["flow"]["commit_log"][p[2]], p[4])
        if name == "writes" and len(p) > 4 and m.op != "grow" and (len(p) == 5 or p[5] == "value"):
            if m.op == "swap" and len(p) == 5:
                return False  # the order of one commit's writes (of different keys) means nothing
            write = commit["writes"][p[4]]
            final = _last_writers(original["flow"]).get(commit["idx"], set())
            return write["verb"] in ("append", "merge") or write["path"] in final
    return True


def conversation_named(m: Mutation, original: dict[str, Any], mutated: dict[str, Any]) -> bool:
    """What a conversation must be consistent about: message roles and tool call pairing, shape, sizes."""
    p = m.path
    if m.op == "grow":  # the conversation itself grown past its cap, or its calls multiplied
        return p == ("history",) or conversation_named(Mutation(p, "replace"), original, mutated)
    if not p:
        return False
    if p[0] in ("format", "version"):
        return True
    if p[0] == "history" and len(p) >= 3 and p[2] in ("role", "tool_call_id", "tool_name"):
        return True
    if p[0] == "history" and len(p) >= 3 and p[2] == "tool_calls":  # the calls and their ids; args are content
        return len(p) <= 5 and (len(p) < 5 or p[4] in ("id", "name"))
    return False


# ------------------------------------------------------------------------------------------ trials


@dataclass
class Tally:
    """What the trials found."""

    trials: int = 0
    refused: int = 0
    accepted: int = 0
    accepted_named: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)
    fields: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        return (
            f"trials={self.trials} refused={self.refused} accepted={self.accepted} "
            f"accepted_named={len(self.accepted_named)} crashed={len(self.crashed)} quoted={len(self.quoted)}"
        )


@dataclass
class Base:
    """One checkpoint to mutate, how to hand it back, and which edits must be refused."""

    name: str
    checkpoint: dict[str, Any]
    door: Callable[[Agent, dict[str, Any]], Awaitable[Any]]
    build: Callable[[Effects, Any], Agent]
    named: Callable[[Mutation, dict[str, Any], dict[str, Any]], bool]


def _ask_builder(fx: Effects, key: Any) -> Agent:
    return (
        Agent.create(provider=mock(respond=ask_script(fx)), model="m", checkpoint_key=key)
        .tool(lookup_tool(fx))
        .tool(ask_human)
        .redact(keys=["card"])
        .build()
    )


def _refund_builder(fx: Effects, key: Any) -> Agent:
    return (
        Agent.create(
            provider=mock(respond=refund_script(fx)),
            model="m",
            checkpoint_key=key,
            decision_ledger=InMemoryDecisionLedger(),
        )
        .tool(lookup_tool(fx))
        .tool(refund_tool(fx))
        .build()
    )


def _twice_builder(fx: Effects, key: Any) -> Agent:
    def respond(req: LLMRequest) -> Any:
        fx.model_calls += 1
        asked = sum(1 for m in req.messages if m.role == "tool" and m.tool_name == "ask_human")
        if asked == 1:
            return {"tool_calls": [{"id": "h2", "name": "ask_human", "args": {"question": "And the amount?"}}]}
        return f"ok {req.messages[-1].content}"

    return (
        Agent.create(provider=mock(respond=respond), model="m", checkpoint_key=key)
        .tool(lookup_tool(fx))
        .tool(ask_human)
        .redact(keys=["card"])
        .build()
    )


async def bases(key: Any = None) -> list[Base]:
    """Pause checkpoints (ask_human with a batch, check-in, a second pause after a resume) and conversations
    (completed, crashed), made by real runs."""
    fx = Effects()
    ask = await _ask_builder(fx, key).run("refund A-1001", identity={"tenant": "t1"}, session_id="s1")
    refund = await _refund_builder(fx, key).run("refund A-1001")
    request = refund.request_id
    first = await _ask_builder(fx, key).run("refund A-1001")
    second = await _twice_builder(fx, key).resume(json.loads(json.dumps(first.checkpoint)), "A-1001")
    done_agent = _refund_builder(fx, key)
    paused = await done_agent.run("refund A-1001")
    await done_agent.resume(json.loads(json.dumps(paused.checkpoint)), check_in_approved(paused))
    conversation = done_agent.checkpoint()

    def down(req: LLMRequest) -> Any:
        raise TimeoutError("model down")

    crashing = Agent.create(provider=mock(respond=down), model="m", checkpoint_key=key).tool(lookup_tool(fx)).build()
    try:
        await crashing.run("hello", continue_from=conversation)
    except RunCheckpointError as err:
        crash = err.checkpoint
    assert ask.checkpoint and refund.checkpoint and second.checkpoint and conversation and crash

    async def resume_ask(agent: Agent, cp: dict[str, Any]) -> Any:
        return await agent.resume(cp, "A-1001")

    async def resume_refund(agent: Agent, cp: dict[str, Any]) -> Any:
        return await agent.resume(cp, check_in_approved(request))

    async def continue_from(agent: Agent, cp: dict[str, Any]) -> Any:
        return await agent.run("next", continue_from=cp)

    async def on_error(agent: Agent, cp: dict[str, Any]) -> Any:
        return await agent.resume_on_error(cp)

    return [
        Base("ask_human batch", ask.checkpoint, resume_ask, _ask_builder, pause_named),
        Base("check-in", refund.checkpoint, resume_refund, _refund_builder, pause_named),
        Base("second pause", second.checkpoint, resume_ask, _twice_builder, pause_named),
        Base("conversation", conversation, continue_from, _refund_builder, conversation_named),
        Base("crash", crash, on_error, _refund_builder, conversation_named),
    ]


def _shown(err: BaseException) -> str:
    parts = [str(err), repr(err), str(getattr(err, "field", "")), *map(str, getattr(err, "args", ()))]
    return " ".join(parts).lower()


async def trial(base: Base, mutated: dict[str, Any], m: Mutation, key: Any, tally: Tally) -> None:
    fx = Effects()
    agent = base.build(fx, key)
    where = f"{base.name}: {m.op} {'/'.join(map(str, m.path))[:160]}"
    tally.trials += 1
    try:
        await base.door(agent, mutated)
    except AgentFootprintError as err:
        if fx.model_calls or fx.refunds or fx.lookups:
            tally.crashed.append(f"{where}: {type(err).__name__} after the run started")
        elif MARK.lower() in _shown(err):
            tally.quoted.append(f"{where}: {type(err).__name__}")
        else:
            tally.refused += 1
            tally.fields[str(getattr(err, "field", type(err).__name__)).split(".")[0]] += 1
        return
    except Exception as err:  # a crash: not a typed refusal
        tally.crashed.append(f"{where}: {type(err).__name__}")
        return
    tally.accepted += 1
    if key is not None or base.named(m, base.checkpoint, mutated):
        tally.accepted_named.append(where)


async def campaign(count: int, seed: int, key: Any = None) -> Tally:
    """``count`` seeded mutations spread over the base checkpoints."""
    rng = random.Random(seed)
    tally = Tally()
    made = await bases(key)
    paths = [nodes(b.checkpoint) for b in made]
    n = 0
    while tally.trials < count:
        base = made[n % len(made)]
        edit = mutate(rng, base.checkpoint, n + 1, paths[n % len(made)])
        n += 1
        if edit is None:
            continue
        await trial(base, edit[0], edit[1], key, tally)
    return tally


__all__ = ["MARK", "Base", "Mutation", "Tally", "bases", "campaign", "mutate", "nodes", "trial"]
