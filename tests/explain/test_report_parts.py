"""The HTML report's parts pinned exactly: suspects without a localization, correlational mode, culprit sets,
the empty prompt, failed steps in the timeline, and the question shown only when the run had one."""

from __future__ import annotations

from agentfootprint import Agent, define_fact
from agentfootprint.explain import backtrack, localize_context_bug, report_html
from agentfootprint.explain.backtrack import Backtrack, Hop, SourceTrail
from agentfootprint.explain.report import _chain, _suspects, _system_prompt, _timeline, question_of
from agentfootprint.providers import LLMRequest, mock


def test_without_a_localization_the_suspects_say_so() -> None:
    assert _suspects(None) == "<p>No localization was run (backtrack only).</p>"


async def pair_agent() -> Agent:
    def respond(req: LLMRequest) -> str:
        return "WRONG" if "Alpha" in req.system_prompt or "Beta" in req.system_prompt else "RIGHT"

    agent = (
        Agent.create(provider=mock(respond=respond), model="m")
        .fact(define_fact(id="a", data="Alpha <b>"))
        .fact(define_fact(id="b", data="Beta"))
        .build()
    )
    await agent.run("q?")
    return agent


async def test_correlational_suspects_and_causal_culprit_sets_render_exactly() -> None:
    agent = await pair_agent()
    correlational = await localize_context_bug(agent, samples=0)
    html = _suspects(correlational)
    assert html.startswith(
        "<p>Mode: <b>correlational</b>, scorer: lexical.</p><p>Correlational mode: nothing was rerun.</p>"
    )
    assert (
        "<tr data-source='a'><td>#1</td><td>fact</td><td class='mono'>a</td><td>0.000</td><td class='—'>—</td>" in html
    )
    assert "<p>Honesty flags: <span class='flag'>correlational-only</span></p>" in html
    causal = await localize_context_bug(agent, samples=1, outcome_changed=lambda x, y: x != y, progress=False)
    html = _suspects(causal)
    assert "<p>Baseline: 0/1 reruns flipped with no ablation.</p>" in html
    assert (
        "<table><tr><th>culprit set</th><th>verdict</th><th>claim</th></tr><tr><td class='mono'>a, b</td>"
        "<td class='confirmed'>confirmed</td><td>CAUSAL: ablating fact &#x27;a&#x27; and fact &#x27;b&#x27; "
        "together flipped the outcome in 1/1 seeded reruns; restoring any one of them alone stops the flip "
        "(a 1-minimal culprit set)</td></tr></table>"
    ) in html
    assert "<p>Honesty flags: none</p><p><i>Scores are proxies" in html
    page = report_html(backtrack(agent), causal)
    assert (
        "<mark class='culprit' data-source='a'>Alpha &lt;b&gt;</mark>\n\n<mark class='culprit' data-source='b'>" in page
    )
    assert (
        "<details open><summary>[fact] <span class='mono'>a</span> <b class='confirmed'>(confirmed culprit)</b>" in page
    )


def test_a_chain_lists_each_hop_with_its_note() -> None:
    trail = SourceTrail(
        kind="fact",
        id="f",
        text="t",
        slot="system_prompt",
        hops=[
            Hop(kind="answer", runtime_stage_id=None, detail="x"),
            Hop(kind="born", runtime_stage_id="s#1", detail="d", note="n"),
        ],
    )
    assert _chain(trail, set()) == (
        "<details><summary>[fact] <span class='mono'>f</span></summary><ul class='chain'>"
        "<li><span class='hop'>ANSWER</span> <span class='mono'></span> x</li>"
        "<li><span class='hop'>BORN</span> <span class='mono'>s#1</span> d — n</li></ul></details>"
    )
    empty = Backtrack(answer=None, trigger="call-llm#1", sources=[trail.model_copy(update={"slot": "messages"})])
    assert _system_prompt(empty, set()) == "<p>(empty)</p>"
    assert question_of(empty) is None
    assert _timeline(None) == ""


async def test_the_timeline_marks_failed_steps_and_lists_writes() -> None:
    agent = await pair_agent()
    snap = agent.last_snapshot()
    assert snap is not None
    html = _timeline(snap)
    assert html.startswith(f"<section><h2>Timeline ({len(snap.commit_log)} steps)</h2><ol class='timeline'>")
    assert "<li>seed#0 — Seed [wrote " in html
    failed = snap.model_copy(update={"commit_log": [snap.commit_log[0].model_copy(update={"failed": True})]})
    assert _timeline(failed).startswith("<section><h2>Timeline (1 steps)</h2><ol class='timeline'><li class='failed'>")
