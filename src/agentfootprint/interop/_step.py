"""Proof at one step of a foreign run: the LLM span's frozen request re-sent with sources removed, judged by the
same localization (seeds, Fisher test, culprit sets) as a native ``at=``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agentfootprint._sync import run_sync
from agentfootprint.explain import CulpritSet, LocalizationReport, LocalizeError, Recording
from agentfootprint.explain import localize_context_bug as _localize
from agentfootprint.explain._replay import ReplayCache
from agentfootprint.explain.localize import STEP_LOCALIZERS, _default_outcome_changed, render_reply
from agentfootprint.flow import Commit, FlowSnapshot
from agentfootprint.flow.commit import Write
from agentfootprint.interop._build import FOREIGN_CHART, REQUEST_KEY
from agentfootprint.providers import LLMRequest, Message, ToolCall, ToolSpec

EndToEnd = Callable[[frozenset[str], int], "str | Awaitable[str]"]
"""``agent_factory``: called with the source ids to remove and a seed, reruns the whole agent so and returns its
final answer."""
STEP_NOTE = (
    "Only this step was re-sent (its recorded request, with sources removed): its downstream effect — later tool "
    "calls and model calls — was not re-run."
)
END_TO_END_NOTE = "Each rerun ran the whole agent again (agent_factory) and judged its final answer."
_ROLES = {"user": "user", "assistant": "assistant", "tool": "tool"}


class _Reply:
    """What a step rerun returns: the step's reply, rendered as localization reads replies."""

    def __init__(self, answer: str) -> None:
        self.answer = answer


def _frozen(recording: Any, at: Any) -> tuple[FlowSnapshot, Commit, dict[str, Any]]:
    snap = getattr(recording, "snapshot", None)
    if not isinstance(recording, Recording) or not isinstance(snap, FlowSnapshot):
        raise LocalizeError("step proof re-sends a recorded request: pass a recording from import_trace()")
    if not isinstance(at, str) or not at:
        raise LocalizeError("at must be an LLM span id (hex), as backtrack(recording).trigger shows")
    commit = snap.commit(at.strip().lower())
    frozen = snap.value_at(REQUEST_KEY, commit.idx, commit.namespace) if commit is not None else None
    if commit is None or commit.stage_id != "call-llm" or not isinstance(frozen, dict):
        steps = [c.runtime_stage_id for c in snap.commit_log if c.stage_id == "call-llm"]
        shown = ", ".join(steps[:20]) + (f", and {len(steps) - 20} more" if len(steps) > 20 else "")
        why = "not an imported trace" if snap.chart_id != FOREIGN_CHART else "no LLM span with that id"
        raise LocalizeError(f"{why}; LLM spans you can prove at: {shown or 'none'}")
    return snap, commit, frozen


def _inputs(snap: FlowSnapshot, call: Commit) -> dict[str, Any]:
    """The messages the span sent (the history it read) and each tool result's ``name#n`` id."""
    at = call.reads.get("history")
    messages = list(snap.value_at("history", at, call.namespace, default=[]) or []) if at is not None else []
    counts: dict[str, int] = {}
    result_ids: dict[str, str] = {}
    for r in snap.value_at("tool_results", call.idx, call.namespace, default=[]) or []:
        name = str(r.get("name"))
        counts[name] = counts.get(name, 0) + 1
        result_ids.setdefault(str(r.get("call_id")), f"{name}#{counts[name]}")
    return {"messages": messages, "result_ids": result_ids}


class ForeignStep:
    """One LLM span of an imported run as a rerunnable: ``run`` re-sends its request without the ablated sources
    and answers that step (``replays_one_step``); ``without`` refuses ids the step did not read."""

    replays_one_step = True

    def __init__(
        self,
        recording: Recording,
        at: str,
        provider: Any,
        *,
        model: str | None = None,
        ablated: frozenset[str] = frozenset(),
        cache: ReplayCache | None = None,
        end_to_end: EndToEnd | None = None,
    ) -> None:
        if provider is None or not callable(getattr(provider, "complete", None)):
            raise LocalizeError("provider must be a model provider (it re-sends the step's request)")
        self.recording = recording
        self.at = at
        self.provider = provider
        self.model = model
        self.ablated = ablated
        self.cache = cache or ReplayCache()
        self.end_to_end = end_to_end
        self._snap, self._commit, frozen = _frozen(recording, at)
        self.frozen = {**frozen, **_inputs(self._snap, self._commit)}
        self._last: FlowSnapshot | None = None

    # --- what explain reads -------------------------------------------------------------------------------------

    def last_snapshot(self) -> FlowSnapshot:
        return self._last if self._last is not None else self._snap

    def last_run_input(self) -> dict[str, Any]:
        user = [m for m in self.frozen.get("messages") or [] if m.get("role") == "user"]
        return {"message": str(user[-1].get("content", "")) if user else "", "identity": None}

    def source_ids(self) -> dict[str, str]:
        ids = {str(i): "instruction" for i in self._paragraph_ids()}
        ids.update({str(d["id"]): "rag" for d in self.frozen.get("documents") or []})
        ids.update({str(t["name"]): "tool" for t in self.frozen.get("tools") or []})
        for m in self.frozen.get("messages") or []:
            if m.get("role") == "tool":
                ids.setdefault(str(m.get("tool_name")), "tool")
        return ids

    def _paragraph_ids(self) -> list[str]:
        count = len(self.frozen.get("system") or [])
        return list(self.frozen.get("system_ids") or [f"system-{i + 1}" for i in range(count)])

    def ablatable_ids(self) -> set[str]:
        ids = set(self.source_ids())
        ids.update(str(r) for r in (self.frozen.get("result_ids") or {}).values() if r)
        return ids

    def without(self, *source_ids: str) -> ForeignStep:
        unknown = [s for s in source_ids if s not in self.ablatable_ids()]
        if unknown:
            raise LocalizeError(f"{len(unknown)} source id(s) did not reach this step; see ablatable_ids()")
        clone = ForeignStep(
            self.recording, self.at, self.provider, model=self.model, cache=self.cache, end_to_end=self.end_to_end
        )
        clone.ablated = self.ablated | frozenset(source_ids)
        return clone

    # --- the rerun ----------------------------------------------------------------------------------------------

    def request(self, seed: int | None = None) -> LLMRequest:
        """The span's recorded request without the ablated sources: a removed tool result is sent blank, and a
        removed paragraph or result keeps the retrieved documents inside it (each is a source of its own)."""
        gone = self.ablated
        documents = [(str(d["id"]), str(d.get("text") or "")) for d in self.frozen.get("documents") or []]
        docs = [t for i, t in documents if i in gone and t]
        kept = [t for i, t in documents if i not in gone and t]

        def scrub(text: str) -> str:
            for doc in docs:
                text = text.replace(doc, "")
            return text

        def emptied(text: str) -> str:
            """A removed paragraph or result: only the documents inside it that stay (sources never overlap)."""
            inside = sorted((text.find(t), t) for t in kept if t in text)
            return "\n\n".join(t for _, t in inside)

        result_ids = self.frozen.get("result_ids") or {}
        names = self._paragraph_ids()
        system = [
            emptied(str(p)) if names[i] in gone else scrub(str(p))
            for i, p in enumerate(self.frozen.get("system") or [])
        ]
        system = [p for p in system if p]
        messages = []
        for m in self.frozen.get("messages") or []:
            role = _ROLES.get(str(m.get("role")), "user")
            content = scrub(str(m.get("content") or ""))
            if role == "tool" and (m.get("tool_name") in gone or result_ids.get(m.get("tool_call_id")) in gone):
                content = emptied(str(m.get("content") or ""))
            calls = [
                ToolCall(id=str(c.get("id") or ""), name=str(c.get("name") or ""), args=dict(c.get("args") or {}))
                for c in m.get("tool_calls") or []
                if isinstance(c, dict)
            ]
            messages.append(
                Message(
                    role=role,
                    content=content,
                    tool_calls=calls if role == "assistant" else [],
                    tool_call_id=str(m.get("tool_call_id")) if role == "tool" else None,
                    tool_name=str(m.get("tool_name")) if role == "tool" else None,
                )
            )
        tools = [
            ToolSpec(name=str(t["name"]), description=str(t.get("description") or ""),
                     input_schema=t.get("input_schema") or {"type": "object", "properties": {}})
            for t in self.frozen.get("tools") or []
            if str(t["name"]) not in gone
        ]  # fmt: skip
        model = self.model if self.model is not None else str(self.frozen.get("model") or "")
        return LLMRequest(system_prompt="\n\n".join(system), messages=messages, tools=tools, model=model, seed=seed)

    async def run(self, input: Any = None, *, identity: Any = None, seed: int | None = None, **_: Any) -> _Reply:
        """Re-send the step (or, with ``agent_factory``, rerun the whole agent) without the ablated sources."""
        if self.end_to_end is not None:
            answer = self.end_to_end(self.ablated, seed or 0)
            if inspect.isawaitable(answer):
                answer = await answer
            self._last = FlowSnapshot(
                run_id=f"{self._snap.run_id}/rerun", chart_id=FOREIGN_CHART, chart_name="agent rerun", state={},
                commit_log=[],
            )  # fmt: skip
            return _Reply(str(answer))
        response = await self.cache.complete(self.provider, self.request(seed))
        reply = {"content": response.content, "tool_calls": [c.model_dump() for c in response.tool_calls]}
        self._last = FlowSnapshot(
            run_id=f"{self._snap.run_id}/rerun",
            chart_id=FOREIGN_CHART,
            chart_name="step rerun",
            state={"last_response": reply},
            commit_log=[
                Commit(
                    idx=0,
                    stage_id="call-llm",
                    runtime_stage_id=self._commit.runtime_stage_id,
                    stage_name=self._commit.stage_name,
                    writes=[Write(path="last_response", verb="set", value=reply)],
                )
            ],
        )
        return _Reply(render_reply(reply))


def _final_answer(recording: Recording) -> str:
    snap = recording.snapshot
    return str(snap.state.get("answer") or "")


async def localize_context_bug(
    recording: Recording,
    *,
    at: str,
    provider: Any,
    outcome_changed: Callable[[str, str], bool] | None = None,
    model: str | None = None,
    agent_factory: EndToEnd | None = None,
    **options: Any,
) -> LocalizationReport:
    """Prove which sources changed the reply of LLM span ``at`` by re-sending its recorded request without them on
    ``provider`` (the same rules as ``explain.localize_context_bug(at=...)``). With ``agent_factory`` each rerun runs
    the whole agent without them instead, and the final answer is judged."""
    step = ForeignStep(recording, at, provider, model=model, end_to_end=agent_factory)
    judge = outcome_changed
    final = _final_answer(recording)
    if agent_factory is not None:
        if not callable(agent_factory):
            raise LocalizeError("agent_factory must be a callable (ablated ids, seed) -> final answer")
        given = outcome_changed

        def judge(_step_reply: str, rerun: str) -> bool:  # the final answer, not the step's reply, is the outcome
            return (given or _default_outcome_changed)(final, rerun)

    report = await _localize(step, at=step._commit.runtime_stage_id, outcome_changed=judge, **options)
    flags = [*report.honesty_flags, "foreign-trace"]
    update: dict[str, Any] = {}
    if agent_factory is None:
        flags.append("downstream-not-rerun")
        update["note"] = f"{report.note} {STEP_NOTE}"
    else:
        update.update(answer=final, note=f"{report.note} {END_TO_END_NOTE}")
    update["honesty_flags"] = list(dict.fromkeys(flags))
    update["culprit_sets"] = _fold_containers(report.culprit_sets)
    return report.model_copy(update=update)


def _fold_containers(sets: list[CulpritSet]) -> list[CulpritSet]:
    """A confirmed whole tool whose confirmed result(s) ``tool#n`` explain it is folded into them: removing the
    tool removes those results, so the finer set is the culprit (its claim says the tool flips it too)."""
    confirmed = [c for c in sets if c.verdict == "confirmed"]
    out: list[CulpritSet] = []
    notes: dict[int, list[str]] = {}
    for c in sets:
        whole = c.ids[0] if c.verdict == "confirmed" and len(c.ids) == 1 and c.kinds == ("tool",) else None
        finer = [
            k
            for k, d in enumerate(confirmed)
            if whole is not None and d is not c and all(i.startswith(f"{whole}#") for i in d.ids)
        ]
        if finer:
            notes.setdefault(id(confirmed[finer[0]]), []).append(whole or "")
            continue
        out.append(c)
    return [
        c.model_copy(
            update={
                "claim": c.claim
                + "".join(
                    f"; removing every result of tool '{t}' flips it too (not listed apart: it contains this one)"
                    for t in notes[id(c)]
                )
            }
        )
        if id(c) in notes
        else c
        for c in out
    ]


def _claim(recording: Any, *, at: Any, provider: Any, **options: Any) -> Awaitable[LocalizationReport] | None:
    """``explain.localize_context_bug(recording, at=..., provider=...)`` on an imported trace lands here."""
    snap = getattr(recording, "snapshot", None)
    if not isinstance(recording, Recording) or not isinstance(snap, FlowSnapshot) or snap.chart_id != FOREIGN_CHART:
        return None
    return localize_context_bug(recording, at=at, provider=provider, **options)


if _claim not in STEP_LOCALIZERS:
    STEP_LOCALIZERS.append(_claim)


def localize_sync(recording: Recording, **kwargs: Any) -> LocalizationReport:
    """Blocking twin of :func:`localize_context_bug`."""
    return run_sync(localize_context_bug(recording, **kwargs), "await localize_context_bug(...)")


def rerun_step(recording: Recording, at: str, provider: Any, without: Sequence[str] = (), seed: int = 0) -> str:
    """The reply of step ``at`` re-sent once without ``without`` (blocking; a quick what-if)."""
    step = ForeignStep(recording, at, provider).without(*without)
    reply = run_sync(step.run(seed=seed), "await ForeignStep(...).run()")
    return reply.answer


__all__ = ["END_TO_END_NOTE", "STEP_NOTE", "ForeignStep", "localize_context_bug", "localize_sync", "rerun_step"]
