"""Fork: rerun a recorded run from one model call with one tracked change; everything before it is served from
the recording (no model call, no tool call) and every replayed request is checked against the recorded one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import pairwise
from typing import Any, NamedTuple, NoReturn

from pydantic import ValidationError

from agentfootprint._sync import run_sync
from agentfootprint.agent import CallTool, Extension, RunContext, ToolCallRequest
from agentfootprint.agent._fork_start import Restart, before_nudge, probe_iteration, restart_agent, restarts
from agentfootprint.agent.config import READ_SKILL
from agentfootprint.context import Injection, InjectionContext, Trigger
from agentfootprint.explain._runs import WhatIfError, read_value
from agentfootprint.explain._slice import _carries
from agentfootprint.explain._targets import as_target
from agentfootprint.extensions.receipts import Receipts, chain_digest, digest
from agentfootprint.flow import Commit, FlowSnapshot, thaw
from agentfootprint.providers import LLMRequest, LLMResponse, StreamChunk
from agentfootprint.providers.base import chunks_from_response
from agentfootprint.tools import Tool
from agentfootprint.tools.execute import ToolOutcome

__all__ = ["ForkMismatchError", "fork", "fork_sync"]

_INJECTION_KEYS = ("system_prompt_injections", "message_injections")


class ForkMismatchError(WhatIfError):
    """The recording does not fit the agent (or the agent did not rebuild it); ``.field`` names what differs:
    ``step``, ``model``, ``tools``, ``tool_order``, ``sources``, ``leg``, ``request``, ``tool_call``, and inside a
    composition ``members`` or ``member_order``."""

    code = "ERR_FORK_MISMATCH"

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message, code=self.code)
        self.field = field


# -- the recorded run ----------------------------------------------------------------------------------------------
class _Call:
    """One recorded model call: its reply, model and call record (what it offered, read when a check asks) and its
    last receipt (the digest of its request, when receipts were on)."""

    __slots__ = ("commit", "llm", "model", "receipt", "reply", "snap")

    def __init__(self, commit: Commit, reply: Mapping[str, Any], llm: Any, receipt: Any, snap: FlowSnapshot) -> None:
        self.commit = commit
        self.reply = reply
        """As recorded (frozen): thawed only when it is served."""
        self.llm: Mapping[str, Any] = llm or {}
        self.model = str(self.llm.get("model", ""))
        self.receipt = receipt
        self.snap = snap

    @property
    def tools(self) -> list[str]:
        return [str(t) for t in self.llm.get("tools") or ()]

    @property
    def message_count(self) -> int:
        return int(self.llm.get("message_count", 0))

    @property
    def seed(self) -> int | None:
        return self.llm.get("seed")

    @property
    def request_digest(self) -> str | None:
        return self.receipt.get("request_digest") if _is_map(self.receipt) else None

    def system_prompt(self) -> Any:
        """The system prompt the call read (what a request is checked by when the run minted no receipts)."""
        c = self.commit
        return read_value(self.snap, c, "system_prompt") if "system_prompt" in c.reads else None


@dataclass(frozen=True)
class _Leg:
    """The recorded run a fork rebuilds: its snapshot (a whole pause chain), input and declared sources."""

    snap: FlowSnapshot
    run_input: dict[str, Any]
    declared: dict[str, str] | None
    calls: list[_Call]
    tool_records: list[dict[str, Any]]
    answers: dict[str, Any]
    """Tool call id → the person's recorded answer, for each pause the chain resumed (ask_human)."""
    namespaces: frozenset[str] = frozenset({""})
    """Where the agent's stages ran: the root for an agent's own run, its mounts inside a composition."""
    folds: Sequence[_Fold] = ()
    """Every tool-calls commit with the reply it went on from (what ``_check_served`` checks)."""


class _Fold(NamedTuple):
    """A tool-calls commit at ``pos`` of the log, the last reply recorded before it and that reply's call number."""

    pos: int
    commit: Commit
    reply: Any
    n: int


class _Log(NamedTuple):
    """What one walk of a recorded log reads (``_read_log``)."""

    calls: list[_Call]
    tool_records: list[dict[str, Any]]
    answered: list[tuple[str, Any]]
    folds: list[_Fold]


def _written(commit: Commit, key: str) -> Any:
    for w in reversed(commit.writes):
        if w.path == key:
            return w.value
    return None


_ROOT = frozenset({""})


def _is_map(value: Any) -> bool:
    return isinstance(value, dict) or isinstance(value, Mapping)  # a dict first: no ABC check on the common case


def _call_of(c: Commit, snap: FlowSnapshot) -> tuple[Any, _Call | None]:
    """Model call commit ``c``'s recorded reply and the call (None when the reply is none); the last write wins."""
    llm: Any = None
    reply: Any = None
    receipts: Any = None
    for w in c.writes:
        path = w.path
        if path == "llm_call":
            llm = w.value
        elif path == "last_response":
            reply = w.value
        elif path == "model_receipts":
            receipts = w.value
    if not _is_map(reply):
        return reply, None
    receipt: Any = receipts[-1] if isinstance(receipts, list) and receipts else None
    return reply, _Call(c, reply, llm, receipt, snap)


def _read_log(snap: FlowSnapshot, namespaces: frozenset[str] = _ROOT, asked: frozenset[str] | None = None) -> _Log:
    """In one walk of the log: the recorded model calls and tool results in ``namespaces`` (each result a shallow
    copy with the idx of the commit that landed it), the person's answers in ``asked`` (None: everywhere) and every
    tool-calls commit with the reply before it."""
    out = _Log([], [], [], [])
    calls, records, answered = out.calls, out.tool_records, out.answered
    reply: Any = None
    n = -1
    for pos, c in enumerate(snap.commit_log):
        stage = c.stage_id
        if stage == "call-llm":
            if c.namespace in namespaces and not (c.failed or c.paused):
                reply, call = _call_of(c, snap)
                n += 1
                if call is not None:
                    calls.append(call)
            continue
        if stage != "tool-calls":
            continue
        out.folds.append(_Fold(pos, c, reply, n))
        if c.failed or c.paused:
            continue
        mine = c.namespace in namespaces
        answers = asked is None or c.namespace in asked
        for w in c.writes if mine or answers else ():
            value = w.value
            if w.path != "tool_results" or not isinstance(value, list | tuple):
                continue
            landed = mine and w.verb == "append"
            for r in value:
                if not _is_map(r):
                    continue
                if landed:
                    records.append({**r, "_idx": c.idx})
                if answers and r.get("answered_by") == "human":
                    answered.append((str(r.get("call_id")), thaw(r.get("content"))))
    return out


def _calls(snap: FlowSnapshot, namespaces: frozenset[str] = _ROOT) -> list[_Call]:
    """Every recorded model call in ``namespaces``, in order."""
    return _read_log(snap, namespaces, frozenset()).calls


def _input_of_snapshot(snap: FlowSnapshot, calls: list[_Call]) -> dict[str, Any]:
    """A recording's input, read from its seed commit: the message, the prior history, identity and seed."""
    seed = next((c for c in snap.commit_log if c.stage_id == "seed" and c.namespace == ""), None)
    if seed is None:
        raise WhatIfError("the recording has no seed step to start a fork from", code="ERR_WHATIF_NOT_A_RUN")
    message = _written(seed, "user_message")
    history = thaw(_written(seed, "history") or [])
    run = thaw(_written(seed, "run") or {})
    if not isinstance(message, str):
        raise WhatIfError("the recording holds no user message to rerun", code="ERR_WHATIF_NOT_A_RUN")
    prior = history[:-1] if history and history[-1] == {"role": "user", "content": message} else history
    return {
        "message": message,
        "history": prior,
        "identity": run.get("identity") if isinstance(run, dict) else None,
        "seed": calls[0].seed if calls else None,
    }


def _one_leg(run: Any) -> tuple[FlowSnapshot, dict[str, Any] | None, dict[str, str] | None]:
    from agentfootprint.explain.recording import Recording

    record = as_target(run)  # a result without a record raises NoRunRecordError
    if isinstance(record, Recording):
        return record.snapshot, None, dict(record.sources) or None
    if isinstance(record, FlowSnapshot):
        return record, None, None
    snap = getattr(record, "snapshot", None)
    if not isinstance(snap, FlowSnapshot) or not callable(getattr(record, "last_run_input", None)):
        raise WhatIfError("run is not a run: pass a RunResult or a recording", code="ERR_WHATIF_NOT_A_RUN")
    run_input = record.last_run_input()
    try:
        declared = dict(record.source_ids())
    except (AttributeError, TypeError):
        declared = None
    return snap, run_input, declared


def _continues(before: FlowSnapshot, after: FlowSnapshot) -> bool:
    """Whether ``after`` resumed ``before``: an agent's leg names its origin; a composition's leg carries the whole
    log, so the leg before it is its paused prefix."""
    if after.resumed_from is not None:
        origin = after.resumed_from
        return origin.get("run_id") == before.run_id and origin.get("commits") == len(before.commit_log)
    n = len(before.commit_log)
    return (
        after.run_id == before.run_id
        and 0 < n < len(after.commit_log)
        and before.commit_log[-1].paused
        and [c.runtime_stage_id for c in before.commit_log] == [c.runtime_stage_id for c in after.commit_log[:n]]
    )


def _chain_of(run: Any) -> tuple[FlowSnapshot, dict[str, Any] | None, dict[str, str] | None]:
    """The run to fork, its input (when the result carries it) and declared sources: one result or recording, or a
    pause chain given as its legs in order (each leg checked to continue the one before it)."""
    legs = list(run) if isinstance(run, list | tuple) else [run]
    if not legs:
        raise WhatIfError("run is not a run: pass a RunResult or a recording", code="ERR_WHATIF_NOT_A_RUN")
    read = [_one_leg(leg) for leg in legs]
    for (before, _, _), (after, _, _) in pairwise(read):
        if not _continues(before, after):
            raise ForkMismatchError("a leg of the pause chain was not resumed from the leg before it", field="leg")
    snap, run_input, declared = read[-1]
    if snap.resumed_from:
        count = snap.resumed_from.get("commits")
        if not isinstance(count, int) or not 0 < count <= len(snap.commit_log) or not snap.commit_log[count - 1].paused:
            raise ForkMismatchError("the resumed leg does not continue a recorded pause", field="leg")
    return snap, run_input or next((i for _, i, _ in read if i is not None), None), declared


def _leg_of(run: Any) -> _Leg:
    """The agent run to fork (one result or recording, or a pause chain given as its legs in order)."""
    snap, run_input, declared = _chain_of(run)
    read = _read_log(snap)
    run_input = run_input or _input_of_snapshot(snap, read.calls)
    return _Leg(snap, run_input, declared, read.calls, read.tool_records, dict(read.answered), folds=read.folds)


def _recorded_clock(snap: FlowSnapshot) -> dict[str, Any] | None:
    """The recorded turn's clock as a door's ``time`` (its ``now``, and its zone when the run gave one)."""
    seed = next((c for c in snap.commit_log if c.stage_id == "seed" and c.namespace == ""), None)
    clock = thaw(_written(seed, "clock")) if seed is not None else None
    if not isinstance(clock, dict) or not isinstance(clock.get("now"), str):
        return None
    given = {"now": clock["now"]}
    if clock.get("zone_source") == "run" and isinstance(clock.get("zone"), str):
        given["zone"] = clock["zone"]
    return given


def answered_in_order(snap: FlowSnapshot, namespaces: frozenset[str] | None = None) -> list[tuple[str, Any]]:
    """A person's recorded answers in the order the chain resumed them, each with the tool call it answered (call
    ids repeat across a composition's members: the order is what matches a pause to its answer)."""
    return _read_log(snap, frozenset(), namespaces).answered


# -- the checks ------------------------------------------------------------------------------------------------------
def _tool_field(recorded: Sequence[str], offered: Sequence[str]) -> str | None:
    """``tools`` when the tool sets differ, ``tool_order`` when only their order does, else None."""
    if list(recorded) == list(offered):
        return None
    return "tool_order" if sorted(recorded) == sorted(offered) else "tools"


def _check_fit(leg: _Leg, agent: Any, at: Any) -> int:
    """Refuse a recording the agent cannot rebuild; the position of ``at`` among the run's model calls."""
    if not isinstance(at, str) or not at:
        raise ForkMismatchError("at must be the runtime stage id of one of the run's model calls", field="step")
    ordinal = next((i for i, c in enumerate(leg.calls) if c.commit.runtime_stage_id == at), None)
    if ordinal is None:
        nested = any(c.runtime_stage_id == at and c.namespace for c in leg.snap.commit_log)
        if nested:
            raise ForkMismatchError(
                "the step is inside a composition member: fork with the composition that made the run",
                field="members",
            )
        raise ForkMismatchError("the run has no model call at that step", field="step")
    config = agent.config
    recorded_models = {c.model for c in leg.calls}
    if config.run_config is None and recorded_models and recorded_models != {config.model}:
        raise ForkMismatchError("the agent runs another model than the recording", field="model")
    if leg.declared is not None:
        mine = config.source_ids()
        tools_then = [k for k, v in leg.declared.items() if v == "tool"]
        tools_now = [k for k, v in mine.items() if v == "tool"]
        which = _tool_field(tools_then, tools_now)
        if which is not None:
            raise ForkMismatchError("the agent's tools differ from the recording's", field=which)
        others_then = {k: v for k, v in leg.declared.items() if v != "tool"}
        others_now = {k: v for k, v in mine.items() if v != "tool"}
        if others_then != others_now or list(others_then) != list(others_now):
            raise ForkMismatchError("the agent's sources differ from the recording's", field="sources")
    return ordinal


# -- serving the prefix ------------------------------------------------------------------------------------------
class _RequestDigest:
    """The digest a receipt records for a request (system prompt, tools, model, seed and the message chain); the
    chain is extended, not recomputed, while each request repeats the previous one's messages."""

    def __init__(self) -> None:
        self._chained: list[Any] = []
        self._running: list[str] = []
        self._tools: dict[str, str | None] = {}
        """A tool spec's digest by its JSON (a loop offers the same specs call after call)."""

    def _tool(self, tool: Any) -> str | None:
        try:
            key = tool.model_dump_json()
        except (ValueError, RecursionError):
            return None
        if key not in self._tools:
            self._tools[key] = digest(tool.model_dump(mode="json"))
        return self._tools[key]

    def messages(self, messages: Sequence[Any]) -> str:
        """The running digest of ``messages`` (a receipt's ``messages`` field)."""
        return chain_digest(messages, self._chained, self._running)

    def __call__(self, request: LLMRequest) -> str:
        head = {
            "system_prompt": request.system_prompt,
            "tools": [self._tool(t) for t in request.tools],
            "model": request.model,
            "seed": request.seed,
            "messages": self.messages(request.messages),
        }
        return digest(head)


@dataclass(eq=False)
class _Cursor:
    """Where the fork is: model calls made (replayed, then live), tool calls served, the first refusal."""

    prefix: int
    calls: int = 0
    live_calls: int = 0
    tools_served: int = 0
    tool_counts: dict[str, int] = field(default_factory=dict)
    refusal: ForkMismatchError | None = None
    check_at: bool = False
    """No change was asked for: the fork step's own request is checked too before it goes live."""
    finished: bool = False
    """The fork returned: later runs of its agent (a rerun of the result) are live and substitute nothing."""
    check_live_tools: bool = False
    """A composition member wholly after the fork step: its first live request is still checked for its tools."""

    def forked(self) -> bool:
        """Whether the next model call is the fork step or after it (the change applies from there on)."""
        return self.calls >= self.prefix


def _served_reply(leg: _Leg, n: int) -> LLMResponse:
    """The recorded reply of model call ``n``."""
    recorded = thaw(leg.calls[n].reply)
    reply = {k: v for k, v in recorded.items() if k in ("content", "tool_calls", "finish_reason", "model")}
    reply["usage"] = recorded.get("usage") or {}
    reply["tool_calls"] = [{k: v for k, v in tc.items() if k in ("id", "name", "args")} for tc in reply["tool_calls"]]
    if recorded.get("reasoning"):
        reply["reasoning"] = recorded["reasoning"]
    if recorded.get("attempts"):
        reply["attempts"] = recorded["attempts"]
    try:
        return LLMResponse.model_validate(reply)
    except ValidationError:
        raise WhatIfError(
            f"the recorded reply of model call {n + 1} cannot be read", code="ERR_WHATIF_NOT_A_RUN"
        ) from None


class _ForkProvider:
    """The agent's provider for a fork: the first ``prefix`` calls are answered from the recording after their
    request is checked; the rest go to the real provider."""

    def __init__(self, inner: Any, leg: _Leg, cursor: _Cursor) -> None:
        self._inner = inner
        self._leg = leg
        self._cursor = cursor
        self.digests = _RequestDigest()
        self.name = str(getattr(inner, "name", "provider"))

    def __getattr__(self, item: str) -> Any:
        return getattr(self._inner, item)

    def _replayed(self, request: LLMRequest) -> LLMResponse | None:
        cursor = self._cursor
        n = cursor.calls
        cursor.calls += 1
        if n > cursor.prefix or (n == cursor.prefix and not cursor.check_at):
            cursor.live_calls += 1
            if cursor.check_live_tools and n == 0 and self._leg.calls:
                self._check_tools(0, request)
            return None
        self._check(n, request)
        if n == cursor.prefix:  # the fork step itself, with no change: checked like the prefix, then live
            cursor.live_calls += 1
            return None
        return self._served(n)

    def _check_tools(self, n: int, request: LLMRequest) -> _Call:
        call = self._leg.calls[n]
        which = _tool_field(call.tools, [t.name for t in request.tools])
        if which is not None:
            self._refuse(ForkMismatchError(f"model call {n + 1} offers other tools than the recording's", field=which))
        return call

    def _refuse(self, refusal: ForkMismatchError) -> NoReturn:
        """Raise ``refusal``, kept on the cursor too (a composition may wrap what a member raises)."""
        self._cursor.refusal = self._cursor.refusal or refusal
        raise refusal

    def _check(self, n: int, request: LLMRequest) -> None:
        """Refuse the request of model call ``n`` unless it is the recorded one (its receipt's digest)."""
        call = self._check_tools(n, request)
        if request.model != call.model:
            self._refuse(
                ForkMismatchError(f"model call {n + 1} asks another model than the recording's", field="model")
            )
        same = (
            self.digests(request) == call.request_digest
            if call.request_digest is not None
            else (len(request.messages), request.seed, request.system_prompt)
            == (call.message_count, call.seed, call.system_prompt())
        )
        if not same:
            self._refuse(
                ForkMismatchError(f"model call {n + 1} builds another request than the recording's", field="request")
            )

    def _served(self, n: int) -> LLMResponse:
        """The recorded reply of model call ``n``."""
        return _served_reply(self._leg, n)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        served = self._replayed(request)
        if served is not None:
            return served
        response: LLMResponse = await self._inner.complete(request)
        return response

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        served = self._replayed(request)
        if served is not None:
            for chunk in chunks_from_response(served):
                yield chunk
            return
        async for chunk in self._inner.stream(request):
            yield chunk


class _ProbeProvider(_ForkProvider):
    """Checks the request the unchanged agent rebuilds at the fork step, then answers it from the recording."""

    def _replayed(self, request: LLMRequest) -> LLMResponse | None:
        n = self._cursor.calls
        self._cursor.calls += 1
        self._check(n, request)
        return self._served(n)


class _SharedReceipts(Receipts):
    """The agent's receipts, their message chain the fork provider's: a request it checked is not digested again."""

    name = "receipts"

    def __init__(self, digests: _RequestDigest) -> None:
        self._digests = digests

    def _messages_digest(self, ctx: RunContext, request: LLMRequest) -> str:
        return self._digests.messages(request.messages)


class ForkReplay(Extension):
    """Serves the recorded result of every tool call before the fork step and substitutes replaced tool results."""

    name = "fork_replay"

    def __init__(self, leg: _Leg, cursor: _Cursor, dropped: frozenset[str], results: Mapping[str, str]) -> None:
        self._leg = leg
        self._cursor = cursor
        self._dropped = dropped
        self._results = dict(results)

    async def wrap_tool_call(self, ctx: RunContext, call: ToolCallRequest, call_next: CallTool) -> ToolOutcome:
        cursor = self._cursor
        if cursor.finished:
            return await call_next(call)
        counts = cursor.tool_counts
        counts[call.name] = counts.get(call.name, 0) + 1
        ref = f"{call.name}#{counts[call.name]}"
        if cursor.calls > cursor.prefix:  # after the fork step: live, with a replaced result substituted
            if ref in self._results:
                return ToolOutcome(content=self._results[ref])
            return await call_next(call)
        records = self._leg.tool_records
        n = cursor.tools_served
        cursor.tools_served += 1
        record = records[n] if n < len(records) else None
        if record is None or (record.get("call_id"), record.get("name")) != (call.tool_call_id, call.name):
            cursor.refusal = cursor.refusal or ForkMismatchError(
                "a replayed tool call is not the recording's call at that position", field="tool_call"
            )
            return ToolOutcome(content="", is_error=True, error_code="ERR_FORK_MISMATCH")
        if call.name == READ_SKILL and record.get("content") and not record.get("is_error"):
            return await call_next(call)  # activating a skill is the loop's own step, not a tool call: it runs
        if call.tool is not None and call.tool.pauses and record.get("answered_by") == "human":
            return await call_next(call)  # the pause is asked again, and answered from the recording on resume
        return ToolOutcome(
            content=before_nudge(call.name, str(record.get("content", ""))),
            is_error=bool(record.get("is_error")),
            error_code=record.get("error_code"),
            truncated=bool(record.get("truncated")),
            elapsed_ms=float(record.get("elapsed_ms") or 0.0),
        )


class ForkReplayDropping(ForkReplay):
    """``ForkReplay`` that also stops offering the removed tools from the fork step on."""

    name = "fork_replay"

    async def filter_tools(self, ctx: RunContext, tools: Sequence[Tool]) -> Sequence[Tool]:
        if self._cursor.calls < self._cursor.prefix:  # counted here: reading the iteration would be a recorded read
            return tools
        return [t for t in tools if t.name not in self._dropped]


# -- the change --------------------------------------------------------------------------------------------------
def _landed_before(leg: _Leg, source_id: str, at_idx: int) -> bool:
    """Whether ``source_id`` (an injection, chunk or memory entry) landed in the state before the fork step."""
    for c in leg.snap.commit_log[:at_idx]:
        for w in c.writes if c.namespace in leg.namespaces and c.applied else ():
            items = w.value if isinstance(w.value, list | tuple) else ()
            if w.path in _INJECTION_KEYS and any(_carries(r, source_id) for r in items):
                return True
    return False


def _result_before(leg: _Leg, ref: str, at_idx: int) -> bool:
    """Whether tool result ``name#n`` came back before the fork step."""
    name, _, n = ref.rpartition("#")
    before = [r for r in leg.tool_records if r.get("name") == name and r["_idx"] < at_idx]
    return len(before) >= int(n)


def _unsupported(what: str) -> WhatIfError:
    return WhatIfError(
        f"{what} already reached the run before the fork step, and this change cannot be limited to the steps "
        "from the fork on; fork at an earlier step",
        code="ERR_FORK_CHANGE_BEFORE_STEP",
    )


@dataclass(frozen=True, slots=True)
class _LandsUntil(Injection):
    """An injection that lands as it always did before the fork step and not from it on (its records before the
    step are the recorded ones: same trigger, same text)."""

    cursor: Any = None

    def render_record(self, ctx: InjectionContext) -> tuple[str, dict[str, Any]] | None:
        if self.cursor.forked():
            return None
        return Injection.render_record(self, ctx)


def _lands_until(inj: Injection, cursor: _Cursor) -> Injection:
    return _LandsUntil(**{f.name: getattr(inj, f.name) for f in fields(Injection)}, cursor=cursor)


def _gated_trigger(inj: Any, cursor: _Cursor) -> Any:
    """A retrieval or memory injection active only before the fork step (its trigger reads as a rule from then)."""
    original = inj.trigger
    if original.kind == "always":
        return Trigger(kind="rule", predicate=lambda ctx: not cursor.forked(), label=original.label)
    predicate = original.predicate
    return replace(original, predicate=lambda ctx: not cursor.forked() and bool(predicate(ctx)))


def _gated_content(inj: Any, value: str, cursor: _Cursor) -> Any:
    def content(ctx: Any) -> str:
        return value if cursor.forked() else inj.render(ctx)

    return replace(inj, content=content, template=False)


@dataclass(frozen=True)
class _Change:
    """What one agent of the fork changes: sources removed and values given from its fork step on."""

    without: Sequence[str] = ()
    swaps: Mapping[str, Any] = field(default_factory=dict)


def _fork_agent(agent: Any, leg: _Leg, cursor: _Cursor, at_idx: int, change: _Change) -> Any:
    """The agent that runs the fork: the change gated to the fork step on, the recorded prefix served."""
    from agentfootprint.agent import Agent
    from agentfootprint.agent.record import landed_parts_of

    config = agent.config
    without, swaps = change.without, change.swaps
    if without or swaps:  # unknown ids: UnknownSourceError, by code
        agent.refuse_unknown((*without, *swaps), landed_parts_of(leg.snap.state))
    kinds = config.source_ids()
    removed: set[str] = set()
    dropped_tools: set[str] = set()
    gated: dict[str, Any] = {}
    for sid in without:
        kind = kinds.get(sid)
        if kind == "tool":
            dropped_tools.add(sid)
        elif config.is_tool_result(sid) or kind is None:
            if _result_before(leg, sid, at_idx) if config.is_tool_result(sid) else _landed_before(leg, sid, at_idx):
                raise _unsupported("a removed result or retrieved part")
            removed.add(sid)
        else:
            inj = next(i for i in config.injections if i.id == sid)
            if not _landed_before(leg, sid, at_idx):
                removed.add(sid)
            elif type(inj) is Injection:
                gated[sid] = _lands_until(inj, cursor)
            elif inj.trigger.kind in ("always", "rule"):
                gated[sid] = replace(inj, trigger=_gated_trigger(inj, cursor))
            else:
                raise _unsupported("a removed retrieval or memory source triggered by a tool or the model")
    results: dict[str, str] = {}
    for sid, value in swaps.items():
        if not isinstance(value, str):
            raise WhatIfError("a replaced source's value must be a string", code="ERR_FORK_REPLACE_VALUE")
        if config.is_tool_result(sid):
            if _result_before(leg, sid, at_idx):
                raise _unsupported("a replaced tool result")
            results[sid] = value
            continue
        inj = next((i for i in config.injections if i.id == sid), None)
        if inj is None:
            raise WhatIfError(
                "replace takes an injected source (fact, steering, instruction, skill) or a tool result (tool#n)",
                code="ERR_FORK_REPLACE_UNSUPPORTED",
            )
        gated[sid] = _gated_content(gated.get(sid, inj), value, cursor)
    base = config.without(removed) if removed else config
    injections = tuple(gated.get(i.id, i) for i in base.injections)
    ext = (ForkReplayDropping if dropped_tools else ForkReplay)(leg, cursor, frozenset(dropped_tools), results)
    provider = _ForkProvider(config.provider, leg, cursor)
    extensions = tuple(_SharedReceipts(provider.digests) if type(e) is Receipts else e for e in base.extensions)
    forked = replace(base, injections=injections, provider=provider, extensions=(*extensions, ext))
    return Agent(forked)


def _check_changes(without: Sequence[str], replace: Mapping[str, Any] | None) -> dict[str, Any]:
    if isinstance(without, str) or not all(isinstance(s, str) for s in without):
        raise WhatIfError("without must be a list of source ids", code="ERR_WHATIF_SOURCE_ID")
    return dict(replace or {})


def _run_kwargs(run_input: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded run's caller, seed and session, as a rerun's keyword arguments."""
    kwargs: dict[str, Any] = {"identity": run_input.get("identity"), "seed": run_input.get("seed")}
    if run_input.get("session_id"):
        kwargs["session_id"] = run_input["session_id"]
    return kwargs


_FOLDABLE = frozenset(
    {
        "agentfootprint.honesty.extension.Honesty",
        "agentfootprint.extensions.tool_sessions.ToolSessions",
        "agentfootprint.extensions.receipts.Receipts",
        "agentfootprint.extensions.integrity.Integrity",
    }
)
"""Extensions whose per-run scratch is a cache or per-leg accounting: a run restarted at the fork step loses
nothing they need (any other extension could keep what the prefix built, so its fork re-executes the prefix)."""


def _fast_start(leg: _Leg, agent: Any, ordinal: int, at_idx: int) -> int | None:
    """The commit a fork restarts the live run at (the first stage of the fork step's iteration), or None when
    the prefix must be re-executed: a pause chain, a redacted record, an extension outside ``_FOLDABLE``, a
    classic ReAct agent or a configured run (composed once per turn: the step's iteration would not rebuild it),
    or a turn whose message an input hook rewrote."""
    snap = leg.snap
    if not ordinal or leg.answers or snap.redacted or snap.resumed_from is not None:
        return None
    config = agent.config
    if config.react_mode == "classic" or config.run_config is not None:  # composed once per turn: re-executed
        return None
    seed = snap.commit_log[0] if snap.commit_log else None
    if seed is None or seed.stage_id != "seed" or _written(seed, "user_message") != leg.run_input.get("message"):
        return None  # the recorded turn rewrote its message on the way in: only a re-executed seed shows the agent's
    if not config.redaction.empty or any(
        f"{type(e).__module__}.{type(e).__qualname__}" not in _FOLDABLE for e in config.extensions
    ):
        return None
    log = snap.commit_log
    return next((i for i in range(at_idx - 1, 0, -1) if log[i].stage_id == "injection-engine"), None)


_SEQUENCES = (list, tuple)


def _served_fold(reply: Any, commit: Commit) -> bool:
    """Whether a tool-calls commit's history entries are the recorded reply it read and the tool results it
    recorded (what re-executing it from the served records would append)."""
    entries: list[Any] = []
    results: list[Any] = []
    for w in commit.writes:
        if w.verb != "append" or (w.path != "history" and w.path != "tool_results"):
            continue
        items = entries if w.path == "history" else results
        if isinstance(w.value, _SEQUENCES):
            items.extend(w.value)
        else:
            items.append(w.value)
    if not _is_map(reply) or not all(map(_is_map, results)):
        return False
    said: Any = None
    told: list[tuple[Any, Any]] = []
    for e in entries:  # one assistant entry (the reply) and the tool results' entries
        if not _is_map(e):
            return False
        role = e.get("role")
        if role == "assistant":
            if said is not None:
                return False
            said = e
        elif role == "tool":
            told.append((e.get("tool_call_id"), e.get("content")))
    if said is None:
        return False
    calls = [(c.get("id"), c.get("name")) for c in reply.get("tool_calls") or ()]
    return (
        said.get("content") == reply.get("content")
        and said.get("tool_calls") == reply.get("tool_calls")
        and (said.get("reasoning") or None) == (reply.get("reasoning") or None)
        and told == [(r.get("call_id"), r.get("content")) for r in results]
        and all((r.get("call_id"), r.get("name")) in calls for r in results)
    )


def _check_served(leg: _Leg, at_idx: int) -> None:
    """Refuse a record whose replies or tool results before the fork step are not what its state was folded from
    (a restored fork reads the state; the records are what a re-executed prefix would have served)."""
    for fold in leg.folds:
        if fold.pos >= at_idx:
            return
        if not _served_fold(fold.reply, fold.commit):
            if 0 <= fold.n < len(leg.calls):
                _served_reply(leg, fold.n)  # an unreadable reply is refused as a re-executed prefix would refuse it
            raise ForkMismatchError(
                "a recorded reply or tool result before the fork step is not what the run went on from",
                field="request",
            )


def _same_commits(recorded: Sequence[Commit], live: Sequence[Commit]) -> None:
    """Refuse unless the fork step's iteration, run live over the restored state, made the recorded commits: the
    agent rebuilt them as it did, from a state its own commits wrote (a tampered commit shows here)."""
    if len(live) < len(recorded) or any(
        (a.runtime_stage_id, dict(a.reads), [(w.path, w.verb, w.value) for w in a.writes])
        != (b.runtime_stage_id, dict(b.reads), [(w.path, w.verb, w.value) for w in b.writes])
        for a, b in zip(recorded, live, strict=False)
    ):
        raise ForkMismatchError("the fork step's iteration does not rebuild the recorded one", field="request")


async def _probe(leg: _Leg, agent: Any, ordinal: int, point: Restart, kwargs: Mapping[str, Any], at_idx: int) -> None:
    """Run the unchanged agent's loop stages from the fork step's iteration over the restored state through the
    step's model call: the request must be the recorded one and every commit before it the recorded commit."""
    from agentfootprint.agent import Agent

    cursor = _Cursor(prefix=ordinal, calls=ordinal, check_at=True)
    config = agent.config
    probe = Agent(replace(config, provider=_ProbeProvider(config.provider, leg, cursor)))
    try:
        live = await probe_iteration(
            probe, point, seed=kwargs.get("seed"), identity=kwargs.get("identity"), session_id=kwargs.get("session_id")
        )
    except Exception:
        if cursor.refusal is not None:
            raise cursor.refusal from None
        raise
    if cursor.calls != ordinal + 1:
        raise ForkMismatchError("the restored run made no model call at the fork step", field="request")
    _same_commits(leg.snap.commit_log[len(point.log) : at_idx], live)


async def fork(
    run: Any, agent: Any, *, at: str, without: Sequence[str] = (), replace: Mapping[str, Any] | None = None
) -> Any:
    """Rerun ``run`` on ``agent`` (or the composition that made it) from model call ``at`` with one change: every
    step before it is served from the recording (requests checked), ``without`` drops sources and ``replace``
    gives one a new value from ``at`` on."""
    from agentfootprint.agent import Agent, RunResult
    from agentfootprint.agent._fork_seam import MemberRunner

    swaps = _check_changes(without, replace)
    if isinstance(agent, MemberRunner) and not isinstance(agent, Agent):
        from agentfootprint.explain._fork_members import fork_members

        return await fork_members(run, agent, at=at, without=list(without), swaps=swaps)
    if not isinstance(agent, Agent):
        raise WhatIfError(
            "fork reruns an Agent or a composition: pass the runner that made the run", code="ERR_FORK_NOT_AN_AGENT"
        )
    leg = _leg_of(run)
    ordinal = _check_fit(leg, agent, at)
    at_idx = leg.calls[ordinal].commit.idx
    change = _Change(list(without), swaps)
    run_input = leg.run_input
    kwargs = _run_kwargs(run_input)
    if run_input.get("history"):
        kwargs["continue_from"] = {"run_id": "fork", "history": run_input["history"]}
    clock = _recorded_clock(leg.snap) if agent.config.time_enabled else None
    if clock is not None:  # the turn's clock as recorded, so the replayed requests tell the same time
        kwargs["time"] = clock
    start = _fast_start(leg, agent, ordinal, at_idx)
    # The run restarts at the first stage of the step's iteration (the agent rebuilds the step's context itself).
    # No change, or tool results only (each after the step): the step's request is checked as it is rebuilt, and
    # the iteration's commits before it against the recorded ones once the fork returns. Any other change applies
    # from the iteration on: a probe of the unchanged agent checks both first.
    results_only = all(agent.config.is_tool_result(s) for s in (*without, *swaps))
    points = restarts(agent, leg.snap, [start]) if start is not None else None
    if points is not None:
        _check_served(leg, at_idx)
        if not results_only:
            await _probe(leg, agent, ordinal, points[0], kwargs, at_idx)
    cursor = _Cursor(prefix=ordinal, check_at=results_only)
    forked = _fork_agent(agent, leg, cursor, at_idx, change)
    if points is not None:  # the prefix is restored from the recording, not re-executed
        before = [r for r in leg.tool_records if r["_idx"] < at_idx]
        cursor.calls, cursor.tools_served = ordinal, len(before)
        for r in before:
            cursor.tool_counts[str(r.get("name"))] = cursor.tool_counts.get(str(r.get("name")), 0) + 1
        forked = restart_agent(forked, points[0])
    result: RunResult = await forked.run(run_input["message"], **kwargs)
    while result.paused and cursor.calls <= cursor.prefix:
        pending = result.recorded().pending or {}
        call_id = str(pending.get("tool_call_id"))
        if call_id not in leg.answers:
            raise ForkMismatchError("the replayed run paused where the recorded chain did not resume", field="leg")
        result = await forked.resume(result.checkpoint or {}, leg.answers[call_id])
    cursor.finished = True
    if cursor.refusal is not None:
        raise cursor.refusal
    if points is not None and results_only:
        snap = result.recorded().snapshot
        _same_commits(leg.snap.commit_log[start:at_idx], snap.commit_log[start:at_idx] if snap is not None else [])
    return result


def fork_sync(run: Any, agent: Any, **kwargs: Any) -> Any:
    """Blocking twin of :func:`fork`."""
    return run_sync(fork(run, agent, **kwargs), "await fork(...)")
