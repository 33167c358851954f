"""Reports: one self-contained HTML page (no CDN, no scripts) telling the whole story of an answer."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from agentfootprint.explain._context_errors import errors_section
from agentfootprint.explain._targets import RecordLike, as_target
from agentfootprint.explain.backtrack import Backtrack, SourceTrail, backtrack
from agentfootprint.explain.localize import LocalizationReport
from agentfootprint.flow import FlowSnapshot

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px}
main{max-width:1100px;margin:0 auto;padding:20px 28px}
section{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:16px 20px;margin:16px 0}
h2{font-size:16px;margin:0 0 10px}
.question{font-size:17px;padding:10px 14px;background:#eef4ff;border-left:4px solid #3b6fd8}
.answer{font-size:17px;background:#fff8e6;border-left:4px solid #e0a100;
padding:10px 14px}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eceef2;padding:6px 8px;
text-align:left;vertical-align:top}th{font-size:13px;color:#5a6275}.confirmed{color:#b42318;font-weight:700}
.not-confirmed{color:#3f6212}.inconclusive{color:#a16207}.mono{font-family:ui-monospace,Menlo,Consolas,monospace;
font-size:13px}pre{white-space:pre-wrap;background:#f3f4f6;padding:12px;border-radius:6px}
mark.culprit{background:#fecaca;outline:2px solid #dc2626;padding:1px 2px}.chain li{margin:2px 0}
.hop{display:inline-block;min-width:70px;font-weight:600;color:#374151}.flag{display:inline-block;
background:#eef2ff;border-radius:10px;padding:1px 8px;margin-right:6px;font-size:13px}
.timeline li{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}.failed{color:#b42318}
"""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _suspects(loc: LocalizationReport | None) -> str:
    if loc is None:
        return "<p>No localization was run (backtrack only).</p>"
    rows = []
    for s in loc.suspects:
        verdict = s.verdict or "—"
        rows.append(
            f"<tr data-source='{_e(s.id)}'><td>#{s.rank}</td><td>{_e(s.kind)}</td>"
            f"<td class='mono'>{_e(s.id)}</td><td>{s.score:.3f}</td>"
            f"<td class='{_e(verdict)}'>{_e(verdict)}</td><td>{_e(s.claim)}</td></tr>"
        )
    flags = "".join(f"<span class='flag'>{_e(f)}</span>" for f in loc.honesty_flags) or "none"
    base = (
        f"<p>Baseline: {loc.baseline_flips}/{loc.samples} reruns flipped with no ablation.</p>"
        if loc.mode == "causal"
        else "<p>Correlational mode: nothing was rerun.</p>"
    )
    conf = f"<p>{_e(loc.ranking_confidence.note)}</p>" if loc.ranking_confidence else ""
    sets = "".join(
        f"<tr><td class='mono'>{_e(', '.join(c.ids))}</td><td class='{_e(c.verdict)}'>{_e(c.verdict)}</td>"
        f"<td>{_e(c.claim)}</td></tr>"
        for c in loc.culprit_sets
    )
    if sets:
        conf += f"<table><tr><th>culprit set</th><th>verdict</th><th>claim</th></tr>{sets}</table>"
    return (
        f"<p>Mode: <b>{_e(loc.mode)}</b>, scorer: {_e(loc.scorer)}.</p>{base}{conf}"
        "<table><tr><th>rank</th><th>kind</th><th>id</th><th>score</th><th>verdict</th><th>claim</th></tr>"
        f"{''.join(rows)}</table><p>Honesty flags: {flags}</p><p><i>{_e(loc.note)}</i></p>"
    )


def _chain(s: SourceTrail, culprits: set[str]) -> str:
    hops = "".join(
        f"<li><span class='hop'>{_e(h.kind.upper())}</span> <span class='mono'>{_e(h.runtime_stage_id or '')}</span>"
        f" {_e(h.detail)}{(' — ' + _e(h.note)) if h.note else ''}</li>"
        for h in s.hops
    )
    mark = " <b class='confirmed'>(confirmed culprit)</b>" if s.id in culprits else ""
    return (
        f"<details{' open' if s.id in culprits else ''}><summary>[{_e(s.kind)}] <span class='mono'>{_e(s.id)}"
        f"</span>{mark}</summary><ul class='chain'>{hops}</ul></details>"
    )


def _system_prompt(bt: Backtrack, culprits: set[str]) -> str:
    parts = []
    for s in bt.sources:
        if s.slot != "system_prompt":
            continue
        text = _e(s.text)
        if s.id in culprits:
            text = f"<mark class='culprit' data-source='{_e(s.id)}'>{text}</mark>"
        parts.append(text)
    return "<pre>" + "\n\n".join(parts) + "</pre>" if parts else "<p>(empty)</p>"


def _timeline(snapshot: FlowSnapshot | None) -> str:
    if snapshot is None:
        return ""
    items = []
    for c in snapshot.commit_log:
        cls = " class='failed'" if c.failed else ""
        wrote = ", ".join(w.path for w in c.writes)
        items.append(
            f"<li{cls}>{_e(c.runtime_stage_id)} — {_e(c.stage_name)}"
            f"{(' [wrote ' + _e(wrote) + ']') if wrote else ''}</li>"
        )
    return f"<section><h2>Timeline ({len(items)} steps)</h2><ol class='timeline'>{''.join(items)}</ol></section>"


def question_of(bt: Backtrack) -> str | None:
    """The user's question behind the answer: the newest user message that came in as the run's input."""
    asked = [
        s.text
        for s in bt.sources
        if s.kind == "message" and any(h.kind == "born" and h.detail.endswith("(run input)") for h in s.hops)
    ]
    return asked[-1] if asked else None


def report_html(
    bt: Backtrack | RecordLike,
    localization: LocalizationReport | None = None,
    *,
    snapshot: FlowSnapshot | None = None,
    title: str | None = None,
    app_name: str | None = None,
    commentary: Sequence[str] = (),
) -> str:
    """A self-contained HTML page: answer, suspects and verdicts, each source's chain, the highlighted prompt.

    ``bt``: a backtrack, or a run to backtrack (a ``RunResult``, a loaded recording; its snapshot draws the
    timeline). ``app_name`` names the agent in the page (``agent.voice.app_name``); ``commentary`` adds what it did,
    one line a step (``agent.commentary()``)."""
    if not isinstance(bt, Backtrack):
        run = as_target(bt)
        if snapshot is None and callable(getattr(run, "last_snapshot", None)):
            snapshot = run.last_snapshot()
        bt = backtrack(run)
    actor = app_name if app_name else "the agent"
    title = title if title is not None else f"Why did {actor} answer this?"
    did = "".join(f"<li>{_e(line)}</li>" for line in commentary)
    steps = f"<section><h2>What {_e(actor)} did</h2><ol class='timeline'>{did}</ol></section>" if did else ""
    culprits = {s.id for s in localization.confirmed} if localization else set()
    culprits |= {i for c in localization.confirmed_sets for i in c.ids} if localization else set()
    chains = "".join(_chain(s, culprits) for s in bt.sources)
    question = question_of(bt)
    asked = f"<section><h2>Question</h2><div class='question'>{_e(question)}</div></section>" if question else ""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width,initial-scale=1'><title>{_e(title)}</title>"
        f"<style>{_CSS}</style></head><body><header><h1>{_e(title)}</h1>"
        f"<div class='mono'>run {_e(bt.run_id or '')} · decided at {_e(bt.trigger)}</div></header><main>"
        f"{asked}<section><h2>Answer</h2><div class='answer'>{_e(bt.answer or '')}</div></section>"
        f"<section><h2>Suspects</h2>{_suspects(localization)}</section>"
        f"{errors_section(snapshot)}"
        f"<section><h2>The system prompt the model saw</h2>{_system_prompt(bt, culprits)}</section>"
        f"<section><h2>Every source that reached the call ({len(bt.sources)})</h2>{chains}</section>"
        f"{steps}{_timeline(snapshot)}</main></body></html>"
    )
