"""The explorer in a real browser (headless system Chromium through Playwright): list, filter, open a run by
keyboard, follow a source's chain, prove the planted culprit live, compare two runs; a long run drawn a screenful
at a time loses no step, call or source; no console errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from agentfootprint._flagship import QUESTION, refunds_agent
from agentfootprint.explain import Recording, backtrack, forward_slice
from agentfootprint.explorer import explorer_app
from agentfootprint.explorer.views import timeline_of
from agentfootprint.flow import render_narrative
from tests.explorer import _runs
from tests.explorer._server import serving

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None, reason="no system Chromium at /usr/bin/chromium (scripts/setup installs it)"
)


LONG_ITERATIONS = 200


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """A 200-iteration run (a scripted model asking for one tool call at a time), in a folder of its own."""
    rec = _runs.long_run(LONG_ITERATIONS)
    return _runs.write_dir(tmp_path_factory.mktemp("long"), {"long": rec}), rec


@pytest.fixture(scope="module")
def browser(recordings: Path, long_run: tuple[Path, Recording]) -> Iterator[Any]:
    """Chromium, launched after the recordings are made (Playwright's sync API holds a loop in this thread)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield b
        finally:
            b.close()


def _closed_by_page(request: Any) -> bool:
    """A progress stream the page closed itself on its ``end`` event (the browser reports it as aborted)."""
    return request.url.endswith("/events") and request.failure == "net::ERR_ABORTED"


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = context.new_page()
    problems: list[str] = []
    pg.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("requestfailed", lambda r: None if _closed_by_page(r) else problems.append(f"request failed: {r.url}"))
    pg.set_default_timeout(15_000)
    pg.problems = problems
    yield pg
    context.close()


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory, runs: dict[str, Recording]) -> Path:
    return _runs.write_dir(tmp_path_factory.mktemp("recordings"), runs)


def test_list_filter_open_follow_prove_compare(
    recordings: Path, runs: dict[str, Recording], page: Any, tmp_path: Path
) -> None:
    app = explorer_app(recordings, agent_factory=refunds_agent)
    wrong_id, fixed_id = runs["wrong"].snapshot.run_id, runs["fixed"].snapshot.run_id
    with serving(app) as base:
        page.goto(base + "/")
        rows = page.locator("tr.run")
        rows.first.wait_for()
        assert rows.count() == 4
        assert page.locator("#count").inner_text() == "1–4 of 4 runs"

        # filter: answer text, then the pause flag
        page.fill("#q", "DECLINED")
        expect(page.locator("tr.run")).to_have_count(1)
        expect(rows.first).to_have_attribute("data-run-id", fixed_id)
        page.fill("#q", "")
        page.select_option("#paused", "true")
        expect(rows.first).to_have_attribute("data-run-id", runs["paused"].snapshot.run_id)
        expect(page.locator("tr.run")).to_have_count(1)
        page.select_option("#paused", "any")
        expect(page.locator("tr.run")).to_have_count(4)

        # open a run with the keyboard only: / search, Enter, Esc, j, Enter
        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "q"
        page.keyboard.type("APPROVED")
        page.keyboard.press("Enter")
        expect(rows.first).to_have_attribute("data-run-id", wrong_id)
        expect(page.locator("tr.run")).to_have_count(1)
        page.keyboard.press("Escape")
        page.keyboard.press("j")
        assert page.evaluate("document.activeElement.dataset.runId") == wrong_id
        page.keyboard.press("Enter")
        page.locator("#question").wait_for()
        assert page.locator("#question").inner_text() == QUESTION
        assert "APPROVED" in page.locator("#answer").inner_text()
        assert page.locator("#timeline tbody tr").count() == 3  # two model calls, one tool call
        assert page.locator("#steps li").count() == len(runs["wrong"].snapshot.commit_log)

        page.click("#narrative summary")
        lines = len(render_narrative(runs["wrong"].snapshot))
        expect(page.locator("#narrative summary")).to_have_text(f"Narrative ({lines} lines)")

        # follow the planted fact's chain: hops, birth, forward slice highlighted in the stages
        fact = page.locator(".source[data-source-id='vip-override-fact']")
        fact.locator("button").click()
        fact.locator(".born").wait_for()
        hops = fact.locator(".hops .hop").all_inner_texts()
        assert hops == ["ANSWER", "READ", "LANDED", "ALLOWED", "BORN"]
        assert "define_fact('vip-override-fact')" in fact.locator(".born").inner_text()
        sliced = forward_slice(runs["wrong"], "vip-override-fact")
        assert page.locator("ol.steps li.hit").count() == len(sliced)
        assert " → ".join(sliced) in fact.locator(".slice").inner_text()

        # prove: start a localization, watch it finish with the planted culprit confirmed
        page.fill("#keyword", "APPROVED")
        page.click("#start-prove")
        page.locator("#culprits tr[data-set='vip-override-fact'] td.confirmed").wait_for()
        assert page.locator("#prove-state b").inner_text() == "done"
        verdict = page.locator("#verdicts tr[data-source='vip-override-fact'] td").nth(1).inner_text()
        assert verdict == "confirmed"
        assert page.locator("#verdicts tr[data-source='style-fact'] td").nth(1).inner_text() == "not-confirmed"
        page.screenshot(path=str(tmp_path / "explorer-run.png"), full_page=True)
        assert (tmp_path / "explorer-run.png").stat().st_size > 10_000

        # compare: back to the list, pick the wrong and the fixed run, compare them
        page.keyboard.press("Escape")
        page.locator("tr.run").first.wait_for()
        page.fill("#q", "")
        page.keyboard.press("Enter")
        expect(page.locator("tr.run")).to_have_count(4)
        page.locator(f"tr.run[data-run-id='{wrong_id}'] input[type=checkbox]").click()
        page.locator(f"tr.run[data-run-id='{fixed_id}']").focus()
        page.keyboard.press("x")
        assert page.locator("#compare-picked").is_enabled()
        page.keyboard.press("c")
        page.locator("#diff").wait_for()
        assert page.locator("#sources-removed").inner_text() == "vip-override-fact"
        assert page.locator("#first-divergence").inner_text().startswith("injection-engine#1 ↔ injection-engine#1")
        page.screenshot(path=str(tmp_path / "explorer-compare.png"), full_page=True)
    assert page.problems == []


def test_without_an_agent_the_page_says_it_cannot_prove(
    recordings: Path, runs: dict[str, Recording], page: Any
) -> None:
    with serving(explorer_app(recordings)) as base:
        page.goto(f"{base}/#/run/{runs['wrong'].snapshot.run_id}")
        notice = page.locator("#no-agent")
        notice.wait_for()
        assert "a recording alone cannot prove a culprit" in notice.inner_text()
        assert "--agent module:factory" in notice.inner_text()
        assert page.locator("#start-prove").count() == 0
    assert page.problems == []


def test_the_demo_recording_served_by_ui_proves_its_culprit_from_the_page(
    tmp_path: Path, page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``agentfootprint demo --save run.json && agentfootprint ui run.json --agent ...``: the page the command
    serves opens the demo's run and proves its planted culprit by reruns started from the page."""
    import uvicorn
    from typer.testing import CliRunner

    from agentfootprint.cli import app as cli

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: served.update(app=application, **kw))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def commands() -> tuple[Any, Any]:  # in a thread of its own: Playwright holds a running loop in this one
        demo = runner.invoke(cli(), ["demo", "--save", "run.json", "-o", "report.html"])
        return demo, runner.invoke(cli(), ["ui", "run.json", "--agent", "agentfootprint._flagship:refunds_agent"])

    with ThreadPoolExecutor(1) as pool:
        demo, ui = pool.submit(commands).result()
    assert demo.exit_code == 0, demo.output
    assert ui.exit_code == 0, ui.output
    with serving(served["app"]) as base:
        page.goto(base + "/")
        row = page.locator("tr.run")
        expect(row).to_have_count(1)
        row.first.focus()
        page.keyboard.press("Enter")
        page.locator("#question").wait_for()
        assert page.locator("#question").inner_text() == QUESTION
        assert "APPROVED" in page.locator("#answer").inner_text()
        page.fill("#keyword", "APPROVED")
        page.click("#start-prove")
        page.locator("#culprits tr[data-set='vip-override-fact'] td.confirmed").wait_for(timeout=60_000)
        assert page.locator("#prove-state b").inner_text() == "done"
        confirmed = page.locator("#verdicts tr:has(td.confirmed)").evaluate_all(
            "rows => rows.map(r => r.dataset.source)"
        )
        assert confirmed == ["vip-override-fact"]
    assert page.problems == []


def _focused_step(page: Any) -> str:
    return str(page.evaluate("document.activeElement.dataset.stage"))


def _scroll_until_all(items: Any, total: int) -> None:
    """Scroll the last drawn item into view until ``total`` are drawn (each scroll must draw more)."""
    for _ in range(total):
        drawn = items.count()
        if drawn == total:
            return
        items.last.scroll_into_view_if_needed()
        expect(items).not_to_have_count(drawn)
    assert items.count() == total


def test_a_long_run_drawn_on_scroll_and_keys_loses_nothing(long_run: tuple[Path, Recording], page: Any) -> None:
    """With no idle time at all, the rest of a 200-iteration run's steps, calls and sources still come: the
    keyboard walks every step to the last, scrolling draws the rest of the calls and sources, and a source's
    forward slice marks its steps."""
    folder, rec = long_run
    steps = [c.runtime_stage_id for c in rec.snapshot.commit_log]
    calls = timeline_of(rec.snapshot)
    trails = backtrack(rec).sources
    assert (len(steps), len(calls), len(trails)) == (1401, 399, 400)
    page.add_init_script("window.requestIdleCallback = () => 0;")  # idle time never comes
    with serving(explorer_app(folder)) as base:
        page.goto(f"{base}/#/run/{rec.snapshot.run_id}")
        page.locator("#question").wait_for()
        assert page.locator("#answer").inner_text() == "done after 199 steps"
        page.locator("#sources .source").first.wait_for()
        drawn = page.locator("#steps li")
        assert 0 < drawn.count() < len(steps)  # a first screenful; the rest waits

        page.locator("#steps").focus()
        page.keyboard.press("ArrowDown")
        assert _focused_step(page) == steps[0]
        page.keyboard.press("j")
        assert _focused_step(page) == steps[1]
        for _ in range(48):  # past the first screenful, one step at a time
            page.keyboard.press("ArrowDown")
        assert _focused_step(page) == steps[49]
        for _ in range(30):  # ten steps at a time, past the next chunk
            page.keyboard.press("PageDown")
        assert _focused_step(page) == steps[349]
        page.keyboard.press("End")
        assert _focused_step(page) == steps[-1]
        assert drawn.count() == len(steps)
        assert drawn.last.inner_text() == f"{steps[-1]} {rec.snapshot.commit_log[-1].stage_name}"
        page.keyboard.press("k")
        assert _focused_step(page) == steps[-2]
        page.keyboard.press("Home")
        assert _focused_step(page) == steps[0]
        assert drawn.evaluate_all("lis => lis.map(li => li.dataset.stage)") == steps

        rows = page.locator("#timeline tbody tr")
        _scroll_until_all(rows, len(calls))
        assert rows.last.locator("td").nth(1).inner_text() == calls[-1]["at"]
        boxes = page.locator("#sources .source")
        _scroll_until_all(boxes, len(trails))
        ids = boxes.evaluate_all("bs => bs.map(b => b.dataset.sourceId)")
        assert ids == [t.id for t in trails]

        last = boxes.last
        last.locator("button").click()
        last.locator(".born").wait_for()
        assert last.locator(".hops .hop").all_inner_texts() == [h.kind.upper() for h in trails[-1].hops]
        marked = page.locator("ol.steps li.hit").evaluate_all("lis => lis.map(li => li.dataset.stage)")
        assert marked == forward_slice(rec, trails[-1].id)
    assert page.problems == []


def test_a_long_run_draws_the_rest_in_idle_time_and_find_reaches_it(
    long_run: tuple[Path, Recording], page: Any
) -> None:
    """Left alone, the page draws every step, call and source of a 200-iteration run, and find-in-page reaches
    the last step and the last call."""
    folder, rec = long_run
    steps = [c.runtime_stage_id for c in rec.snapshot.commit_log]
    calls = timeline_of(rec.snapshot)
    with serving(explorer_app(folder)) as base:
        page.goto(f"{base}/#/run/{rec.snapshot.run_id}")
        expect(page.locator("#steps li")).to_have_count(len(steps))
        expect(page.locator("#timeline tbody tr")).to_have_count(len(calls))
        expect(page.locator("#sources .source")).to_have_count(len(backtrack(rec).sources))
        assert page.locator("[data-complete]").count() == 3
        assert page.evaluate("id => window.find(id)", steps[-1]) is True
        assert (
            page.evaluate("() => window.getSelection().anchorNode.parentElement.closest('li').dataset.stage")
            == (steps[-1])
        )
        assert page.evaluate("id => window.find(id)", calls[-1]["at"]) is True
    assert page.problems == []
