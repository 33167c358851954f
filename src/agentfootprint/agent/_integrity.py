"""Structural checks on checkpoints handed back to an agent: bounded size, and every part consistent with the
others. They catch a corrupted or naively edited checkpoint before any model call or tool runs, naming the field
and never quoting a value. They prove nothing about origin; only a seal (``checkpoint_key``) does that."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentfootprint.agent.consent import consent_request_id
from agentfootprint.agent.models import AgentPauseCheckpoint
from agentfootprint.agent.turn import ModelReply, RunInfo, ToolResultRecord, ToolReturn, UsageTotal
from agentfootprint.errors import validation_field
from agentfootprint.flow import FlowChart, FlowCheckpoint, InvalidCheckpointError
from agentfootprint.identity import coerce_identity
from agentfootprint.providers import Message
from agentfootprint.tools import Tool

MAX_CHECKPOINT_CHARS = 64 * 1024 * 1024
"""A checkpoint's JSON text may be at most this long (64 MiB)."""
MAX_HISTORY = 100_000
"""A conversation may hold at most this many messages."""
MAX_COMMITS = 200_000
MAX_DEPTH = 200
PAUSE_KINDS = ("ask_human", "check_in")
_PAUSE_KEYS = frozenset(
    {"kind", "question", "tool_call_id", "tool_name", "request_id", "completed", "evidence", "answer_schema", "repeat"}
)
_RECORD_KEYS = frozenset(ToolResultRecord.__annotations__)
_RETURN_KEYS = frozenset(ToolReturn.__annotations__)
_PAUSED_STAGE = "tool-calls"


def refuse(error: type[InvalidCheckpointError], message: str, field: str) -> InvalidCheckpointError:
    return error(message, field=field)


def check_bounds(value: Any, error: type[InvalidCheckpointError]) -> None:
    """Plain JSON of bounded size and depth, checked before anything reads it."""
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH + 1):  # breadth first, one level at a time: JSON containers only
        below: list[Any] = []
        for item in level:
            kind = type(item)
            if kind is dict or (kind is not list and isinstance(item, Mapping)):
                below.extend(v for v in item.values() if type(v) in (dict, list) or isinstance(v, Mapping | tuple))
            elif kind is list or kind is tuple:
                below.extend(v for v in item if type(v) in (dict, list) or isinstance(v, Mapping | tuple))
        if not below:
            break
        level = below
    else:
        raise refuse(error, f"the checkpoint is nested more than {MAX_DEPTH} levels deep", "checkpoint")
    try:
        size = len(json.dumps(value))
    except (TypeError, ValueError, RecursionError):
        raise refuse(error, "the checkpoint is not plain JSON", "checkpoint") from None
    if size > MAX_CHECKPOINT_CHARS:
        raise refuse(error, f"the checkpoint is larger than {MAX_CHECKPOINT_CHARS} characters of JSON", "checkpoint")


def check_history(history: Sequence[Any], where: str, error: type[InvalidCheckpointError]) -> None:
    """Each entry is a message; a tool message answers a call the assistant turn before it made (once), and every
    call is answered before the conversation moves on."""
    if len(history) > MAX_HISTORY:
        raise refuse(error, f"the conversation holds more than {MAX_HISTORY} messages", where)
    open_calls: dict[str, str] = {}
    for i, entry in enumerate(history):
        try:
            message = Message.model_validate(entry, strict=True)
        except ValidationError as err:
            field = f"{where}.{i}.{validation_field(err, '')}".rstrip(".")
            raise refuse(error, "a conversation message is invalid", field) from None
        if message.role != "tool" and open_calls:
            raise refuse(error, "a tool call was never answered", f"{where}.{i}")
        if message.role == "assistant":
            for call in message.tool_calls:
                if call.id in open_calls:
                    raise refuse(error, "an assistant turn repeats a tool call id", f"{where}.{i}.tool_calls")
                open_calls[call.id] = call.name
        elif message.role == "tool":
            asked = open_calls.pop(message.tool_call_id or "", None)
            if asked is None:
                raise refuse(error, "a tool message answers a call that was never made", f"{where}.{i}.tool_call_id")
            if message.tool_name != asked:
                raise refuse(error, "a tool message names another tool than the call", f"{where}.{i}.tool_name")
    if open_calls:
        raise refuse(error, "a tool call was never answered", where)


_SHAPES: dict[str, TypeAdapter[Any]] = {}


def _shape(key: str) -> TypeAdapter[Any] | None:
    if not _SHAPES:
        for name, kind in {
            "run": RunInfo,
            "user_message": str,
            "iteration": int,
            "activated_skills": list[str],
            "last_tool_results": list[ToolReturn],
            "usage_total": UsageTotal,
            "tool_specs": list[dict[str, Any]],
            "last_response": ModelReply,
            "pending_tool_calls": int,
            "cost_total": float,
            "budget_exceeded": bool,
            "tool_results": list[ToolResultRecord],
            "system_prompt": str,
        }.items():
            _SHAPES[name] = TypeAdapter(kind)
    return _SHAPES.get(key)


@dataclass(frozen=True, slots=True)
class PauseFacts:
    """What a checked pause checkpoint says: the turn it belongs to, what it asks, and for whom."""

    turn_id: str
    kind: str
    request_id: str
    identity: dict[str, Any] | None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def check_loop(chart: FlowChart, flow: FlowCheckpoint) -> int:
    """The commit log walks the agent's loop exactly as a run does: one commit per stage, in the chart's order (a
    decider's commit chooses the next), runtime ids issued in sequence, visits counted; returns the iterations."""
    bad = InvalidCheckpointError
    log = flow.commit_log
    if flow.counter != len(log):
        raise refuse(bad, "the runtime-id counter is not the commit log's length", "flow.counter")
    if flow.chart_id != chart.id or flow.initial_state:
        raise refuse(bad, "the flow is not this agent's loop", "flow.chart_id" if flow.chart_id != chart.id else "flow")
    visits: dict[str, int] = {}
    allowed = {chart.root}
    iterations = 0
    last_writer: dict[str, int] = {}
    for i, c in enumerate(log):
        where = f"flow.commit_log.{i}"
        for key, j in c.reads.items():
            if j != last_writer.get(key):
                raise refuse(bad, "a commit reads from a commit that was not the key's writer", f"{where}.reads")
        paths = [w.path for w in c.writes]
        if len(set(paths)) != len(paths):
            raise refuse(bad, "a commit writes one key twice", f"{where}.writes")
        if c.applied:
            for path in paths:
                last_writer[path] = i
        node = chart.nodes.get(c.stage_id)
        if node is None or c.stage_id not in allowed or c.namespace:
            raise refuse(bad, "the commit log leaves the agent's loop", f"{where}.stage_id")
        expected_kind = "decider" if node.kind == "decider" else "stage"
        if c.kind != expected_kind or c.failed or c.stage_name != node.name or c.description != node.description:
            raise refuse(bad, "a commit is not what its stage records", where)
        if c.runtime_stage_id != f"{c.stage_id}#{i}" or c.visit != visits.get(c.stage_id, 0) + 1:
            raise refuse(bad, "a commit's runtime id or visit is not the loop's", f"{where}.runtime_stage_id")
        if c.paused:
            allowed = {c.stage_id}  # a paused stage re-runs first on resume
            continue
        visits[c.stage_id] = visits.get(c.stage_id, 0) + 1
        iterations += c.stage_id == "injection-engine"
        if node.kind == "decider":
            chosen = (c.decision or {}).get("chosen")
            if not isinstance(chosen, list) or len(chosen) != 1 or not isinstance(chosen[0], str):
                raise refuse(bad, "a decision names no branch of its decider", f"{where}.decision")
            if chosen[0] not in node.branches:
                raise refuse(bad, "a decision names no branch of its decider", f"{where}.decision")
            allowed = {node.branches[chosen[0]]}
        else:
            after = node.loop_to or node.next
            allowed = {after} if after is not None else set()
    if visits != {k: v for k, v in flow.visits.items() if v != 0} or any(k not in chart.nodes for k in flow.visits):
        raise refuse(bad, "the visit counts are not the commit log's", "flow.visits")
    return iterations


def check_pause(
    cp: AgentPauseCheckpoint,
    flow: FlowCheckpoint,
    chart: FlowChart,
    tools: Mapping[str, Tool],
    max_iterations: int,
    *,
    extension_gates: bool = False,
) -> PauseFacts:
    """The agent's paused turn, checked part against part (the engine already checked state against its log).

    ``extension_gates``: an extension wraps tool calls, so a consent pause may come from it (e.g. credentials) for
    a tool that declares none itself."""
    bad = InvalidCheckpointError
    if cp.run_id != flow.run_id:
        raise refuse(bad, "run_id is not the paused flow's run id", "run_id")
    if len(flow.commit_log) > MAX_COMMITS:
        raise refuse(bad, f"the commit log holds more than {MAX_COMMITS} commits", "flow.commit_log")
    iterations = check_loop(chart, flow)
    frame = flow.frames[0]
    if len(flow.frames) != 1 or frame.node_id != _PAUSED_STAGE or frame.pending or frame.namespace:
        raise refuse(bad, "the run is not paused where an agent pauses (its tool calls)", "flow.frames")
    if frame.mount_runtime_stage_id is not None or frame.done_branches is not None:
        raise refuse(bad, "the run is not paused where an agent pauses (its tool calls)", "flow.frames")
    last = flow.commit_log[-1] if flow.commit_log else None
    if last is None or not last.paused or last.runtime_stage_id != flow.paused_runtime_stage_id:
        raise refuse(bad, "the paused stage is not the last commit of the log", "flow.paused_runtime_stage_id")
    data = flow.pause_data
    if not isinstance(data, Mapping) or data.get("kind") not in PAUSE_KINDS:
        raise refuse(bad, "the pause kind is not one an agent makes", "flow.pause_data.kind")
    if not _PAUSE_KEYS.issuperset(data):
        raise refuse(bad, "the pause data holds a field an agent's pause does not have", "flow.pause_data")
    kind = str(data["kind"])
    for name in ("question", "tool_call_id", "tool_name"):
        if data.get(name) != getattr(cp, name):
            raise refuse(bad, f"{name} is not the paused flow's", name)
    args = flow.args
    turn_id = args.get("run_id")
    if not isinstance(turn_id, str) or not turn_id or len(turn_id) > 200:
        raise refuse(bad, "the flow's run input has no run id", "flow.args.run_id")
    if not isinstance(args.get("message"), str) or not isinstance(args.get("history"), list):
        raise refuse(bad, "the flow's run input is not an agent's", "flow.args")
    state = flow.namespaces[""].state
    for key, value in state.items():
        shape = _shape(key)
        if shape is None:
            continue
        try:
            shape.validate_python(value, strict=True)
        except ValidationError as err:
            field = f"flow.namespaces..state.{key}.{validation_field(err, '')}".rstrip(".")
            raise refuse(bad, "the paused state holds a value an agent never writes", field) from None
    for key in ("run", "history", "iteration", "last_response", "pending_tool_calls", "tool_specs"):
        if key not in state:
            raise refuse(bad, "the paused state is missing part of the turn", f"flow.namespaces..state.{key}")
    check_history(state["history"], "flow.namespaces..state.history", bad)
    check_history(args["history"], "flow.args.history", bad)
    run_info = state["run"]
    if run_info.get("run_id") != turn_id:
        raise refuse(bad, "the turn's run id is not the flow's run input", "flow.namespaces..state.run.run_id")
    identity = _identity(cp.identity, "identity")
    if identity != _identity(args.get("identity"), "flow.args.identity") or identity != _identity(
        run_info.get("identity"), "flow.namespaces..state.run.identity"
    ):
        raise refuse(bad, "identity is not the caller the paused run was for", "identity")
    iteration = state["iteration"]
    if not 1 <= iteration <= max_iterations or iteration != iterations:
        raise refuse(bad, "the iteration is not the loop's", "flow.namespaces..state.iteration")
    calls = state["last_response"]["tool_calls"]
    if state["pending_tool_calls"] != len(calls):
        raise refuse(
            bad, "pending_tool_calls is not the model's call count", "flow.namespaces..state.pending_tool_calls"
        )
    completed = data.get("completed")
    if not isinstance(completed, list) or len(completed) >= len(calls):
        raise refuse(bad, "the calls done before the pause are not the model's calls", "flow.pause_data.completed")
    for i, done in enumerate(completed):
        _check_done(done, calls[i], f"flow.pause_data.completed.{i}", state["iteration"])
    call = calls[len(completed)]
    if call.get("id") != cp.tool_call_id or call.get("name") != cp.tool_name:
        raise refuse(bad, "the paused call is not the model's next call", "tool_call_id")
    offered = {spec.get("name") for spec in state["tool_specs"]}
    tool = tools.get(cp.tool_name)
    if cp.tool_name not in offered and tool is None:
        raise refuse(bad, "the paused tool was never offered", "tool_name")
    if tool is not None:  # a question comes from a pausing tool; a consent from the tool, or an extension's gate
        fits = tool.pauses if kind == "ask_human" else not tool.pauses and (bool(tool.check_in) or extension_gates)
        if not fits:
            raise refuse(bad, "the pause kind is not the paused tool's", "flow.pause_data.kind")
    typed = tool.answer_schema if tool is not None and kind == "ask_human" else None
    if data.get("answer_schema") != typed:
        raise refuse(bad, "the answer type is not the paused tool's", "flow.pause_data.answer_schema")
    if typed is None and "repeat" in data:
        raise refuse(bad, "only a typed ask counts its asks", "flow.pause_data.repeat")
    if typed is not None and tool is not None:
        count = (data.get("repeat") or {}).get("count") if isinstance(data.get("repeat"), Mapping) else None
        if set(data.get("repeat") or {}) != {"count"} or not isinstance(count, int) or isinstance(count, bool):
            raise refuse(bad, "the ask count is not a count", "flow.pause_data.repeat")
        if not 0 <= count <= tool.max_reasks:
            raise refuse(bad, "the ask count is beyond the tool's re-asks", "flow.pause_data.repeat.count")
    expected = consent_request_id(turn_id, iteration, cp.tool_call_id, cp.tool_name, call.get("args", {}))
    if data.get("request_id") != expected or cp.request_id != expected:
        raise refuse(bad, "request_id is not the paused call's", "request_id")
    return PauseFacts(turn_id=turn_id, kind=kind, request_id=expected, identity=identity)


def _identity(value: Any, field: str) -> dict[str, Any] | None:
    try:
        ident = coerce_identity(value)
    except Exception:
        raise refuse(InvalidCheckpointError, "identity is not an identity", field) from None
    dumped = ident.model_dump(exclude_none=True) if ident is not None else None
    return dumped or None


def _check_done(done: Any, call: Mapping[str, Any], where: str, iteration: int) -> None:
    """A call done before the pause: its message, record and return all answer that call, and agree."""
    bad = InvalidCheckpointError
    if not isinstance(done, Mapping) or set(done) != {"message", "record", "return"}:
        raise refuse(bad, "a call done before the pause is malformed", where)
    message, record, returned = done["message"], done["record"], done["return"]
    if not isinstance(record, Mapping) or not _RECORD_KEYS.issuperset(record) or record.get("iteration") != iteration:
        raise refuse(bad, "a call done before the pause is malformed", f"{where}.record")
    if not isinstance(returned, Mapping) or set(returned) != _RETURN_KEYS:
        raise refuse(bad, "a call done before the pause is malformed", f"{where}.return")
    try:
        msg = Message.model_validate(message, strict=True)
        TypeAdapter(ToolResultRecord).validate_python(record, strict=True)
        TypeAdapter(ToolReturn).validate_python(returned, strict=True)
    except ValidationError:
        raise refuse(bad, "a call done before the pause is malformed", where) from None
    call_id, name = call.get("id"), call.get("name")
    if msg.role != "tool" or msg.tool_call_id != call_id or msg.tool_name != name:
        raise refuse(bad, "a tool answer answers a call that was never made", f"{where}.message")
    if (
        record.get("call_id") != call_id
        or record.get("name") != name
        or not _same(record.get("args"), call.get("args", {}))
    ):
        raise refuse(bad, "a tool answer answers a call that was never made", f"{where}.record")
    if record.get("content") != msg.content or returned.get("content") != msg.content:
        raise refuse(bad, "a tool answer disagrees with its own record", f"{where}.return")
    if (
        returned.get("call_id") != call_id
        or returned.get("name") != name
        or returned.get("is_error") != record.get("is_error")
    ):
        raise refuse(bad, "a tool answer disagrees with its own record", f"{where}.return")


__all__ = [
    "MAX_CHECKPOINT_CHARS",
    "MAX_COMMITS",
    "MAX_DEPTH",
    "MAX_HISTORY",
    "PAUSE_KINDS",
    "PauseFacts",
    "check_bounds",
    "check_history",
    "check_loop",
    "check_pause",
]
