"""The why explorer's screenshots in docs/img/: the run list, a run with a source's chain open, a finished proof,
and the compare view, taken in headless system Chromium (Playwright) over recorded scripted runs.

Run ``python scripts/explorer_screenshots.py`` from the checkout (it writes docs/img/explorer-*.png)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from tests.explorer import _runs  # noqa: E402
from tests.explorer._server import serving  # noqa: E402

from agentfootprint._flagship import refunds_agent  # noqa: E402
from agentfootprint.explorer import explorer_app  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
OUT = ROOT / "docs" / "img"
WIDTH, HEIGHT = 1000, 760


def main() -> None:
    from playwright.sync_api import sync_playwright

    runs = {"wrong": _runs.wrong(), "fixed": _runs.fixed(), "paused": _runs.paused(), "secret": _runs.secret()}
    runs["failed"] = _runs.failed_copy(runs["wrong"], "run-ended-in-an-error")
    wrong, fixed = runs["wrong"].snapshot.run_id, runs["fixed"].snapshot.run_id
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = _runs.write_dir(Path(tmp) / "runs", runs)
        with serving(explorer_app(folder, agent_factory=refunds_agent)) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.set_default_timeout(60_000)

            page.goto(base + "/")
            page.locator("tr.run").nth(len(runs) - 1).wait_for()
            page.screenshot(path=str(OUT / "explorer-list.png"))

            page.goto(f"{base}/#/run/{wrong}")
            fact = page.locator(".source[data-source-id='vip-override-fact']")
            fact.locator("button").click()
            fact.locator(".born").wait_for()
            fact.scroll_into_view_if_needed()
            page.evaluate("window.scrollBy(0, -120)")
            page.screenshot(path=str(OUT / "explorer-chain.png"))

            page.fill("#keyword", "APPROVED")
            page.select_option("#mode", "single")
            page.click("#start-prove")
            page.locator("#culprits tr[data-set='vip-override-fact'] td.confirmed").wait_for()
            page.locator("#prove").scroll_into_view_if_needed()
            page.evaluate("document.querySelector('#prove').scrollIntoView({block: 'start'})")
            page.screenshot(path=str(OUT / "explorer-proof.png"))

            page.goto(f"{base}/#/compare/{wrong}/{fixed}")
            page.locator("#diff").wait_for()
            page.screenshot(path=str(OUT / "explorer-compare.png"))
            browser.close()
    for name in ("list", "chain", "proof", "compare"):
        shot = OUT / f"explorer-{name}.png"
        print(f"{shot.relative_to(ROOT)}: {shot.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
