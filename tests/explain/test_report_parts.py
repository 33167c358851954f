"""The HTML report's parts pinned exactly: suspects without a localization, correlational mode, culprit sets,
the empty prompt, failed steps in the timeline, and the question shown only when the run had one."""

from __future__ import annotations

from agentfootprint import Agent, define_fact, define_tool
from agentfootprint.explain import backtrack, localize_context_bug, report_html
from agentfootprint.explain.backtrack import Backtrack, Hop, SourceTrail
from agentfootprint.explain.localize import PROXY_NOTE, LocalizationReport, Suspect
from agentfootprint.explain.report import _CSS, _chain, _suspects, _system_prompt, _timeline, question_of
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
    causal = await localize_context_bug(
        agent, samples=1, outcome_changed=lambda x, y: x != y, progress=False, max_samples=None
    )
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


def trail(kind: str, sid: str, text: str, slot: str) -> SourceTrail:
    return SourceTrail(
        kind=kind,  # type: ignore[arg-type]
        id=sid,
        text=text,
        slot=slot,  # type: ignore[arg-type]
        hops=[Hop(kind="born", runtime_stage_id=None, detail="defined")],
    )


def test_causal_suspects_without_a_ranking_note_render_exactly() -> None:
    loc = LocalizationReport(
        mode="causal",
        trigger="call-llm#1",
        answer="x",
        scorer="lexical",
        samples=2,
        baseline_flips=1,
        suspects=[Suspect(kind="fact", id="a", score=0.5, rank=1, verdict="inconclusive", claim="c<")],
        honesty_flags=["baseline-unstable", "rerun-errors"],
    )
    assert _suspects(loc) == (
        "<p>Mode: <b>causal</b>, scorer: lexical.</p><p>Baseline: 1/2 reruns flipped with no ablation.</p>"
        "<table><tr><th>rank</th><th>kind</th><th>id</th><th>score</th><th>verdict</th><th>claim</th></tr>"
        "<tr data-source='a'><td>#1</td><td>fact</td><td class='mono'>a</td><td>0.500</td>"
        "<td class='inconclusive'>inconclusive</td><td>c&lt;</td></tr></table>"
        "<p>Honesty flags: <span class='flag'>baseline-unstable</span><span class='flag'>rerun-errors</span></p>"
        f"<p><i>{PROXY_NOTE}</i></p>"
    )


def test_the_prompt_shows_every_system_prompt_source_in_order_around_other_slots() -> None:
    bt = Backtrack(
        answer="a",
        trigger="call-llm#1",
        sources=[
            trail("message", "m", "hello", "messages"),
            trail("fact", "A", "first", "system_prompt"),
            trail("tool", "t", "tool spec", "tools"),
            trail("fact", "B", "second & last", "system_prompt"),
        ],
    )
    assert _system_prompt(bt, {"B"}) == (
        "<pre>first\n\n<mark class='culprit' data-source='B'>second &amp; last</mark></pre>"
    )


def test_a_whole_page_with_commentary_a_confirmed_single_culprit_and_no_run_id() -> None:
    bt = Backtrack(
        answer="Yes & no",
        trigger="call-llm#1",
        sources=[trail("fact", "f", "Fact F", "system_prompt"), trail("skill", "s", "Skill S", "system_prompt")],
    )
    loc = LocalizationReport(
        mode="correlational",
        trigger="call-llm#1",
        answer="Yes & no",
        scorer="lexical",
        samples=0,
        suspects=[
            Suspect(kind="fact", id="f", score=1.0, rank=1, verdict="confirmed", claim="CAUSAL"),
            Suspect(kind="skill", id="s", score=0.0, rank=2, verdict="not-confirmed", claim="NOT CONFIRMED"),
        ],
    )
    page = report_html(bt, loc, app_name="Bot <1>", commentary=["looked it up", "answered <b>"])
    suspects = _suspects(loc)
    chains = _chain(bt.sources[0], {"f"}) + _chain(bt.sources[1], {"f"})
    assert page == (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>Why did Bot &lt;1&gt; answer this?</title><style>{_CSS}</style></head><body><header>"
        "<h1>Why did Bot &lt;1&gt; answer this?</h1><div class='mono'>run  · decided at call-llm#1</div></header>"
        "<main><section><h2>Answer</h2><div class='answer'>Yes &amp; no</div></section>"
        f"<section><h2>Suspects</h2>{suspects}</section>"
        "<section><h2>The system prompt the model saw</h2><pre><mark class='culprit' data-source='f'>Fact F</mark>"
        "\n\nSkill S</pre></section>"
        f"<section><h2>Every source that reached the call (2)</h2>{chains}</section>"
        "<section><h2>What Bot &lt;1&gt; did</h2><ol class='timeline'><li>looked it up</li>"
        "<li>answered &lt;b&gt;</li></ol></section></main></body></html>"
    )
    assert chains.startswith("<details open><summary>[fact] <span class='mono'>f</span> <b class='confirmed'>")
    assert "<details><summary>[skill]" in chains


async def test_the_question_is_the_newest_user_input_of_a_follow_up() -> None:
    looking = {"content": "looking", "tool_calls": [{"id": "s1", "name": "n", "args": {}}]}
    tool = define_tool(name="n", description="d", input_schema={"type": "object"}, execute=lambda a, c: "r")
    agent = Agent.create(provider=mock(replies=["First.", looking, "Two."]), model="m").tool(tool).build()
    await agent.run("first question?")
    await agent.follow_up("second question?")
    bt = backtrack(agent)
    assert question_of(bt) == "second question?"
    assert "<section><h2>Question</h2><div class='question'>second question?</div></section>" in report_html(bt)
