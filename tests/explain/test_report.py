"""The HTML report: self-contained, escaped, culprit highlighted; rendered in headless Chromium."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentfootprint._flagship import QUESTION, approved_flipped, refunds_agent
from agentfootprint.explain import backtrack, localize_context_bug, report_html


async def build_report() -> str:
    agent = refunds_agent()
    await agent.run(QUESTION)
    loc = await localize_context_bug(agent, samples=2, outcome_changed=approved_flipped, progress=False)
    return report_html(backtrack(agent), loc, snapshot=agent.last_snapshot())


async def test_report_is_self_contained_and_highlights_culprit() -> None:
    html = await build_report()
    assert "<mark class='culprit' data-source='vip-override-fact'>" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert "CAUSAL: ablating fact" in html and "Timeline" in html


async def test_report_escapes_hostile_text() -> None:
    from agentfootprint import Agent, define_fact
    from agentfootprint.providers import mock

    agent = (
        Agent.create(provider=mock(reply="<script>alert(1)</script>"), model="m")
        .fact(define_fact(id="x", data="<img src=x onerror=alert(1)>"))
        .build()
    )
    await agent.run("hi")
    html = report_html(backtrack(agent))
    assert "<script>alert" not in html and "<img src=x" not in html and "&lt;img" in html


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.integration
async def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("headless Chromium is not installed (make test-setup installs Debian's chromium)")
    page = tmp_path / "report.html"
    page.write_text(await build_report())
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    dom = subprocess.run([chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert 'class="culprit"' in dom.stdout and "vip-override-fact" in dom.stdout
    assert "Uncaught" not in dom.stderr and "CONSOLE" not in dom.stderr
    shot = tmp_path / "report.png"
    subprocess.run(
        [chromium, *flags, "--window-size=1200,1600", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 10_000


async def test_report_page_shows_a_culprit_set_and_marks_both_members() -> None:
    from agentfootprint._flagship import refunds_agent_pair

    agent = refunds_agent_pair()
    await agent.run(QUESTION)
    loc = await localize_context_bug(agent, outcome_changed=approved_flipped, progress=False)
    page = report_html(backtrack(agent), loc)
    assert "<td class='mono'>goodwill-fact, vip-override-fact</td><td class='confirmed'>confirmed</td>" in page
    assert "<mark class='culprit' data-source='goodwill-fact'>" in page
    assert "<mark class='culprit' data-source='vip-override-fact'>" in page


async def test_report_without_localization_is_exact() -> None:
    """Answer, the prompt the model saw, every chain and the timeline, byte for byte (run id aside)."""
    agent = refunds_agent()
    await agent.run(QUESTION)
    snapshot = agent.last_snapshot()
    assert snapshot is not None and snapshot.run_id is not None
    html = report_html(backtrack(agent), snapshot=snapshot, title="Why <this>?")
    golden = Path(__file__).with_name("golden_flagship_report.html").read_text()
    assert html.replace(snapshot.run_id, "RUN_ID") + "\n" == golden
    assert "<p>No localization was run (backtrack only).</p>" in html
    empty = report_html(backtrack(agent).model_copy(update={"sources": [], "run_id": None}))
    assert "<p>(empty)</p>" in empty and "Timeline" not in empty and "reached the call (0)" in empty


async def test_report_shows_the_users_question_before_the_answer() -> None:
    html = await build_report()
    question = f"<section><h2>Question</h2><div class='question'>{QUESTION}</div></section>"
    assert question in html and html.index(question) < html.index("<h2>Answer</h2>")


async def test_report_escapes_a_hostile_question() -> None:
    from agentfootprint import Agent
    from agentfootprint.providers import mock

    agent = Agent.create(provider=mock(reply="ok"), model="m").build()
    await agent.run("<script>alert(1)</script>?")
    html = report_html(backtrack(agent))
    assert "<div class='question'>&lt;script&gt;alert(1)&lt;/script&gt;?</div>" in html
