"""Self-explain: bounded trace tools that let the model read its previous run's served record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentfootprint._text import ellipsize, summarize_value
from agentfootprint.explain.backtrack import BacktrackError, backtrack
from agentfootprint.flow import FlowSnapshot
from agentfootprint.honesty.chat import explain_answer
from agentfootprint.tools import Tool, define_tool

NO_RUN = "No completed run is available yet, so there is nothing recorded to explain."
_MAX_TOOL_OUTPUT = 4000
SnapshotSource = Callable[[], FlowSnapshot | None]
"""Where the tools read the record from: the previous completed run, never the one in flight."""


def _bounded(text: str) -> str:
    return ellipsize(text, _MAX_TOOL_OUTPUT)


def _trace_tool(
    read: SnapshotSource,
    name: str,
    description: str,
    props: dict[str, Any],
    answer: Callable[[FlowSnapshot, dict[str, Any]], str],
) -> Tool:
    def run(args: dict[str, Any]) -> str:
        snap = read()
        if snap is None:
            return NO_RUN
        try:
            return _bounded(answer(snap, args))
        except BacktrackError as exc:
            return f"Nothing to read: {exc}"

    return define_tool(
        name=name,
        description=description,
        input_schema={
            "type": "object",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        },
        execute=run,
    )


def _list_stages(snap: FlowSnapshot, args: dict[str, Any]) -> str:
    rows = [f"{c.runtime_stage_id} ({c.stage_name or c.stage_id})" for c in snap.commit_log[:200]]
    more = f"\n… {len(snap.commit_log) - 200} more" if len(snap.commit_log) > 200 else ""
    return "\n".join(rows) + more


def _read_commit(snap: FlowSnapshot, args: dict[str, Any]) -> str:
    commit = snap.commit(str(args.get("runtime_stage_id", ""))[:200])
    if commit is None:
        return "No such step in the previous run; list the stages first."
    reads = ", ".join(sorted(commit.reads)[:40]) or "nothing"
    writes = [f"  {w.verb} {w.path} = {summarize_value(w.value, 160)}" for w in commit.writes[:40]]
    return "\n".join([f"{commit.runtime_stage_id} ({commit.stage_name}) read: {reads}", "wrote:", *writes])


def _who_wrote(snap: FlowSnapshot, args: dict[str, Any]) -> str:
    key = str(args.get("key", ""))[:200]
    rows = [
        f"{c.runtime_stage_id}: {w.verb} {summarize_value(w.value, 120)}"
        for c in snap.commit_log
        if c.applied
        for w in c.writes
        if w.path == key
    ]
    return "\n".join(rows[-40:]) if rows else f"No step wrote '{key}' in the previous run."


def _backtrack(snap: FlowSnapshot, args: dict[str, Any]) -> str:
    return str(backtrack(snap))


def _why(snap: FlowSnapshot, args: dict[str, Any]) -> str:
    return explain_answer(snap, str(args.get("question", ""))[:2000] or None).text


def self_explain_tools(read: SnapshotSource) -> list[Tool]:
    """The bounded trace tools: list stages, read a commit, who wrote a key, backtrack, why (previous run only)."""
    string = {"type": "string"}
    return [
        _trace_tool(read, "trace_list_stages", "List the steps of your previous run, in order.", {}, _list_stages),
        _trace_tool(
            read,
            "trace_read_commit",
            "Read what one step of your previous run read and wrote.",
            {"runtime_stage_id": {**string, "description": "A step id from trace_list_stages."}},
            _read_commit,
        ),
        _trace_tool(
            read,
            "trace_who_wrote",
            "Find which steps of your previous run wrote a state key.",
            {"key": {**string, "description": "The state key, e.g. answer or history."}},
            _who_wrote,
        ),
        _trace_tool(
            read,
            "trace_backtrack",
            "Show every piece of context that reached your previous answer, and how it got there.",
            {},
            _backtrack,
        ),
        _trace_tool(
            read,
            "trace_why",
            "Explain from the recording why your previous answer said something.",
            {"question": {**string, "description": "The why-question, quoting the words asked about."}},
            _why,
        ),
    ]


SELF_EXPLAIN_PROMPT = (
    "When asked why you said something earlier, call trace_why (or the other trace_ tools) and answer from the "
    "recording; if the tools say no completed run is available, say so plainly."
)


__all__ = ["NO_RUN", "SELF_EXPLAIN_PROMPT", "SnapshotSource", "self_explain_tools"]
